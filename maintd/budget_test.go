package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// zoneWatch follows the nodes of a pool and records every moment two nodes
// of one zone are unschedulable at once, and the most at once.
type zoneWatch struct {
	mu          sync.Mutex
	zone        map[string]string // node -> zone
	cordoned    map[string]bool
	twice       []string
	peak, zones int // the most unschedulable nodes at once; of zones at once
	stopped     bool
	closed      bool // the watch ended before stop
	stop        func()
	done        chan struct{}
}

// watchZones lists the nodes of e's pool and watches them from that list's
// version, so that no write after the list is missed.
func (e env) watchZones(t *testing.T, ctx context.Context) *zoneWatch {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: controlplane.PoolLabel + "=" + e.pool}
	nodes, err := e.admin.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	z := &zoneWatch{zone: map[string]string{}, cordoned: map[string]bool{}, done: make(chan struct{})}
	for i := range nodes.Items {
		z.node(&nodes.Items[i])
	}
	sel.ResourceVersion = nodes.ResourceVersion
	w, err := e.admin.CoreV1().Nodes().Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	z.stop = func() {
		z.mu.Lock()
		z.stopped = true
		z.mu.Unlock()
		w.Stop()
	}
	go func() {
		defer close(z.done)
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted {
				z.node(n)
			}
		}
		z.mu.Lock()
		z.closed = !z.stopped
		z.mu.Unlock()
	}()
	return z
}

// node records a node's state and checks the pool's.
func (z *zoneWatch) node(n *corev1.Node) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.zone[n.Name] = n.Labels[corev1.LabelTopologyZone]
	z.cordoned[n.Name] = n.Spec.Unschedulable
	per := map[string][]string{}
	total := 0
	for name, on := range z.cordoned {
		if on {
			per[z.zone[name]] = append(per[z.zone[name]], name)
			total++
		}
	}
	z.peak, z.zones = max(z.peak, total), max(z.zones, len(per))
	for zone, names := range per {
		if len(names) > 1 {
			slices.Sort(names)
			z.twice = append(z.twice, fmt.Sprintf("zone %q: %s unschedulable at once (node %s written, resourceVersion %s)", zone, strings.Join(names, ", "), n.Name, n.ResourceVersion))
		}
	}
}

// result stops the watch and returns what it saw.
func (z *zoneWatch) result() (twice []string, peak, zones int, closed bool) {
	z.stop()
	<-z.done
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.twice, z.peak, z.zones, z.closed
}

// TestCampaignBudget: 9 nodes in 3 zones (zone-a, b, c, a, b, c, ...), 4
// Deployments of 3 replicas under PDBs maxUnavailable 1, Ready 1 s after
// scheduling; a campaign over the 9 nodes with the budget of at most 1
// node per zone, released as its nodes drain, and 10 slots (the budget,
// not --max-nodes-in-maintenance, bounds the waves). A watch of the nodes,
// started before maintd, never sees 2 nodes of one zone unschedulable at
// once; no app goes below its floor; the campaign completes within 60 s in
// 3 waves of 3 nodes, one per zone, its wave's Event naming the budget;
// nothing is left cordoned.
func TestCampaignBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const key = corev1.LabelTopologyZone
	e := newEnv(t, ctx, 9)
	zoneOf := map[string]string{}
	for i := 1; i <= 9; i++ {
		zone := fmt.Sprintf("zone-%c", 'a'+(i-1)%3)
		zoneOf[e.node(i)] = zone
		e.updateNode(t, ctx, e.node(i), false, func(n *corev1.Node) { n.Labels[key] = zone })
	}
	floor := map[string]int{}
	for i := 1; i <= 4; i++ {
		app := fmt.Sprintf("zoned-%d", i)
		tmpl := e.podTemplate(app, time.Second, time.Second, nil)
		tmpl.Labels["tier"] = "zoned"
		e.deployment(t, ctx, app, 3, tmpl)
		e.pdb(t, ctx, app, app, nil, intOrString(1))
		floor[app] = 2
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "tier=zoned", 12); err != nil {
		t.Fatal(err)
	}
	zones := e.watchZones(t, ctx)
	avail := e.watchAvailability(t, ctx, floor)
	m := e.startMaintd(t, "")
	start := time.Now()
	c := e.campaign(t, ctx, "zoned", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, 9), AllowAllWorkloads: true, Release: true,
		Budget:  &api.CampaignBudget{TopologyKey: key, MaxPerDomain: 1},
		Breaker: api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 10}})
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	done := e.waitCampaign(t, wctx, c.Name, "completed within 60 s", func(m *api.MaintenanceCampaign) bool {
		if m.Status.Phase == api.Blocked || m.Status.Phase == api.Failed {
			t.Fatalf("campaign %s/%s: %s", m.Status.Phase, m.Status.Reason, m.Status.Message)
		}
		return completed(m)
	})
	t.Logf("completed in %s: %s", time.Since(start).Round(100*time.Millisecond), done.Status.Message)
	twice, peak, atOnce, closed := zones.result()
	for _, s := range twice {
		t.Errorf("two nodes of one zone in maintenance at once: %s", s)
	}
	if closed {
		t.Errorf("the node watch ended before the campaign did: it may have missed a moment")
	}
	t.Logf("at most %d nodes unschedulable at once, of %d zones", peak, atOnce)
	if peak > 3 {
		t.Errorf("%d nodes unschedulable at once, want at most 3 (one per zone)", peak)
	}
	low, _, _ := avail.result()
	for _, l := range low {
		t.Errorf("below a budget's floor: %s", l)
	}

	// The waves, by the plans' wave label: 3, each of 3 nodes, one per zone.
	plans, err := e.plans.List(ctx, metav1.ListOptions{LabelSelector: api.CampaignLabel + "=" + c.Name})
	if err != nil {
		t.Fatal(err)
	}
	waves := map[string][]string{}
	for _, p := range plans.Items {
		waves[p.Labels[api.WaveLabel]] = append(waves[p.Labels[api.WaveLabel]], p.Spec.NodeName)
	}
	for wave, nodes := range waves {
		seen := map[string]bool{}
		for _, n := range nodes {
			seen[zoneOf[n]] = true
		}
		if len(nodes) > 3 || len(seen) != len(nodes) {
			t.Errorf("wave %s: nodes %v in zones %v: want at most 3 nodes, one per zone", wave, nodes, seen)
		}
	}
	if done.Status.Wave != 3 || len(waves) != 3 || len(plans.Items) != 9 {
		t.Errorf("the campaign ended at wave %d with %d plans in %d waves, want 3 waves of 3 nodes (the budget's 1 per zone, not 1 at a time)", done.Status.Wave, len(plans.Items), len(waves))
	}
	var notes []string
	list, err := e.admin.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "reportingController=maintd"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "MaintenanceCampaign" && ev.Regarding.Name == c.Name {
			notes = append(notes, ev.Note)
		}
	}
	const bound = "the budget: at most 1 node(s) per " + key
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, bound) }) {
		t.Errorf("no Event of the campaign says %q: %q", bound, notes)
	}
	e.nothingCordoned(t, ctx)
	m.stop(t)
}
