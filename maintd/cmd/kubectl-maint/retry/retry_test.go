package retry

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	campaign := func(phase api.Phase, retry ...string) *api.MaintenanceCampaign {
		return &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "pool"}, Spec: api.MaintenanceCampaignSpec{Retry: retry},
			Status: api.MaintenanceCampaignStatus{Phase: phase, Reason: "r", Nodes: []string{"n-deleted", "n-completed", "n-pending", "n-failed", "n-expired", "n-drained", "n-planned", "n-blocked", "n-new"},
				NodeStatus: []api.CampaignNode{
					{Name: "n-deleted", Outcome: api.NodeDeleted, Plan: "pool-n-deleted"},
					{Name: "n-completed", Outcome: api.NodeCompleted, Plan: "pool-n-completed"},
					{Name: "n-pending", Outcome: api.NodePending},
					{Name: "n-failed", Outcome: api.NodeFailed, Plan: "pool-n-failed"},
					{Name: "n-expired", Outcome: api.NodeExpired, Plan: "pool-n-expired"},
					{Name: "n-drained", Outcome: api.NodeDrained, Plan: "pool-n-drained"},
					{Name: "n-planned", Outcome: api.NodePlanned, Plan: "pool-n-planned"},
					{Name: "n-blocked", Outcome: api.NodeBlocked, Plan: "pool-n-blocked"},
				}}}
	}
	plan := func(name, node string, phase api.Phase, reason api.Reason, labels map[string]string) api.MaintenancePlan {
		return api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: api.MaintenancePlanSpec{NodeName: node},
			Status: api.MaintenancePlanStatus{Phase: phase, Reason: reason}}
	}
	ofPool := map[string]string{api.CampaignLabel: "pool"}
	deleting := plan("pool-n-failed", "n-failed", api.Failed, api.DeadlineExceeded, nil)
	deleting.DeletionTimestamp = &metav1.Time{}
	for name, tc := range map[string]struct {
		c       *api.MaintenanceCampaign
		plans   []api.MaintenancePlan
		nodes   []string
		add     []string
		listed  []string
		retry   []string
		wantErr []string
	}{
		"deleted, failed, expired, their plans gone": {c: campaign(api.Blocked), nodes: []string{"n-deleted", "n-failed", "n-expired", "n-deleted"},
			add: []string{"n-deleted", "n-failed", "n-expired"}, retry: []string{"n-deleted", "n-failed", "n-expired"}},
		"planned and blocked whose plans are gone: maintd will say deleted": {c: campaign(api.Draining), nodes: []string{"n-planned", "n-blocked"},
			add: []string{"n-planned", "n-blocked"}, retry: []string{"n-planned", "n-blocked"}},
		"listed already: nothing to add": {c: campaign(api.Blocked, "n-old", "n-deleted"), nodes: []string{"n-deleted", "n-failed"},
			add: []string{"n-failed"}, listed: []string{"n-deleted"}, retry: []string{"n-old", "n-deleted", "n-failed"}},
		"another plan of the campaign for the node": {c: campaign(api.Blocked), nodes: []string{"n-deleted"},
			plans:   []api.MaintenancePlan{plan("pool-n-deleted-x", "n-deleted", api.Draining, api.EvictionAccepted, ofPool), plan("other", "n-failed", api.Failed, api.DeadlineExceeded, nil)},
			wantErr: []string{"node n-deleted of campaign pool still has its plan pool-n-deleted-x (Draining/eviction-accepted), at work"}},
		"a plan of another campaign does not count": {c: campaign(api.Blocked), nodes: []string{"n-failed"},
			plans: []api.MaintenancePlan{plan("other-n-failed", "n-failed", api.Draining, "", map[string]string{api.CampaignLabel: "other"})},
			add:   []string{"n-failed"}, retry: []string{"n-failed"}},
		"not the campaign's": {c: campaign(api.Blocked), nodes: []string{"n-deleted", "elsewhere"},
			wantErr: []string{"node elsewhere is not a node of campaign pool (its 9 nodes: n-deleted, n-completed, n-pending, n-failed, n-expired and 4 more)", "nothing was written"}},
		"completed": {c: campaign(api.Blocked), nodes: []string{"n-completed"},
			wantErr: []string{"node n-completed of campaign pool completed (plan pool-n-completed): there is nothing to retry"}},
		"drained, its plan gone: completed": {c: campaign(api.Blocked), nodes: []string{"n-drained"},
			wantErr: []string{"node n-drained of campaign pool completed"}},
		"pending": {c: campaign(api.Blocked), nodes: []string{"n-pending"},
			wantErr: []string{"node n-pending of campaign pool is pending"}},
		"no record yet: pending": {c: campaign(api.Blocked), nodes: []string{"n-new"},
			wantErr: []string{"node n-new of campaign pool is pending"}},
		"its Failed plan exists": {c: campaign(api.Blocked), nodes: []string{"n-failed"},
			plans:   []api.MaintenancePlan{plan("pool-n-failed", "n-failed", api.Failed, api.DeadlineExceeded, ofPool)},
			wantErr: []string{"node n-failed of campaign pool still has its plan pool-n-failed (Failed/deadline-exceeded): a node is retried once its plan is gone; delete it first (kubectl maint uncordon n-failed deletes it and lifts its cordon)"}},
		"its expired plan exists": {c: campaign(api.Blocked), nodes: []string{"n-expired"},
			plans:   []api.MaintenancePlan{plan("pool-n-expired", "n-expired", api.Completed, api.Expired, ofPool)},
			wantErr: []string{"still has its plan pool-n-expired (Completed/expired): a node is retried once its plan is gone; delete it first (kubectl delete mp pool-n-expired)"}},
		"its plan is being deleted": {c: campaign(api.Blocked), nodes: []string{"n-failed"}, plans: []api.MaintenancePlan{deleting},
			wantErr: []string{"still has its plan pool-n-failed (Failed/deadline-exceeded), being deleted: retry once it is gone"}},
		"every refusal named": {c: campaign(api.Blocked), nodes: []string{"n-completed", "n-deleted", "n-pending"},
			wantErr: []string{"node n-completed of campaign pool completed", "; node n-pending of campaign pool is pending"}},
		"a Failed campaign makes no more plans": {c: campaign(api.Failed), nodes: []string{"n-deleted"},
			wantErr: []string{"campaign pool is Failed/r: it makes no more plans"}},
		"a Completed campaign": {c: campaign(api.Completed), nodes: []string{"n-deleted"},
			wantErr: []string{"campaign pool is Completed/r"}},
		"not started": {c: &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "pool"}}, nodes: []string{"n-deleted"},
			wantErr: []string{"campaign pool has not started"}},
	} {
		d, err := Decide(tc.c, tc.plans, tc.nodes)
		if len(tc.wantErr) > 0 {
			if err == nil {
				t.Errorf("%s: no error, decided %+v", name, d)
				continue
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q lacks %q", name, err, want)
				}
			}
			if d.Retry != nil || d.Add != nil {
				t.Errorf("%s: refused, yet decided %+v", name, d)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(struct{ Add, Listed, Retry []string }{tc.add, tc.listed, tc.retry}, struct{ Add, Listed, Retry []string }{d.Add, d.Listed, d.Retry}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		for _, n := range append(d.Add, d.Listed...) {
			if d.Of[n].Name != n {
				t.Errorf("%s: no record of %s: %+v", name, n, d.Of)
			}
		}
	}
}
