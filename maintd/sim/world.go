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
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
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

	// refuseNodes makes the API refuse every write of maintd to a node, as
	// an admission webhook of a change freeze does (a written schedule's).
	refuseNodes bool

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
	// faulting draws, apart from rng, whether a seed meets the faults
	// of moreFaults (1 seed in 2: 409s on writes to nodes, owners,
	// campaigns and plans, failed and timed-out live reads) and when.
	faulting *rand.Rand
	faulty   bool
	// budgeting draws, apart from rng, whether people edit budgets beyond
	// maxUnavailable 1 or 2 (1 seed in 3: a selector that moves to
	// another app or spans two, a minAvailable raised or lowered).
	budgeting *rand.Rand
	budgets   bool
	// kinding draws, apart from rng, whether a seed has workloads of
	// other kinds than Deployment (1 seed in 3: a StatefulSet, a Job, a
	// bare pod, plans listing their workloads) and their actors.
	kinding *rand.Rand
	kinds   bool
	// autoscaling draws, apart from rng, whether a HorizontalPodAutoscaler
	// scales one of the apps (1 seed in 4), and when its controller
	// changes the app's replicas.
	autoscaling *rand.Rand
	hpa         bool
	// placing draws, apart from rng, whether a seed's scheduler meets
	// constraints (1 seed in 4: requests against smaller nodes, a tainted
	// node for a workload that tolerates it and requires it by affinity,
	// a workload spread over the hostnames) and the person who makes room.
	placing *rand.Rand
	placed  bool
	// scheduled: the setup's pods are placed by the scheduler.
	scheduled bool
	// leading draws, apart from rng, whether a seed has two leaders at
	// once (1 seed in 3: a leader loses its lease while its workers are in
	// the middle of their keys, their requests still in flight as the new
	// leader starts), and when.
	leading *rand.Rand
	overlap bool
	// late are the plans whose cordon intent (Cordoning) a deposed leader
	// wrote: each may hold a slot that the new leader, which counted the
	// slots before the write landed, did not see.
	late map[types.UID]bool
	// lowering draws, apart from the others, when a person in a surge
	// seed lowers an app's replicas, maybe while a surge holds it.
	lowering *rand.Rand
	// orphaning draws, apart from the others, when a person in a surge
	// seed deletes a plan and removes its finalizer (kubectl patch), as a
	// restore from backup loses it: its surge is left behind.
	orphaning *rand.Rand
	// forced are the plans (by UID) a person deleted removing their
	// finalizer: what they left behind (a cordon, a surge) maintd
	// releases, by the time the world is idle.
	forced map[types.UID]bool
	// starting draws, apart from rng, the short startWithin of some of the
	// plans people make late (a third of them, 20 s to 3 min), so that
	// plans expire before their start while their causes come and go.
	starting *rand.Rand
	// pausing draws, apart from rng, whether and when a person pauses all
	// maintenance (1 seed in 5) with the switch.
	pausing *rand.Rand
	pauses  bool
	// campaigning draws, apart from rng, whether a campaign drains some of
	// the nodes (1 seed in 4), and its actors: a person releasing or
	// deleting it, nodes going NotReady and back.
	campaigning *rand.Rand
	campaign    bool
	// storing draws, apart from rng, whether a seed has volumes (1 seed in
	// 3: a CSI driver, a StatefulSet with a claim per replica, at 1 in 2
	// storage providers), and their attach and detach delays. Its stream's
	// constant leaves the seeds of TestFixedSeeds without volumes: they
	// replay the schedules that found their defects.
	storing *rand.Rand
	volumes bool
	// ruling draws, apart from rng, whether people order the drains with
	// drain rules and the pods' annotation (1 seed in 4); its constant,
	// as storing's, leaves the seeds of TestFixedSeeds without them.
	ruling *rand.Rand
	rules  bool
	// picking draws, apart from rng, which of a leader's queues (plans,
	// campaigns) is served first at each step.
	picking *rand.Rand
	// replicas are the Deployments' replica counts as people set them:
	// once every surge is restored, each has its own. A person's change
	// while a surge holds the owner counts as one more or one fewer.
	replicas map[string]int32
	// surges are the surges maintd made, by owner (resource/name): the
	// count before and after its scale-up, and the count people last
	// wrote while it held the owner (0: none).
	surges    map[string]*surgeRecord
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
	throttle time.Time
	// throttleBy is the instance that got that 429; throttledBy the one
	// that recorded the wait in force, throttledLate whether it had lost
	// its lease then (its record in flight).
	throttleBy, throttledBy int
	throttledLate           bool
	spent                   map[string][]spend      // PDB -> the evictions of maintd that spent it
	refusedAt               map[string]time.Time    // PDB -> when the last 429 of it was answered
	actions                 int64                   // evictions maintd sent
	refused                 map[string]int64        // PDB -> the version a 429 was answered at
	drainStart              map[types.UID]time.Time // plan -> when its status first said Cordoning
	silence                 map[types.UID]*silence
	// moved are the first eviction of each pod lineage (store.lineage)
	// by a campaign's plans, by campaign UID, wave and lineage;
	// uncordoned is when a person last uncordoned each node.
	moved      map[string]*move
	uncordoned map[string]time.Time
	// drains are the plans of a campaign that started to drain a node
	// (their first Cordoning), by campaign UID and node; retried are the
	// nodes a person listed in the campaign's spec.retry, by the same key.
	drains  map[string][]types.UID
	retried map[string]bool
	// erred are the instances (by id) whose request of an act failed
	// since their last status write (a 409, a failed or timed-out read, a
	// failed status write).
	erred map[int]bool
	// switches counts the pause switches people created: each creation
	// is a new switch.
	switches int
	// gone are the volumes of the pods maintd evicted.
	gone []gone
	// opened are, per campaign plan (UID) that sent an eviction, the plans
	// of its wave that were not about to cordon at its first one.
	opened map[types.UID]map[string]bool
}

// spend is an eviction of maintd that spent a budget: the budget's version
// after it, the instance that sent it, whether that instance had lost its
// lease (in flight), and when.
type spend struct {
	rv      int64
	by      int
	deposed bool
	at      time.Time
}

// surgeRecord is one surge as the world saw it.
type surgeRecord struct {
	from, to int32
	// people is the count a person last wrote while the surge held the
	// owner, set says one did.
	people int32
	set    bool
}

// move is the first eviction of a pod lineage by a plan of a campaign's
// wave: the plan, its node, when, and the other nodes of the wave whose
// plan could not cordon then (gone or going, Blocked, Failed, or waiting
// for a slot, its node not cordoned by it), where the replacement may
// land and be moved again.
type move struct {
	plan, node string
	at         time.Time
	excused    map[string]bool
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
		starting: rand.New(rand.NewPCG(uint64(seed), 0x57a27)), orphaning: rand.New(rand.NewPCG(uint64(seed), 0x0e9a)), lowering: rand.New(rand.NewPCG(uint64(seed), 0x10e3)), kinding: rand.New(rand.NewPCG(uint64(seed), 0x4b1d)),
		autoscaling: rand.New(rand.NewPCG(uint64(seed), 0x4a5)), placing: rand.New(rand.NewPCG(uint64(seed), 0x91ace)),
		leading: rand.New(rand.NewPCG(uint64(seed), 0x1ead)), late: map[types.UID]bool{}, erred: map[int]bool{},
		faulting: rand.New(rand.NewPCG(uint64(seed), 0xfa17)), budgeting: rand.New(rand.NewPCG(uint64(seed), 0xb0d9)),
		campaigning: rand.New(rand.NewPCG(uint64(seed), 0xca3)), picking: rand.New(rand.NewPCG(uint64(seed), 0x9c1)), storing: rand.New(rand.NewPCG(uint64(seed), 0x57055d5)), ruling: rand.New(rand.NewPCG(uint64(seed), 0x701605)), replicas: map[string]int32{}, clock: clocktesting.NewFakeClock(epoch),
		evictions: map[types.UID]int{}, spent: map[string][]spend{}, refusedAt: map[string]time.Time{}, refused: map[string]int64{}, drainStart: map[types.UID]time.Time{},
		silence: map[types.UID]*silence{}, surges: map[string]*surgeRecord{}, moved: map[string]*move{}, uncordoned: map[string]time.Time{}, drains: map[string][]types.UID{}, retried: map[string]bool{}, forced: map[types.UID]bool{}, opened: map[types.UID]map[string]bool{}}
	w.s = newStore(func() metav1.Time { return metav1.NewTime(w.clock.Now()) })
	w.s.watch = func(r schema.GroupVersionResource, ev watch.Event, _ bool) { w.changed(r, ev) }
	w.s.logf = w.logf
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
	// Taints and CPU (allocatable, "8" when unset) of nodes, by name.
	Taints map[string][]corev1.Taint
	CPU    map[string]string
	// Scheduled has the scheduler place the workloads' first pods (else
	// they are bound round-robin).
	Scheduled bool
	// Storage, when set, adds volumes and their storage system.
	Storage *Storage
}

// Workload is one Deployment of a scenario, or a workload of another
// kind.
type Workload struct {
	Name string
	// Kind is "" for a Deployment, or StatefulSet, Job (its ReadyAfter is
	// how long its pod runs), Pod (a bare pod).
	Kind     string
	Replicas int
	PDB      string
	// ReadyAfter is the seconds a replacement takes to be Ready (-1: never).
	ReadyAfter int
	// NodeSelector pins the pods to the nodes it matches: they are placed
	// round-robin on those, and their replacements fit only there.
	NodeSelector map[string]string
	// On, when set, is the node its pods are placed on first.
	On string
	// CPU is what each pod requests ("" none); Tolerate names a taint key
	// its pods tolerate; Affinity requires of a node the label pairs
	// (key In value); Spread spreads them over the hostnames, maxSkew 1,
	// DoNotSchedule.
	CPU      string
	Tolerate string
	Affinity map[string]string
	Spread   bool
	// Drain is its pods' maintenance.sentinel.dev/drain annotation ("":
	// none).
	Drain string
}

// constrain sets in spec what the workload asks of where its pods run.
func (wl Workload) constrain(spec *corev1.PodSpec) {
	if wl.CPU != "" {
		spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(wl.CPU)}
	}
	if wl.Tolerate != "" {
		spec.Tolerations = []corev1.Toleration{{Key: wl.Tolerate, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	if len(wl.Affinity) > 0 {
		var reqs []corev1.NodeSelectorRequirement
		for _, k := range sortedKeys(wl.Affinity) {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{wl.Affinity[k]}})
		}
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
	}
	if wl.Spread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": wl.Name}}}}
	}
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
	w.faulty = w.faulting.IntN(2) == 0
	w.overlap = w.leading.IntN(3) == 0
	w.budgets = w.budgeting.IntN(3) == 0
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
	w.drawKinds(&sc)
	w.drawPlacement(&sc)
	if ar := w.autoscaling; ar.IntN(4) == 0 {
		// An autoscaler scales one of the apps (not the surge's own app,
		// which has one at 1 in 4 of the surge seeds), between 1 and 4
		// replicas, as its controller decides.
		var apps []string
		for _, wl := range sc.Workloads {
			if wl.Kind == "" && wl.Name != "single" && !slices.Contains(sc.Autoscaled, wl.Name) {
				apps = append(apps, wl.Name)
			}
		}
		if len(apps) > 0 {
			w.hpa = true
			sc.Autoscaled = append(sc.Autoscaled, apps[ar.IntN(len(apps))])
		}
	}
	w.drawStorage(&sc)
	w.drawRules(&sc)
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
		cpu := "8"
		if c, ok := sc.CPU[name]; ok {
			cpu = c
		}
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
		node.Spec.Taints = sc.Taints[name]
		w.must(w.s.create(nodesR, node))
	}
	start := 0
	w.scheduled = sc.Scheduled
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
	if sc.Storage != nil {
		w.storage(sc.Storage, sc.Nodes)
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
	if wl.Kind != "" {
		w.other(wl, nodes, start)
		return
	}
	sel := map[string]string{"app": wl.Name}
	grace := int64(30)
	replicas := int32(wl.Replicas)
	ready := fmt.Sprint(wl.ReadyAfter)
	if wl.ReadyAfter < 0 {
		ready = "never"
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: map[string]string{readyAfter: ready, exitAfter: fmt.Sprint(w.rng.IntN(10))}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, NodeSelector: wl.NodeSelector, Containers: []corev1.Container{{Name: "c", Image: "app"}}}}
	wl.constrain(&tmpl.Spec)
	if wl.Drain != "" {
		tmpl.Annotations[analyze.DrainAnnotation] = wl.Drain
	}
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
		ann := maps.Clone(tmpl.Annotations)
		ann[readyAfter] = "0"
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprintf("%s-%d", rs.Name, i), Labels: sel,
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: podSpec(tmpl.Spec)}
		if !w.scheduled {
			pod.Spec.NodeName = fit[i%len(fit)]
		}
		w.must(w.s.create(podsR, pod))
	}
	w.pdbs(wl, sel, replicas)
}

// pdbs creates a workload's budgets, by its PDB kind; w.mu is held.
func (w *World) pdbs(wl Workload, sel map[string]string, replicas int32) {
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
	n := w.s.schedule() + w.volumeControllers(-1)
	k, _ := w.s.kubelet(true)
	n += k
	n += w.s.deployments()
	n += w.s.replicaSets(w.readyDelay)
	n += w.s.statefulSets(w.readyDelay) + w.s.jobs()
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

// leader is the instance that reconciles: the first live one that has
// not lost its lease.
func (w *World) leader() *instance {
	for _, in := range w.instances {
		if !in.dead && !in.deposed {
			return in
		}
	}
	return nil
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
		if !in.dead && !in.deposed {
			earlier(in.queue.flush())
			earlier(in.campaigns.flush())
		}
	}
	w.mu.Lock()
	_, k := w.s.kubelet(false)
	_, d := w.s.disruption(false)
	_, a := w.s.attacher(false)
	w.mu.Unlock()
	earlier(k)
	earlier(d)
	earlier(a)
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

// Close stops the world's maintd instances, their informers and workers,
// once its run is checked: a test of many seeds would otherwise keep every
// world's goroutines (some 165 a world) to its end.
func (w *World) Close() {
	n := len(w.trace)
	for _, in := range slices.Clone(w.instances) {
		w.stop(in, "close")
	}
	w.trace = w.trace[:n]
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
	if w.overlap && w.leading.IntN(2) == 0 && w.inflight() {
		return
	}
	n := r.IntN(100)
	if in := w.leader(); len(in.parked) > 0 {
		if w.overlap && w.leading.IntN(12) == 0 {
			w.depose(in)
			return
		}
		// While workers are in the middle of their keys, only they go
		// on: the seed interleaves their decisions, and the world waits
		// (what they decided from is what their caches show when they
		// act, as when one worker decides).
		w.process()
		return
	}
	switch {
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
			w.s.statefulSets(w.readyDelay)
			w.s.jobs()
		case 3:
			w.s.disruption(true)
		}
		if w.volumes {
			w.volumeControllers(w.storing.IntN(3))
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
		if w.faulty && w.faulting.IntN(2) == 0 {
			w.arm(moreFaults[w.faulting.IntN(len(moreFaults))])
		}
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
	for _, in := range slices.Clone(w.instances) {
		if in.deposed {
			w.stop(in, "deposed: stop")
		}
	}
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
		if len(w.leader().parked) > 0 {
			w.process() // the world waits for the workers in the middle of their keys
			w.reap()
			w.check()
			continue
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
	if in := w.leader(); in != nil {
		w.finish(in) // the keys it is in the middle of
	}
	w.final()
}
