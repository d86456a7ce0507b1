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

	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

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
	// bg is break-glass: the overrides and what maintd deleted under them
	// (overrides.go, breakglass.go).
	bg *breakGlass
	// bud is the campaign's budget and its plans (budgets.go).
	bud *budgets
	// gates are the campaign's windows and health gate (gates.go).
	gates *gates
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
	for _, r := range []api.Reason{api.EvictionForbidden, api.EvictionRejected, api.EvictionThrottled, api.APIContention, api.OutsideWindow, api.WindowClosed} {
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
		silence: map[types.UID]*silence{}, surges: map[string]*surgeRecord{}, moved: map[string]*move{}, uncordoned: map[string]time.Time{}, drains: map[string][]types.UID{}, retried: map[string]bool{}, forced: map[types.UID]bool{}, opened: map[types.UID]map[string]bool{}, bg: newBreakGlass(seed), bud: newBudgets(seed), gates: newGates(seed)}
	w.s = newStore(func() metav1.Time { return metav1.NewTime(w.clock.Now()) })
	w.s.watch = func(r schema.GroupVersionResource, ev watch.Event, _ bool) {
		w.changed(r, ev)
		if r == nodesR {
			w.checkBudget() // at every moment, not only after a step
		}
	}
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

// cluster runs every cluster controller once; w.mu is held.
func (w *World) cluster() int {
	n := w.s.schedule() + w.volumeControllers(-1)
	k, _ := w.s.kubelet(true)
	n += k
	n += w.s.deployments()
	n += w.s.replicaSets(w.readyDelay)
	n += w.s.statefulSets(w.readyDelay) + w.s.jobs()
	d, _ := w.s.disruption(true)
	return n + d + w.collect() + w.agentStep()
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
	_, err := w.s.create(plansR, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: w.planAnnotations()}, Spec: spec})
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
	earlier(w.nextOverride())
	return next
}

// advance moves the clock to t (when later).
func (w *World) advance(t time.Time) {
	if d := t.Sub(w.clock.Now()); d > 0 {
		w.clock.Step(d)
		w.logf("clock +%s", d)
	}
	w.overridesDue()
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
			w.agentStep()
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
	armed := w.armed
	w.armed = nil
	w.rearm(armed)
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
