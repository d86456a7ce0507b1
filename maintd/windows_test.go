package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// windowZone is the windows' time zone in TestCampaignWindows: not UTC.
const windowZone = "America/New_York"

// inWindow is whether t is in a window of "*/3 * * * *" lasting 90 s on
// the wall clock of loc (every third minute of the hour, from its first
// second), and that window's start: the test's own reading of the cron
// expression, not maintd's windows package.
func inWindow(t time.Time, loc *time.Location) (bool, time.Time) {
	l := t.In(loc)
	into := time.Duration(l.Minute()%3)*time.Minute + time.Duration(l.Second())*time.Second + time.Duration(l.Nanosecond())
	start := l.Add(-into)
	return into < 90*time.Second, start
}

// TestCampaignWindows: 30 nodes in a campaign, two Deployment pods per
// node on average, Ready 2-8 s after scheduling (drawn), 4 s to exit, under PDBs of
// maxUnavailable 1; windows of 90 s every 180 s ("*/3 * * * *") in
// America/New_York, a margin of 5 s, 2 nodes at a time, released as they
// drain. From the API server's audit log and the plans' own records: no
// cordon and no eviction outside a window; no node cordoned and not
// drained at a window's end; every window the campaign worked in but its
// last spent at least 70% draining (some node cordoned and not yet
// drained); and it used at most the windows its first estimate said, plus
// one.
func TestCampaignWindows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
	defer cancel()
	loc, err := time.LoadLocation(windowZone)
	if err != nil {
		t.Fatal(err)
	}
	const nodes, spare = 30, 6
	e := newEnv(t, ctx, nodes+spare)
	rng := rand.New(rand.NewPCG(34, 90))
	for i := 1; i <= 10; i++ {
		app := fmt.Sprintf("win-%d", i)
		ready := time.Duration(2000+rng.IntN(6000)) * time.Millisecond
		tmpl := e.podTemplate(app, ready, 4*time.Second, nil)
		tmpl.Labels["tier"] = "win"
		e.deployment(t, ctx, app, 7, tmpl)
		e.pdb(t, ctx, app, app, nil, intOrString(1))
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "tier=win", 70); err != nil {
		t.Fatal(err)
	}
	e.startMaintd(t, "")
	// The campaign is made outside a window, so that the first window it
	// works in is whole (a wait for the clock, not for a process).
	for open, _ := inWindow(time.Now(), loc); open; open, _ = inWindow(time.Now(), loc) {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
	created := time.Now()
	c := e.campaign(t, ctx, "windows", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, nodes), AllowAllWorkloads: true, Release: true,
		Deadline: &metav1.Duration{Duration: 30 * time.Minute},
		Budget:   &api.CampaignBudget{Nodes: intOrString(2)},
		Breaker:  api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 10},
		Windows: &api.MaintenanceWindows{TimeZone: windowZone, Margin: &metav1.Duration{Duration: 5 * time.Second},
			Allow: []api.MaintenanceWindow{{Schedule: "*/3 * * * *", Duration: metav1.Duration{Duration: 90 * time.Second}}}}})
	var estimate *api.CampaignWindows
	done := e.waitCampaign(t, ctx, c.Name, "completed", func(m *api.MaintenanceCampaign) bool {
		if m.Status.Phase == api.Blocked || m.Status.Phase == api.Failed {
			t.Fatalf("campaign %s/%s: %s", m.Status.Phase, m.Status.Reason, m.Status.Message)
		}
		if w := m.Status.Windows; estimate == nil && w != nil && w.Needed > 0 {
			estimate = w.DeepCopy()
			t.Logf("first estimate: %d windows, the last ending %s, ETA %s", w.Needed, w.LastEnd.In(loc), w.ETA.In(loc))
		}
		return completed(m)
	})
	t.Logf("completed %s after its creation: %s", time.Since(created).Round(time.Second), done.Status.Message)

	// The plans' own records: when each node was cordoned (the audit
	// log's first write to it) and when its plan recorded Drained.
	plans, err := e.plans.List(ctx, metav1.ListOptions{LabelSelector: api.CampaignLabel + "=" + c.Name})
	if err != nil {
		t.Fatal(err)
	}
	drainedAt := map[string]time.Time{}
	for _, p := range plans.Items {
		for _, h := range p.Status.History {
			if h.Phase == api.Drained && drainedAt[p.Spec.NodeName].IsZero() {
				drainedAt[p.Spec.NodeName] = h.Time.Time
			}
		}
	}
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, n := range e.nodeNames(1, nodes) {
		mine[n] = true
	}
	var spans []drainSpan
	cordoned := map[string]bool{}
	windowsUsed := map[time.Time]bool{}
	for _, ev := range events {
		if ev.Received.Before(created) || !ev.Complete() || ev.Code >= 300 {
			continue
		}
		switch {
		case ev.Resource == "nodes" && mine[ev.Name] && ev.Sub == "" && (ev.Verb == "patch" || ev.Verb == "update") && !cordoned[ev.Name]:
			cordoned[ev.Name] = true // a node's first write: its cordon
			open, start := inWindow(ev.Received, loc)
			if !open {
				t.Errorf("node %s cordoned at %s, outside every window (audit line %d)", ev.Name, ev.Received.In(loc).Format(time.RFC3339Nano), ev.Line)
			}
			windowsUsed[start] = true
			end := drainedAt[ev.Name]
			if end.IsZero() {
				t.Errorf("node %s: its plan recorded no Drained", ev.Name)
				continue
			}
			spans = append(spans, drainSpan{ev.Name, ev.Received, end})
		case ev.Verb == "create" && ev.Resource == "pods" && ev.Sub == "eviction" && ev.Namespace == e.ns && !ev.DryRun:
			if open, _ := inWindow(ev.Received, loc); !open {
				t.Errorf("eviction of %s at %s, outside every window (audit line %d)", ev.Name, ev.Received.In(loc).Format(time.RFC3339Nano), ev.Line)
			}
		}
	}
	if len(cordoned) != nodes {
		t.Errorf("%d nodes cordoned, want %d", len(cordoned), nodes)
	}
	// No node in progress at a window's end: each span lies in one window
	// (the plan records Drained in whole seconds: a second's slack).
	for _, s := range spans {
		_, start := inWindow(s.start, loc)
		if end := start.Add(90 * time.Second); s.end.After(end.Add(time.Second)) {
			t.Errorf("node %s cordoned at %s was drained at %s, after its window's end %s", s.node, s.start.In(loc).Format(time.TimeOnly), s.end.In(loc).Format(time.TimeOnly), end.In(loc).Format(time.TimeOnly))
		}
	}
	// Each window worked in but the last: draining at least 70% of it.
	var starts []time.Time
	for s := range windowsUsed {
		starts = append(starts, s)
	}
	slices.SortFunc(starts, time.Time.Compare)
	for i, ws := range starts {
		busy := covered(spans, ws, ws.Add(90*time.Second))
		share := float64(busy) / float64(90*time.Second)
		t.Logf("window %s: %.0f%% draining", ws.In(loc).Format(time.TimeOnly), 100*share)
		if i < len(starts)-1 && share < 0.7 {
			t.Errorf("window from %s spent %.0f%% draining, want at least 70%%", ws.In(loc).Format(time.TimeOnly), 100*share)
		}
	}
	if estimate == nil {
		t.Fatal("the campaign never said how many windows it needs")
	}
	if len(starts) > int(estimate.Needed)+1 {
		t.Errorf("%d windows used, the first estimate was %d (at most one more allowed)", len(starts), estimate.Needed)
	}
}

// drainSpan is a node's drain: from its cordon to its plan's Drained.
type drainSpan struct {
	node       string
	start, end time.Time
}

// covered is how much of [from, to) the spans cover, overlaps counted once.
func covered(spans []drainSpan, from, to time.Time) time.Duration {
	type iv struct{ a, b time.Time }
	var ivs []iv
	for _, s := range spans {
		a, b := s.start, s.end
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if a.Before(b) {
			ivs = append(ivs, iv{a, b})
		}
	}
	slices.SortFunc(ivs, func(x, y iv) int { return x.a.Compare(y.a) })
	var total time.Duration
	for i := 0; i < len(ivs); {
		cur := ivs[i]
		for i++; i < len(ivs) && !ivs[i].a.After(cur.b); i++ {
			if ivs[i].b.After(cur.b) {
				cur.b = ivs[i].b
			}
		}
		total += cur.b.Sub(cur.a)
	}
	return total
}

// TestHealthGate: a campaign over 2 nodes, one at a time, released as they
// drain, with a health gate (condition Upgraded True, label
// sentinel.dev/os=v2, timeout 15 s). The test plays the upgrade agent. Node
// 1 goes NotReady after its drain: its plan waits, the node stays
// cordoned, node 2 gets no plan; past 15 s the plan is Blocked
// (node-unhealthy) and the campaign Blocked naming it. Once node 1 is
// Ready with the condition and the label, it is uncordoned and the
// campaign goes on to node 2, which the agent upgrades at once: the
// campaign completes.
func TestHealthGate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 6)
	for i := 1; i <= 2; i++ {
		app := fmt.Sprintf("gate-%d", i)
		tmpl := e.podTemplate(app, time.Second, time.Second, nil)
		tmpl.Labels["tier"] = "gate"
		e.deployment(t, ctx, app, 4, tmpl)
		e.pdb(t, ctx, app, app, nil, intOrString(1))
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "tier=gate", 8); err != nil {
		t.Fatal(err)
	}
	const label, upgraded = "sentinel.dev/os", corev1.NodeConditionType("Upgraded")
	e.startMaintd(t, "")
	c := e.campaign(t, ctx, "gate", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, 2), AllowAllWorkloads: true, Release: true,
		Budget:  &api.CampaignBudget{Nodes: intOrString(1)},
		Breaker: api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 10},
		HealthGate: &api.HealthGate{Conditions: []api.NodeConditionGate{{Type: upgraded, Status: corev1.ConditionTrue}},
			Labels: map[string]string{label: "v2"}, Timeout: &metav1.Duration{Duration: 15 * time.Second}}})
	plan1 := c.Name + "-" + e.node(1)
	waiting := e.wait(t, ctx, plan1, "waiting for health", func(p *api.MaintenancePlan) bool {
		return p.Status.Reason == api.WaitingForHealth
	})
	// The agent reboots node 1: it goes NotReady (kwok stops its
	// heartbeats; Ready turns False) and stays so.
	e.setNodeReady(t, ctx, e.node(1), false)
	t.Cleanup(func() { e.setNodeReady(t, context.Background(), e.node(1), true) })
	blocked := e.wait(t, ctx, plan1, "Blocked node-unhealthy", func(p *api.MaintenancePlan) bool {
		return p.Status.Phase == api.Blocked && p.Status.Reason == api.NodeUnhealthy
	})
	if at := blocked.Status.Since.Time; at.Before(waiting.Status.ReleasedAt.Add(15 * time.Second)) {
		t.Errorf("Blocked at %s, before the gate's timeout from the release at %s", at, waiting.Status.ReleasedAt.Time)
	}
	for _, part := range []string{"condition Ready is False, want True", "condition Upgraded is absent, want True", "label " + label + " is absent"} {
		if !strings.Contains(blocked.Status.Message, part) {
			t.Errorf("the block does not say %q: %s", part, blocked.Status.Message)
		}
	}
	m := e.waitCampaign(t, ctx, c.Name, "Blocked naming node 1's plan", func(m *api.MaintenanceCampaign) bool {
		return m.Status.Phase == api.Blocked && strings.Contains(m.Status.Message, plan1+" (Blocked: node-unhealthy)")
	})
	if n, err := e.admin.CoreV1().Nodes().Get(ctx, e.node(1), metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Errorf("node 1 while its gate fails: unschedulable %t, %v; want it cordoned", n != nil && n.Spec.Unschedulable, err)
	}
	if _, err := e.plans.Get(ctx, c.Name+"-"+e.node(2), metav1.GetOptions{}); err == nil || m.Status.Wave != 1 {
		t.Errorf("node 2 has a plan (wave %d) while node 1 is not healthy: the next wave must wait", m.Status.Wave)
	}
	// The agent brings node 1 back: Ready, upgraded, labelled.
	e.updateNode(t, ctx, e.node(1), false, func(n *corev1.Node) { n.Labels[label] = "v2" })
	e.updateNode(t, ctx, e.node(1), true, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = corev1.ConditionTrue
			}
		}
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: upgraded, Status: corev1.ConditionTrue, Reason: "AgentDone", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()})
	})
	e.wait(t, ctx, plan1, "completed once healthy", func(p *api.MaintenancePlan) bool {
		return p.Status.Phase == api.Completed && p.Status.Reason == api.Uncordoned
	})
	// Node 2: the agent upgrades it as soon as it is drained.
	plan2 := c.Name + "-" + e.node(2)
	e.wait(t, ctx, plan2, "waiting for health", func(p *api.MaintenancePlan) bool { return p.Status.Reason == api.WaitingForHealth })
	e.updateNode(t, ctx, e.node(2), false, func(n *corev1.Node) { n.Labels[label] = "v2" })
	e.updateNode(t, ctx, e.node(2), true, func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: upgraded, Status: corev1.ConditionTrue, Reason: "AgentDone", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()})
	})
	e.waitCampaign(t, ctx, c.Name, "completed", completed)
	for i := 1; i <= 2; i++ {
		if n, err := e.admin.CoreV1().Nodes().Get(ctx, e.node(i), metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
			t.Errorf("node %d after the campaign: %v; want it uncordoned", i, err)
		}
	}
}
