package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// windowed is a world whose plan may work from 11:00 to 11:30 Berlin time
// (10:00 to 10:30 UTC, t0's day) with a margin of 5m, and whose node's
// forecast p90 is 10m: it needs 15m of a window.
func windowed(overrun time.Duration) *world {
	w := newWorld()
	w.plan.Spec.StartWithin = &metav1.Duration{Duration: 48 * time.Hour}
	w.plan.Spec.Deadline = &metav1.Duration{Duration: 48 * time.Hour}
	w.plan.Spec.Windows = &api.MaintenanceWindows{TimeZone: "Europe/Berlin",
		Allow:      []api.MaintenanceWindow{{Schedule: "0 11 * * *", Duration: metav1.Duration{Duration: 30 * time.Minute}}},
		Margin:     &metav1.Duration{Duration: 5 * time.Minute},
		MaxOverrun: &metav1.Duration{Duration: overrun}}
	w.facts.Forecast = &analyze.Forecast{Verdict: analyze.VerdictOK, P50: &metav1.Duration{Duration: 5 * time.Minute}, P90: &metav1.Duration{Duration: 10 * time.Minute}}
	return w
}

// TestWindowStart: a plan cordons only in an open window with the time it
// needs left in it; otherwise it waits, Pending, for the next window, and
// says when that opens.
func TestWindowStart(t *testing.T) {
	next := t0.Add(24 * time.Hour)
	for _, tc := range []struct {
		name     string
		at       time.Time
		forecast bool
		cordon   bool
		requeue  time.Time
		msg      string
	}{
		{"fits", t0.Add(5 * time.Minute), true, true, time.Time{}, ""},
		{"fits exactly", t0.Add(15 * time.Minute), true, true, time.Time{}, ""},
		{"too little left", t0.Add(15*time.Minute + time.Second), true, false, t0.Add(30 * time.Minute), "needs 15m0s"},
		{"closed", t0.Add(40 * time.Minute), true, false, next, "no maintenance window is open: the next window opens at 2026-12-02 11:00:00 CET"},
		{"before it opens", t0.Add(-time.Minute), true, false, t0, "opens at 2026-12-01 11:00:00 CET"},
		{"no forecast: the deadline is its need", t0, false, false, t0.Add(30 * time.Minute), "no forecast of its time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := windowed(0)
			if !tc.forecast {
				w.facts.Forecast = nil
			}
			dec := Decide(w.facts, w.plan, tc.at)
			if got := dec.Action == Cordon; got != tc.cordon {
				t.Fatalf("cordon %t, want %t: %s/%s %s", got, tc.cordon, dec.Status.Phase, dec.Status.Reason, dec.Status.Message)
			}
			if tc.cordon {
				if pw := dec.Status.Window; pw == nil || !pw.Open || pw.Need == nil || pw.Need.Duration != 15*time.Minute || !pw.End.Time.Equal(t0.Add(30*time.Minute)) {
					t.Errorf("status.window %+v", pw)
				}
				return
			}
			if dec.Status.Phase != api.Pending || dec.Status.Reason != api.OutsideWindow || !strings.Contains(dec.Status.Message, tc.msg) {
				t.Errorf("%s/%s %q, want Pending/outside-window naming %q", dec.Status.Phase, dec.Status.Reason, dec.Status.Message, tc.msg)
			}
			if got := tc.at.Add(dec.Requeue); !got.Equal(tc.requeue) {
				t.Errorf("decides again at %s, want %s", got, tc.requeue)
			}
		})
	}
}

// TestWindowClosed: a node in progress stops evicting when its window
// closes (overrun 0) until the next one, or goes on for the overrun.
func TestWindowClosed(t *testing.T) {
	at := t0.Add(31 * time.Minute)
	w := windowed(0)
	w.started(api.Draining, api.EvictionAccepted)
	dec := Decide(w.facts, w.plan, at)
	if dec.Action != None || dec.Status.Phase != api.CoolingDown || dec.Status.Reason != api.WindowClosed ||
		!strings.Contains(dec.Status.Message, "until the next window opens at 2026-12-02 11:00:00 CET") {
		t.Fatalf("%q %s/%s %q, want no action, CoolingDown/window-closed", dec.Action, dec.Status.Phase, dec.Status.Reason, dec.Status.Message)
	}
	if got := at.Add(dec.Requeue); !got.Equal(t0.Add(24 * time.Hour)) {
		t.Errorf("decides again at %s, want the next window", got)
	}
	w = windowed(5 * time.Minute)
	w.started(api.Draining, api.EvictionAccepted)
	if dec := Decide(w.facts, w.plan, at); dec.Action != Evict {
		t.Errorf("within the overrun: %q %s/%s, want an eviction", dec.Action, dec.Status.Phase, dec.Status.Reason)
	}
	if dec := Decide(w.facts, w.plan, t0.Add(35*time.Minute)); dec.Action != None || dec.Status.Reason != api.WindowClosed {
		t.Errorf("past the overrun: %q %s/%s, want window-closed", dec.Action, dec.Status.Phase, dec.Status.Reason)
	}
}

// TestWindowsInvalid: windows that do not parse block the plan, naming
// the field, before any write.
func TestWindowsInvalid(t *testing.T) {
	w := windowed(0)
	w.plan.Spec.Windows.TimeZone = "Mars/Olympus"
	dec := Decide(w.facts, w.plan, t0.Add(5*time.Minute))
	if dec.Action != None || dec.Status.Phase != api.Blocked || dec.Status.Reason != api.WindowsInvalid || !strings.Contains(dec.Status.Message, "windows.timeZone") {
		t.Errorf("%q %s/%s %q, want Blocked/windows-invalid naming windows.timeZone", dec.Action, dec.Status.Phase, dec.Status.Reason, dec.Status.Message)
	}
}

// TestHealthGate: released, a plan uncordons only once its node is Ready
// with the gate's condition and label; past the timeout it is Blocked
// (and still uncordons once healthy); a node deleted after release
// completes the plan.
func TestHealthGate(t *testing.T) {
	gated := func() *world {
		w := newWorld()
		w.started(api.Drained, api.ReasonDrained)
		w.plan.Spec.Release = true
		w.plan.Spec.HealthGate = &api.HealthGate{Conditions: []api.NodeConditionGate{{Type: "KernelUpgraded", Status: corev1.ConditionTrue}},
			Labels: map[string]string{"os": "v2"}, Timeout: &metav1.Duration{Duration: 5 * time.Minute}}
		w.facts.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
		w.facts.Node.Labels = map[string]string{"os": "v1"}
		return w
	}
	w := gated()
	dec := Decide(w.facts, w.plan, t0.Add(time.Minute))
	if dec.Action != None || dec.Status.Phase != api.Drained || dec.Status.Reason != api.WaitingForHealth {
		t.Fatalf("%q %s/%s, want Drained/waiting-for-health", dec.Action, dec.Status.Phase, dec.Status.Reason)
	}
	for _, part := range []string{"condition Ready is False, want True", "condition KernelUpgraded is absent, want True", `label os is "v1", want "v2"`} {
		if !strings.Contains(dec.Status.Message, part) {
			t.Errorf("message does not say %q: %s", part, dec.Status.Message)
		}
	}
	if ra := dec.Status.ReleasedAt; ra == nil || !ra.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("releasedAt %v, want the first decision after release", ra)
	}
	if got := dec.Requeue; got != 5*time.Minute {
		t.Errorf("requeue %s, want the gate's timeout", got)
	}
	w.plan.Status = dec.Status
	dec = Decide(w.facts, w.plan, t0.Add(6*time.Minute))
	if dec.Action != None || dec.Status.Phase != api.Blocked || dec.Status.Reason != api.NodeUnhealthy || !strings.Contains(dec.Status.Message, "not healthy 5m0s after its release") {
		t.Fatalf("past the timeout: %q %s/%s %q, want Blocked/node-unhealthy", dec.Action, dec.Status.Phase, dec.Status.Reason, dec.Status.Message)
	}
	w.plan.Status = dec.Status
	w.facts.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}, {Type: "KernelUpgraded", Status: corev1.ConditionTrue}}
	if dec := Decide(w.facts, w.plan, t0.Add(7*time.Minute)); dec.Action != None || dec.Status.Reason != api.NodeUnhealthy || !strings.Contains(dec.Status.Message, "label os") {
		t.Errorf("label still wrong: %q %s/%s %q", dec.Action, dec.Status.Phase, dec.Status.Reason, dec.Status.Message)
	}
	w.facts.Node.Labels["os"] = "v2"
	if dec := Decide(w.facts, w.plan, t0.Add(7*time.Minute)); dec.Action != Uncordon {
		t.Errorf("healthy: %q %s/%s, want the uncordon", dec.Action, dec.Status.Phase, dec.Status.Reason)
	}
	// Replaced: the node deleted, or re-created under its name.
	for name, node := range map[string]*corev1.Node{"deleted": nil, "re-created": {ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "new-uid"}}} {
		w := gated()
		w.facts.Node = node
		if dec := Decide(w.facts, w.plan, t0.Add(time.Minute)); dec.Action != None || dec.Status.Phase != api.Completed || dec.Status.Reason != api.NodeReplaced {
			t.Errorf("%s: %q %s/%s, want Completed/node-replaced", name, dec.Action, dec.Status.Phase, dec.Status.Reason)
		}
	}
	// No gate: released, it uncordons at once.
	w = gated()
	w.plan.Spec.HealthGate = nil
	if dec := Decide(w.facts, w.plan, t0.Add(time.Minute)); dec.Action != Uncordon {
		t.Errorf("no gate: %q, want the uncordon", dec.Action)
	}
}
