package view

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones do not depend on the machine's zoneinfo

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func mtime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// gatedCampaign is campaign c at now (Monday 02:30 in Berlin) with a
// window open until 05:00, two windows needed, and a node in each wait
// of the windows and the health gate.
func gatedCampaign(now time.Time) (*api.MaintenanceCampaign, []api.MaintenancePlan) {
	c := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	c.Spec.Nodes = []string{"a", "b", "d", "e", "f", "g"}
	c.Spec.Windows = &api.MaintenanceWindows{TimeZone: "Europe/Berlin", Allow: []api.MaintenanceWindow{{Schedule: "0 2 * * 1-5", Duration: metav1.Duration{Duration: 3 * time.Hour}}},
		Exclude: []string{"2026-12-24"}, Margin: &metav1.Duration{Duration: time.Minute}}
	c.Spec.HealthGate = &api.HealthGate{Conditions: []api.NodeConditionGate{{Type: "KernelUpgraded", Status: corev1.ConditionTrue}}, Labels: map[string]string{"kernel": "6.12"}, Timeout: &metav1.Duration{Duration: 10 * time.Minute}}
	c.Spec.Release = true
	c.Status.Phase, c.Status.Reason, c.Status.Wave = api.Draining, api.WaveStarted, 2
	c.Status.Nodes = c.Spec.Nodes
	c.Status.Windows = &api.CampaignWindows{Open: true, End: mtime(now.Add(150 * time.Minute)), Needed: 2,
		LastEnd: mtime(now.Add(24*time.Hour + 150*time.Minute)), ETA: mtime(now.Add(24*time.Hour + 102*time.Minute))}
	plans := []api.MaintenancePlan{
		campaignPlan("c-a", "a", api.Pending, api.OutsideWindow),
		campaignPlan("c-b", "b", api.Pending, api.OutsideWindow),
		campaignPlan("c-d", "d", api.Draining, api.WindowClosed),
		campaignPlan("c-e", "e", api.Uncordoning, api.WaitingForHealth),
		campaignPlan("c-f", "f", api.Blocked, api.NodeUnhealthy),
		campaignPlan("c-g", "g", api.Completed, api.NodeReplaced),
	}
	plans[0].Status.Message = "the window open has 20m left, the node needs 25m"
	plans[4].Status.Message = "node f is not Ready 10m after its release"
	for _, p := range plans {
		c.Status.NodeStatus = append(c.Status.NodeStatus, api.CampaignNode{Name: p.Spec.NodeName, Outcome: api.NodePlanned, Plan: p.Name, Wave: 1})
	}
	return c, plans
}

// TestCampaignFrameGates: the live view shows the window and counts the
// nodes waiting for a window or for health, in the windows' zone.
func TestCampaignFrameGates(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 30, 0, 0, time.UTC) // Monday 02:30 CET
	c, plans := gatedCampaign(now)
	frame := CampaignFrame(c, plans, now, 200)
	got := append(frame[4:6:6], frame[len(frame)-1])
	want := []string{
		"window: open until 05:00 CET (in 2h30m); 2 needed, the last ends Tue 05:00 CET",
		"waiting: 2 for a window (a, b); 1 paused at a window's end (d); 1 for health (e); 1 unhealthy (f)",
		"ETA: all nodes by Tue 04:12 CET across 2 windows",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the frame's window and waits (-want +got):\n%s", d)
	}
	c.Status.Windows = &api.CampaignWindows{Next: mtime(now.Add(47*time.Hour + 30*time.Minute)), Needed: 1, Message: "node x needs 4h, more than any window offers"}
	if got, want := WindowLine(c, now), "window: closed, next opens Wed 02:00 CET (in 47h30m); 1 needed; node x needs 4h, more than any window offers"; got != want {
		t.Errorf("closed:\n got %q\nwant %q", got, want)
	}
	c.Status.Windows = nil
	if got, want := WindowLine(c, now), "window: not forecast yet"; got != want {
		t.Errorf("no status.windows: %q, want %q", got, want)
	}
	c.Status.Phase = api.Completed
	if got := WindowLine(c, now); got != "" {
		t.Errorf("Completed, no status.windows: %q, want nothing", got)
	}
	c.Spec.Windows = nil
	if got := WindowLine(c, now); got != "" {
		t.Errorf("no spec.windows: %q, want nothing", got)
	}
}

// TestCampaignDetailGates: status CAMPAIGN shows the windows and the
// health gate in short, where the window stands, the waits, and each
// waiting node's message.
func TestCampaignDetailGates(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 30, 0, 0, time.UTC)
	c, plans := gatedCampaign(now)
	var b bytes.Buffer
	if err := CampaignDetail(&b, c, plans, now); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for l := range strings.SplitSeq(b.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, " ") {
			rows[k] = strings.TrimSpace(v)
		}
	}
	for k, want := range map[string]string{
		"Windows":     "0 2 * * 1-5 for 3h, not 2026-12-24; Europe/Berlin; margin 1m",
		"Window":      "open until 05:00 CET (in 2h30m); 2 needed, the last ends Tue 05:00 CET",
		"ETA":         "all nodes by Tue 04:12 CET across 2 windows",
		"Health gate": "Ready, KernelUpgraded=True, label kernel=6.12; within 10m",
		"Waiting":     "2 for a window (a, b); 1 paused at a window's end (d); 1 for health (e); 1 unhealthy (f)",
	} {
		if rows[k] != want {
			t.Errorf("row %s: %q, want %q\n%s", k, rows[k], want, b.String())
		}
	}
	for _, want := range []string{
		`(?m)^    a +c-a \(wave 1\) +Pending/outside-window +0/0 evicted +the window open has 20m left, the node needs 25m$`,
		`(?m)^    f +c-f \(wave 1\) +Blocked/node-unhealthy +0/0 evicted +node f is not Ready 10m after its release$`,
	} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("the detail lacks %q:\n%s", want, b.String())
		}
	}
}

// TestPlanWindowLine: a plan's window, in its zone, with what the node
// needs of it.
func TestPlanWindowLine(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 30, 0, 0, time.UTC)
	p := campaignPlan("p", "n", api.Pending, api.OutsideWindow)
	p.Spec.Windows = &api.MaintenanceWindows{TimeZone: "America/New_York", Allow: []api.MaintenanceWindow{{Schedule: "@daily", Duration: metav1.Duration{Duration: time.Hour}}}}
	p.Status.Window = &api.PlanWindow{Next: mtime(time.Date(2026, 12, 8, 5, 0, 0, 0, time.UTC)), Need: &metav1.Duration{Duration: 90 * time.Second}}
	if got, want := PlanWindowLine(&p, now), "window: closed, next opens Tue 00:00 EST (in 27h30m); the node needs 1m30s of it"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !strings.Contains(strings.Join(Frame(&p, now, 200), "\n"), "window: closed, next opens") {
		t.Errorf("the plan's frame lacks its window:\n%s", strings.Join(Frame(&p, now, 200), "\n"))
	}
}
