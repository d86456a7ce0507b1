// Campaign budgets (issue 34): the seeds whose campaign has a budget (a
// count, a percentage of its nodes, at most maxPerDomain nodes of one zone,
// or one zone at a time) over nodes labelled with zones, and the promise
// about them, judged from the nodes as the server holds them.

package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// zoneKey is the label of the nodes' zones.
const zoneKey = corev1.LabelTopologyZone

// budgets is what the world knows of the campaign's budget: the budget and
// node count people gave it, the campaign's UID, and the plans maintd made
// for it (by UID, gone ones too: a node may carry the cordon of a plan
// deleted with its finalizer removed).
type budgets struct {
	// r draws, apart from the others, whether a campaign seed has a budget
	// (2 in 3) and zones, and what they are; its stream's constant leaves
	// the campaign seeds of TestFixedSeeds without one: they replay the
	// schedules that found their defects.
	r  *rand.Rand
	on bool
	// spec and total are the budget and the campaign's node count as the
	// person who made the campaign wrote them; campaign its UID.
	spec     *api.CampaignBudget
	total    int
	name     string
	campaign types.UID
	plans    map[types.UID]bool
	// peak is the most of the campaign's nodes in maintenance at once, and
	// of one domain; domains the most domains at once.
	peak, peakDomain, domains int
}

func newBudgets(seed int64) *budgets {
	return &budgets{r: rand.New(rand.NewPCG(uint64(seed), 0xb0db67)), plans: map[types.UID]bool{}}
}

// drawBudget gives, from its own stream, 2 in 3 campaign seeds a budget, a
// campaign over 3 to 5 more nodes, their nodes 2 or 3 zones (at 1 in 4 one
// node of the campaign is left without the label: a domain of its own
// kind), and as many slots (2 to 4) as let the budget, not
// --max-nodes-in-maintenance, bound the waves.
func (w *World) drawBudget(sc *Scenario) {
	br := w.bud.r
	if sc.Campaign == nil || br.IntN(3) == 0 {
		return
	}
	w.bud.on = true
	b := &api.CampaignBudget{}
	switch br.IntN(5) {
	case 0:
		b.Nodes = ptrTo(intstr.FromInt32(int32(1 + br.IntN(2))))
	case 1:
		pcts := []string{"25%", "34%", "50%", "67%", "75%"}
		b.Nodes = ptrTo(intstr.FromString(pcts[br.IntN(len(pcts))]))
	case 2, 3:
		b.TopologyKey, b.MaxPerDomain = zoneKey, int32(1+br.IntN(2))
	case 4:
		b.TopologyKey, b.OneDomainAtATime = zoneKey, true
		if br.IntN(3) == 0 {
			b.MaxPerDomain = 1
		}
	}
	if b.TopologyKey != "" && br.IntN(3) == 0 {
		b.Nodes = ptrTo(intstr.FromInt32(int32(1 + br.IntN(3))))
	}
	sc.Campaign.Budget = b
	// The campaign is over 3 to 5 nodes added to the drawn ones: no plan
	// of a person's is on them, and the drawn workloads' pods go round
	// all the nodes, so that its waves go on more often than past the
	// blocks the drawn scenario puts on its nodes; at 1 in 3 one drawn
	// node of it stays in it.
	keep := sc.Campaign.Nodes[:min(br.IntN(3)/2, len(sc.Campaign.Nodes))]
	sc.Campaign.Nodes = slices.Clone(keep)
	for range 3 + br.IntN(3) {
		sc.Nodes++
		sc.Campaign.Nodes = append(sc.Campaign.Nodes, fmt.Sprintf("node-%d", sc.Nodes))
	}
	zones := 2 + br.IntN(2)
	bare := ""
	if br.IntN(4) == 0 {
		bare = sc.Campaign.Nodes[br.IntN(len(sc.Campaign.Nodes))]
	}
	if sc.Labels == nil {
		sc.Labels = map[string]map[string]string{}
	}
	for i := range sc.Nodes {
		name := fmt.Sprintf("node-%d", i+1)
		if name == bare {
			continue
		}
		if sc.Labels[name] == nil {
			sc.Labels[name] = map[string]string{}
		}
		sc.Labels[name][zoneKey] = fmt.Sprintf("zone-%c", 'a'+br.IntN(zones))
	}
	w.MaxNodes = 2 + br.IntN(3)
	if br.IntN(3) != 0 {
		// A longer deadline (1.5 to 4 h), so that the campaign more often
		// has the time to complete, a wave after the other.
		sc.Campaign.Deadline = &metav1.Duration{Duration: time.Duration(90+br.IntN(150)) * time.Minute}
	}
}

func ptrTo[T any](v T) *T { return &v }

// madeCampaign records the campaign people made: its budget, node count
// and UID; w.mu is held.
func (w *World) madeCampaign(o runtime.Object, spec *api.MaintenanceCampaignSpec) {
	c, ok := o.(*api.MaintenanceCampaign)
	if ok {
		w.gates.campaign = c.UID
	}
	if !ok || spec.Budget == nil {
		return
	}
	w.bud.on, w.bud.spec, w.bud.total, w.bud.name, w.bud.campaign = true, spec.Budget.DeepCopy(), len(spec.Nodes), c.Name, c.UID
	var zones []string
	for _, o := range w.s.list(nodesR, "", nil) {
		n := o.(*corev1.Node)
		zones = append(zones, fmt.Sprintf("%s=%q", n.Name, n.Labels[spec.Budget.TopologyKey]))
	}
	if spec.Budget.TopologyKey != "" {
		w.logf("the nodes' %s: %s", spec.Budget.TopologyKey, strings.Join(zones, ", "))
	}
}

// budgetPlan records a plan maintd made for the budgeted campaign; w.mu is
// held.
func (w *World) budgetPlan(p *api.MaintenancePlan) {
	if w.bud.spec == nil {
		return
	}
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "MaintenanceCampaign" && ref.UID == w.bud.campaign {
			w.bud.plans[p.UID] = true
		}
	}
}

// budgetLimits are what the budget allows at once, read from the CRD's
// words (not maintd's functions): count nodes, a percentage of the
// campaign's nodes rounded down and at least one (the node count without
// nodes); under a topology key perDomain nodes of one domain (maxPerDomain,
// 1 when unset, no bound when unset with oneDomainAtATime).
func budgetLimits(b *api.CampaignBudget, total int) (count, perDomain int) {
	count, perDomain = total, math.MaxInt
	if b.Nodes != nil {
		if b.Nodes.Type == intstr.Int {
			count = int(b.Nodes.IntVal)
		} else if pct, err := strconv.Atoi(strings.TrimSuffix(b.Nodes.StrVal, "%")); err == nil {
			count = max(1, total*pct/100)
		}
	}
	if b.TopologyKey != "" {
		switch {
		case b.MaxPerDomain > 0:
			perDomain = int(b.MaxPerDomain)
		case !b.OneDomainAtATime:
			perDomain = 1
		}
	}
	return count, perDomain
}

// checkBudget checks, at every write of a node, that the campaign's nodes
// in maintenance (on the server: unschedulable, and carrying the cordon of
// a plan maintd made for the campaign) are no more than its budget allows:
// its count, at most perDomain of one domain (the node's label under the
// topology key, "" without it), and one domain with oneDomainAtATime. The
// waves run one after another, so a wave's nodes are those at once.
// --max-nodes-in-maintenance, over all the plans, is check's. w.mu is held.
func (w *World) checkBudget() {
	b := w.bud
	if b.spec == nil {
		return
	}
	var in []string
	per := map[string][]string{}
	for _, o := range w.s.list(nodesR, "", nil) {
		n := o.(*corev1.Node)
		_, uid, ok := drain.ParseOwner(n.Annotations[cordon.OwnerAnnotation])
		if !n.Spec.Unschedulable || !ok || !b.plans[uid] {
			continue
		}
		in = append(in, n.Name)
		if b.spec.TopologyKey != "" {
			d := n.Labels[b.spec.TopologyKey]
			per[d] = append(per[d], n.Name)
		}
	}
	count, perDomain := budgetLimits(b.spec, b.total)
	b.peak, b.domains = max(b.peak, len(in)), max(b.domains, len(per))
	if len(in) > count {
		w.violate("%d of campaign %s's %d nodes in maintenance at once (%s): its budget (%s) allows %d", len(in), b.name, b.total, strings.Join(in, ", "), describeBudget(b.spec), count)
	}
	for _, d := range sortedKeys(per) {
		b.peakDomain = max(b.peakDomain, len(per[d]))
		if len(per[d]) > perDomain {
			w.violate("%d of campaign %s's nodes of %s=%q in maintenance at once (%s): its budget allows %d per domain", len(per[d]), b.name, b.spec.TopologyKey, d, strings.Join(per[d], ", "), perDomain)
		}
	}
	if b.spec.OneDomainAtATime && len(per) > 1 {
		var all []string
		for _, d := range sortedKeys(per) {
			all = append(all, fmt.Sprintf("%s=%q: %s", b.spec.TopologyKey, d, strings.Join(per[d], ", ")))
		}
		w.violate("campaign %s's nodes of %d domains in maintenance at once (%s): its budget allows one domain at a time", b.name, len(per), strings.Join(all, "; "))
	}
}

// budgetEnd checks, once the world settled, that a campaign with a budget
// that completed drained every one of its nodes (a node its waves passed
// over is never left behind), and counts how the campaigns ended, with a
// budget and without, for TestSim's log; budgetStuck checks that it does
// not rest mid-way. w.mu is held.
func (w *World) budgetEnd() {
	b := w.bud
	name, uid := b.name, b.campaign
	if b.spec == nil {
		name = "fleet"
	}
	o, err := w.s.get(campsR, "", name)
	if err != nil || b.spec != nil && o.(*api.MaintenanceCampaign).UID != uid {
		if w.campaign {
			tallyBudget(w, "deleted")
		}
		return
	}
	c := o.(*api.MaintenanceCampaign)
	st := c.Status
	if w.campaign { // a drawn seed's, not a written schedule's
		tallyBudget(w, string(st.Phase)+"/"+string(st.Reason))
	}
	if b.spec == nil || st.Phase != api.Completed {
		return
	}
	for _, n := range st.NodeStatus {
		if n.Outcome != api.NodeCompleted {
			w.violate("campaign %s with a budget is Completed while its node %s is %s", c.Name, n.Name, n.Outcome)
		}
	}
	if len(st.NodeStatus) != b.total {
		w.violate("campaign %s with a budget is Completed with %d of its %d nodes in its status", c.Name, len(st.NodeStatus), b.total)
	}
}

// budgetStuck checks, at an idle point and once the world settled, that
// the campaign with a budget does not rest with nodes left to drain and no
// plan of it going: the budget bounds a wave, it never ends the waves. A
// campaign that stopped for a reason of its own (Completed, Failed,
// Blocked, its breaker open, paused, its nodes left for a person to
// release, waiting for a slot: stuck checks that one) or that the
// controller will look at again (scheduled) is let be. w.mu is held.
func (w *World) budgetStuck(scheduled map[string]bool) {
	b := w.bud
	if b.spec == nil {
		return
	}
	o, err := w.s.get(campsR, "", b.name)
	if err != nil {
		return
	}
	c := o.(*api.MaintenanceCampaign)
	st := c.Status
	if _, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name); err == nil || c.UID != b.campaign || c.DeletionTimestamp != nil || scheduled["campaign/"+c.Name] ||
		st.Phase == api.Completed || st.Phase == api.Failed || st.Phase == api.Blocked || st.Phase == api.Drained || breakerOpen(c) || st.Reason == api.WaitingForSlot {
		return
	}
	live := map[string]bool{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		if !b.plans[p.UID] {
			continue
		}
		if p.Status.Phase != api.Completed && p.Status.Phase != api.Failed {
			return // a plan of it is going: its wait is the plan's
		}
		live[p.Spec.NodeName] = true
	}
	var left []string
	for _, n := range st.NodeStatus {
		if n.Outcome == api.NodePending && !live[n.Name] {
			left = append(left, n.Name)
		}
	}
	if len(left) > 0 {
		w.violate("campaign %s with a budget (%s) rests %s/%s with %d nodes left to drain (%s) and no plan of it going: %s",
			c.Name, describeBudget(b.spec), st.Phase, st.Reason, len(left), strings.Join(left, ", "), st.Message)
	}
}

// describeBudget is a budget in a few words, for the trace.
func describeBudget(b *api.CampaignBudget) string {
	var out []string
	if b.Nodes != nil {
		out = append(out, "nodes "+b.Nodes.String())
	}
	if b.TopologyKey != "" {
		out = append(out, "key "+b.TopologyKey)
	}
	if b.MaxPerDomain > 0 {
		out = append(out, fmt.Sprintf("maxPerDomain %d", b.MaxPerDomain))
	}
	if b.OneDomainAtATime {
		out = append(out, "oneDomainAtATime")
	}
	return strings.Join(out, ", ")
}

// budgetTotals are the campaign seeds' totals over a run of TestSim, with
// a budget (1) and without (0).
var budgetTotals struct {
	sync.Mutex
	seeds, bound, multi [2]int
	some                int
	ends                [2]map[string]int
}

// tallyBudget counts how a campaign seed's campaign ended, and for a budget
// seed whether its budget bound a wave (the wave's message says so) and
// whether more than one of its nodes were in maintenance at once; w.mu is
// held.
func tallyBudget(w *World, end string) {
	b := w.bud
	i := 0
	if b.spec != nil {
		i = 1
	}
	budgetTotals.Lock()
	defer budgetTotals.Unlock()
	if budgetTotals.ends[i] == nil {
		budgetTotals.ends[i] = map[string]int{}
	}
	budgetTotals.seeds[i]++
	if b.peak > 0 {
		budgetTotals.some++
	}
	budgetTotals.ends[i][end]++
	if i == 1 && slices.ContainsFunc(w.trace, func(l string) bool { return strings.Contains(l, "; the budget: ") }) {
		budgetTotals.bound[i]++
	}
	if b.peak > 1 {
		budgetTotals.multi[i]++
	}
}

// budgetSummary is the campaign seeds' totals, for TestSim's log.
func budgetSummary() string {
	budgetTotals.Lock()
	defer budgetTotals.Unlock()
	ends := [2]string{}
	for i, m := range budgetTotals.ends {
		var out []string
		for _, k := range sortedKeys(m) {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
		ends[i] = strings.Join(out, ", ")
	}
	return fmt.Sprintf("campaign budgets: %d seeds, %d of them bound by it (a wave's message says so), %d with one of its nodes in maintenance, %d with more than one at once; how they ended: %s; how the %d campaigns without a budget ended: %s",
		budgetTotals.seeds[1], budgetTotals.bound[1], budgetTotals.some, budgetTotals.multi[1], ends[1], budgetTotals.seeds[0], ends[0])
}

// budgetText is a campaign's budget for the trace, "" without one.
func budgetText(b *api.CampaignBudget) string {
	if b == nil {
		return ""
	}
	return ", budget " + describeBudget(b)
}
