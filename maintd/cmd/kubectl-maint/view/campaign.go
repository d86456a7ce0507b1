package view

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// State is what a campaign's node is at, as status shows it: the phase of
// its plan, grouped, or what became of it once its plan is gone.
type State string

// The states of a campaign's node, in the order they are shown.
const (
	StatePending   State = "Pending"   // no plan yet, or its plan has not cordoned
	StateDraining  State = "Draining"  // cordoning, draining, cooling down
	StateDrained   State = "Drained"   // drained, waiting for its release (or being released)
	StateCompleted State = "Completed" // released and uncordoned
	StateBlocked   State = "Blocked"
	StateFailed    State = "Failed"
	StateExpired   State = "Expired" // its plan did not start before the campaign's deadline
	StateDeleted   State = "Deleted" // its plan was deleted before it ended
)

// States are the states in the order they are shown.
var States = []State{StatePending, StateDraining, StateDrained, StateCompleted, StateBlocked, StateFailed, StateExpired, StateDeleted}

// CampaignNode is one node of a campaign: its state and its latest plan,
// when that plan still exists.
type CampaignNode struct {
	Name  string
	State State
	Plan  *api.MaintenancePlan
	// Status is the campaign's record of it (status.nodeStatus).
	Status api.CampaignNode
}

// NodesOf are campaign c's nodes, by name, each with its state: from its
// plan among plans when it exists, else from the campaign's record.
func NodesOf(c *api.MaintenanceCampaign, plans []api.MaintenancePlan) []CampaignNode {
	byName := map[string]*api.MaintenancePlan{}
	for i := range plans {
		p := &plans[i]
		if p.Labels[api.CampaignLabel] == c.Name {
			byName[p.Name] = p
		}
	}
	recs := map[string]api.CampaignNode{}
	for _, n := range c.Status.NodeStatus {
		recs[n.Name] = n
	}
	names := slices.Clone(c.Status.Nodes)
	for n := range recs {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := make([]CampaignNode, 0, len(names))
	for _, n := range names {
		cn := CampaignNode{Name: n, Status: recs[n]}
		if pn := cn.Status.Plan; pn != "" {
			if p := byName[pn]; p != nil && (cn.Status.PlanUID == "" || p.UID == cn.Status.PlanUID) {
				cn.Plan = p
			}
		}
		cn.State = stateOf(cn)
		out = append(out, cn)
	}
	return out
}

func stateOf(n CampaignNode) State {
	if p := n.Plan; p != nil {
		switch p.Status.Phase {
		case api.Cordoning, api.Cordoned, api.Draining, api.CoolingDown:
			return StateDraining
		case api.Drained, api.Uncordoning:
			return StateDrained
		case api.Completed:
			if p.Status.Reason == api.Expired {
				return StateExpired
			}
			return StateCompleted
		case api.Blocked:
			return StateBlocked
		case api.Failed:
			return StateFailed
		}
		return StatePending
	}
	switch n.Status.Outcome {
	case api.NodeDrained:
		return StateDrained
	case api.NodeCompleted:
		return StateCompleted
	case api.NodeBlocked:
		return StateBlocked
	case api.NodeFailed:
		return StateFailed
	case api.NodeExpired:
		return StateExpired
	case api.NodeDeleted:
		return StateDeleted
	}
	return StatePending
}

// gateReason reports whether a plan's reason is a wait of its windows or
// health gate, whose message says what it waits for.
func gateReason(r api.Reason) bool {
	return slices.ContainsFunc(gateWaits, func(g gateWait) bool { return g.reason == r })
}

// Tally counts nodes by state.
func Tally(nodes []CampaignNode) map[State]int {
	out := map[State]int{}
	for _, n := range nodes {
		out[n.State]++
	}
	return out
}

// Breaker is the campaign's breaker in a few words.
func Breaker(c *api.MaintenanceCampaign, now time.Time) string {
	b := c.Status.Breaker
	switch {
	case b == nil:
		return "closed"
	case b.Open:
		s := "open"
		if b.Reason != "" {
			s += " (" + b.Reason + ")"
		}
		if b.OpenedAt != nil {
			s += " for " + Duration(now.Sub(b.OpenedAt.Time))
		}
		return s
	case b.Trips > 0:
		return fmt.Sprintf("closed, %d trips", b.Trips)
	}
	return "closed"
}

// CampaignTable writes one line per campaign: its phase and reason, its
// nodes by state, pods evicted of those at its start, the breaker, the
// wave and its age.
func CampaignTable(w io.Writer, campaigns []api.MaintenanceCampaign, plans []api.MaintenancePlan, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CAMPAIGN\tPHASE\tREASON\tNODES\tPENDING\tDRAINING\tDRAINED\tCOMPLETED\tBLOCKED\tFAILED\tEVICTED\tBREAKER\tWAVE\tAGE")
	for i := range campaigns {
		c := &campaigns[i]
		nodes := NodesOf(c, plans)
		t := Tally(nodes)
		st := &c.Status
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d/%d\t%s\t%d\t%s\n", c.Name, cmp.Or(string(st.Phase), "-"), cmp.Or(string(st.Reason), "-"), len(nodes),
			t[StatePending], t[StateDraining], t[StateDrained], t[StateCompleted], t[StateBlocked], t[StateFailed],
			st.Counts.Evicted, st.Counts.PodsAtStart, Breaker(c, now), st.Wave, Duration(now.Sub(c.CreationTimestamp.Time)))
	}
	return tw.Flush()
}

// CampaignETA estimates the campaign's end: the latest forecast ETA of
// the plans at work in the current wave, and the whole campaign at the
// pace so far (nodes done since its start); "" parts it cannot tell.
func CampaignETA(c *api.MaintenanceCampaign, nodes []CampaignNode, now time.Time) string {
	st := &c.Status
	switch st.Phase {
	case api.Drained, api.Completed, api.Failed:
		return ""
	}
	var wave time.Time
	never := ""
	for _, n := range nodes {
		if n.State != StateDraining && n.State != StatePending || n.Plan == nil {
			continue
		}
		f := ForecastOf(n.Plan)
		switch {
		case f == nil:
		case f.Verdict == "never":
			never = n.Name
		case f.ETA.After(wave):
			wave = f.ETA
		}
	}
	var parts []string
	if s := WindowsETA(c, now); s != "" {
		parts = append(parts, s)
	}
	switch {
	case never != "":
		parts = append(parts, fmt.Sprintf("wave %d: never (node %s's forecast)", st.Wave, never))
	case !wave.IsZero():
		parts = append(parts, fmt.Sprintf("wave %d by %s (in %s, its plans' forecasts)", st.Wave, wave.Local().Format(time.TimeOnly), Duration(wave.Sub(now))))
	}
	t := Tally(nodes)
	done := t[StateDrained] + t[StateCompleted]
	if st.StartedAt != nil && done > 0 && done < len(nodes) && c.Spec.Windows == nil {
		spent := now.Sub(st.StartedAt.Time)
		end := st.StartedAt.Add(time.Duration(float64(spent) * float64(len(nodes)) / float64(done)))
		parts = append(parts, fmt.Sprintf("all %d nodes by %s at the pace so far (%d drained in %s)", len(nodes), end.Local().Format(time.TimeOnly), done, Duration(spent)))
	}
	if len(parts) == 0 {
		return "ETA: no forecast yet"
	}
	return "ETA: " + strings.Join(parts, "; ")
}

// CampaignCounts is "[drained/nodes nodes, evicted/atStart pods]".
func CampaignCounts(c *api.MaintenanceCampaign) string {
	n := c.Status.Counts
	if n.Nodes == 0 {
		return ""
	}
	return fmt.Sprintf("[%d/%d nodes drained, %d/%d pods evicted]", n.Drained+n.Completed, n.Nodes, n.Evicted, n.PodsAtStart)
}

// CampaignStep is the campaign's phase, reason and message as a line.
func CampaignStep(c *api.MaintenanceCampaign, at time.Time) string {
	st := &c.Status
	line := at.Local().Format(time.TimeOnly) + "  campaign " + cmp.Or(string(st.Phase), "-") + "/" + cmp.Or(string(st.Reason), "-")
	if s := CampaignCounts(c); s != "" {
		line += "  " + s
	}
	if st.Message != "" {
		line += "  " + oneLine(st.Message)
	}
	return line
}

// CampaignFrame is the live view of campaign c at now, width columns
// wide: its phase, its nodes by state (a bar of those drained), the pods
// moved, the breaker, what it waits for and the ETA.
func CampaignFrame(c *api.MaintenanceCampaign, plans []api.MaintenancePlan, now time.Time, width int) []string {
	st := &c.Status
	phase := cmp.Or(string(st.Phase), "(not reconciled yet)")
	if st.Reason != "" {
		phase += "/" + string(st.Reason)
	}
	head := fmt.Sprintf("campaign %s  %s", c.Name, phase)
	if st.Wave > 0 {
		head += fmt.Sprintf("  wave %d", st.Wave)
	}
	lines := []string{head + "  " + Age(c.CreationTimestamp.Time, now)}
	nodes := NodesOf(c, plans)
	t := Tally(nodes)
	bar := max(10, min(40, width-50))
	var by []string
	for _, s := range States {
		if t[s] > 0 {
			by = append(by, fmt.Sprintf("%d %s", t[s], strings.ToLower(string(s))))
		}
	}
	lines = append(lines, Bar(int32(t[StateDrained]+t[StateCompleted]), int32(len(nodes)), bar)+fmt.Sprintf("  %d nodes: %s", len(nodes), cmp.Or(strings.Join(by, ", "), "none yet")))
	lines = append(lines, Bar(st.Counts.Evicted, st.Counts.PodsAtStart, bar)+fmt.Sprintf("  %d/%d pods moved", st.Counts.Evicted, st.Counts.PodsAtStart))
	brk := "breaker: " + Breaker(c, now)
	if b := st.Breaker; b != nil && b.Open && b.Message != "" {
		brk += ": " + oneLine(b.Message)
	}
	lines = append(lines, brk)
	if wl := WindowLine(c, now); wl != "" {
		lines = append(lines, wl)
	}
	if gw := GateWaits(nodes); gw != "" {
		lines = append(lines, "waiting: "+gw)
	}
	for _, n := range nodes {
		if n.State == StateDraining && n.Plan != nil {
			lines = append(lines, fmt.Sprintf("  %s  %s/%s  %d/%d evicted", n.Name, n.Plan.Status.Phase, cmp.Or(string(n.Plan.Status.Reason), "-"), n.Plan.Status.Pods.Evicted, n.Plan.Status.Pods.Total))
			if len(lines) >= 14 {
				break
			}
		}
	}
	if st.Phase != api.Completed && st.Phase != api.Drained && st.Message != "" {
		s := "now: " + cmp.Or(string(st.Reason), string(st.Phase))
		if st.Since != nil {
			s += " for " + Duration(now.Sub(st.Since.Time))
		}
		lines = append(lines, s+": "+oneLine(st.Message))
	}
	if eta := CampaignETA(c, nodes, now); eta != "" {
		lines = append(lines, eta)
	}
	for i, l := range lines {
		lines[i] = Truncate(l, width-1)
	}
	return lines
}

// CampaignDetail writes campaign c on one screen: its spec in short, its
// phase with the message, the wave, pods, breaker, capacity check,
// deadline and ETA, then its nodes grouped by state.
func CampaignDetail(w io.Writer, c *api.MaintenanceCampaign, plans []api.MaintenancePlan, now time.Time) error {
	st := &c.Status
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("Campaign", "%s (created %s)", c.Name, Age(c.CreationTimestamp.Time, now))
	sel := "nodes " + strings.Join(c.Spec.Nodes, ", ")
	if s := c.Spec.NodeSelector; s != nil {
		sel = "nodes matching " + metav1.FormatLabelSelector(s)
	}
	row("Selects", "%s", sel)
	row("Scope", "%s", scope(c.Spec.Workloads, c.Spec.AllowAllWorkloads, c.Spec.AcceptedRisks, c.Spec.Surge, false, c.Spec.Release))
	if c.Spec.Reason != "" {
		row("Reason", "%s", oneLine(c.Spec.Reason))
	}
	row("Phase", "%s", phaseSince(st.Phase, st.Reason, st.Since, now))
	if st.Message != "" {
		row("Message", "%s", oneLine(st.Message))
	}
	nodes := NodesOf(c, plans)
	row("Wave", "%d", st.Wave)
	row("Pods", "%d/%d evicted", st.Counts.Evicted, st.Counts.PodsAtStart)
	brk := Breaker(c, now)
	if b := st.Breaker; b != nil && b.Open && b.Message != "" {
		brk += ": " + oneLine(b.Message)
	}
	row("Breaker", "%s", brk)
	if ws := WindowsSpec(c.Spec.Windows); ws != "" {
		row("Windows", "%s", ws)
		row("Window", "%s", strings.TrimPrefix(WindowLine(c, now), "window: "))
	}
	if hs := HealthSpec(c.Spec.HealthGate); hs != "" {
		row("Health gate", "%s", hs)
	}
	if gw := GateWaits(nodes); gw != "" {
		row("Waiting", "%s", gw)
	}
	if cp := st.Capacity; cp != nil {
		msg := ""
		if cp.Message != "" {
			msg = ": " + oneLine(cp.Message)
		}
		row("Capacity", "wave %d: %s for %d pods%s", cp.Wave, cp.Verdict, cp.Pods, msg)
	}
	if st.Deadline != nil && st.Phase != api.Completed && st.Phase != api.Failed {
		row("Deadline", "%s (%s left)", st.Deadline.Local().Format(time.DateTime), Duration(st.Deadline.Sub(now)))
	}
	if eta := CampaignETA(c, nodes, now); eta != "" {
		row("ETA", "%s", strings.TrimPrefix(eta, "ETA: "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nNodes (%d) by state:\n", len(nodes))
	byState := map[State][]CampaignNode{}
	for _, n := range nodes {
		byState[n.State] = append(byState[n.State], n)
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, s := range States {
		ns := byState[s]
		if len(ns) == 0 {
			continue
		}
		fmt.Fprintf(tw, "  %s (%d)\t\t\t\t\n", s, len(ns))
		for _, n := range ns {
			plan, phase, pods, msg := cmp.Or(n.Status.Plan, "-"), "-", fmt.Sprintf("%d evicted", n.Status.Evicted), ""
			if p := n.Plan; p != nil {
				phase = cmp.Or(string(p.Status.Phase), "-") + "/" + cmp.Or(string(p.Status.Reason), "-")
				pods = fmt.Sprintf("%d/%d evicted", p.Status.Pods.Evicted, p.Status.Pods.Total)
				if s == StateBlocked || s == StateFailed || s == StateDraining || gateReason(p.Status.Reason) {
					msg = oneLine(p.Status.Message)
				}
			}
			if n.Status.Wave > 0 {
				plan += fmt.Sprintf(" (wave %d)", n.Status.Wave)
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", n.Name, plan, phase, pods, msg)
		}
	}
	return tw.Flush()
}
