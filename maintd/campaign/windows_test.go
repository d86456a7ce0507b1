package campaign

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// TestCampaignWindows: a campaign copies its windows and health gate to its
// plans and forecasts, once its plans carry forecasts, how many windows
// the nodes not begun need; windows that do not parse block it before any
// plan.
func TestCampaignWindows(t *testing.T) {
	spec := pool
	spec.Budget = &api.CampaignBudget{Nodes: ptrInt(2)}
	// Windows of 10 minutes every hour, from 10:00 UTC (11:00 in Berlin).
	spec.Windows = &api.MaintenanceWindows{TimeZone: "Europe/Berlin", Margin: &metav1.Duration{Duration: time.Minute},
		Allow: []api.MaintenanceWindow{{Schedule: "0 * * * *", Duration: metav1.Duration{Duration: 10 * time.Minute}}}}
	spec.HealthGate = &api.HealthGate{Labels: map[string]string{"os": "v2"}}
	c := newCampaign(spec)
	f := facts(true)
	d := decide(t, c, f, t0)
	plans := made(d, api.Pending)
	if len(plans) != 2 {
		t.Fatalf("%d plans, want the budget's 2", len(plans))
	}
	for _, p := range plans {
		if p.Spec.Windows == nil || p.Spec.Windows.TimeZone != "Europe/Berlin" || p.Spec.HealthGate == nil || p.Spec.HealthGate.Labels["os"] != "v2" {
			t.Errorf("plan %s: windows %+v, health gate %+v; want the campaign's", p.Name, p.Spec.Windows, p.Spec.HealthGate)
		}
	}
	if w := c.Status.Windows; w == nil || !w.Open || !w.End.Time.Equal(t0.Add(10*time.Minute)) || w.Message != "no forecast yet: the first plans make one" {
		t.Fatalf("status.windows %+v", c.Status.Windows)
	}
	// Each node needs 4m (p90 3m, margin 1m): two at a time, two rounds of
	// two fit a 10m window: the 5 nodes take 2 windows, the last ending
	// at 11:10 UTC.
	for _, p := range plans {
		p.Status.Forecast = &api.Forecast{P90: &metav1.Duration{Duration: 3 * time.Minute}}
	}
	f.Plans = plans
	decide(t, c, f, t0)
	w := c.Status.Windows
	if w == nil || w.Needed != 2 || !w.LastEnd.Time.Equal(t0.Add(70*time.Minute)) || !w.ETA.Time.Equal(t0.Add(64*time.Minute)) || w.Message != "" {
		t.Errorf("status.windows %+v, want 2 windows, the last ending at 11:10, ETA 11:04", w)
	}
	// A node that needs more than a window offers: no estimate, said.
	plans[0].Status.Forecast.P90.Duration = 20 * time.Minute
	decide(t, c, f, t0)
	if w := c.Status.Windows; w == nil || w.Needed != 0 || !strings.Contains(w.Message, "needs 21m0s") {
		t.Errorf("status.windows %+v, want no estimate and why", w)
	}

	bad := newCampaign(spec)
	bad.Spec.Windows = &api.MaintenanceWindows{Allow: []api.MaintenanceWindow{{Schedule: "61 * * * *", Duration: metav1.Duration{Duration: time.Hour}}}}
	if d := decide(t, bad, facts(true), t0); len(d.Create) != 0 || bad.Status.Phase != api.Blocked || bad.Status.Reason != api.WindowsInvalid || !strings.Contains(bad.Status.Message, "windows.allow[0].schedule") {
		t.Errorf("bad windows: %d plans, %s/%s %q", len(d.Create), bad.Status.Phase, bad.Status.Reason, bad.Status.Message)
	}
}

// TestHealthGateTripsBreaker: a node of the campaign past its health gate
// counts toward the breaker as a node NotReady.
func TestHealthGateTripsBreaker(t *testing.T) {
	c := newCampaign(pool)
	c.Spec.Breaker = api.Breaker{MaxNotReadyNodes: 1}
	f := facts(true)
	plans := made(decide(t, c, f, t0), api.Drained)
	plans[0].Status.Phase, plans[0].Status.Reason = api.Blocked, api.NodeUnhealthy
	f.Plans = plans
	f.Sick.NotReady = []string{"b1"}
	decide(t, c, f, t0.Add(time.Minute))
	if b := c.Status.Breaker; b == nil || !b.Open || !strings.Contains(b.Message, "a1 (its health gate)") || !strings.Contains(b.Message, "past their health gate") {
		t.Errorf("breaker %+v, want it open naming a1's health gate", b)
	}
}

func ptrInt(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
