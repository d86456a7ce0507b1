// A campaign's windows: refused when they do not parse, and forecast
// across the windows to come.

package campaign

import (
	"errors"
	"fmt"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/windows"
)

// decideIn decides within the campaign's windows: a campaign whose windows
// do not parse is Blocked before it makes a plan (a plan it made already
// blocks on them too); the windows' forecast follows the decision.
func (d *decider) decideIn() error {
	w, err := drain.WindowsOf(d.spec.Windows)
	if err != nil {
		if !Final(&d.st) {
			d.set(api.Blocked, api.WindowsInvalid, "spec.windows: %v; no plan is made until it is fixed", err)
		}
		return nil
	}
	if err := d.decide(); err != nil {
		return err
	}
	d.estimate(w)
	return nil
}

// estimate sets status.windows: whether a window is open, and how many the
// nodes not begun need, when the last ends and the ETA. A node's need is
// its plan's forecast p90; a node with no plan yet, or no forecast, takes
// the longest p90 of the campaign's plans (none: no estimate yet).
func (d *decider) estimate(w *windows.Windows) {
	if w == nil || Final(&d.st) || d.st.StartedAt == nil {
		d.st.Windows = nil
		return
	}
	cw := &api.CampaignWindows{}
	open, end := w.Open(d.at)
	cw.Open, cw.End = open, drain.Stamp(end)
	if open {
		d.requeueAt(end)
	}
	if next, ok := w.Next(d.at); ok {
		cw.Next = drain.Stamp(next.Start)
		d.requeueAt(next.Start)
	}
	known := map[string]time.Duration{}
	var longest time.Duration
	begun := map[string]bool{}
	for _, p := range d.f.Plans {
		if fc := p.Status.Forecast; fc != nil && fc.P90 != nil {
			known[p.Spec.NodeName] = fc.P90.Duration
			longest = max(longest, fc.P90.Duration)
		}
		if drain.Started(&p.Status) || drain.Final(&p.Status) {
			begun[p.Spec.NodeName] = true
		}
	}
	var p90s []time.Duration
	for _, n := range d.st.NodeStatus {
		if begun[n.Name] || (n.Outcome != api.NodePending && n.Outcome != api.NodePlanned) {
			continue
		}
		p90, ok := known[n.Name]
		if !ok {
			p90 = longest
		}
		p90s = append(p90s, p90)
	}
	switch {
	case len(p90s) == 0:
	case longest == 0:
		cw.Message = "no forecast yet: the first plans make one"
	default:
		parallel := min(BudgetNodes(d.spec.Budget, len(d.st.Nodes)), max(d.f.MaxNodes, 1))
		est, err := w.Plan(d.at, p90s, parallel)
		var nofit *windows.NoFitError
		switch {
		case errors.As(err, &nofit):
			cw.Message = fmt.Sprintf("a node needs %s (forecast p90 plus margin): no window to come is that long", nofit.Need)
		case err != nil:
			cw.Message = err.Error()
		default:
			cw.Needed, cw.LastEnd, cw.ETA = int32(est.Windows), drain.Stamp(est.LastEnd), drain.Stamp(est.Done)
		}
	}
	d.st.Windows = cw
}
