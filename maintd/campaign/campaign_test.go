package campaign

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func nodes(names ...string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range names {
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"pool": strings.TrimRight(n, "0123456789")}}})
	}
	return out
}

func newCampaign(spec api.MaintenanceCampaignSpec) *api.MaintenanceCampaign {
	return &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "fleet", UID: "c-uid", Generation: 1, Labels: map[string]string{"team": "infra"}}, Spec: spec}
}

// world is what the controller reads when Decide needs it.
type world struct {
	Facts
	start    func(nodes []string) (Start, error)
	capacity func(nodes []string) (Capacity, error)
}

// facts is a cluster of a-1..a-5 (the campaign's pool) and b-1..b-3.
func facts(fits bool) world {
	return world{
		Facts: Facts{Nodes: nodes("a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3"), MaxNodes: 10},
		start: func(nodes []string) (Start, error) {
			return Start{Owners: []types.UID{"rs-1"}, Namespaces: []string{"shop"}, Pods: 3 * len(nodes)}, nil
		},
		capacity: func(nodes []string) (Capacity, error) {
			if !fits {
				return Capacity{Verdict: "never", Pods: 3 * len(nodes), Message: "insufficient-capacity: the 15 pods to move request 15000m cpu and the 3 schedulable nodes outside the set have 3000m free in all",
					Causes: []analyze.ForecastCause{{Verdict: analyze.VerdictNever, Reason: analyze.ReasonNoCapacity}}}, nil
			}
			return Capacity{Verdict: "ok", Pods: 3 * len(nodes)}, nil
		},
	}
}

// decideAll decides as the controller does: it reads what Decide needs,
// then decides again.
func decideAll(c *api.MaintenanceCampaign, w world, now time.Time) (Decision, error) {
	for range 3 {
		d, err := Decide(c, w.Facts, now)
		if err != nil || d.Need == nil {
			return d, err
		}
		if n := d.Need.Start; n != nil {
			s, err := w.start(n)
			if err != nil {
				return Decision{}, err
			}
			s.Nodes = n
			w.Start = &s
		}
		if n := d.Need.Live; n != nil {
			w.Live = map[string]types.UID{}
			for _, name := range n {
				w.Live[name] = ""
				for _, p := range w.Plans {
					if p.Name == name {
						w.Live[name] = p.UID
					}
				}
			}
		}
		if n := d.Need.Capacity; n != nil {
			cp, err := w.capacity(n)
			if err != nil {
				return Decision{}, err
			}
			cp.Nodes = n
			w.Capacity = &cp
		}
	}
	return Decision{}, errors.New("Decide kept asking for facts")
}

var pool = api.MaintenanceCampaignSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}, AllowAllWorkloads: true}

func decide(t *testing.T, c *api.MaintenanceCampaign, f world, now time.Time) Decision {
	t.Helper()
	d, err := decideAll(c, f, now)
	if err != nil {
		t.Fatal(err)
	}
	c.Status = d.Status
	return d
}

// made turns a decision's plans into the campaign's plans, in phase.
func made(d Decision, phase api.Phase) []*api.MaintenancePlan {
	for _, p := range d.Create {
		p.Status.Phase = phase
		p.UID = types.UID("uid-" + p.Name) // as the API server sets it
	}
	return d.Create
}

func createdNodes(d Decision) []string {
	var out []string
	for _, p := range d.Create {
		out = append(out, p.Spec.NodeName)
	}
	return out
}

func TestStartAndOneWave(t *testing.T) {
	c := newCampaign(pool)
	c.Spec.Deadline = &metav1.Duration{Duration: time.Hour}
	d := decide(t, c, facts(true), t0)
	if diff := cmp.Diff([]string{"a1", "a2", "a3", "a4", "a5"}, c.Status.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a1", "a2", "a3", "a4", "a5"}, createdNodes(d)); diff != "" {
		t.Errorf("one wave of every node (-want +got):\n%s", diff)
	}
	if c.Status.Phase != api.Draining || c.Status.Reason != api.WaveStarted || c.Status.Wave != 1 || c.Status.Counts.PodsAtStart != 15 {
		t.Errorf("status %s/%s wave %d, %d pods: %s", c.Status.Phase, c.Status.Reason, c.Status.Wave, c.Status.Counts.PodsAtStart, c.Status.Message)
	}
	p := d.Create[0]
	want := api.MaintenancePlanSpec{NodeName: "a1", Reason: "campaign fleet", AllowAllWorkloads: true, StartWithin: &metav1.Duration{Duration: time.Hour}, Deadline: &metav1.Duration{Duration: time.Hour}}
	if diff := cmp.Diff(want, p.Spec); diff != "" {
		t.Errorf("plan spec (-want +got):\n%s", diff)
	}
	if p.Name != "fleet-a1" || p.Labels[api.CampaignLabel] != "fleet" || p.Labels[api.WaveLabel] != "1" || p.Labels["team"] != "infra" || metav1.GetControllerOf(p).UID != "c-uid" {
		t.Errorf("plan %s: labels %v, owners %v", p.Name, p.Labels, p.OwnerReferences)
	}
	// The plans made, and listed again: nothing more to make.
	f := facts(true)
	f.Plans = made(d, api.Cordoning)
	if d := decide(t, c, f, t0.Add(time.Second)); len(d.Create) != 0 {
		t.Errorf("made %v again", createdNodes(d))
	}
	// Half an hour later a plan's deadline is what is left of the campaign's.
	c2 := newCampaign(api.MaintenanceCampaignSpec{Nodes: []string{"a1", "b1"}, Deadline: &metav1.Duration{Duration: time.Hour}})
	f = facts(true)
	f.MaxNodes = 1
	d = decide(t, c2, f, t0)
	f.Plans = made(d, api.Completed)
	d = decide(t, c2, f, t0.Add(30*time.Minute))
	if len(d.Create) != 1 || d.Create[0].Spec.Deadline.Duration != 30*time.Minute || d.Create[0].Labels[api.WaveLabel] != "2" {
		t.Errorf("wave 2: %+v", d.Create)
	}
}

func TestWaves(t *testing.T) {
	c := newCampaign(pool)
	f := facts(true)
	f.MaxNodes, f.Holders = 3, 1 // one slot held by another plan: waves of 2
	d := decide(t, c, f, t0)
	if diff := cmp.Diff([]string{"a1", "a2"}, createdNodes(d)); diff != "" {
		t.Errorf("wave 1 (-want +got):\n%s", diff)
	}
	wave1 := made(d, api.Drained)
	f.Plans, f.Holders = wave1, 3
	d = decide(t, c, f, t0.Add(time.Minute))
	if len(d.Create) != 0 || c.Status.Phase != api.Drained || c.Status.Reason != api.WaitingForRelease {
		t.Errorf("wave 1 drained, not released: made %v, %s/%s", createdNodes(d), c.Status.Phase, c.Status.Reason)
	}
	for _, p := range wave1 {
		p.Status.Phase = api.Completed
	}
	f.Holders = 1
	d = decide(t, c, f, t0.Add(2*time.Minute))
	if diff := cmp.Diff([]string{"a3", "a4"}, createdNodes(d)); diff != "" || c.Status.Wave != 2 {
		t.Errorf("wave %d (-want +got):\n%s", c.Status.Wave, diff)
	}
	// No free slot: wait, silently (the same status again).
	f.Plans, f.Holders = append(wave1, made(d, api.Completed)...), 3
	d = decide(t, c, f, t0.Add(3*time.Minute))
	if len(d.Create) != 0 || c.Status.Reason != api.WaitingForSlot {
		t.Errorf("no slot: made %v, %s", createdNodes(d), c.Status.Reason)
	}
	before := c.Status.DeepCopy()
	decide(t, c, f, t0.Add(4*time.Minute))
	if diff := cmp.Diff(*before, c.Status); diff != "" {
		t.Errorf("a waiting campaign rewrote its status (-before +after):\n%s", diff)
	}
}

func TestRelease(t *testing.T) {
	c := newCampaign(pool)
	c.Spec.Release = true
	f := facts(true)
	d := decide(t, c, f, t0)
	plans := made(d, api.Draining)
	plans[1].Status.Phase, plans[2].Status.Phase = api.Drained, api.Drained
	plans[2].Spec.Release = true
	f.Plans = plans
	d = decide(t, c, f, t0.Add(time.Minute))
	if diff := cmp.Diff([]string{"fleet-a2"}, d.Release); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}
	for _, p := range plans {
		p.Status.Phase = api.Completed
	}
	decide(t, c, f, t0.Add(2*time.Minute))
	if c.Status.Phase != api.Completed || !meta.IsStatusConditionTrue(c.Status.Conditions, api.ConditionReady) {
		t.Errorf("all completed: %s/%s", c.Status.Phase, c.Status.Reason)
	}
}

// TestNodesOutliveTheirPlans: what became of each node is the campaign's
// own record. A Completed plan deleted (kubectl maint uncordon deletes it)
// leaves its node completed and its evictions counted: the node is never
// drained again. A plan deleted before it ended leaves its node deleted:
// not drained again either, until a person lists it in spec.retry.
func TestNodesOutliveTheirPlans(t *testing.T) {
	c := newCampaign(api.MaintenanceCampaignSpec{Nodes: []string{"a1", "a2", "a3"}, AllowAllWorkloads: true})
	f := facts(true)
	plans := made(decide(t, c, f, t0), api.Drained)
	for _, p := range plans {
		p.Status.Pods.Evicted = 4
	}
	// a2 is released by hand and its plan deleted.
	plans[1].Status.Phase, plans[1].Status.Reason = api.Completed, api.Uncordoned
	f.Plans = plans
	decide(t, c, f, t0.Add(time.Minute))
	f.Plans = []*api.MaintenancePlan{plans[0], plans[2]}
	c.Spec.Release = true
	d := decide(t, c, f, t0.Add(2*time.Minute))
	if len(d.Create) != 0 {
		t.Errorf("a node whose plan completed and was deleted is drained again: %v", createdNodes(d))
	}
	if diff := cmp.Diff([]string{"fleet-a1", "fleet-a3"}, d.Release); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}
	plans[0].Status.Phase, plans[2].Status.Phase = api.Completed, api.Completed
	decide(t, c, f, t0.Add(3*time.Minute))
	if c.Status.Phase != api.Completed || c.Status.Counts.Evicted != 12 || c.Status.Counts.Completed != 3 {
		t.Errorf("%s/%s, %d evicted, %d completed: want Completed, all 12 evictions (its deleted plan's too), 3 nodes", c.Status.Phase, c.Status.Reason, c.Status.Counts.Evicted, c.Status.Counts.Completed)
	}
	want := []api.CampaignNode{
		{Name: "a1", Outcome: api.NodeCompleted, Plan: "fleet-a1", PlanUID: "uid-fleet-a1", Wave: 1, Evicted: 4},
		{Name: "a2", Outcome: api.NodeCompleted, Plan: "fleet-a2", PlanUID: "uid-fleet-a2", Wave: 1, Evicted: 4},
		{Name: "a3", Outcome: api.NodeCompleted, Plan: "fleet-a3", PlanUID: "uid-fleet-a3", Wave: 1, Evicted: 4},
	}
	if diff := cmp.Diff(want, c.Status.NodeStatus); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}

	// A Blocked plan deleted: its node is deleted, the campaign says so
	// and does not complete; spec.retry drains it again, in a later wave.
	c = newCampaign(api.MaintenanceCampaignSpec{Nodes: []string{"a1", "a2"}, AllowAllWorkloads: true, Release: true})
	f = facts(true)
	plans = made(decide(t, c, f, t0), api.Completed)
	plans[1].Status.Phase, plans[1].Status.Reason = api.Blocked, api.UnknownPodsOnNode
	plans[1].Status.Pods.Evicted = 1
	f.Plans = plans
	decide(t, c, f, t0.Add(time.Minute))
	f.Plans = plans[:1]
	d = decide(t, c, f, t0.Add(2*time.Minute))
	if len(d.Create) != 0 || c.Status.Phase != api.Blocked || c.Status.Reason != api.NodesNotDone || !strings.Contains(c.Status.Message, "a2 (deleted)") {
		t.Errorf("a deleted plan's node: made %v; %s/%s: %s", createdNodes(d), c.Status.Phase, c.Status.Reason, c.Status.Message)
	}
	c.Spec.Retry = []string{"a2"}
	c.Generation++
	d = decide(t, c, f, t0.Add(3*time.Minute))
	if diff := cmp.Diff([]string{"a2"}, createdNodes(d)); diff != "" || c.Status.Wave != 2 {
		t.Errorf("retried: wave %d (-want +got):\n%s", c.Status.Wave, diff)
	}
	retried := made(d, api.Completed)
	retried[0].UID = "uid-2"
	retried[0].Status.Pods.Evicted = 2
	f.Plans = append(plans[:1], retried...)
	decide(t, c, f, t0.Add(4*time.Minute))
	if c.Status.Phase != api.Completed || c.Status.Counts.Evicted != 3 {
		t.Errorf("after the retry: %s/%s, %d evicted (want 1 of the deleted plan + 2)", c.Status.Phase, c.Status.Reason, c.Status.Counts.Evicted)
	}
}

func TestBlockedBeforeAnyWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   api.MaintenanceCampaignSpec
		fits   bool
		reason api.Reason
		msg    string
	}{
		{"capacity", pool, false, api.InsufficientCapacity, "wave 1 (5 nodes): insufficient-capacity: the 15 pods to move request 15000m cpu"},
		{"no node matches", api.MaintenanceCampaignSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "z"}}}, true, api.NoNodes, "no node matches"},
		{"missing node", api.MaintenanceCampaignSpec{Nodes: []string{"a1", "gone"}}, true, api.NoNodes, "spec.nodes names 1 nodes that do not exist: gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCampaign(tc.spec)
			d := decide(t, c, facts(tc.fits), t0)
			if len(d.Create) != 0 || c.Status.Phase != api.Blocked || c.Status.Reason != tc.reason || !strings.Contains(c.Status.Message, tc.msg) {
				t.Errorf("made %v; %s/%s: %s", createdNodes(d), c.Status.Phase, c.Status.Reason, c.Status.Message)
			}
		})
	}
	// Accepted, as a plan accepts it (an autoscaler adds the room): the
	// wave goes on.
	accepting := pool
	accepting.AcceptedRisks = []string{analyze.ReasonNoCapacity}
	c := newCampaign(accepting)
	if d := decide(t, c, facts(false), t0); len(d.Create) != 5 || c.Status.Phase != api.Draining || !strings.Contains(c.Status.Capacity.Message, "accepted") {
		t.Errorf("insufficient-capacity accepted: made %v; %s/%s: %s; capacity %+v", createdNodes(d), c.Status.Phase, c.Status.Reason, c.Status.Message, c.Status.Capacity)
	}
	c = newCampaign(pool)
	f := facts(true)
	f.capacity = func([]string) (Capacity, error) { return Capacity{}, errors.New("cache") }
	if _, err := decideAll(c, f, t0); err == nil {
		t.Error("a capacity that cannot be read decided")
	}
}

func TestBreaker(t *testing.T) {
	c := newCampaign(pool)
	c.Spec.Breaker = api.Breaker{MaxNotReadyNodes: 2, PodReadyTimeout: &metav1.Duration{Duration: time.Minute}, HoldDown: &metav1.Duration{Duration: 30 * time.Second}}
	f := facts(true)
	d := decide(t, c, f, t0)
	f.Plans = made(d, api.Draining)
	paused := func(want bool) {
		t.Helper()
		if got := meta.IsStatusConditionTrue(c.Status.Conditions, api.ConditionPaused); got != want {
			t.Errorf("Paused %t, want %t: %s/%s %s", got, want, c.Status.Phase, c.Status.Reason, c.Status.Message)
		}
	}
	// Two NotReady nodes are tolerated, three open it.
	f.Sick.NotReady = []string{"b1", "b2"}
	decide(t, c, f, t0.Add(time.Second))
	paused(false)
	f.Sick.NotReady = []string{"b1", "b2", "b3"}
	decide(t, c, f, t0.Add(2*time.Second))
	paused(true)
	if b := c.Status.Breaker; b == nil || !b.Open || b.Reason != "nodes-not-ready" || b.Trips != 1 || !strings.Contains(b.Message, "3 nodes outside the campaign are NotReady (b1, b2, b3), more than maxNotReadyNodes 2") {
		t.Errorf("breaker %+v", b)
	}
	// Clear, first seen 10.4 s in: it holds down 30 s, never less (the
	// status keeps whole seconds: counted from 11 s), then closes.
	f.Sick.NotReady = nil
	d = decide(t, c, f, t0.Add(10*time.Second+400*time.Millisecond))
	paused(true)
	if d.Requeue != 30*time.Second+600*time.Millisecond {
		t.Errorf("requeue %s, want the hold-down from the next whole second", d.Requeue)
	}
	decide(t, c, f, t0.Add(40*time.Second+500*time.Millisecond))
	paused(true)
	decide(t, c, f, t0.Add(41*time.Second))
	paused(false)
	// A moved pod not Ready: it counts after podReadyTimeout, and the
	// campaign looks again then.
	f.Sick.Unready = []Unready{{Namespace: "shop", Name: "web-x", Created: t0.Add(50 * time.Second), Why: "Pending, not scheduled"}}
	d = decide(t, c, f, t0.Add(60*time.Second))
	paused(false)
	if d.Requeue != 50*time.Second {
		t.Errorf("requeue %s, want when the pod is late", d.Requeue)
	}
	decide(t, c, f, t0.Add(110*time.Second))
	paused(true)
	if b := c.Status.Breaker; b.Reason != "pods-not-ready" || b.Trips != 2 || !strings.Contains(b.Message, "shop/web-x (Pending, not scheduled, 1m0s)") {
		t.Errorf("breaker %+v", b)
	}
	// Budgets below their floor.
	f.Sick.Unready = nil
	c.Status.Breaker = nil
	f.Sick.BelowFloor = []string{"shop/web: 2 healthy, 3 desired"}
	decide(t, c, f, t0.Add(200*time.Second))
	if b := c.Status.Breaker; b == nil || b.Reason != "pdbs-below-floor" {
		t.Errorf("breaker %+v", b)
	}
	// While paused no new wave is made.
	c3 := newCampaign(pool)
	f3 := facts(true)
	f3.MaxNodes = 2
	d = decide(t, c3, f3, t0)
	f3.Plans = made(d, api.Completed)
	f3.Pause = &drain.Pause{Object: "maintd-system/maintd-pause", Since: t0}
	if d := decide(t, c3, f3, t0.Add(time.Minute)); len(d.Create) != 0 || c3.Status.Reason != api.Paused {
		t.Errorf("paused cluster-wide: made %v, %s", createdNodes(d), c3.Status.Reason)
	}
}

func TestDeadlineAndBlockedPlans(t *testing.T) {
	c := newCampaign(pool)
	c.Spec.Deadline = &metav1.Duration{Duration: time.Hour}
	f := facts(true)
	d := decide(t, c, f, t0)
	plans := made(d, api.Draining)
	plans[3].Status.Phase, plans[3].Status.Reason = api.Blocked, api.UnknownPodsOnNode
	f.Plans = plans
	decide(t, c, f, t0.Add(time.Minute))
	if c.Status.Reason != api.PlansBlocked || !strings.Contains(c.Status.Message, "fleet-a4 (Blocked: unknown-pods-on-node)") {
		t.Errorf("%s: %s", c.Status.Reason, c.Status.Message)
	}
	// Its plans must start within what is left of its deadline.
	for _, p := range plans {
		if p.Spec.StartWithin == nil || p.Spec.StartWithin.Duration != time.Hour || p.Spec.Deadline.Duration != time.Hour {
			t.Errorf("plan %s: startWithin %v, deadline %v; want the campaign's hour", p.Name, p.Spec.StartWithin, p.Spec.Deadline)
		}
	}
	// The deadline passes in the reconcile that opens the breaker: the
	// campaign ends, and its breaker stays open: its started plans stay
	// paused, never released into the sick cluster.
	f.Sick.NotReady = []string{"b1", "b2"}
	decide(t, c, f, t0.Add(time.Hour))
	if c.Status.Phase != api.Failed || c.Status.Reason != api.DeadlineExceeded {
		t.Errorf("past the deadline: %s/%s", c.Status.Phase, c.Status.Reason)
	}
	if b := c.Status.Breaker; b == nil || !b.Open || b.Trips != 1 || !meta.IsStatusConditionTrue(c.Status.Conditions, api.ConditionPaused) {
		t.Errorf("a campaign failed with its breaker open: breaker %+v, conditions %+v", b, c.Status.Conditions)
	}
	// The cluster heals: a failed campaign decides nothing more, and its
	// breaker stays as it ended.
	f.Sick.NotReady = nil
	decide(t, c, f, t0.Add(time.Hour+time.Minute))
	if b := c.Status.Breaker; b == nil || !b.Open {
		t.Errorf("a failed campaign's breaker moved: %+v", b)
	}
	if d := decide(t, c, f, t0.Add(2*time.Hour)); len(d.Create)+len(d.Release) != 0 {
		t.Errorf("a failed campaign acts: %+v", d)
	}
}

func TestPlanName(t *testing.T) {
	long := strings.Repeat("n", 250)
	if n := PlanName("c", long); len(n) > 253 || n == PlanName("d", long) {
		t.Errorf("PlanName %q (%d)", n, len(n))
	}
	if got := PlanName("fleet", "node-1"); got != "fleet-node-1" {
		t.Errorf("PlanName = %q", got)
	}
}

// TestNeed: a decision missing a fact, or given one read for other nodes,
// asks for it and decides nothing else.
func TestNeed(t *testing.T) {
	c := newCampaign(pool)
	w := facts(true)
	d, err := Decide(c, w.Facts, t0)
	if err != nil || d.Need == nil || !cmp.Equal(d.Need.Start, []string{"a1", "a2", "a3", "a4", "a5"}) || d.Status.Phase != "" || len(d.Create) != 0 {
		t.Fatalf("no start read: need %+v, status %+v, %d plans, err %v", d.Need, d.Status, len(d.Create), err)
	}
	w.Start = &Start{Nodes: []string{"a1"}, Pods: 3}
	if d, _ := Decide(c, w.Facts, t0); d.Need == nil || d.Need.Start == nil {
		t.Fatalf("a start read for other nodes was used: %+v", d)
	}
	w.Start = &Start{Nodes: []string{"a1", "a2", "a3", "a4", "a5"}, Pods: 15}
	w.Capacity = &Capacity{Nodes: []string{"a1"}, Verdict: "ok"}
	d, err = Decide(c, w.Facts, t0)
	if err != nil || d.Need == nil || !cmp.Equal(d.Need.Capacity, []string{"a1", "a2", "a3", "a4", "a5"}) || len(d.Create) != 0 {
		t.Fatalf("a capacity judged for other nodes: need %+v, %d plans, err %v", d.Need, len(d.Create), err)
	}
	w.Capacity.Nodes = []string{"a1", "a2", "a3", "a4", "a5"}
	if d, err = Decide(c, w.Facts, t0); err != nil || d.Need != nil || len(d.Create) != 5 {
		t.Fatalf("with every fact: need %+v, %d plans, err %v", d.Need, len(d.Create), err)
	}
}
