// Package sim is a deterministic simulation of maintd's controller: the real
// controller (informers, workqueue, reconcile, drain.Decide and Record, the
// cordon and evict packages) runs against an in-memory API whose watches,
// clock, cluster controllers, faults and other actors follow a seeded
// schedule, and the promises of docs/maintd.md ("Guarantees") are checked
// after every step.
//
// Determinism: the world runs one thing at a time. It sends watch events
// and waits until the controller's handlers ran (Config.Handled); keys
// queued meanwhile enter the workqueue in name order (queue.flush); delays
// follow the simulated clock; the controller sends a decision's evictions
// one by one (Config.Serial) and reconciles only when the world calls
// ProcessNext. The same seed replays the same schedule.
package sim

import (
	"context"
	"maps"

	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/slots"
)

// Namespace is where the simulated workloads run.
const Namespace = "shop"

// epoch is the simulated clock's start.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// World is one simulated cluster with its maintd instances.
type World struct {
	Seed     int64
	MaxNodes int
	// Faults enables the injected faults and other actors in Run.
	Faults bool

	rng *rand.Rand
	// pinning draws what the seeds with a pinned workload add (labels, a
	// node selector, a person labelling nodes), apart from rng, so that
	// the other seeds play as they did before pinning existed.
	pinning *rand.Rand
	pinned  bool
	// surging draws what the seeds whose plans surge add (the surge
	// option, an autoscaler, a person scaling a surged workload), apart
	// from rng as pinning is.
	surging *rand.Rand
	surge   bool
	// pausing draws, apart from rng, whether and when a person pauses all
	// maintenance (1 seed in 5) with the switch.
	pausing *rand.Rand
	pauses  bool
	// campaigning draws, apart from rng, whether a campaign drains some of
	// the nodes (1 seed in 4), and its actors: a person releasing or
	// deleting it, nodes going NotReady and back.
	campaigning *rand.Rand
	campaign    bool
	// picking draws, apart from rng, which of a leader's queues (plans,
	// campaigns) is served first at each step.
	picking *rand.Rand
	// replicas are the Deployments' replica counts as people set them:
	// once every surge is restored, each has its own.
	replicas  map[string]int32
	clock     *clocktesting.FakeClock
	mu        sync.Mutex // the store and the instances' views
	s         *store
	instances []*instance
	nextID    int
	armed     []armedFault

	trace      []string
	violations []string
	failed     string

	// What the invariants remember.
	evictions map[types.UID]int // applied evictions by maintd, per pod UID
	throttled time.Time         // the end of the last throttling 429's Retry-After
	// throttle is a throttling 429's wait, in force once its batch of
	// requests (sent in parallel, or one after the other here) is recorded.
	throttle   time.Time
	spent      map[string][]int64      // PDB -> the versions maintd's evictions spent it at
	actions    int64                   // evictions maintd sent
	refused    map[string]int64        // PDB -> the version a 429 was answered at
	drainStart map[types.UID]time.Time // plan -> when its status first said Cordoning
	silence    map[types.UID]*silence
}

type silence struct {
	facts string
	last  string
	seen  map[string]bool
	timed bool
}

// retries reports whether a phase/reason is a wait that maintd ends by
// trying again on a timer, because its cause is not in the caches: a
// refusal by RBAC or a webhook, API throttling or contention.
func retries(pr string) bool {
	for _, r := range []api.Reason{api.EvictionForbidden, api.EvictionRejected, api.EvictionThrottled, api.APIContention} {
		if strings.HasSuffix(pr, "/"+string(r)) {
			return true
		}
	}
	return false
}

// New is a world for seed with a scenario drawn from it.
func New(seed int64) *World {
	w := &World{Seed: seed, MaxNodes: 1, rng: rand.New(rand.NewPCG(uint64(seed), 0x5e171)), pinning: rand.New(rand.NewPCG(uint64(seed), 0x919)),
		surging: rand.New(rand.NewPCG(uint64(seed), 0x5e26e)), pausing: rand.New(rand.NewPCG(uint64(seed), 0xba05e)),
		campaigning: rand.New(rand.NewPCG(uint64(seed), 0xca3)), picking: rand.New(rand.NewPCG(uint64(seed), 0x9c1)), replicas: map[string]int32{}, clock: clocktesting.NewFakeClock(epoch),
		evictions: map[types.UID]int{}, spent: map[string][]int64{}, refused: map[string]int64{}, drainStart: map[types.UID]time.Time{},
		silence: map[types.UID]*silence{}}
	w.s = newStore(func() metav1.Time { return metav1.NewTime(w.clock.Now()) })
	w.s.watch = func(r schema.GroupVersionResource, ev watch.Event, _ bool) { w.changed(r, ev) }
	return w
}

func (w *World) logf(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf("%7s %s", w.clock.Now().Sub(epoch).Truncate(time.Second), fmt.Sprintf(format, args...)))
}

// failf ends the run with a harness failure (not a broken promise).
func (w *World) failf(format string, args ...any) {
	if w.failed == "" {
		w.failed = fmt.Sprintf(format, args...)
		w.logf("HARNESS: %s", w.failed)
	}
}

// violate records a broken promise.
func (w *World) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.violations = append(w.violations, msg)
	w.logf("VIOLATION: %s", msg)
}

// Violations are the broken promises, in order.
func (w *World) Violations() []string { return w.violations }

// Failed is the harness's own failure, "" when none.
func (w *World) Failed() string { return w.failed }

// Trace is the schedule as it ran: every step, request and fault.
func (w *World) Trace() string { return strings.Join(w.trace, "\n") }

// Scenario options a schedule can set before Setup.
type Scenario struct {
	Nodes int
	// Workloads are Deployments: replicas, and the PDB kind: "max1"
	// (maxUnavailable 1), "min-1" (minAvailable replicas-1), "never"
	// (minAvailable replicas), "none", "overlap" (two PDBs).
	Workloads []Workload
	Plans     []api.MaintenancePlanSpec
	// FromFirstNode places the pods: each workload's replicas go
	// round-robin over the nodes starting at node-1 (false: starting at a
	// drawn node).
	FromFirstNode bool
	// Selectors, when set, start one maintd per label selector (the first
	// leads) instead of one for every plan.
	Selectors []string
	// Labels are extra labels of nodes, by name.
	Labels map[string]map[string]string
	// Autoscaled names the workloads a HorizontalPodAutoscaler scales.
	Autoscaled []string
	// Campaign, when set, is created (as campaign "fleet") after the
	// plans.
	Campaign *api.MaintenanceCampaignSpec
}

// Workload is one Deployment of a scenario.
type Workload struct {
	Name     string
	Replicas int
	PDB      string
	// ReadyAfter is the seconds a replacement takes to be Ready (-1: never).
	ReadyAfter int
	// NodeSelector pins the pods to the nodes it matches: they are placed
	// round-robin on those, and their replacements fit only there.
	NodeSelector map[string]string
	// On, when set, is the node its pods are placed on first.
	On string
}

// draw draws a scenario from the seed.
func (w *World) draw() Scenario {
	r := w.rng
	sc := Scenario{Nodes: 3 + r.IntN(3)}
	pdbs := []string{"max1", "max1", "max1", "min-1", "min-1", "none", "never", "overlap"}
	for i := range 1 + r.IntN(3) {
		wl := Workload{Name: fmt.Sprintf("app%d", i+1), Replicas: 1 + r.IntN(4), PDB: pdbs[r.IntN(len(pdbs))], ReadyAfter: r.IntN(20)}
		if r.IntN(20) == 0 {
			wl.ReadyAfter = -1
		}
		sc.Workloads = append(sc.Workloads, wl)
	}
	nodes := r.Perm(sc.Nodes)
	for i := range 1 + r.IntN(3) {
		spec := api.MaintenancePlanSpec{NodeName: fmt.Sprintf("node-%d", nodes[i%len(nodes)]+1), AllowAllWorkloads: true,
			Deadline: &metav1.Duration{Duration: time.Duration(5+r.IntN(25)) * time.Minute}}
		if r.IntN(10) == 0 {
			spec.DryRun = true
		}
		sc.Plans = append(sc.Plans, spec)
	}
	w.MaxNodes = 1 + r.IntN(2)
	if pr := w.pinning; pr.IntN(6) == 0 {
		// A workload pinned by a node selector to the nodes labelled
		// disk=ssd: the first plan's node, and each other node at 1 in 3.
		// When the plan's node is the only one, the drain never completes.
		w.pinned = true
		sc.Labels = map[string]map[string]string{sc.Plans[0].NodeName: {"disk": "ssd"}}
		for i := range sc.Nodes {
			if name := fmt.Sprintf("node-%d", i+1); name != sc.Plans[0].NodeName && pr.IntN(3) == 0 {
				sc.Labels[name] = map[string]string{"disk": "ssd"}
			}
		}
		sc.Workloads = append(sc.Workloads, Workload{Name: "pinned", Replicas: 1 + pr.IntN(2), PDB: "max1", ReadyAfter: pr.IntN(20), NodeSelector: map[string]string{"disk": "ssd"}})
	}
	w.pauses = w.pausing.IntN(5) == 0
	if sr := w.surging; sr.IntN(3) == 0 {
		// The plans move with a surge the pods whose budget never allows
		// their eviction; a single-replica app with such a budget is
		// added, and an autoscaler scales one of the apps at 1 in 4.
		w.surge = true
		for i := range sc.Plans {
			sc.Plans[i].Surge = api.SurgeIfNeeded
		}
		sc.Workloads = append(sc.Workloads, Workload{Name: "single", Replicas: 1 + sr.IntN(2), PDB: "never", ReadyAfter: sr.IntN(20), On: sc.Plans[0].NodeName})
		if sr.IntN(4) == 0 {
			sc.Autoscaled = append(sc.Autoscaled, "single")
		}
	}
	if cr := w.campaigning; cr.IntN(4) == 0 {
		// A campaign over 2 to 4 of the nodes, in waves when the slots
		// are fewer; released as its nodes drain at 1 in 2 (else a person
		// releases it later).
		w.campaign = true
		perm := cr.Perm(sc.Nodes)
		spec := &api.MaintenanceCampaignSpec{AllowAllWorkloads: true, Release: cr.IntN(2) == 0,
			Deadline: &metav1.Duration{Duration: time.Duration(30+cr.IntN(60)) * time.Minute},
			Breaker: api.Breaker{MaxNotReadyNodes: int32(cr.IntN(2)), PodReadyTimeout: &metav1.Duration{Duration: time.Duration(2+cr.IntN(10)) * time.Minute},
				HoldDown: &metav1.Duration{Duration: time.Minute}}}
		for _, i := range perm[:min(sc.Nodes-1, 2+cr.IntN(3))] {
			spec.Nodes = append(spec.Nodes, fmt.Sprintf("node-%d", i+1))
		}
		sc.Campaign = spec
	}
	return sc
}

// Setup creates the scenario's objects, runs the cluster until its pods are
// Ready and starts one maintd; Plans are created after.
func (w *World) Setup(sc Scenario) {
	w.mu.Lock()
	for i := range sc.Nodes {
		name := fmt.Sprintf("node-%d", i+1)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
		maps.Copy(node.Labels, sc.Labels[name])
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
		w.must(w.s.create(nodesR, node))
	}
	start := 0
	for _, wl := range sc.Workloads {
		w.workload(wl, sc.Nodes, start)
		if !sc.FromFirstNode {
			start = w.rng.IntN(sc.Nodes)
		}
	}
	for _, name := range sc.Autoscaled {
		w.must(w.s.create(hpasR, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: name, APIVersion: "apps/v1"}, MaxReplicas: 10}}))
	}
	for range 10 {
		w.cluster()
	}
	w.clock.Step(time.Minute)
	for range 5 {
		w.cluster()
	}
	w.mu.Unlock()
	if len(sc.Selectors) == 0 {
		w.start(labels.Everything(), "")
	}
	for _, s := range sc.Selectors {
		sel, err := labels.Parse(s)
		if err != nil {
			w.failf("selector %q: %v", s, err)
			return
		}
		w.start(sel, "maintd-"+s)
	}
	for i, spec := range sc.Plans {
		w.createPlan(fmt.Sprintf("plan-%d", i+1), spec)
	}
	if sc.Campaign != nil {
		w.mu.Lock()
		_, err := w.s.create(campsR, &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}, Spec: *sc.Campaign})
		w.logf("person: create campaign fleet over %v (release %t) -> %s", sc.Campaign.Nodes, sc.Campaign.Release, errText(err))
		w.mu.Unlock()
	}
}

func (w *World) must(_ runtime.Object, err error) {
	if err != nil {
		w.failf("setup: %v", err)
	}
}

// workload creates a Deployment, its ReplicaSet, its pods on the nodes
// (round-robin from node start) and its PDB.
func (w *World) workload(wl Workload, nodes, start int) {
	sel := map[string]string{"app": wl.Name}
	grace := int64(30)
	replicas := int32(wl.Replicas)
	ready := fmt.Sprint(wl.ReadyAfter)
	if wl.ReadyAfter < 0 {
		ready = "never"
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: map[string]string{readyAfter: ready, exitAfter: fmt.Sprint(w.rng.IntN(10))}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, NodeSelector: wl.NodeSelector, Containers: []corev1.Container{{Name: "c", Image: "app"}}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	o, err := w.s.create(depsR, dep)
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	dep = o.(*appsv1.Deployment)
	w.replicas[dep.Name] = replicas
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name + "-5d8f",
		Labels: sel, OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	o, err = w.s.create(rsR, rs)
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	rs = o.(*appsv1.ReplicaSet)
	var fit []string // the nodes its pods go to, round-robin from start
	if wl.On != "" {
		fmt.Sscanf(wl.On, "node-%d", &start)
		start--
	}
	for i := range nodes {
		name := fmt.Sprintf("node-%d", (start+i)%nodes+1)
		if o, err := w.s.get(nodesR, "", name); err == nil && labels.SelectorFromSet(wl.NodeSelector).Matches(labels.Set(o.(*corev1.Node).Labels)) {
			fit = append(fit, name)
		}
	}
	for i := range wl.Replicas {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprintf("%s-%d", rs.Name, i), Labels: sel,
			Annotations:     map[string]string{readyAfter: "0", exitAfter: tmpl.Annotations[exitAfter]},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: corev1.PodSpec{NodeName: fit[i%len(fit)], TerminationGracePeriodSeconds: &grace, NodeSelector: wl.NodeSelector}}
		w.must(w.s.create(podsR, pod))
	}
	pdb := func(name string, min, maxU *intstr.IntOrString) {
		w.must(w.s.create(pdbsR, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, MinAvailable: min, MaxUnavailable: maxU}}))
	}
	one := intstr.FromInt32(1)
	switch wl.PDB {
	case "max1":
		pdb(wl.Name, nil, &one)
	case "min-1":
		n := intstr.FromInt32(max(replicas-1, 0))
		pdb(wl.Name, &n, nil)
	case "never":
		n := intstr.FromInt32(replicas)
		pdb(wl.Name, &n, nil)
	case "overlap":
		pdb(wl.Name, nil, &one)
		pdb(wl.Name+"-extra", nil, &one)
	}
}

// readyDelay draws a replacement's readiness delay (its ReplicaSet's
// template annotation, sometimes never).
func (w *World) readyDelay() string {
	if w.Faults && w.rng.IntN(25) == 0 {
		return "never"
	}
	return fmt.Sprint(w.rng.IntN(30))
}

// cluster runs every cluster controller once; w.mu is held.
func (w *World) cluster() int {
	n := w.s.schedule()
	k, _ := w.s.kubelet(true)
	n += k
	n += w.s.deployments()
	n += w.s.replicaSets(w.readyDelay)
	d, _ := w.s.disruption(true)
	return n + d + w.collect()
}

// collect is the garbage collector: a plan whose controlling campaign is
// gone is deleted (its finalizer holds it until maintd lifts its cordon);
// w.mu is held.
func (w *World) collect() int {
	n := 0
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "MaintenanceCampaign" || p.DeletionTimestamp != nil {
			continue
		}
		if c, err := w.s.get(campsR, "", ref.Name); err == nil && c.(*api.MaintenanceCampaign).UID == ref.UID {
			continue
		}
		_, err := w.s.remove(plansR, "", p.Name, "", false)
		w.logf("garbage collector: delete plan %s of campaign %s -> %s", p.Name, ref.Name, errText(err))
		n++
	}
	return n
}

// createPlan creates a plan as a person does.
func (w *World) createPlan(name string, spec api.MaintenancePlanSpec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.s.create(plansR, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	w.logf("person: create plan %s for %s -> %s", name, spec.NodeName, errText(err))
}

// reap stops the instances a fault killed.
func (w *World) reap() {
	for _, in := range slices.Clone(w.instances) {
		w.mu.Lock()
		dead := in.dead
		w.mu.Unlock()
		if dead {
			w.stop(in, "reap killed")
		}
	}
}

// leader is the instance that reconciles: the first live one.
func (w *World) leader() *instance {
	for _, in := range w.instances {
		if !in.dead {
			return in
		}
	}
	return nil
}

// process lets the leader reconcile one queued plan; false when none was
// ready.
func (w *World) process() bool {
	in := w.leader()
	if in == nil {
		return false
	}
	if !in.caughtUp {
		// A new leader reads the plans live first, as Run does.
		if err := in.ctrl.CatchUp(ctxBackground); err != nil {
			w.failf("%s: catch up: %v", in.name, err)
		}
		in.caughtUp = true
	}
	in.queue.flush()
	in.campaigns.flush()
	// Which queue goes first is the seed's: a campaign's decision and a
	// plan's interleave as their workers' would.
	first := w.picking.IntN(2) == 0
	if !in.ctrl.ProcessNext(ctxBackground, first) && !in.ctrl.ProcessNext(ctxBackground, !first) {
		return false
	}
	in.queue.flush()
	in.campaigns.flush()
	return true
}

// deliverAll sends every pending event to every live instance.
func (w *World) deliverAll() int {
	n := 0
	for _, in := range slices.Clone(w.instances) {
		for _, r := range resources {
			if !in.dead {
				n += w.deliver(in, r, 1<<30)
			}
		}
	}
	return n
}

// next is the earliest time something is due: a queued delay, a kubelet or
// a budget's disruptedPods entry.
func (w *World) next() time.Time {
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, in := range w.instances {
		if !in.dead {
			earlier(in.queue.flush())
			earlier(in.campaigns.flush())
		}
	}
	w.mu.Lock()
	_, k := w.s.kubelet(false)
	_, d := w.s.disruption(false)
	w.mu.Unlock()
	earlier(k)
	earlier(d)
	return next
}

// advance moves the clock to t (when later).
func (w *World) advance(t time.Time) {
	if d := t.Sub(w.clock.Now()); d > 0 {
		w.clock.Step(d)
		w.logf("clock +%s", d)
	}
}

// Run plays steps drawn from the seed, checking the invariants after each,
// then lets the world settle and checks how every plan ended.
func (w *World) Run(steps int) {
	w.Faults = true
	w.Setup(w.draw())
	for i := 0; i < steps && w.failed == ""; i++ {
		w.step()
		w.reap()
		w.check()
	}
	w.Settle(3 * time.Hour)
}

// ctxBackground is the context of the world's calls.
var ctxBackground = context.Background()

// step plays one drawn step.
func (w *World) step() {
	r := w.rng
	if w.leader() == nil {
		w.start(labels.Everything(), "")
		return
	}
	switch n := r.IntN(100); {
	case n < 35:
		in := w.instances[r.IntN(len(w.instances))]
		var ready []schema.GroupVersionResource
		w.mu.Lock()
		for _, res := range resources {
			if len(in.pending[res]) > 0 {
				ready = append(ready, res)
			}
		}
		w.mu.Unlock()
		if len(ready) > 0 {
			res := ready[r.IntN(len(ready))]
			k := w.deliver(in, res, 1+r.IntN(3))
			w.logf("deliver %d %s to %s", k, res.Resource, in.name)
		}
	case n < 62:
		w.process()
	case n < 77:
		w.mu.Lock()
		switch r.IntN(4) {
		case 0:
			w.s.schedule()
		case 1:
			w.s.kubelet(true)
		case 2:
			w.s.deployments()
			w.s.replicaSets(w.readyDelay)
		case 3:
			w.s.disruption(true)
		}
		w.mu.Unlock()
	case n < 87:
		if next := w.next(); !next.IsZero() && r.IntN(2) == 0 {
			w.advance(next)
		} else {
			w.advance(w.clock.Now().Add(time.Duration(1+r.IntN(30)) * time.Second))
		}
	case n < 93:
		w.arm(faultKinds[r.IntN(len(faultKinds))])
	case n < 98:
		w.actor()
	default:
		if r.IntN(2) == 0 {
			w.stop(w.leader(), "leader change: stop")
		} else {
			w.start(labels.Everything(), "") // a standby, warm
		}
	}
}

// Settle stops the faults and lets the world run for up to d of simulated
// time, then checks how every plan ended.
func (w *World) Settle(d time.Duration) {
	w.armed = nil
	w.Faults = false
	w.mu.Lock()
	if _, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name); err == nil {
		w.togglePause() // the incident is over
	}
	for _, o := range w.s.list(nodesR, "", nil) {
		if n := o.(*corev1.Node); !nodeIsReady(n) {
			w.setReady(n.Name, corev1.ConditionTrue) // so are the nodes' troubles
		}
	}
	w.mu.Unlock()
	end := w.clock.Now().Add(d)
	for steps := 0; steps < 20000 && w.failed == ""; steps++ {
		if w.leader() == nil {
			w.start(labels.Everything(), "")
		}
		w.mu.Lock()
		n := w.cluster()
		w.mu.Unlock()
		n += w.deliverAll()
		if w.process() {
			n++
		}
		w.reap()
		w.check()
		if n > 0 {
			continue
		}
		w.mu.Lock()
		w.idle()
		w.mu.Unlock()
		next := w.next()
		if next.IsZero() || next.After(end) {
			break
		}
		w.advance(next)
	}
	w.final()
}

// arm injects a fault into the next request it fits.
func (w *World) arm(k faultKind) {
	w.armed = append(w.armed, armedFault{kind: k})
	w.logf("arm fault %s", k)
}

type faultKind string

const (
	none       faultKind = ""
	killBefore faultKind = "kill-before-request"
	// killBeforeEviction kills before the next eviction only (a script's).
	killBeforeEviction faultKind = "kill-before-eviction"
	killAfter          faultKind = "kill-after-request"
	// killAfterScale kills after the next write to an owner is applied (a
	// script's).
	killAfterScale faultKind = "kill-after-scale"
	conflict       faultKind = "409-on-status-write"
	throttle       faultKind = "429-throttle-eviction"
	lost           faultKind = "eviction-answer-lost"
	timeoutApplied faultKind = "eviction-timeout-applied"
	timeoutNotSent faultKind = "eviction-timeout-not-applied"
)

var faultKinds = []faultKind{killBefore, killAfter, conflict, throttle, lost, timeoutApplied, timeoutNotSent}

type armedFault struct{ kind faultKind }

// fault is the fault the next request of in meets, if one is armed for
// it; w.mu is held.
func (w *World) fault(in *instance, a k8stesting.Action) faultKind {
	if in != w.leader() || a.GetVerb() == "get" || a.GetVerb() == "list" {
		return none
	}
	eviction := a.GetSubresource() == "eviction"
	for i, f := range w.armed {
		fits := false
		switch f.kind {
		case killBefore, killAfter:
			fits = true
		case conflict:
			fits = a.GetResource() == plansR && a.GetSubresource() == "status"
		case killBeforeEviction:
			fits = eviction
		case killAfterScale:
			fits = a.GetResource() == depsR || a.GetResource() == rsR
		default:
			fits = eviction
		}
		if fits {
			w.armed = slices.Delete(w.armed, i, i+1)
			return f.kind
		}
	}
	return none
}

// actor plays another actor: a person, another drainer.
func (w *World) actor() {
	r := w.rng
	w.mu.Lock()
	defer w.mu.Unlock()
	nodes := w.s.list(nodesR, "", nil)
	plans := w.s.list(plansR, "", nil)
	if w.pauses && w.pausing.IntN(4) == 0 {
		w.togglePause()
		return
	}
	if w.campaign && w.campaigning.IntN(4) == 0 {
		w.campaignActor()
		return
	}
	if w.surge && w.surging.IntN(8) == 0 {
		// A person adds a replica to an app, maybe while a surge holds it.
		deps := w.s.list(depsR, Namespace, nil)
		d := deps[w.surging.IntN(len(deps))].(*appsv1.Deployment)
		n := ptrOr(d.Spec.Replicas, 1) + 1
		_, err := w.s.patch(depsR, Namespace, d.Name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
		if err == nil {
			w.replicas[d.Name]++
		}
		w.logf("person: scale %s to %d (surge %q) -> %s", d.Name, n, d.Annotations[drain.SurgeAnnotation], errText(err))
		return
	}
	if w.pinned && w.pinning.IntN(10) == 0 {
		if len(plans) > 0 && w.pinning.IntN(3) == 0 {
			// A person accepts replacements that fit nowhere now (an
			// autoscaler would add the room).
			p := plans[w.pinning.IntN(len(plans))].(*api.MaintenancePlan)
			p.Spec.AcceptedRisks = append(p.Spec.AcceptedRisks, "replacement-unschedulable")
			_, err := w.s.update(plansR, p, false)
			w.logf("person: accept replacement-unschedulable on %s -> %s", p.Name, errText(err))
			return
		}
		// A person labels a node for the pinned workload: labels are only
		// added, so a replacement that fits in the caches fits for real.
		node := nodes[w.pinning.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"metadata":{"labels":{"disk":"ssd"}}}`))
		w.logf("person: label %s disk=ssd -> %s", node.Name, errText(err))
		return
	}
	switch r.IntN(7) {
	case 0: // a person cordons a node (kubectl cordon: no owner annotation)
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"spec":{"unschedulable":true}}`))
		w.logf("person: cordon %s -> %s", node.Name, errText(err))
	case 1: // a person uncordons a node (kubectl uncordon)
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"spec":{"unschedulable":null}}`))
		w.logf("person: uncordon %s -> %s", node.Name, errText(err))
	case 2: // another drainer evicts a pod
		pods := w.s.list(podsR, Namespace, nil)
		if len(pods) == 0 {
			return
		}
		pod := pods[r.IntN(len(pods))].(*corev1.Pod)
		v := w.s.evict(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}})
		w.logf("another drainer: evict %s -> %d", pod.Name, v.Code)
	case 3, 4: // a person releases, deletes or edits a plan
		if len(plans) == 0 {
			return
		}
		p := plans[r.IntN(len(plans))].(*api.MaintenancePlan)
		switch r.IntN(4) {
		case 0:
			p.Spec.Release = true
			_, err := w.s.update(plansR, p, false)
			w.logf("person: release %s -> %s", p.Name, errText(err))
		case 1:
			_, err := w.s.remove(plansR, "", p.Name, "", false)
			w.logf("person: delete %s -> %s", p.Name, errText(err))
		case 2:
			p.Spec.DryRun = !p.Spec.DryRun
			_, err := w.s.update(plansR, p, false)
			w.logf("person: dryRun=%t on %s -> %s", p.Spec.DryRun, p.Name, errText(err))
		case 3:
			p.Spec.AcceptedRisks = append(p.Spec.AcceptedRisks, "single-replica")
			_, err := w.s.update(plansR, p, false)
			w.logf("person: edit acceptedRisks of %s -> %s", p.Name, errText(err))
		}
	case 5: // a person creates another plan
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		name := fmt.Sprintf("late-%d", len(w.trace))
		_, err := w.s.create(plansR, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: api.MaintenancePlanSpec{NodeName: node.Name, AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 20 * time.Minute}}})
		w.logf("person: create plan %s for %s -> %s", name, node.Name, errText(err))
	case 6: // a budget changes
		pdbs := w.s.list(pdbsR, Namespace, nil)
		if len(pdbs) == 0 {
			return
		}
		pdb := pdbs[r.IntN(len(pdbs))].(*policyv1.PodDisruptionBudget)
		if pdb.Spec.MaxUnavailable != nil {
			v := intstr.FromInt32(pdb.Spec.MaxUnavailable.IntVal%2 + 1)
			pdb.Spec.MaxUnavailable = &v
		}
		_, err := w.s.update(pdbsR, pdb, false)
		w.logf("person: edit PDB %s -> %s", pdb.Name, errText(err))
	}
}

// campaignActor plays a campaign's people and the cluster's sickness: a
// node goes NotReady or comes back, a person releases the campaign, or
// (rarely) deletes it; w.mu is held.
func (w *World) campaignActor() {
	cr := w.campaigning
	switch n := cr.IntN(10); {
	case n < 5:
		nodes := w.s.list(nodesR, "", nil)
		node := nodes[cr.IntN(len(nodes))].(*corev1.Node)
		ready := corev1.ConditionFalse
		if !nodeIsReady(node) {
			ready = corev1.ConditionTrue
		}
		w.setReady(node.Name, ready)
	case n < 9:
		_, err := w.s.patch(campsR, "", "fleet", []byte(`{"spec":{"release":true}}`))
		w.logf("person: release campaign fleet -> %s", errText(err))
	default:
		_, err := w.s.remove(campsR, "", "fleet", "", false)
		w.logf("person: delete campaign fleet -> %s", errText(err))
	}
}

// setReady sets a node's Ready condition, as its kubelet (or the node
// lifecycle controller, once the kubelet is silent) does; w.mu is held.
func (w *World) setReady(name string, ready corev1.ConditionStatus) {
	o, err := w.s.get(nodesR, "", name)
	if err != nil {
		return
	}
	node := o.(*corev1.Node)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	_, err = w.s.update(nodesR, node, true)
	w.logf("node %s: Ready %s -> %s", name, ready, errText(err))
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pauseSwitch is the simulated maintd's pause switch.
var pauseSwitch = types.NamespacedName{Namespace: "maintd-system", Name: "maintd-pause"}

// togglePause creates the pause switch, or deletes it, as a person does;
// w.mu is held.
func (w *World) togglePause() {
	if _, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name); err == nil {
		_, err := w.s.remove(cmsR, pauseSwitch.Namespace, pauseSwitch.Name, "", false)
		w.logf("person: resume maintenance (delete the pause switch) -> %s", errText(err))
		return
	}
	_, err := w.s.create(cmsR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pauseSwitch.Namespace, Name: pauseSwitch.Name},
		Data: map[string]string{"reason": "incident"}})
	w.logf("person: pause maintenance (create the pause switch) -> %s", errText(err))
}

// pausedFor reports whether in's caches show the pause switch; w.mu is
// held.
func (w *World) pausedFor(in *instance) bool {
	_, ok := in.mirror[cmsR][pauseSwitch.String()]
	return ok
}

// --- the invariants -------------------------------------------------------

// checkEviction checks, before the endpoint answers, that an eviction in
// sends is one its caches (what was sent to its watches) predict the API
// accepts, counting the evictions maintd made that those caches do not
// show yet; and that no 429 is sent again before a newer status of its
// budget. w.mu is held.
func (w *World) checkEviction(in *instance, ev *policyv1.Eviction) {
	if ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
		return
	}
	if w.pausedFor(in) {
		w.violate("%s evicted %s/%s while its caches showed maintenance paused", in.name, ev.Namespace, ev.Name)
	}
	if now := w.clock.Now(); now.Before(w.throttled) {
		w.violate("%s evicted %s/%s %s before the Retry-After of a throttling 429 ended", in.name, ev.Namespace, ev.Name, w.throttled.Sub(now))
	}
	o, ok := in.mirror[podsR][key(ev.Namespace, ev.Name)]
	if !ok {
		w.violate("%s evicted %s/%s, which its cache does not hold", in.name, ev.Namespace, ev.Name)
		return
	}
	pod := o.(*corev1.Pod)
	w.checkWave(in, pod)
	if uid := ev.DeleteOptions; uid == nil || uid.Preconditions == nil || uid.Preconditions.UID == nil || *uid.Preconditions.UID != pod.UID {
		w.violate("%s evicted %s/%s without the cached pod's UID as precondition", in.name, ev.Namespace, ev.Name)
	}
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for _, k := range sortedKeys(in.mirror[pdbsR]) {
		pdb := in.mirror[pdbsR][k].(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && pdb.Spec.Selector != nil && pdb.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels)) {
			pdbs = append(pdbs, pdb)
		}
	}
	switch {
	case len(pdbs) > 1:
		w.violate("%s evicted %s/%s, which its cache shows under %d PDBs (the API answers 500)", in.name, ev.Namespace, ev.Name, len(pdbs))
		return
	case len(pdbs) == 0:
		return
	}
	pdb := pdbs[0]
	if !ready(pod) {
		return // the unhealthy-pod policy decides; maintd's analysis predicts it
	}
	rv, _ := parseRV(pdb.ResourceVersion)
	pk := key(pdb.Namespace, pdb.Name)
	if at, ok := w.refused[pk]; ok && rv <= at {
		w.violate("%s evicted %s/%s under PDB %s again before a newer status of it (429 at version %d, cache at %d)", in.name, ev.Namespace, ev.Name, pk, at, rv)
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		w.violate("%s evicted %s/%s while its cache shows PDB %s not yet processed", in.name, ev.Namespace, ev.Name, pk)
		return
	}
	unseen := 0
	for _, e := range w.spent[pk] {
		if e > rv {
			unseen++
		}
	}
	if int(pdb.Status.DisruptionsAllowed)-unseen <= 0 {
		w.violate("%s evicted %s/%s while its cache shows PDB %s allowing %d disruptions and %d evictions of maintd not yet in it", in.name, ev.Namespace, ev.Name, pk, pdb.Status.DisruptionsAllowed, unseen)
	}
}

// campaignOf is the campaign that owns plan p in objs (by name), nil for
// none.
func campaignOf(p *api.MaintenancePlan, camps map[string]runtime.Object) *api.MaintenanceCampaign {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "MaintenanceCampaign" {
		return nil
	}
	if o, ok := camps[ref.Name]; ok && o.(*api.MaintenanceCampaign).UID == ref.UID {
		return o.(*api.MaintenanceCampaign)
	}
	return nil
}

func breakerOpen(c *api.MaintenanceCampaign) bool {
	return c != nil && c.Status.Breaker != nil && c.Status.Breaker.Open
}

// checkWave checks an eviction of a pod on the node of a campaign's plan:
// its campaign's breaker is not open in the instance's caches, and no plan
// of its wave is still about to cordon, in those caches and on the server
// (the plans of a wave cordon before any of them evicts, so that no
// evicted pod lands on a node of the wave). w.mu is held.
func (w *World) checkWave(in *instance, pod *corev1.Pod) {
	var mine *api.MaintenancePlan
	for _, o := range w.s.list(plansR, "", nil) {
		if p := o.(*api.MaintenancePlan); p.Spec.NodeName == pod.Spec.NodeName && p.Labels[api.CampaignLabel] != "" && p.DeletionTimestamp == nil && drain.HoldsCordon(&p.Status) {
			mine = p
		}
	}
	if mine == nil {
		return
	}
	if c := campaignOf(mine, in.mirror[campsR]); breakerOpen(c) {
		w.violate("%s evicted %s/%s for plan %s while its caches showed campaign %s's breaker open (%s)", in.name, pod.Namespace, pod.Name, mine.Name, c.Name, c.Status.Breaker.Reason)
	}
	for _, o := range w.s.list(plansR, "", nil) {
		q := o.(*api.MaintenancePlan)
		if q.UID == mine.UID || q.Labels[api.CampaignLabel] != mine.Labels[api.CampaignLabel] || q.Labels[api.WaveLabel] != mine.Labels[api.WaveLabel] || q.DeletionTimestamp != nil {
			continue
		}
		cached, ok := in.mirror[plansR][q.Name]
		if ok && campaign.AboutToCordon(&q.Status) && campaign.AboutToCordon(&cached.(*api.MaintenancePlan).Status) {
			w.violate("%s evicted %s/%s for plan %s while plan %s of its wave %s was still %s/%s (not yet cordoned)", in.name, pod.Namespace, pod.Name, mine.Name, q.Name, q.Labels[api.WaveLabel], q.Status.Phase, q.Status.Reason)
		}
	}
}

// madePlan checks a plan a campaign made: not while its caches show the
// pause switch or the campaign's breaker open, and not before every plan
// of the waves before it is done. w.mu is held.
func (w *World) madePlan(in *instance, p *api.MaintenancePlan) {
	// The switch as the instance's caches show it; the breaker as the
	// campaign's status says, which maintd writes before it makes a wave
	// (the decision that closes the breaker may make the wave).
	camps := map[string]runtime.Object{}
	for _, o := range w.s.list(campsR, "", nil) {
		camps[keyOf(o)] = o
	}
	if w.pausedFor(in) || breakerOpen(campaignOf(p, camps)) {
		w.violate("%s made plan %s while its caches showed maintenance paused, or its campaign's breaker open", in.name, p.Name)
	}
	wave := campaign.WaveOf(p)
	for _, o := range w.s.list(plansR, "", nil) {
		q := o.(*api.MaintenancePlan)
		if q.Labels[api.CampaignLabel] == p.Labels[api.CampaignLabel] && campaign.WaveOf(q) < wave && !drain.Final(&q.Status) && q.DeletionTimestamp == nil {
			w.violate("%s made plan %s of wave %d while plan %s of wave %d is %s/%s", in.name, p.Name, wave, q.Name, campaign.WaveOf(q), q.Status.Phase, q.Status.Reason)
		}
	}
	w.logf("%s: made plan %s for %s, wave %d", in.name, p.Name, p.Spec.NodeName, wave)
}

// evicted records what an eviction of maintd did; w.mu is held.
func (w *World) evicted(in *instance, ev *policyv1.Eviction, v Verdict) {
	if ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
		return
	}
	w.logf("%s: evict %s/%s -> %d %s", in.name, ev.Namespace, ev.Name, v.Code, statusText(v.Status))
	if v.PDB != "" {
		pk := key(ev.Namespace, v.PDB)
		w.spent[pk] = append(w.spent[pk], v.PDBVersion)
	}
	if v.Applied {
		uid := *ev.DeleteOptions.Preconditions.UID
		w.evictions[uid]++
		if w.evictions[uid] > 1 {
			w.violate("pod %s/%s (uid %s) evicted %d times", ev.Namespace, ev.Name, uid, w.evictions[uid])
		}
	}
	res := evict.Classify(v.Code, v.Status, nil)
	if res.Outcome == evict.Throttled {
		w.throttle = w.clock.Now().Add(time.Duration(res.RetryAfterSeconds) * time.Second)
	}
	if res.Outcome == evict.BudgetExhausted && res.PDB != nil {
		pk := key(ev.Namespace, res.PDB.Name)
		if o, ok := in.mirror[pdbsR][pk]; ok {
			rv, _ := parseRV(o.(*policyv1.PodDisruptionBudget).ResourceVersion)
			w.refused[pk] = max(w.refused[pk], rv)
		}
	}
}

func statusText(st *metav1.Status) string {
	if st == nil {
		return ""
	}
	msg := st.Message
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			msg += " (" + c.Message + ")"
		}
	}
	return msg
}

// wrote records a write of maintd that the invariants follow: a plan's
// status (silence, the drain's start) and a node's cordon. w.mu is held.
func (w *World) wrote(in *instance, a k8stesting.Action, before, out runtime.Object) {
	if a.GetResource() == depsR || a.GetResource() == rsR {
		w.scaled(in, before, out)
		return
	}
	if a.GetResource() == nodesR {
		if b, ok := before.(*corev1.Node); ok && w.pausedFor(in) {
			n := out.(*corev1.Node)
			if owner := n.Annotations[cordon.OwnerAnnotation]; owner != "" && owner != b.Annotations[cordon.OwnerAnnotation] {
				w.violate("%s cordoned %s for %s while its caches showed maintenance paused", in.name, n.Name, owner)
			}
		}
		return
	}
	p, ok := out.(*api.MaintenancePlan)
	if ok && a.GetVerb() == "create" {
		w.madePlan(in, p)
	}
	if !ok || a.GetSubresource() != "status" {
		return
	}
	if !w.throttle.IsZero() {
		w.throttled, w.throttle = w.throttle, time.Time{}
	}
	switch ep := p.Status.EvictionProgress; {
	case p.Status.Phase == api.Cordoning:
		if _, ok := w.drainStart[p.UID]; !ok {
			// The second the status records: the API keeps times to the
			// second, and the deadline counts from startedAt.
			w.drainStart[p.UID] = w.clock.Now().Truncate(time.Second)
			w.replaceable(p)
		}
	case ep == nil || ep.Scope == "":
		delete(w.drainStart, p.UID) // the cordon did not happen: back to waiting
	}
	// What the instance read: events of other kinds and of other plans,
	// its own answers and actions; a restart reads everything anew.
	// The instance's own writes of other plans count too: it reads them
	// before their events come (Controller.newest).
	in.wrotePlans++
	in.wrotePlan[p.Name]++
	facts := fmt.Sprintf("%d/%d/%d/%d/%d/%d", in.id, in.facts, in.planEvents-in.perPlan[p.Name], in.wrotePlans-in.wrotePlan[p.Name], w.actions, p.Generation)
	pr := string(p.Status.Phase) + "/" + string(p.Status.Reason)
	sl := w.silence[p.UID]
	// A request without an answer waits evictionTimeout, then is tried
	// again: a wait on time, not on a fact.
	timed := false
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, a := range ep.ActivePods {
			timed = timed || a.Outcome == drain.Unknown || a.Outcome == drain.Requested || a.Outcome == drain.Gone
		}
	}
	if sl == nil || sl.facts != facts || retries(sl.last) || sl.timed {
		w.silence[p.UID] = &silence{facts: facts, last: pr, seen: map[string]bool{pr: true}, timed: timed}
		return
	}
	sl.timed = timed
	switch {
	case sl.last == pr:
		diff := ""
		if b, ok := before.(*api.MaintenancePlan); ok {
			diff = cmp.Diff(b.Status, p.Status)
		}
		w.violate("%s wrote plan %s's status again (%s) while nothing it reads changed: %s", in.name, p.Name, pr, diff)
	case sl.seen[pr]:
		w.violate("plan %s flapped back to %s while nothing it reads changed", p.Name, pr)
	}
	sl.last, sl.seen[pr] = pr, true
}

// scaled checks a write of maintd to an owner: a surge's scale-up adds one
// replica and the annotation naming its plan, to an owner without one; its
// restore removes the annotation and sets the count RestoreTo says; no
// other write changes a replica count. w.mu is held.
func (w *World) scaled(in *instance, before, out runtime.Object) {
	if before == nil {
		w.violate("%s wrote an owner that did not exist", in.name)
		return
	}
	bm, _ := meta.Accessor(before)
	om, _ := meta.Accessor(out)
	replicas := func(o runtime.Object) int32 {
		switch o := o.(type) {
		case *appsv1.Deployment:
			return ptrOr(o.Spec.Replicas, 1)
		case *appsv1.ReplicaSet:
			return ptrOr(o.Spec.Replicas, 1)
		}
		return 0
	}
	was, is := bm.GetAnnotations()[drain.SurgeAnnotation], om.GetAnnotations()[drain.SurgeAnnotation]
	rb, ro := replicas(before), replicas(out)
	name := om.GetName()
	switch {
	case was == "" && is != "":
		if w.pausedFor(in) {
			w.violate("%s surged %s while its caches showed maintenance paused", in.name, name)
		}
		if ro != rb+1 {
			w.violate("%s surged %s from %d to %d replicas, not one more", in.name, name, rb, ro)
		}
		w.logf("%s: surge %s %d -> %d for %s", in.name, name, rb, ro, is)
	case was != "" && is != "":
		w.violate("%s wrote %s again while it carries the surge of %s (now %s; replicas %d -> %d)", in.name, name, was, is, rb, ro)
	case was != "" && is == "":
		from, err := strconv.Atoi(bm.GetAnnotations()[drain.SurgeFromAnnotation])
		if err != nil {
			w.violate("%s's surge annotations have no count to restore: %v", name, err)
			return
		}
		to, _, _ := drain.RestoreTo(int32(from), rb)
		if ro != to {
			w.violate("%s restored %s to %d replicas (it had %d, %d before the surge); the restore is %d", in.name, name, ro, rb, from, to)
		}
		w.logf("%s: restore %s %d -> %d", in.name, name, rb, ro)
	case rb != ro:
		w.violate("%s changed %s's replicas from %d to %d without a surge", in.name, name, rb, ro)
	}
}

// surged checks that no owner carries the surge of a plan that is gone or
// stopped (terminal, Blocked, Failed, released or being deleted), unless
// the controller will look at that plan again (scheduled). w.mu is held.
func (w *World) surged(scheduled map[string]bool) {
	plans := map[string]*api.MaintenancePlan{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		plans[p.Name] = p
	}
	for _, r := range []schema.GroupVersionResource{depsR, rsR} {
		for _, o := range w.s.list(r, Namespace, nil) {
			m, _ := meta.Accessor(o)
			mark := m.GetAnnotations()[drain.SurgeAnnotation]
			if mark == "" {
				continue
			}
			name, uid, _ := drain.ParseOwner(mark)
			p := plans[name]
			switch {
			case scheduled[name]:
			case p == nil || p.UID != uid:
				w.violate("%s %s stays scaled up by the surge of plan %s, which is gone", r.Resource, m.GetName(), name)
			case drain.Final(&p.Status) || p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed || p.Spec.Release || p.DeletionTimestamp != nil:
				w.violate("%s %s stays scaled up by the surge of plan %s, which is %s/%s (release %t, deleting %t)", r.Resource, m.GetName(), name, p.Status.Phase, p.Status.Reason, p.Spec.Release, p.DeletionTimestamp != nil)
			}
		}
	}
}

// pausedPlans checks, when the world is idle, that the plans follow the
// pause switch: while it exists every plan that can act says paused, and
// once it is gone none does (unless the controller will look at the plan
// again). w.mu is held.
func (w *World) pausedPlans(scheduled map[string]bool) {
	_, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name)
	camps := map[string]runtime.Object{}
	for _, o := range w.s.list(campsR, "", nil) {
		camps[keyOf(o)] = o
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		if scheduled[p.Name] || p.DeletionTimestamp != nil || p.Spec.Release || drain.Final(&st) || st.Phase == api.Drained || st.Phase == "" {
			continue
		}
		on := err == nil || breakerOpen(campaignOf(p, camps))
		switch paused := st.Reason == api.Paused; {
		case on && !paused:
			w.violate("plan %s is %s/%s while maintenance is paused", p.Name, st.Phase, st.Reason)
		case !on && paused:
			w.violate("plan %s is still paused after the pause switch was deleted", p.Name)
		}
	}
}

// replaceable checks, when plan p starts its drain, that every pod on its
// node that a ReplicaSet re-creates has another node its node selector
// matches: a drain that can never complete blocks before any write. (The
// simulated scheduler places by node selector and cordons only; nodes gain
// labels and never lose them.) w.mu is held.
func (w *World) replaceable(p *api.MaintenancePlan) {
	if f := p.Status.Forecast; f != nil && f.Verdict == "never" {
		for _, c := range f.Causes {
			if c.Verdict == "never" && !slices.Contains(p.Spec.AcceptedRisks, c.Reason) {
				w.violate("plan %s started its drain with a forecast that says never (%s), not accepted: %+v", p.Name, c.Reason, f.Causes)
				break
			}
		}
	}
	if slices.Contains(p.Spec.AcceptedRisks, "replacement-unschedulable") {
		return // a person accepts pods whose replacements fit nowhere now
	}
	for _, o := range w.s.list(podsR, Namespace, nil) {
		pod := o.(*corev1.Pod)
		if pod.Spec.NodeName != p.Spec.NodeName || pod.DeletionTimestamp != nil || len(pod.Spec.NodeSelector) == 0 {
			continue
		}
		fits := false
		for _, no := range w.s.list(nodesR, "", nil) {
			node := no.(*corev1.Node)
			fits = fits || (node.Name != p.Spec.NodeName && labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(node.Labels)))
		}
		if !fits {
			w.violate("plan %s started draining node %s, where pod %s's replacement is the only node its selector %v matches", p.Name, p.Spec.NodeName, pod.Name, pod.Spec.NodeSelector)
		}
	}
}

// stranded is a pod on node whose replacement no other node takes (none
// schedulable that its node selector matches), or ""; w.mu is held.
func (w *World) stranded(node string) string {
	for _, o := range w.s.list(podsR, Namespace, nil) {
		pod := o.(*corev1.Pod)
		if pod.Spec.NodeName != node || pod.DeletionTimestamp != nil {
			continue
		}
		fits := false
		for _, no := range w.s.list(nodesR, "", nil) {
			n := no.(*corev1.Node)
			fits = fits || (n.Name != node && !n.Spec.Unschedulable && labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(n.Labels)))
		}
		if !fits {
			return pod.Name
		}
	}
	return ""
}

// event records an Event of maintd; w.mu is held.
func (w *World) event(in *instance, regarding runtime.Object, typ, reason, action, note string) {
	m, _ := meta.Accessor(regarding)
	w.logf("%s: event %s %s on %s: %s", in.name, typ, reason, m.GetName(), note)
}

// check checks the invariants that hold after every step.
func (w *World) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	plans := map[string]*api.MaintenancePlan{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		plans[p.Name] = p
	}
	for _, o := range w.s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		owner := node.Annotations[cordon.OwnerAnnotation]
		if !drain.IsOwner(owner) {
			continue
		}
		parts := strings.Split(owner, "/")
		p := plans[parts[1]]
		switch {
		case p == nil || string(p.UID) != parts[2]:
			w.violate("node %s carries the cordon of plan %s, which no longer exists", node.Name, parts[1])
		case p.Status.Phase == api.Completed:
			w.violate("node %s carries the cordon of plan %s, which is Completed", node.Name, parts[1])
		}
	}
	held := w.held()
	for _, p := range plans {
		if p.Status.Phase == api.Failed && p.Status.Reason == api.DeadlineExceeded {
			start, ok := w.drainStart[p.UID]
			deadline := drain.Defaulted(p.Spec).Deadline
			if !ok {
				w.violate("plan %s failed its deadline before its drain started", p.Name)
			} else if w.clock.Now().Before(start.Add(deadline)) {
				w.violate("plan %s failed its deadline %s after %s of drain", p.Name, deadline, w.clock.Now().Sub(start))
			}
		}
	}
	if len(held) > w.MaxNodes {
		w.violate("%d nodes in maintenance (%s), more than %d", len(held), strings.Join(sortedKeys(held), ", "), w.MaxNodes)
	}
}

// held is the nodes in maintenance on the server (slots.Held, the
// definition maintd decides by, over the server's objects); w.mu is held.
func (w *World) held() map[string]bool {
	var plans []*api.MaintenancePlan
	for _, o := range w.s.list(plansR, "", nil) {
		plans = append(plans, o.(*api.MaintenancePlan))
	}
	owners := map[string]string{}
	for _, o := range w.s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		owners[node.Name] = node.Annotations[cordon.OwnerAnnotation]
	}
	held := map[string]bool{}
	for _, h := range slots.Held(plans, owners) {
		held[h.Node] = true
	}
	return held
}

// idle checks, when the world is idle (every event sent, nothing ready to
// reconcile, the cluster's controllers done), that no plan waits for what
// is there: a slot that is free, or a PDB that allows a disruption; w.mu is
// held.
func (w *World) idle() { w.stuck(false) }

// stuck checks that no plan waits for what is there; at idle points a plan
// the controller will look at again (a queued delay) is let be, at the end
// (strict) none is. w.mu is held.
func (w *World) stuck(strict bool) {
	scheduled := map[string]bool{}
	if in := w.leader(); in != nil && !strict {
		in.queue.mu.Lock()
		for k := range in.queue.waiting {
			scheduled[k] = true
		}
		in.queue.mu.Unlock()
		in.campaigns.mu.Lock()
		for k := range in.campaigns.waiting {
			scheduled["campaign/"+k] = true
		}
		in.campaigns.mu.Unlock()
	}
	w.surged(scheduled)
	w.pausedPlans(scheduled)
	if !strict {
		w.woken()
	}
	held := w.held()
	// The PDBs under which a live plan has a request whose answer may
	// still come (or be tried again): waiting on them is right.
	asking := map[string]bool{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		if ep := p.Status.EvictionProgress; ep != nil && !drain.Final(&p.Status) {
			for _, a := range ep.ActivePods {
				if a.Outcome == drain.Requested || a.Outcome == drain.Unknown {
					asking[a.Namespace+"/"+a.PDB] = true
				}
			}
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		if m := o.(*api.MaintenanceCampaign); m.Status.Reason == api.WaitingForSlot && m.DeletionTimestamp == nil && len(held) < w.MaxNodes && !scheduled["campaign/"+m.Name] {
			w.violate("campaign %s waits for a slot while %d of %d nodes are in maintenance", m.Name, len(held), w.MaxNodes)
		}
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		if st.Reason == api.WaitingForSlot && len(held) < w.MaxNodes && p.DeletionTimestamp == nil && !scheduled[p.Name] {
			w.violate("plan %s waits for a slot while %d of %d nodes are in maintenance", p.Name, len(held), w.MaxNodes)
		}
		if st.Reason == api.DrainNeverCompletes && p.DeletionTimestamp == nil && !scheduled[p.Name] {
			if pod := w.stranded(p.Spec.NodeName); pod == "" {
				w.violate("plan %s is blocked as never completing, while every pod on node %s has another node to go to", p.Name, p.Spec.NodeName)
			}
		}
		ep := st.EvictionProgress
		if ep == nil || st.Phase != api.CoolingDown || p.DeletionTimestamp != nil || scheduled[p.Name] {
			continue
		}
		for _, c := range ep.Cooldowns {
			if (c.Reason != api.BudgetExhausted && c.Reason != api.PDBStale) || asking[c.PDB] {
				continue
			}
			ns, name, _ := strings.Cut(c.PDB, "/")
			if o, err := w.s.get(pdbsR, ns, name); err == nil {
				pdb := o.(*policyv1.PodDisruptionBudget)
				if pdb.Status.DisruptionsAllowed > 0 && pdb.Status.ObservedGeneration >= pdb.Generation {
					w.violate("plan %s waits on PDB %s, which allows %d disruptions (version %s; the wait is from version %s; %d evictions in flight)",
						p.Name, c.PDB, pdb.Status.DisruptionsAllowed, pdb.ResourceVersion, c.ResourceVersion, len(ep.ActivePods))
					w.logf("  its evictions in flight: %+v; the PDB's status: %+v", ep.ActivePods, pdb.Status)
				}
			}
		}
	}
}

// woken checks, at an idle point, that every plan and campaign at rest
// would decide what its status says if it decided now: otherwise something
// it waits on changed and no event woke it (a wait it did not declare, or a
// wake-up lost). A delay queued for it does not excuse it (a deadline's is
// hours away), but a retry after an error does. The decision is the
// leader's own, made from its caches without acting; w.mu is held.
func (w *World) woken() {
	in := w.leader()
	if in == nil || !in.caughtUp || !in.ctrl.HasSynced() {
		return
	}
	retrying := func(kind int, name string) bool { return in.retrying[kind].NumRequeues(name) > 0 }
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		// A plan waiting for a slot rests on the slot alone: its checks
		// are made again when one is free (and a free slot it waits for
		// is flagged by stuck).
		if retrying(0, p.Name) || p.DeletionTimestamp != nil || drain.Final(&p.Status) || p.Status.Reason == api.WaitingForSlot {
			continue
		}
		cached, dec, ok, err := in.ctrl.Would(p.Name)
		if err != nil {
			w.failf("%s: decide plan %s: %v", in.name, p.Name, err)
			return
		}
		if !ok || cached.ResourceVersion != p.ResourceVersion {
			continue
		}
		if st := dec.Status; dec.Action != drain.None || st.Phase != p.Status.Phase || st.Reason != p.Status.Reason {
			w.violate("plan %s rests as %s/%s and would now decide %s/%s (action %q): nothing woke it; its last decision waited on %v",
				p.Name, p.Status.Phase, p.Status.Reason, st.Phase, st.Reason, dec.Action, in.ctrl.Waits(p.Name, false))
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		m := o.(*api.MaintenanceCampaign)
		if retrying(1, m.Name) || m.DeletionTimestamp != nil || campaign.Final(&m.Status) {
			continue
		}
		cached, dec, ok, err := in.ctrl.WouldCampaign(m.Name)
		if err != nil {
			w.failf("%s: decide campaign %s: %v", in.name, m.Name, err)
			return
		}
		if !ok || cached.ResourceVersion != m.ResourceVersion {
			continue
		}
		if st := dec.Status; len(dec.Create) > 0 || len(dec.Release) > 0 || st.Phase != m.Status.Phase || st.Reason != m.Status.Reason {
			w.violate("campaign %s rests as %s/%s and would now decide %s/%s (%d plans to make, %d to release): nothing woke it; its last decision waited on %v",
				m.Name, m.Status.Phase, m.Status.Reason, st.Phase, st.Reason, len(dec.Create), len(dec.Release), in.ctrl.Waits(m.Name, true))
		}
	}
}

// final checks how the plans ended once the world settled: each is done,
// failed, or blocked or waiting with a reason and a message that names the
// cause; none is left in a step of its drain or past its deadline.
func (w *World) final() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stuck(true)
	for _, o := range w.s.list(depsR, Namespace, nil) {
		d := o.(*appsv1.Deployment)
		if got, want := ptrOr(d.Spec.Replicas, 1), w.replicas[d.Name]; d.Annotations[drain.SurgeAnnotation] == "" && got != want {
			w.violate("Deployment %s has %d replicas once its surges are restored, not %d as people set it", d.Name, got, want)
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		c := o.(*api.MaintenanceCampaign)
		st := c.Status
		if st.Reason == "" || st.Message == "" {
			w.violate("campaign %s ended %s without a reason or message", c.Name, st.Phase)
		}
		done := len(st.Nodes) > 0
		for _, n := range st.Nodes {
			p, err := w.s.get(plansR, "", campaign.PlanName(c.Name, n))
			done = done && err == nil && p.(*api.MaintenancePlan).Status.Phase == api.Completed
		}
		if done && st.Phase != api.Completed && st.Phase != api.Failed { // Failed: its deadline passed first
			w.violate("campaign %s is %s/%s while every plan of it is Completed", c.Name, st.Phase, st.Reason)
		}
		if c.Spec.Release && st.Phase == api.Drained {
			w.violate("campaign %s is released and still Drained: %s", c.Name, st.Message)
		}
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		switch st.Phase {
		case api.Drained, api.Completed, api.Failed:
		case api.Blocked, api.CoolingDown, api.Pending:
			if st.Reason == "" || st.Message == "" {
				w.violate("plan %s ended %s without a reason or message", p.Name, st.Phase)
			}
		default:
			w.violate("plan %s is still %s/%s after the world settled", p.Name, st.Phase, st.Reason)
		}
		if start, ok := w.drainStart[p.UID]; ok && st.Phase != api.Drained && st.Phase != api.Completed && st.Phase != api.Failed && st.Phase != api.Blocked &&
			w.clock.Now().After(start.Add(drain.Defaulted(p.Spec).Deadline+time.Minute)) {
			w.violate("plan %s is still %s/%s %s after its drain started, past its deadline %s", p.Name, st.Phase, st.Reason, w.clock.Now().Sub(start), drain.Defaulted(p.Spec).Deadline)
		}
	}
}
