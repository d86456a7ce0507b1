package view

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func campaignPlan(name, node string, phase api.Phase, reason api.Reason) api.MaintenancePlan {
	p := api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.CampaignLabel: "c"}}}
	p.Spec.NodeName = node
	p.Status.Phase, p.Status.Reason = phase, reason
	return p
}

// TestNodesOf: a node's state is its plan's phase, grouped, while the
// plan exists (and is the one the campaign recorded), else its outcome.
func TestNodesOf(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	c := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
	c.Status.Phase, c.Status.Reason, c.Status.Wave = api.Draining, api.WaveStarted, 1
	c.Status.Nodes = []string{"a", "b", "d", "e", "f", "g", "h"}
	plans := []api.MaintenancePlan{
		campaignPlan("c-a", "a", api.CoolingDown, api.BudgetExhausted),
		campaignPlan("c-b", "b", api.Uncordoning, ""),
		campaignPlan("c-d", "d", api.Blocked, ""),
		campaignPlan("c-h", "h", api.Completed, api.Expired),
		campaignPlan("other", "x", api.Draining, ""),
	}
	c.Status.NodeStatus = []api.CampaignNode{
		{Name: "a", Outcome: api.NodePlanned, Plan: "c-a"}, {Name: "b", Outcome: api.NodePlanned, Plan: "c-b"},
		{Name: "d", Outcome: api.NodeBlocked, Plan: "c-d"}, {Name: "e", Outcome: api.NodeCompleted, Plan: "c-e"},
		{Name: "f", Outcome: api.NodeDeleted, Plan: "c-f"}, {Name: "g", Outcome: api.NodePending},
		{Name: "h", Outcome: api.NodeExpired, Plan: "c-h", PlanUID: "not-this-one"},
	}
	got := map[string]State{}
	for _, n := range NodesOf(c, plans) {
		got[n.Name] = n.State
	}
	want := map[string]State{"a": StateDraining, "b": StateDrained, "d": StateBlocked, "e": StateCompleted, "f": StateDeleted, "g": StatePending, "h": StateExpired}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
	frame := CampaignFrame(c, plans, now, 60)
	for _, l := range frame {
		if n := len([]rune(l)); n > 59 {
			t.Errorf("line of %d runes, more than 59: %q", n, l)
		}
	}
	all := strings.Join(CampaignFrame(c, plans, now, 200), "\n")
	for _, s := range []string{"campaign c  Draining/wave-started  wave 1", "7 nodes: 1 pending, 1 draining, 1 drained, 1 completed, 1 blocked, 1 expired, 1 deleted", "breaker: closed", "  a  CoolingDown/pdb-budget-exhausted"} {
		if !strings.Contains(all, s) {
			t.Errorf("frame lacks %q:\n%s", s, all)
		}
	}
}

// TestCampaignETA: the wave's ETA is its plans' latest; the campaign's
// is the pace so far.
func TestCampaignETA(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	c := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	c.Status.Phase, c.Status.Wave, c.Status.StartedAt = api.Draining, 2, &metav1.Time{Time: now.Add(-10 * time.Minute)}
	nodes := []CampaignNode{{Name: "a", State: StateCompleted}, {Name: "b", State: StateDraining}, {Name: "c", State: StatePending}, {Name: "d", State: StatePending}}
	p := campaignPlan("c-b", "b", api.Draining, "")
	p.Status.Forecast = &api.Forecast{Verdict: "ok", ETA: &metav1.Time{Time: now.Add(3 * time.Minute)}}
	nodes[1].Plan = &p
	got := CampaignETA(c, nodes, now)
	if !strings.Contains(got, "wave 2 by "+now.Add(3*time.Minute).Local().Format(time.TimeOnly)+" (in 3m,") ||
		!strings.Contains(got, "all 4 nodes by "+now.Add(30*time.Minute).Local().Format(time.TimeOnly)+" at the pace so far (1 drained in 10m)") {
		t.Errorf("ETA %q", got)
	}
}
