// Windows and the health gate: when a drain may start and run, and what
// the node must show after release before it is uncordoned.

package drain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/windows"
)

// Defaults of spec.windows and spec.healthGate.
const (
	DefaultWindowMargin  = 30 * time.Second
	DefaultHealthTimeout = 10 * time.Minute
)

// WindowsOf compiles spec.windows of a plan or a campaign: nil for none.
func WindowsOf(w *api.MaintenanceWindows) (*windows.Windows, error) {
	if w == nil {
		return nil, nil
	}
	entries := func(ws []api.MaintenanceWindow) []windows.Entry {
		out := make([]windows.Entry, len(ws))
		for i, e := range ws {
			out[i] = windows.Entry{Schedule: e.Schedule, Duration: e.Duration.Duration}
		}
		return out
	}
	s := windows.Spec{TimeZone: w.TimeZone, Allow: entries(w.Allow), Deny: entries(w.Deny), Exclude: w.Exclude, Margin: DefaultWindowMargin}
	if w.MaxOverrun != nil {
		s.MaxOverrun = w.MaxOverrun.Duration
	}
	if w.Margin != nil {
		s.Margin = w.Margin.Duration
	}
	return windows.Parse(s)
}

// Stamp is t as a status keeps times (whole seconds, UTC), or nil for a
// zero t.
func Stamp(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	v := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &v
}

// clock is t on the windows' wall clock, for messages.
func clock(w *windows.Windows, t time.Time) string {
	return t.In(w.Location()).Format("2006-01-02 15:04:05 MST")
}

// windowsInvalid blocks a plan whose windows do not parse: before its
// start nothing is written; after, the node stays as it is.
func (d *decider) windowsInvalid() bool {
	if d.winErr == nil {
		return false
	}
	d.set(api.Blocked, api.WindowsInvalid, "spec.windows: %v; nothing more is done until it is fixed", d.winErr)
	return true
}

// need is the time the node needs in a window: its forecast p90 plus the
// margin; with no forecast of its time, the plan's deadline.
func (d *decider) need() (time.Duration, string) {
	if fc := d.f.Forecast; fc != nil && fc.P90 != nil {
		return d.win.Need(fc.P90.Duration), "forecast p90 " + fc.P90.Duration.String()
	}
	return d.win.Need(d.spec.Deadline), "no forecast of its time: the deadline " + d.spec.Deadline.String()
}

// window records in status.window where the plan stands with its windows
// now, with need (what the node needs in a window), and returns when the
// open window ends (zero when none is open) and the next window, if one
// opens.
func (d *decider) window(need *metav1.Duration) (end time.Time, next windows.Interval, ok bool) {
	open, end := d.win.Open(d.at)
	next, ok = d.win.Next(d.at)
	d.st.Window = &api.PlanWindow{Open: open, End: Stamp(end), Need: need}
	if ok {
		d.st.Window.Next = Stamp(next.Start)
	}
	return end, next, ok
}

// outsideWindow holds a plan that has not started when its drain would
// not fit in the window open now: Pending until the next window opens.
func (d *decider) outsideWindow() bool {
	w := d.win
	if w == nil {
		d.st.Window = nil
		return false
	}
	need, why := d.need()
	end, next, ok := d.window(&metav1.Duration{Duration: need})
	open := !end.IsZero()
	if open && !d.at.Add(need).After(end) {
		return false
	}
	then := "no window opens in the next 400 days"
	if ok {
		then = "the next window opens at " + clock(w, next.Start)
		d.requeueAt(next.Start)
	}
	if open {
		d.set(api.Pending, api.OutsideWindow, "the window open now ends at %s, %s from now: node %s needs %s (%s, margin included); %s",
			clock(w, end), end.Sub(d.now).Truncate(time.Second), d.spec.NodeName, need, why, then)
		d.requeueAt(end) // the next window is counted from its end
		return true
	}
	d.set(api.Pending, api.OutsideWindow, "no maintenance window is open: %s", then)
	return true
}

// windowClosed holds a plan in progress once its window has closed and
// its overrun passed: no cordon, eviction or surge until the next window
// (the evictions in flight go on, as in a pause); its deadline counts.
func (d *decider) windowClosed(started time.Time) bool {
	w := d.win
	if w == nil {
		d.st.Window = nil
		return false
	}
	goOn, until := w.Continue(d.at, started)
	var need *metav1.Duration // as the plan's start recorded it
	if d.st.Window != nil {
		need = d.st.Window.Need
	}
	_, next, ok := d.window(need)
	if goOn {
		if !until.IsZero() {
			d.requeueAt(until)
		}
		return false
	}
	then := "no window opens in the next 400 days"
	if ok {
		then = "until the next window opens at " + clock(w, next.Start)
		d.requeueAt(next.Start)
	}
	phase := api.CoolingDown
	if d.st.Phase == api.Cordoning {
		phase = api.Cordoning
	}
	d.set(phase, api.WindowClosed, "the maintenance window closed with node %s in progress (%d pods left): no cordon, eviction or surge %s", d.spec.NodeName, d.st.Pods.Remaining, then)
	return true
}

// healthGate holds a released plan whose node does not yet show what
// spec.healthGate names (and Ready): it stays cordoned, Drained, and
// Blocked past the gate's timeout. A node deleted or re-created since the
// drain started was replaced: the plan completes, nothing to uncordon. It
// reports whether it decided.
func (d *decider) healthGate() bool {
	g := d.spec.HealthGate
	if g == nil || !Started(&d.st) || d.st.Phase == api.Uncordoning {
		return false
	}
	node, ep := d.f.Node, d.st.EvictionProgress
	if node == nil || (ep.NodeUID != "" && node.UID != ep.NodeUID) {
		d.set(api.Completed, api.NodeReplaced, "node %s was deleted or re-created after the drain started (replaced, not rebooted): nothing to uncordon", d.spec.NodeName)
		return true
	}
	missing := Unhealthy(node, g)
	if len(missing) == 0 {
		return false
	}
	timeout := DefaultHealthTimeout
	if g.Timeout != nil {
		timeout = g.Timeout.Duration
	}
	by := d.st.ReleasedAt.Add(timeout)
	if d.now.Before(by) {
		d.requeueAt(by)
		d.set(api.Drained, api.WaitingForHealth, "released; node %s stays cordoned until it is healthy: %s (timeout at %s)",
			node.Name, strings.Join(missing, "; "), by.UTC().Format(time.RFC3339))
		return true
	}
	d.set(api.Blocked, api.NodeUnhealthy, "node %s is not healthy %s after its release: %s; it stays cordoned; the plan completes once it is healthy (or delete the plan to uncordon it)",
		node.Name, timeout, strings.Join(missing, "; "))
	return true
}

// Unhealthy lists what node lacks of gate g, and Ready: empty when it
// holds.
func Unhealthy(node *corev1.Node, g *api.HealthGate) []string {
	var missing []string
	want := append([]api.NodeConditionGate{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}, g.Conditions...)
	for _, c := range want {
		got := "absent"
		for _, nc := range node.Status.Conditions {
			if nc.Type == c.Type {
				got = string(nc.Status)
			}
		}
		if got != string(c.Status) {
			missing = append(missing, fmt.Sprintf("condition %s is %s, want %s", c.Type, got, c.Status))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		if v, ok := node.Labels[k]; !ok {
			missing = append(missing, fmt.Sprintf("label %s is absent, want %q", k, g.Labels[k]))
		} else if v != g.Labels[k] {
			missing = append(missing, fmt.Sprintf("label %s is %q, want %q", k, v, g.Labels[k]))
		}
	}
	return missing
}
