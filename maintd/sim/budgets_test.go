package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// foundWithBudgets are the fixed seeds found in the world with budgets:
// they replay their schedules with their budgets.
var foundWithBudgets = map[int64]bool{67: true, 245: true, 907: true}

// TestFixedSeedsHaveNoBudget: the budgets' stream leaves the seeds of
// TestFixedSeeds found before budgets existed as they were drawn then (no
// budget, no zones, their slots), so that they replay the schedules that
// found their defects; and it gives a budget to some of the other campaign
// seeds.
func TestFixedSeedsHaveNoBudget(t *testing.T) {
	for s := range Fixed {
		if foundWithBudgets[s] {
			continue
		}
		w := New(s)
		if sc := w.draw(); sc.Campaign != nil && sc.Campaign.Budget != nil || w.bud.on {
			t.Errorf("fixed seed %d draws a campaign budget: its schedule is no longer the one that found its defect", s)
		}
	}
	var with []int64
	for s := int64(1); s <= 100; s++ {
		if w := New(s); w.draw().Campaign != nil && w.bud.on {
			with = append(with, s)
		}
	}
	if len(with) < 5 || slices.ContainsFunc(with, func(s int64) bool { _, ok := Fixed[s]; return ok && !foundWithBudgets[s] }) {
		t.Errorf("seeds 1-100 with a campaign budget: %v; want at least 5, none of them fixed", with)
	}
}

// zonedCampaign is schedule 24's scenario: nodes 1-6 of the campaign in
// zones a, b, c, a, b, c; node-7 (zone a) outside it; two apps under PDBs
// spread over all of them.
func zonedCampaign() Scenario {
	sc := Scenario{Nodes: 7, FromFirstNode: true, Labels: map[string]map[string]string{},
		Workloads: []Workload{{Name: "app1", Replicas: 7, PDB: "max1", ReadyAfter: 5}, {Name: "app2", Replicas: 4, PDB: "min-1", ReadyAfter: 10}},
		Campaign: &api.MaintenanceCampaignSpec{AllowAllWorkloads: true, Release: true, Budget: &api.CampaignBudget{TopologyKey: zoneKey, MaxPerDomain: 1},
			Breaker: api.Breaker{MaxNotReadyNodes: 0, PodReadyTimeout: &metav1.Duration{Duration: time.Hour}, HoldDown: &metav1.Duration{Duration: time.Minute}}}}
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("node-%d", i)
		sc.Labels[name] = map[string]string{zoneKey: fmt.Sprintf("zone-%c", 'a'+(i-1)%3)}
		if i <= 6 {
			sc.Campaign.Nodes = append(sc.Campaign.Nodes, name)
		}
	}
	return sc
}

// runZoned runs schedule 24 until the campaign completes, then checks that
// its budget was used, not exceeded: 3 nodes at once, one per zone.
func runZoned(w *World) {
	for i := 0; i < 300 && !strings.Contains(w.Trace(), "Completed on fleet:"); i++ {
		w.mu.Lock()
		w.cluster()
		w.mu.Unlock()
		w.rounds(1, 5*time.Second, resources...)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.bud; b.peak != 3 || b.peakDomain != 1 || b.domains != 3 {
		w.violate("the campaign had at most %d nodes in maintenance at once, %d of one zone, of %d zones at once; want 3, 1 and 3", b.peak, b.peakDomain, b.domains)
	}
}
