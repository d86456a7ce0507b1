package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The drain forecast (docs/design.md, "Drain forecast"): how long until a
// node is empty of the pods a drain evicts, at the median and at the upper
// quantile of each workload's time to Ready, or why it never is.

// Defaults of the forecast.
const (
	// DefaultConcurrency bounds the evictions in flight, as maintd's
	// maxConcurrentEvictions does by default.
	DefaultConcurrency = 50
	// DefaultGrace is the termination grace period of a pod that sets
	// none (the API's default).
	DefaultGrace = 30 * time.Second
	// DefaultReadyTime is a replacement's time from scheduled to Ready when
	// no pod of its workload shows both times.
	DefaultReadyTime = time.Minute
	// DefaultVolumeDetach and DefaultVolumeAttach are how long a volume
	// takes to detach from the drained node and to attach to the node the
	// pod goes to: nothing in a snapshot measures them (Kubernetes records
	// no time of either), so the forecast assumes these, and says so.
	DefaultVolumeDetach = 5 * time.Second
	DefaultVolumeAttach = 5 * time.Second
	// DefaultExitP50 is the prior of a pod's exit, from its eviction to its
	// being gone, at the median, for a workload none of whose exits was
	// learned (ForecastOptions.Learned): most pods exit as soon as they are
	// asked (their process handles SIGTERM, or has nothing to finish), so
	// the median is taken to be a few seconds, at most the pod's grace. At
	// p90 the forecast takes the whole grace, the most the pod may take.
	DefaultExitP50 = 2 * time.Second
)

// Workload names a workload as the forecast learns it: the top of a pod's
// owner chain (Deployment, StatefulSet, ...; the ReplicaSet of a bare
// ReplicaSet). It is its kind, namespace and name rather than its UID:
// learned times are kept across restarts and read by people (maintd's
// ConfigMap, k8s-analyze's input), and a workload deleted and created again
// under its name (a re-install, a GitOps re-apply) runs the same pods, so
// what was learned of it still holds.
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "Kind namespace/name".
func (w Workload) String() string { return w.Kind + " " + name(w.Namespace, w.Name) }

// Learned are the times a workload's pods were seen to take (maintd learns
// them from the drains it watched): an evicted pod's exit, from its
// deletion to its being gone, and a replacement's time to Ready, from its
// creation to its first Ready, each at the median and the 90th percentile
// of Samples. A quantile with no samples is not used.
type Learned struct {
	ExitP50      time.Duration `json:"exitP50"`
	ExitP90      time.Duration `json:"exitP90"`
	ExitSamples  int           `json:"exitSamples"`
	ReadyP50     time.Duration `json:"readyP50"`
	ReadyP90     time.Duration `json:"readyP90"`
	ReadySamples int           `json:"readySamples"`
}

// ForecastOptions tune the forecast.
type ForecastOptions struct {
	// Concurrency bounds the evictions in flight (requested, the pod not
	// yet gone); zero means DefaultConcurrency.
	Concurrency int
	// DefaultReady is used when no pod of a workload shows both its
	// PodScheduled and Ready times; zero means DefaultReadyTime.
	DefaultReady time.Duration
	// Reaction is the control plane's time to react at each step of the
	// drain, at the median: from an eviction to its replacement being
	// scheduled and the budget counting it again, and from the last pod's
	// exit to the drainer seeing it. It is added to every time to Ready
	// and to the end, three times at p90. Zero (k8s-analyze's default) leaves
	// it out; maintd uses what it measured on a healthy control plane.
	Reaction time.Duration
	// Placement, when set, is where replacements are placed instead of the
	// snapshot's own nodes: a model of the whole cluster (NewPlacement),
	// made once and shared by many forecasts, so that a node-scoped
	// snapshot gets a placement verdict instead of nodes-out-of-scope. It
	// must hold the analysed nodes, and be of the same cut of the cluster
	// as the snapshot (their pods on the analysed nodes are taken to be
	// the same).
	Placement *Placement
	// VolumeDetach and VolumeAttach are how long an attached volume takes
	// to detach and to attach elsewhere (a caller that measured them, such
	// as maintd, passes them); zero means DefaultVolumeDetach and
	// DefaultVolumeAttach, and a volume-move-assumed cause says so.
	VolumeDetach, VolumeAttach time.Duration
	// Learned are what was learned of workloads' exits and times to Ready
	// (maintd's own watch of its drains). A workload's learned exits time
	// its pods' exits (p50 in the median run, p90 in the upper one) instead
	// of the prior (DefaultExitP50 capped at the grace at p50, the whole
	// grace at p90); its learned times to Ready take precedence over those
	// the snapshot's pods show.
	Learned map[Workload]Learned
}

// Reasons of forecast causes (CHECKS.md, "Drain forecast").
const (
	// never
	ReasonPDBNeverAllows  = "pdb-never-allows"
	ReasonPDBNeverRefills = "pdb-never-refills"
	ReasonPDBOverlap      = "pdb-overlap"
	ReasonUnschedulable   = "replacement-unschedulable"
	ReasonNoCapacity      = "insufficient-capacity"
	// unknown
	ReasonPDBExhausted      = "pdb-exhausted"
	ReasonPDBStale          = "pdb-stale"
	ReasonPDBSyncFailed     = "pdb-sync-failed"
	ReasonPDBForbidden      = "pdb-forbidden"
	ReasonNotModelled       = "constraint-not-modelled"
	ReasonNodeStatus        = "node-allocatable-missing"
	ReasonFirstFit          = "first-fit"
	ReasonNodesOutOfScope   = "nodes-out-of-scope"
	ReasonVolumeMoveAssumed = "volume-move-assumed"
	ReasonWaitCompleted     = "wait-completed"
)

// Quantiles of the learned times to Ready, in percent: P50 uses the first,
// P90 the second.
const (
	medianPercent = 50
	upperPercent  = 90
)

// quantile is the nearest-rank quantile of sorted samples: the smallest
// sample that at least percent of them do not exceed,
// sorted[ceil(percent*n/100)-1] (of 4 samples, the 2nd for 50 and the 4th
// for 90; of 10, the 5th and the 9th). Zero for no samples.
func quantile(sorted []time.Duration, percent int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (percent*n + 99) / 100
	return sorted[min(max(rank, 1), n)-1]
}

// LearnedOf is what exits and readies, a workload's samples in any order
// (each a pod's exit, and a replacement's time to Ready), teach the
// forecast: their p50 and p90 as the forecast takes a quantile (quantile,
// nearest rank) and their counts. Neither slice is modified.
func LearnedOf(exits, readies []time.Duration) Learned {
	e, r := slices.Sorted(slices.Values(exits)), slices.Sorted(slices.Values(readies))
	return Learned{ExitP50: quantile(e, medianPercent), ExitP90: quantile(e, upperPercent), ExitSamples: len(e),
		ReadyP50: quantile(r, medianPercent), ReadyP90: quantile(r, upperPercent), ReadySamples: len(r)}
}

// readiness is a workload's time from scheduled to Ready.
type readiness struct {
	workload string
	p50, p90 time.Duration
	samples  int
}

// forecaster holds what the forecast of every node reads: the placement
// model and the pods' times (timing), built once.
type forecaster struct {
	timing
	// place is the placement model: ForecastOptions.Placement's, else the
	// snapshot's own; nil for a node-scoped snapshot without one.
	place *placer
}

func newForecaster(x *index, s *view.Snapshot, opts ForecastOptions) *forecaster {
	return &forecaster{timing: *newTiming(x, opts), place: placerOf(opts.Placement, x, s)}
}

// item is one pod a drain evicts, as the forecast times it.
type item struct {
	st    *podState
	top   *owner
	grace time.Duration
	// exit50 and exit90 are how long it takes to be gone once evicted, at
	// the median and the upper quantile: learned of its workload, else
	// the prior (DefaultExitP50 at most the grace; the grace). exits are
	// the learned samples, 0 for the prior.
	exit50, exit90 time.Duration
	exits          int
	ready          *readiness
	group          int
	// refills is false when nothing replaces the pod (no controller, or a
	// broken owner chain): the budget unit its eviction takes never comes
	// back.
	refills bool
	// placed: its replacement is judged (a ReplicaSet or StatefulSet
	// re-creates it).
	placed bool
	// afterExit: its replacement is made only once it is gone (a
	// StatefulSet re-creates the pod under its name); a ReplicaSet makes
	// one as soon as the pod is terminating.
	afterExit bool
	// phase is the rank of its drain-order group's Order: it is evicted
	// only once every pod of a lower phase is gone and detached.
	phase int
	// detach is how long its attached volumes take to detach once it is
	// gone (0 without one); move is what its replacement waits for after
	// that on a volume that must move (a ReadWriteOnce one): detach, and
	// attach unless its time to Ready was learned, which holds the attach.
	detach, move time.Duration
}

// round is how long the eviction of it holds its budget's unit at the
// median: until its replacement is Ready, which a ReplicaSet starts at once
// and a StatefulSet once the pod is gone (replacementStarts).
func (it *item) round() time.Duration {
	return later(it.replacementStarts(it.exit50), it.ready.p50)
}

// group is a PodDisruptionBudget, or for pods no budget governs their
// workload.
type group struct {
	subject Subject
	pdb     *pdbInfo
	items   []int
	// allowance are the evictions the budget allows now; refill more that
	// it is assumed to allow after one time to Ready (a budget that allows
	// none now, or whose status cannot be trusted, or one that a surge pod
	// makes allow one once it is Ready).
	allowance, refill int
	// surge: the budget never allows, and a surge moves its pods.
	surge bool
}

// causes collects a forecast's causes, one per reason and subject.
type causes struct {
	list []ForecastCause
	seen map[string]int
}

func (c *causes) add(v Verdict, reason string, subject Subject, format string, args ...any) {
	key := reason + "\x00" + subject.Kind + "\x00" + subject.Namespace + "\x00" + subject.Name
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	if _, dup := c.seen[key]; dup {
		return
	}
	c.seen[key] = len(c.list)
	c.list = append(c.list, ForecastCause{Verdict: v, Reason: reason, Subject: subject, Message: fmt.Sprintf(format, args...)})
}

// forecastScratch is a worker's working memory for the forecasts of the
// nodes it analyses, reused from node to node.
type forecastScratch struct {
	placement placement
	items     []item
	groups    []group
	byPDB     map[*pdbInfo]int
	byTop     map[string]int
	sim       sim
}

// forecast is the drain forecast of node n, whose pods' states the node pass
// has judged, with the surges it judged of the budgets that never allow.
func (a *analyzer) forecast(n *view.Node, states []podState, surges map[*pdbInfo]pdbSurge, order []placed, fs *forecastScratch) *Forecast {
	f := a.fc
	out := &Forecast{Concurrency: f.opts.Concurrency}
	var cs causes
	if fs.byPDB == nil {
		fs.byPDB, fs.byTop = map[*pdbInfo]int{}, map[string]int{}
	}
	clear(fs.byPDB)
	clear(fs.byTop)
	items, groups := fs.items[:0], fs.groups[:0]
	phases := phasesOf(order)
	moving := 0
	for i := range states {
		st := &states[i]
		if st.skipped {
			continue
		}
		p, c := st.pod, st.chain
		ph := phases[p]
		switch ph.behavior {
		case BehaviorSkip:
			continue
		case BehaviorWaitCompleted:
			cs.add(VerdictUnknown, ReasonWaitCompleted, podSubject(p), "pod %s is not evicted: the drain waits for it to complete, which cannot be judged", p.Name)
			continue
		}
		it := a.timed(&f.timing, st)
		it.phase = ph.phase
		if it.move > 0 {
			moving++
		}
		pred := st.verdict.EvictableNow
		var governing *pdbInfo
		for _, info := range st.matching {
			if usesBudget(pred, info) {
				governing = info
			}
		}
		if pred.Rule == RuleMultiplePDBs {
			names := make([]string, len(st.matching))
			for k, m := range st.matching {
				names[k] = m.pdb.Name
			}
			slices.Sort(names)
			cs.add(VerdictNever, ReasonPDBOverlap, podSubject(p),
				"pod %s is selected by %d PodDisruptionBudgets (%s): the Eviction API answers 500 for it whatever the budgets", p.Name, len(names), strings.Join(names, ", "))
		}
		if governing != nil {
			g, ok := fs.byPDB[governing]
			if !ok {
				g = len(groups)
				fs.byPDB[governing] = g
				groups = append(groups, a.budgetGroup(governing, surges[governing], &cs))
			}
			it.group = g
		} else {
			key := "pod/" + string(p.UID)
			if c.top != nil {
				key = string(c.top.meta.UID)
			}
			g, ok := fs.byTop[key]
			if !ok {
				g = len(groups)
				fs.byTop[key] = g
				subject := podSubject(p)
				if c.top != nil {
					subject = Subject{Kind: c.top.kind, Namespace: c.top.meta.Namespace, Name: c.top.meta.Name, UID: c.top.meta.UID}
				}
				groups = append(groups, group{subject: subject, allowance: -1})
			}
			it.group = g
		}
		groups[it.group].items = append(groups[it.group].items, len(items))
		items = append(items, it)
	}
	fs.items, fs.groups = items, groups
	out.Pods = len(items)
	if moving > 0 && f.assumed != "" {
		cs.add(VerdictUnknown, ReasonVolumeMoveAssumed, Subject{Kind: "Node", Name: n.Name, UID: n.UID},
			"volume detach+attach assumed %s (no measurement): %d %s must move a ReadWriteOnce volume, each timed as grace + detach + attach + ready (the attach is within a time to Ready learned from pods)",
			f.assumed, moving, plural(moving, "pod", "pods"))
	}
	a.placeAll(n, items, &fs.placement, &cs)

	never := slices.ContainsFunc(cs.list, func(c ForecastCause) bool { return c.Verdict == VerdictNever })
	switch {
	case never:
	case len(items) == 0:
		out.P50, out.P90 = &metav1.Duration{}, &metav1.Duration{}
	default:
		lag := f.opts.Reaction
		p50 := fs.sim.run(items, groups, f.opts.Concurrency, f.readyP50, exitP50)
		if p50.stuck >= 0 {
			g := &groups[p50.stuck]
			cs.add(VerdictNever, ReasonPDBNeverRefills, g.subject,
				"PDB %s allows %d disruption(s) and %d of its pods on this node have no controller to replace them: its budget never refills for the rest of its %d pods here",
				g.subject.Name, g.allowance+g.refill, countFunc(g.items, func(i int) bool { return !items[i].refills }), len(g.items))
			never = true
			break
		}
		out.CriticalPath = criticalPath(items, groups, p50)
		end50 := p50.end
		p90 := fs.sim.run(items, groups, f.opts.Concurrency, f.readyP90, exitP90)
		// Greedy scheduling is not monotone in the durations: p90 is
		// never told below p50.
		end50 += lag
		out.P50, out.P90 = &metav1.Duration{Duration: end50}, &metav1.Duration{Duration: max(p90.end+3*lag, end50)}
	}
	if !never && slices.ContainsFunc(cs.list, func(c ForecastCause) bool { return c.Reason == ReasonNodesOutOfScope }) {
		// Where the replacements go was not judged at all: a time would
		// assume each finds a place at once, which the snapshot cannot
		// tell, and would read as a forecast. The simulation still ran, for
		// a budget that never refills (never whatever the placement).
		out.P50, out.P90, out.CriticalPath = nil, nil, nil
	}
	for g := range groups {
		groups[g].items = groups[g].items[:0]
	}
	slices.SortStableFunc(cs.list, causeOrder)
	out.Causes = cs.list
	switch {
	case never:
		out.Verdict = VerdictNever
	case len(cs.list) > 0:
		out.Verdict = VerdictUnknown
	default:
		out.Verdict = VerdictOK
	}
	return out
}

// causeOrder orders causes: never first, then by reason and subject.
func causeOrder(x, y ForecastCause) int {
	return cmp.Or(verdictRank(y.Verdict)-verdictRank(x.Verdict), strings.Compare(x.Reason, y.Reason),
		strings.Compare(x.Subject.Namespace, y.Subject.Namespace), strings.Compare(x.Subject.Name, y.Subject.Name))
}

func verdictRank(v Verdict) int {
	if v == VerdictNever {
		return 1
	}
	return 0
}

func countFunc(s []int, f func(int) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// budgetGroup is the group of the pods whose eviction info's budget
// governs, and the causes its state gives the forecast. surge is what the
// node pass judged of the surges of its pods when the budget never allows.
func (a *analyzer) budgetGroup(info *pdbInfo, surge pdbSurge, cs *causes) group {
	pdb := info.pdb
	st := pdb.Status
	g := group{subject: pdbSubject(pdb), pdb: info, allowance: int(st.DisruptionsAllowed)}
	steady := max(int(st.ExpectedPods-st.DesiredHealthy), 1)
	unusable := func(v Verdict, reason, format string, args ...any) {
		cs.add(v, reason, g.subject, format, args...)
		g.allowance, g.refill = 0, steady
	}
	c := meta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
	zero := zeroSpec(pdb, func() int { return a.x.wholePods(info) })
	// A surge moves every pod of a budget that never allows: one more
	// replica of the owner, once Ready, makes it allow one eviction, and
	// each evicted pod's replacement, once Ready, gives it back (the surge
	// stays until the last pod is gone). A status the surge cannot mend
	// (a 403, a failed sync, a stale status) still makes it unknown.
	g.surge = zero != "" && a.surge && surge.all
	switch {
	case zero != "" && !g.surge && a.surge && surge.why != "":
		cs.add(VerdictNever, ReasonPDBNeverAllows, g.subject, "PDB %s can never allow the eviction of its pods on this node (%s), and no surge helps: %s", pdb.Name, zero, surge.why)
	case zero != "" && !g.surge:
		cs.add(VerdictNever, ReasonPDBNeverAllows, g.subject, "PDB %s can never allow the eviction of its pods on this node (%s)", pdb.Name, zero)
	case st.DisruptionsAllowed < 0 || len(st.DisruptedPods) > maxDisruptedPods:
		unusable(VerdictUnknown, ReasonPDBForbidden, "PDB %s's status makes the Eviction API answer 403 (disruptionsAllowed %d, %d disruptedPods): when it allows again cannot be judged; assumed to allow %d after one time to Ready",
			pdb.Name, st.DisruptionsAllowed, len(st.DisruptedPods), steady)
	case c != nil && c.Status == metav1.ConditionFalse && c.Reason == policyv1.SyncFailedReason:
		unusable(VerdictUnknown, ReasonPDBSyncFailed, "PDB %s failed to sync (%s): its budget cannot be judged; assumed to allow %d after one time to Ready", pdb.Name, c.Message, steady)
	case pdb.Status.ObservedGeneration < pdb.Generation:
		if st.DisruptionsAllowed > 0 {
			cs.add(VerdictUnknown, ReasonPDBStale, g.subject, "PDB %s's status predates its spec (generation %d, observed %d): its budget is taken as the status says, %d", pdb.Name, pdb.Generation, st.ObservedGeneration, st.DisruptionsAllowed)
		} else {
			unusable(VerdictUnknown, ReasonPDBStale, "PDB %s's status predates its spec (generation %d, observed %d) and allows none: assumed to allow %d after one time to Ready",
				pdb.Name, pdb.Generation, st.ObservedGeneration, steady)
		}
	case g.surge:
		g.allowance, g.refill = 0, 1
	case st.DisruptionsAllowed == 0:
		unusable(VerdictUnknown, ReasonPDBExhausted, "PDB %s allows no disruption now (needs %d healthy pods, has %d): when its pods are Ready again cannot be judged; assumed to allow %d after one time to Ready",
			pdb.Name, st.DesiredHealthy, st.CurrentHealthy, steady)
	}
	return g
}

// placedBy says whether the scheduler places the replacement of a pod with
// owner chain c: a ReplicaSet or a StatefulSet, verified, re-creates it.
func placedBy(c chain) bool {
	if len(c.hops) == 0 {
		return false
	}
	first := c.hops[0]
	return first.Verified && (first.Kind == "ReplicaSet" || first.Kind == "StatefulSet")
}

// placeAll judges where the replacements of items can go, one after the
// other in the node's pod order, each placed on the first node (by name)
// that takes it given those placed before (first fit), and adds the causes.
func (a *analyzer) placeAll(n *view.Node, items []item, pl *placement, cs *causes) {
	f := a.fc
	placed := 0
	for _, it := range items {
		if it.placed {
			placed++
		}
	}
	if placed == 0 {
		return
	}
	if f.place == nil {
		cs.add(VerdictUnknown, ReasonNodesOutOfScope, Subject{Kind: "Node", Name: n.Name, UID: n.UID},
			"the snapshot is scoped to its nodes (k8s-snapshot --node): where the %d replacement(s) can run cannot be judged without the other nodes and their pods, so no time is given; a whole-cluster snapshot gives one: k8s-snapshot | k8s-analyze --node %s", placed, n.Name)
		return
	}
	p := f.place
	pl.reset(p.at[n.Name])
	p.placeRun(pl, len(items), func(k int) leaving {
		it := &items[k]
		l := a.x.leavingOf(it.st.pod, it.top, it.placed)
		l.node = pl.drained
		return l
	}, &forecastWords, func(demand view.Resources, eligible []bool) string { return p.shortfall(pl, demand, eligible) }, cs)
}

// shortfall says which resource the other schedulable nodes of the snapshot
// have too little of, free in total, for demand ("" when each suffices, or
// a node's allocatable is not known).
func (p *placer) shortfall(pl *placement, demand view.Resources, eligible []bool) string {
	free, _, known := p.free(pl, eligible)
	if !known {
		return ""
	}
	switch short(demand, free) {
	case "cpu":
		return fmt.Sprintf("the replacements request %dm cpu and the other schedulable nodes have %dm free in all", demand.MilliCPU, free.MilliCPU)
	case "memory":
		return fmt.Sprintf("the replacements request %d bytes of memory and the other schedulable nodes have %d free in all", demand.Memory, free.Memory)
	case "ephemeral-storage":
		return fmt.Sprintf("the replacements request %d bytes of ephemeral-storage and the other schedulable nodes have %d free in all", demand.EphemeralStorage, free.EphemeralStorage)
	case "pods":
		return fmt.Sprintf("%d replacements and the other schedulable nodes take %d more pods in all", demand.Pods, free.Pods)
	}
	return ""
}

// run is one simulated drain: when each item is evicted and gone. Its
// slices are the sim's, good until its next run.
type run struct {
	evicted, gone []time.Duration
	end           time.Duration
	// stuck is the group whose pods wait for a budget that never refills,
	// or -1.
	stuck int
}

// sim is the working memory of simulate, reused from run to run.
type sim struct {
	evicted, gone []time.Duration
	rounds, order []int
	avail         []int
	events        []event
	// left counts, per phase, the items not yet evicted; done is when the
	// last evicted one's volumes are detached.
	left []int
	done []time.Duration
}

// event is a slot freed (group -1), units given back to a group's budget,
// or a pod's volumes detached (group -2: it may let the next phase start).
type event struct {
	at    time.Duration
	group int
	units int
}

// simulate drains items (see sim.run) with a sim of its own.
func simulate(items []item, groups []group, concurrency int, ready func(*readiness) time.Duration, exit func(*item) time.Duration) run {
	var s sim
	return s.run(items, groups, concurrency, ready, exit)
}

// run drains items: at time 0, and whenever a pod is gone or a budget gets
// an eviction back, it evicts every waiting pod whose budget allows one,
// while fewer than concurrency evictions are in flight. An eviction holds
// its slot until the pod is gone (its exit: exit's choice of quantile) and its budget's unit
// until the replacement is Ready: the workload's time to Ready (ready's
// choice of quantile) after the eviction for a ReplicaSet's pod, whose
// replacement starts while the pod terminates, after the pod is gone for a
// StatefulSet's, which re-creates the pod once it is gone; a pod nothing
// replaces never gives its unit back. A pod whose volume must move gives
// it back only after its exit, detach and attach (item.move) and its
// time to Ready. Pods go by phase (their drain-order group): a phase
// starts once every pod of the phases before it is gone and its volumes
// detached; within one, in the order of their group's rounds, most first,
// then those that give their unit back first, then the node's order. The
// drain ends when the last pod is gone and its volumes detached.
func (s *sim) run(items []item, groups []group, concurrency int, ready func(*readiness) time.Duration, exit func(*item) time.Duration) run {
	n := len(items)
	phases := 0
	for i := range items {
		phases = max(phases, items[i].phase+1)
	}
	s.left, s.done = slices.Grow(s.left[:0], phases)[:phases], slices.Grow(s.done[:0], phases)[:phases]
	clear(s.left)
	clear(s.done)
	for i := range items {
		s.left[items[i].phase]++
	}
	phase := 0
	s.evicted, s.gone = slices.Grow(s.evicted[:0], n)[:n], slices.Grow(s.gone[:0], n)[:n]
	s.rounds, s.avail = slices.Grow(s.rounds[:0], len(groups))[:len(groups)], slices.Grow(s.avail[:0], len(groups))[:len(groups)]
	s.order, s.events = s.order[:0], s.events[:0]
	r := run{evicted: s.evicted, gone: s.gone, stuck: -1}
	rounds := s.rounds
	for g := range groups {
		rounds[g] = 1
		if per := groups[g].allowance + groups[g].refill; groups[g].allowance >= 0 && per > 0 {
			rounds[g] = (len(groups[g].items) + per - 1) / per
		}
	}
	for i := range n {
		s.order = append(s.order, i)
	}
	slices.SortStableFunc(s.order, func(x, y int) int {
		gx, gy := items[x].group, items[y].group
		return cmp.Or(rounds[gy]-rounds[gx], gx-gy, boolRank(items[y].refills)-boolRank(items[x].refills))
	})
	avail := s.avail
	for g := range groups {
		avail[g] = groups[g].allowance
		if groups[g].refill > 0 {
			var wait time.Duration
			for _, i := range groups[g].items {
				wait = max(wait, ready(items[i].ready))
			}
			s.events = append(s.events, event{at: wait, group: g, units: groups[g].refill})
		}
	}
	var now time.Duration
	inFlight := 0
	waiting := s.order
	for {
		for phase < phases-1 && s.left[phase] == 0 && s.done[phase] <= now {
			phase++
		}
		// Evict what may go now; the others keep their order, in place.
		kept := 0
		for _, i := range waiting {
			g := items[i].group
			if inFlight >= concurrency || avail[g] == 0 || items[i].phase > phase {
				waiting[kept] = i
				kept++
				continue
			}
			it := &items[i]
			r.evicted[i], r.gone[i] = now, later(now, exit(it))
			inFlight++
			s.events = append(s.events, event{at: r.gone[i], group: -1})
			s.left[it.phase]--
			detached := later(r.gone[i], it.detach)
			s.done[it.phase] = max(s.done[it.phase], detached)
			if it.detach > 0 {
				s.events = append(s.events, event{at: detached, group: -2})
			}
			if avail[g] > 0 {
				avail[g]--
				if it.refills {
					from := later(now, it.replacementStarts(exit(it)))
					s.events = append(s.events, event{at: later(from, ready(it.ready)), group: g, units: 1})
				}
			}
		}
		waiting = waiting[:kept]
		if len(waiting) == 0 {
			break
		}
		if s.left[phase] == 0 && s.done[phase] <= now && phase < phases-1 {
			continue // the next phase may start now
		}
		if len(s.events) == 0 {
			r.stuck = items[waiting[0]].group
			for _, i := range waiting {
				if items[i].phase == phase {
					r.stuck = items[i].group
					break
				}
			}
			break
		}
		now = slices.MinFunc(s.events, func(x, y event) int { return cmp.Compare(x.at, y.at) }).at
		s.events = slices.DeleteFunc(s.events, func(e event) bool {
			if e.at != now {
				return false
			}
			switch {
			case e.group == -2:
			case e.group < 0:
				inFlight--
			default:
				avail[e.group] += e.units
			}
			return true
		})
	}
	for i, g := range r.gone {
		r.end = max(r.end, later(g, items[i].detach))
	}
	return r
}

// maxDuration bounds the forecast's times: sums saturate there instead of
// overflowing (a grace period of billions of seconds is valid input).
const maxDuration = time.Duration(1 << 62)

// later is t+d, at most maxDuration.
func later(t, d time.Duration) time.Duration {
	if d > maxDuration-t {
		return maxDuration
	}
	return t + d
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// criticalPath is the group of the pod gone last in r (the first such pod in
// the node's order), with its rounds: the distinct times it evicted some of
// the group's pods.
func criticalPath(items []item, groups []group, r run) *CriticalPath {
	last := 0
	for i := range items {
		if r.gone[i] > r.gone[last] {
			last = i
		}
	}
	g := &groups[items[last].group]
	cp := &CriticalPath{Kind: g.subject.Kind, Namespace: g.subject.Namespace, Name: g.subject.Name, Pods: len(g.items), Surge: g.surge}
	var times []time.Duration
	var slowest *item
	for _, i := range g.items {
		it := &items[i]
		times = append(times, r.evicted[i])
		if slowest == nil || it.round() > slowest.round() {
			slowest = it
		}
		cp.Grace.Duration = max(cp.Grace.Duration, it.grace)
		if it.exit90 >= cp.Exit.P90.Duration {
			cp.Exit = ExitTime{P50: metav1.Duration{Duration: it.exit50}, P90: metav1.Duration{Duration: it.exit90}, Samples: it.exits}
		}
		cp.Detach.Duration = max(cp.Detach.Duration, it.detach)
	}
	slices.Sort(times)
	cp.Rounds = len(slices.Compact(times))
	cp.RoundTime.Duration = slowest.round()
	cp.VolumeMove.Duration = slowest.move
	rd := slowest.ready
	cp.Ready = ReadyTime{Workload: rd.workload, P50: metav1.Duration{Duration: rd.p50}, P90: metav1.Duration{Duration: rd.p90}, Samples: rd.samples}
	if cp.Ready.Workload == "" {
		cp.Ready.Workload = "Pod " + name(slowest.st.pod.Namespace, slowest.st.pod.Name)
	}
	return cp
}
