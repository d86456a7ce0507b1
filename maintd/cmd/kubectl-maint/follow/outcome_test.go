package follow

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func TestOutcome(t *testing.T) {
	plan := func(gen, observed int64, phase api.Phase, reason api.Reason) *api.MaintenancePlan {
		return &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Status: api.MaintenancePlanStatus{ObservedGeneration: observed, Phase: phase, Reason: reason}}
	}
	dry := func(total int32, outcomes ...string) *api.MaintenancePlan {
		p := plan(1, 1, api.Pending, api.DryRunDone)
		p.Status.Pods.Total = total
		for _, o := range outcomes {
			p.Status.DryRun = append(p.Status.DryRun, api.PodVerdict{Outcome: o})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		p    *api.MaintenancePlan
		goal Goal
		done bool
		code exitcode.Code
	}{
		{"not reconciled", plan(1, 0, "", ""), Drained, false, exitcode.NotNow},
		{"draining", plan(1, 1, api.Draining, api.EvictionAccepted), Drained, false, exitcode.NotNow},
		{"drained", plan(1, 1, api.Drained, api.ReasonDrained), Drained, true, exitcode.OK},
		{"released meanwhile", plan(2, 2, api.Completed, api.Uncordoned), Drained, true, exitcode.OK},
		{"blocked", plan(1, 1, api.Blocked, api.NodeOccupied), Drained, true, exitcode.Blocked},
		{"failed", plan(1, 1, api.Failed, api.DeadlineExceeded), Drained, true, exitcode.Blocked},
		{"expired before its start: not drained", plan(1, 1, api.Completed, api.Expired), Drained, true, exitcode.Blocked},
		{"expired dry run", plan(1, 1, api.Completed, api.Expired), DryRun, true, exitcode.Blocked},
		{"expired, released: nothing to undo", plan(2, 2, api.Completed, api.Expired), Completed, true, exitcode.OK},
		{"drained is not completed", plan(2, 2, api.Drained, api.ReasonDrained), Completed, false, exitcode.NotNow},
		{"blocked before the release was seen", plan(2, 1, api.Blocked, api.NodeOccupied), Completed, false, exitcode.NotNow},
		{"completed", plan(2, 2, api.Completed, api.Uncordoned), Completed, true, exitcode.OK},
		{"dry run under way", dry(2), DryRun, false, exitcode.NotNow},
		{"dry run accepted", dry(2, "accepted", "accepted"), DryRun, true, exitcode.OK},
		{"dry run, budget exhausted now", dry(2, "accepted", "budget-exhausted"), DryRun, true, exitcode.NotNow},
		{"dry run forbidden", dry(2, "budget-exhausted", "forbidden"), DryRun, true, exitcode.Blocked},
		{"dry run of no pods", dry(0), DryRun, true, exitcode.OK},
		{"dry run blocked", plan(1, 1, api.Blocked, api.UnknownPodsOnNode), DryRun, true, exitcode.Blocked},
	} {
		done, code := Outcome(tc.p, tc.goal)
		if done != tc.done || (done && code != tc.code) {
			t.Errorf("%s: done %v code %v, want %v %v", tc.name, done, code, tc.done, tc.code)
		}
	}
}

func TestCode(t *testing.T) {
	plan := func(release bool, phase api.Phase, reason api.Reason) *api.MaintenancePlan {
		return &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: api.MaintenancePlanSpec{Release: release},
			Status: api.MaintenancePlanStatus{ObservedGeneration: 1, Phase: phase, Reason: reason}}
	}
	for name, tc := range map[string]struct {
		p    *api.MaintenancePlan
		want exitcode.Code
	}{
		"not reconciled":                {plan(false, "", ""), exitcode.NotNow},
		"draining":                      {plan(false, api.Draining, api.EvictionAccepted), exitcode.NotNow},
		"drained":                       {plan(false, api.Drained, api.ReasonDrained), exitcode.OK},
		"drained, released: on its way": {plan(true, api.Drained, api.ReasonDrained), exitcode.NotNow},
		"uncordoning":                   {plan(true, api.Uncordoning, api.UncordonSubmitted), exitcode.NotNow},
		"completed":                     {plan(true, api.Completed, api.Uncordoned), exitcode.OK},
		"blocked":                       {plan(false, api.Blocked, api.NodeOccupied), exitcode.Blocked},
		"failed":                        {plan(false, api.Failed, api.DeadlineExceeded), exitcode.Blocked},
		"expired":                       {plan(false, api.Completed, api.Expired), exitcode.Blocked},
		"expired, released":             {plan(true, api.Completed, api.Expired), exitcode.OK},
	} {
		if got := Code(tc.p); got != tc.want {
			t.Errorf("%s: Code %v, want %v", name, got, tc.want)
		}
	}
}
