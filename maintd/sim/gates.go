// Windows and health gates (issue 34): the campaign seeds whose campaign
// has maintenance windows or a health gate, an upgrade agent that brings
// released nodes back (at once, late, or never), and the promises about
// them, judged by the world's own reading of what the person wrote.

package sim

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// gateLabel is the label the upgrade agent sets when a node is back.
const gateLabel = "sentinel.dev/upgraded"

// gates is what the world knows of the campaign's windows and health
// gate, as the person wrote them.
type gates struct {
	// r draws, apart from the others, which campaign seeds have windows
	// or a gate and what they are, and the agent's behaviour per node.
	r *rand.Rand
	// every and span: windows open at every local minute of the hour that
	// is a multiple of every ("*/N * * * *", N dividing 60) for span, in
	// loc; overrun and margin as written.
	windowed               bool
	every, span            time.Duration
	loc                    *time.Location
	overrun, margin        time.Duration
	gated                  bool
	campaign               types.UID
	agent                  map[string]int // node -> 0 at once, 1 late, 2 never
	late                   map[string]time.Duration
	seen                   map[string]time.Time
	cordons, evicts, holds int
}

func newGates(seed int64) *gates {
	return &gates{r: rand.New(rand.NewPCG(uint64(seed), 0x6a7e5)), agent: map[string]int{}, late: map[string]time.Duration{}, seen: map[string]time.Time{}}
}

var windowZones = []string{"UTC", "Europe/Berlin", "Asia/Kolkata", "America/New_York"}

// drawGates gives, from its own stream, 1 in 3 campaign seeds windows
// (every 5 to 30 minutes, open a third to two thirds of it, in one of
// four zones, a margin up to 2 minutes, an overrun at 1 in 3) and 1 in 3
// a health gate (the agent's label, a timeout of 5 to 20 minutes); none
// to a seed of Fixed, which replays the schedule that found its defect.
func (w *World) drawGates(sc *Scenario) {
	g := w.gates
	if _, replay := Fixed[w.Seed]; sc.Campaign == nil || replay {
		return
	}
	if g.r.IntN(3) == 0 {
		every := []int{5, 10, 15, 20, 30}[g.r.IntN(5)]
		span := time.Duration(every*20+g.r.IntN(every*20)) * time.Second
		zone := windowZones[g.r.IntN(len(windowZones))]
		margin, overrun := time.Duration(g.r.IntN(121))*time.Second, time.Duration(0)
		if g.r.IntN(3) == 0 {
			overrun = time.Duration(1+g.r.IntN(180)) * time.Second
		}
		sc.Campaign.Windows = &api.MaintenanceWindows{TimeZone: zone, Margin: &metav1.Duration{Duration: margin}, MaxOverrun: &metav1.Duration{Duration: overrun},
			Allow: []api.MaintenanceWindow{{Schedule: fmt.Sprintf("*/%d * * * *", every), Duration: metav1.Duration{Duration: span}}}}
		// Windows stretch a campaign: a longer deadline.
		sc.Campaign.Deadline = &metav1.Duration{Duration: time.Duration(120+g.r.IntN(120)) * time.Minute}
	}
	if g.r.IntN(3) == 0 {
		sc.Campaign.HealthGate = &api.HealthGate{Labels: map[string]string{gateLabel: "true"}, Timeout: &metav1.Duration{Duration: time.Duration(5+g.r.IntN(16)) * time.Minute}}
	}
}

// read is the world's reading of the windows and gate people wrote on the
// campaign: a schedule "*/N * * * *" (N dividing 60) and a duration, in a
// zone; the gate's label. The world draws no other kind, and a written
// schedule writes none. w.mu need not be held (before the campaign is
// made).
func (g *gates) read(s *api.MaintenanceCampaignSpec) error {
	g.gated = s.HealthGate != nil
	ws := s.Windows
	if ws == nil {
		return nil
	}
	var every int
	if len(ws.Allow) != 1 || len(ws.Deny)+len(ws.Exclude) > 0 {
		return fmt.Errorf("windows the world cannot read: %+v", ws)
	}
	if _, err := fmt.Sscanf(ws.Allow[0].Schedule, "*/%d * * * *", &every); err != nil || every <= 0 || 60%every != 0 {
		return fmt.Errorf("a schedule the world cannot read: %q", ws.Allow[0].Schedule)
	}
	loc, err := time.LoadLocation(ws.TimeZone)
	if err != nil {
		return err
	}
	g.windowed, g.every, g.span, g.loc = true, time.Duration(every)*time.Minute, ws.Allow[0].Duration.Duration, loc
	g.margin, g.overrun = 30*time.Second, 0 // the margin's default, as the CRD says
	if ws.Margin != nil {
		g.margin = ws.Margin.Duration
	}
	if ws.MaxOverrun != nil {
		g.overrun = ws.MaxOverrun.Duration
	}
	return nil
}

// gateText is the campaign's windows and gate for the trace.
func gateText(s *api.MaintenanceCampaignSpec) string {
	out := ""
	if ws := s.Windows; ws != nil {
		d := func(v *metav1.Duration) string {
			if v == nil {
				return "unset"
			}
			return v.Duration.String()
		}
		for _, a := range ws.Allow {
			out += fmt.Sprintf(", windows %s for %s", a.Schedule, a.Duration.Duration)
		}
		out += fmt.Sprintf(" in %s (margin %s, overrun %s)", ws.TimeZone, d(ws.Margin), d(ws.MaxOverrun))
	}
	if s.HealthGate != nil {
		out += fmt.Sprintf(", health gate %v", s.HealthGate.Labels)
	}
	return out
}

// window is the world's reading of the schedule at t: whether a window is
// open, and the start of the period t is in (a window opens at it).
func (g *gates) window(t time.Time) (open bool, start time.Time) {
	l := t.In(g.loc)
	into := time.Duration(l.Minute())*time.Minute%g.every + time.Duration(l.Second())*time.Second + time.Duration(l.Nanosecond())
	return into < g.span, t.Add(-into)
}

// ofCampaign reports whether p is a plan of the campaign with windows or
// a gate.
func (g *gates) ofCampaign(p *api.MaintenancePlan) bool {
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "MaintenanceCampaign" && ref.UID == g.campaign && g.campaign != "" {
			return true
		}
	}
	return false
}

// startsInWindow checks a campaign plan's decision to cordon: in an open
// window, with at least the margin left in it. w.mu is held.
func (w *World) startsInWindow(in *instance, p *api.MaintenancePlan) {
	g := w.gates
	if !g.windowed || !g.ofCampaign(p) {
		return
	}
	g.cordons++
	at := w.sentAt(in)
	open, start := g.window(at)
	switch {
	case !open:
		w.violate("%s decided to cordon %s at %s, outside every window (%s)", in.name, p.Spec.NodeName, at.In(g.loc).Format(time.TimeOnly), gateText(&api.MaintenanceCampaignSpec{Windows: p.Spec.Windows}))
	case start.Add(g.span).Sub(at) < g.margin:
		w.violate("%s decided to cordon %s at %s, %s before its window's end: less than the margin %s", in.name, p.Spec.NodeName, at.In(g.loc).Format(time.TimeOnly), start.Add(g.span).Sub(at), g.margin)
	}
}

// evictsInWindow checks an eviction of a campaign plan's pod: in an open
// window, or within the overrun after the end of a window that closed
// while the node was in progress. w.mu is held.
func (w *World) evictsInWindow(in *instance, ev *policyv1.Eviction, pod *corev1.Pod) {
	g := w.gates
	if !g.windowed || ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
		return
	}
	p := w.cordonPlan(pod.Spec.NodeName)
	if p == nil || !g.ofCampaign(p) {
		return
	}
	g.evicts++
	at := w.sentAt(in)
	open, start := g.window(at)
	if open {
		return
	}
	end := start.Add(g.span)
	if began, ok := w.drainStart[p.UID]; ok && at.Sub(end) < g.overrun && end.After(began) {
		return
	}
	w.violate("%s evicted %s/%s of plan %s at %s, outside every window (the last closed at %s, overrun %s)", in.name, ev.Namespace, ev.Name, p.Name,
		at.In(g.loc).Format(time.TimeOnly), end.In(g.loc).Format(time.TimeOnly), g.overrun)
}

// uncordonsHealthy checks a write of maintd that lifts a campaign plan's
// cordon while the plan is released and not being deleted: the node was
// Ready with the agent's label. A plan deleted lifts its cordon whatever
// the gate says. w.mu is held.
func (w *World) uncordonsHealthy(in *instance, before, after *corev1.Node) {
	g := w.gates
	if !g.gated || !before.Spec.Unschedulable || after.Spec.Unschedulable {
		return
	}
	name, uid, ok := drain.ParseOwner(before.Annotations[cordon.OwnerAnnotation])
	if !ok {
		return
	}
	o, err := w.s.get(plansR, "", name)
	if err != nil {
		return
	}
	p := o.(*api.MaintenancePlan)
	if p.UID != uid || !g.ofCampaign(p) || p.DeletionTimestamp != nil || !p.Spec.Release {
		return
	}
	g.holds++
	if !nodeIsReady(before) || before.Labels[gateLabel] != "true" {
		w.violate("%s uncordoned %s for released plan %s while its health gate did not hold: Ready %t, label %s=%q", in.name, before.Name, p.Name, nodeIsReady(before), gateLabel, before.Labels[gateLabel])
	}
}

// agentStep is the upgrade agent: for each released node of the gated
// campaign waiting on its gate, it reboots it (NotReady) at 1 in 3 and
// brings it back labelled at once, after a drawn delay (that may pass the
// gate's timeout), or never; it returns its writes. w.mu is held.
func (w *World) agentStep() int {
	g := w.gates
	if !g.gated {
		return 0
	}
	writes := 0
	now := w.clock.Now()
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		if !g.ofCampaign(p) || (p.Status.Reason != api.WaitingForHealth && p.Status.Reason != api.NodeUnhealthy) {
			continue
		}
		node := p.Spec.NodeName
		if _, ok := g.seen[node]; !ok {
			g.seen[node] = now
			if _, written := g.agent[node]; !written { // a written schedule sets its own
				g.agent[node] = []int{0, 0, 0, 1, 1, 2}[g.r.IntN(6)]
				g.late[node] = time.Duration(1+g.r.IntN(25)) * time.Minute
			}
			if g.r.IntN(3) == 0 {
				w.setReady(node, corev1.ConditionFalse)
			}
			w.logf("agent: %s is released, it comes back %s", node, []string{"at once", "in " + g.late[node].String(), "never"}[g.agent[node]])
		}
		if g.agent[node] == 2 || (g.agent[node] == 1 && now.Sub(g.seen[node]) < g.late[node]) {
			continue
		}
		no, err := w.s.get(nodesR, "", node)
		if err != nil {
			continue
		}
		n := no.(*corev1.Node)
		if n.Labels[gateLabel] == "true" && nodeIsReady(n) {
			continue
		}
		if !nodeIsReady(n) {
			w.setReady(node, corev1.ConditionTrue)
			if no, err = w.s.get(nodesR, "", node); err != nil {
				continue
			}
			n = no.(*corev1.Node)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[gateLabel] = "true"
		_, err = w.s.update(nodesR, n, false)
		w.logf("agent: %s is back: Ready, %s=true -> %s", node, gateLabel, errText(err))
		writes++
	}
	return writes
}

// neverBack reports whether the agent never brings one of nodes back: a
// released campaign may rest on its health gate.
func (g *gates) neverBack(nodes []string) bool {
	for _, n := range nodes {
		if a, ok := g.agent[n]; ok && a == 2 {
			return true
		}
	}
	return false
}

// gateTotals are the seeds' totals over a run of TestSim: the seeds with
// windows and with a gate, and how many of maintd's acts the promises
// judged (cordons and evictions against windows, uncordons against gates).
var gateTotals struct {
	sync.Mutex
	windowed, gated, cordons, evicts, holds int
}

// tallyGates adds a seed's totals; w.mu is held.
func (w *World) tallyGates() {
	g := w.gates
	gateTotals.Lock()
	defer gateTotals.Unlock()
	if g.windowed {
		gateTotals.windowed++
	}
	if g.gated {
		gateTotals.gated++
	}
	gateTotals.cordons += g.cordons
	gateTotals.evicts += g.evicts
	gateTotals.holds += g.holds
}

// gateSummary is the totals for TestSim's log, and whether each promise
// judged at least one act.
func gateSummary() (string, bool) {
	gateTotals.Lock()
	defer gateTotals.Unlock()
	t := &gateTotals
	return fmt.Sprintf("windows and health gates: %d seeds with windows (%d cordons and %d evictions judged against them), %d with a health gate (%d uncordons of released nodes judged)",
		t.windowed, t.cordons, t.evicts, t.gated, t.holds), t.cordons > 0 && t.evicts > 0 && t.holds > 0
}
