package analyze

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// DefaultMaxGrace is the terminationGracePeriodSeconds above which a pod is
// reported as long-grace.
const DefaultMaxGrace = 5 * time.Minute

// Annotations that ask drains to leave a pod alone.
const (
	SafeToEvictAnnotation  = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
)

// Options tune Analyze.
type Options struct {
	// Nodes to analyse, in this order; empty means every node of the
	// snapshot, by name.
	Nodes []string
	// Now is the time to judge at; zero means the snapshot's capturedAt.
	Now time.Time
	// MaxGrace is the long-grace threshold; zero means DefaultMaxGrace.
	MaxGrace time.Duration
	// Wall is when the analysis runs: the snapshot's age is measured up to
	// it. Zero means the time judged at (Now, else capturedAt).
	Wall time.Time
	// MaxAge is the snapshot-stale threshold; zero means DefaultMaxAge.
	MaxAge time.Duration
	// Forecast, when set, gives every node a drain forecast
	// (Node.Forecast). The k8s-analyze command always sets it; maintd, whose
	// caches keep only what the checks read, does not.
	Forecast *ForecastOptions
	// Surge plans a surge for the pods that one more replica of their owner
	// lets go (Action Surge) instead of blocking them.
	Surge bool
	// DrainRules order the drain of the nodes' pods (Node.DrainOrder, see
	// DrainOrder); maintd passes those of the plan.
	DrainRules []DrainRule
}

// DefaultMaxAge is the age above which a snapshot is reported stale.
const DefaultMaxAge = 5 * time.Minute

// AnalyzeObjects is Analyze for objects already in memory, such as those of
// maintd's informer caches: it analyses their view.
func AnalyzeObjects(s *snapshot.Snapshot, opts Options) (*Report, error) {
	return Analyze(view.Of(s), opts)
}

// Analyze grades the drain risk of the nodes of s. It errors, and reports
// nothing, when s is not internally consistent (see validate) or a requested
// node is not in it (or not in opts.Forecast.Placement, when set).
func Analyze(s *view.Snapshot, opts Options) (*Report, error) {
	x, err := indexed(s)
	if err != nil {
		return nil, err
	}
	nodes := opts.Nodes
	if len(nodes) == 0 {
		for i := range s.Nodes {
			nodes = append(nodes, s.Nodes[i].Name)
		}
		slices.Sort(nodes)
	}
	var given *Placement
	if opts.Forecast != nil {
		given = opts.Forecast.Placement
	}
	if err := missing(x, given, nodes); err != nil {
		return nil, err
	}
	a, age := newAnalyzer(x, s, opts)
	if opts.Forecast != nil {
		a.fc = newForecaster(x, s, *opts.Forecast)
	}
	now := a.now
	r := &Report{
		Header: document.NewHeader(Kind),
		Metadata: Metadata{
			Now: metav1.NewTime(now), CapturedAt: s.Metadata.CapturedAt,
			Server: s.Metadata.Server, KubernetesVersion: s.Metadata.KubernetesVersion,
			ResourceVersion: s.Metadata.ResourceVersion, Consistent: s.Metadata.Consistent,
			Age: metav1.Duration{Duration: age},
		},
		Risk:  Low,
		Nodes: []Node{},
	}
	done := make(map[string]bool, len(nodes))
	var todo []string
	for _, n := range nodes {
		if !done[n] {
			done[n] = true
			todo = append(todo, n)
		}
	}
	// Nodes are independent and the index is read-only: analyse them in
	// parallel, each result in its place.
	r.Nodes = make([]Node, len(todo))
	var next atomic.Int64
	parallel.Do(min(runtime.GOMAXPROCS(0), len(todo)), func(int) {
		var sc scratch
		for i := int(next.Add(1) - 1); i < len(todo); i = int(next.Add(1) - 1) {
			r.Nodes[i] = a.node(x.nodes[todo[i]], &sc)
		}
	})
	for _, n := range r.Nodes {
		r.Risk = r.Risk.worse(n.Risk)
	}
	return r, nil
}

// missing is the error for the first of nodes that the snapshot (indexed as
// x) or the placement model given to it (when not nil) does not hold.
func missing(x *index, given *Placement, nodes []string) error {
	for _, n := range nodes {
		switch {
		case x.nodes[n] == nil:
			return fmt.Errorf("node %q is not in the snapshot", n)
		case given != nil && !given.has(n):
			return fmt.Errorf("node %q is not in the placement model", n)
		}
	}
	return nil
}

// indexed validates s and indexes it.
func indexed(s *view.Snapshot) (*index, error) {
	// Validation and indexing are independent: run them side by side (the
	// index of an invalid snapshot is dropped).
	var (
		invalid error
		x       *index
	)
	parallel.Do(2, func(i int) {
		if i == 0 {
			invalid = validate(s)
		} else {
			x = newIndex(s)
		}
	})
	if invalid != nil {
		return nil, invalid
	}
	return x, nil
}

// newAnalyzer is the analyzer of the nodes of s (without a forecaster), and
// the snapshot's age.
func newAnalyzer(x *index, s *view.Snapshot, opts Options) (*analyzer, time.Duration) {
	now := opts.Now
	if now.IsZero() {
		now = s.Metadata.CapturedAt.Time
	}
	a := &analyzer{x: x, now: now, maxGrace: cmp.Or(opts.MaxGrace, DefaultMaxGrace), checks: checksByCode(), useless: map[string][]Finding{}, surge: opts.Surge,
		vx: newVolumeIndex(s), rules: compileRules(opts.DrainRules)}
	wall := opts.Wall
	if wall.IsZero() {
		wall = now
	}
	age := wall.Sub(s.Metadata.CapturedAt.Time).Truncate(time.Second)
	a.snapshot = a.snapshotFindings(s.Metadata, age, cmp.Or(opts.MaxAge, DefaultMaxAge))
	// Whether a PDB protects nothing does not depend on the node: judged
	// once. (Such a PDB covers no pod of any node.)
	for ns, infos := range x.pdbsByNS {
		for _, info := range infos {
			if fs := a.uselessPDB(info); len(fs) > 0 {
				a.useless[ns] = append(a.useless[ns], fs...)
			}
		}
	}
	return a, age
}

type analyzer struct {
	x        *index
	now      time.Time
	maxGrace time.Duration
	// useless are the findings of the PDBs that protect nothing, by
	// namespace.
	useless map[string][]Finding
	// snapshot are the findings about the snapshot itself, on every node.
	snapshot []Finding
	checks   map[Code]Check
	// fc makes the drain forecasts; nil without Options.Forecast.
	fc *forecaster
	// surge is Options.Surge.
	surge bool
	// vx indexes the volumes and what the drain order reads; rules are
	// Options.DrainRules.
	vx    *volumeIndex
	rules []drainRule
	// tm is the timing of the pods when there is no forecaster (fc nil),
	// made once, by the first node that needs it (timingOf).
	tmOnce sync.Once
	tm     *timing
}

// snapshotFindings judges the snapshot itself: whether it is one
// consistent cut, and whether it is older than maxAge.
func (a *analyzer) snapshotFindings(m snapshot.Metadata, age, maxAge time.Duration) []Finding {
	captured := m.CapturedAt.UTC().Format(time.RFC3339)
	subject := Subject{Kind: "Snapshot", Name: captured}
	var fs []Finding
	if !m.Consistent {
		fs = append(fs, a.finding(SnapshotInconsistent, subject, map[string]string{"consistent": "false"},
			"the snapshot is not one consistent cut of the cluster: each kind was listed at its own moment, so pods, their owners and PDB status may disagree"))
	}
	if age > maxAge {
		fs = append(fs, a.finding(SnapshotStale, subject, map[string]string{"age": age.String(), "maxAge": maxAge.String(), "capturedAt": captured},
			"the snapshot is %s old, more than --max-age %s: the cluster may have changed since", age, maxAge))
	}
	return fs
}

func (a *analyzer) finding(code Code, subject Subject, evidence map[string]string, format string, args ...any) Finding {
	c := a.checks[code]
	return Finding{Code: code, Severity: c.Severity, Subject: subject, Message: fmt.Sprintf(format, args...), Evidence: evidence, Fix: c.Fix}
}

// podState is what the node pass keeps of one pod.
type podState struct {
	pod      *view.Pod
	chain    chain
	verdict  *PodVerdict // in the node's Pods
	matching []*pdbInfo
	skipped  bool
}

// scratch is a worker's working memory for the nodes it analyses, reused
// from node to node: only the Node is new.
type scratch struct {
	readyHere  map[*owner]int
	states     []podState
	namespaces map[string]bool
	accs       map[*pdbInfo]int // index in order
	order      []pdbAcc
	pdbCodes   map[*pdbInfo][]Code
	surges     map[*pdbInfo]pdbSurge
	forecast   forecastScratch
}

// pdbAcc counts the pods of a node a PDB covers.
type pdbAcc struct {
	info        *pdbInfo
	onNode      int
	usingBudget int
}

func (sc *scratch) reset(pods int) {
	if sc.readyHere == nil {
		sc.readyHere, sc.namespaces, sc.accs, sc.pdbCodes, sc.surges = map[*owner]int{}, map[string]bool{}, map[*pdbInfo]int{}, map[*pdbInfo][]Code{}, map[*pdbInfo]pdbSurge{}
	}
	clear(sc.readyHere)
	clear(sc.namespaces)
	clear(sc.accs)
	clear(sc.pdbCodes)
	clear(sc.surges)
	clear(sc.states)
	sc.states = slices.Grow(sc.states[:0], pods)[:pods]
	sc.order = sc.order[:0]
}

func (a *analyzer) node(n *view.Node, sc *scratch) Node {
	idx := a.x.podsByNode[n.Name]
	out := Node{Name: n.Name, UID: n.UID, Risk: Low, Findings: []Finding{}, Pods: make([]PodVerdict, len(idx)), PDBs: []PDBBudget{}}
	sc.reset(len(idx))
	// Ready replicas on this node, per top controller.
	readyHere := sc.readyHere
	for _, i := range idx {
		if top := a.x.chains[i].top; top != nil && servingReady(&a.x.pods[i]) {
			readyHere[top]++
		}
	}
	states, namespaces := sc.states, sc.namespaces
	for j, i := range idx {
		p := &a.x.pods[i]
		st, fs := a.pod(p, a.x.chains[i], sc, &out.Pods[j])
		states[j] = st
		out.Findings = append(out.Findings, fs...)
		if !st.skipped {
			namespaces[p.Namespace] = true
		}
	}

	// PDB arithmetic and checks, for the PDBs covering pods a drain evicts.
	accs := sc.accs
	for i := range states {
		st := &states[i]
		if st.skipped {
			continue
		}
		for _, info := range st.matching {
			j, ok := accs[info]
			if !ok {
				j = len(sc.order)
				accs[info] = j
				sc.order = append(sc.order, pdbAcc{info: info})
			}
			c := &sc.order[j]
			c.onNode++
			if usesBudget(st.verdict.EvictableNow, info) {
				c.usingBudget++
			}
		}
	}
	// A PDB's findings weigh on the node only when the PDB governs the
	// eviction of one of its pods (the Eviction API would consult its
	// budget); otherwise they are told on the PDB's entry alone.
	out.PDBs = make([]PDBBudget, 0, len(sc.order))
	pdbCodes := sc.pdbCodes
	for _, c := range sc.order {
		b, fs := a.budget(c.info, c.onNode, c.usingBudget)
		if c.usingBudget == 0 {
			b.Findings = fs
			out.PDBs = append(out.PDBs, b)
			continue
		}
		out.PDBs = append(out.PDBs, b)
		for _, f := range fs {
			pdbCodes[c.info] = append(pdbCodes[c.info], f.Code)
		}
		out.Findings = append(out.Findings, fs...)
	}
	// PDBs that protect nothing, in namespaces the drain touches.
	for _, ns := range sortedKeys(namespaces) {
		out.Findings = append(out.Findings, a.useless[ns]...)
	}
	// The snapshot's own: every node is judged from it.
	out.Findings = append(out.Findings, a.snapshot...)

	// A pod's action: skip what a drain does not evict; block when the pod
	// has a high finding, its own or one of the PDB that governs its
	// eviction; with Options.Surge, surge a pod whose budget never allows
	// but one more replica of its owner does; evict otherwise (CHECKS.md,
	// "Actions").
	surges := sc.surges
	answered := map[types.UID]bool{} // pods whose all-replicas-on-node a surge answers
	var needs []OverrideNeed         // the pods that need an override
	for i := range states {
		st := &states[i]
		v := st.verdict
		for _, info := range st.matching {
			if !usesBudget(v.EvictableNow, info) {
				continue
			}
			codes := pdbCodes[info]
			if !st.skipped && slices.Contains(codes, PDBZeroSpec) {
				if f := a.surgeVerdict(st, info, surges); f != nil {
					out.Findings = append(out.Findings, *f)
					v.Reasons = append(v.Reasons, f.Code)
					if a.surge {
						// The surge makes the budget allow this pod: a
						// spec that never allows is no reason to block it.
						codes = slices.DeleteFunc(slices.Clone(codes), func(c Code) bool { return c == PDBZeroSpec })
					}
				} else {
					// No budget ever lets it go, nor a surge: only a
					// break-glass delete moves it.
					f, need := a.needsOverride(st, info)
					out.Findings = append(out.Findings, f)
					v.Reasons = append(v.Reasons, f.Code)
					needs = append(needs, need)
				}
			}
			v.Reasons = append(v.Reasons, codes...)
		}
		if a.surge && v.Surge != nil && slices.Contains(v.Reasons, AllReplicasOnNode) {
			// The surge makes a Ready replica elsewhere before the
			// eviction: replicas all here are what it answers.
			v.Reasons = slices.DeleteFunc(v.Reasons, func(c Code) bool { return c == AllReplicasOnNode })
			answered[v.UID] = true
		}
		slices.Sort(v.Reasons)
		v.Reasons = slices.Compact(v.Reasons)
		switch {
		case st.skipped:
			v.Action = Skip
			out.Counts.Skip++
		case slices.ContainsFunc(v.Reasons, func(c Code) bool { return a.checks[c].Severity == High }):
			v.Action = Block
			out.Counts.Block++
		case a.surge && v.Surge != nil:
			v.Action = Surge
			out.Counts.Surge++
		default:
			v.Action = Evict
			out.Counts.Evict++
		}
	}
	if len(answered) > 0 {
		out.Findings = slices.DeleteFunc(out.Findings, func(f Finding) bool {
			return f.Code == AllReplicasOnNode && f.Subject.Kind == "Pod" && answered[f.Subject.UID]
		})
	}
	if a.surge {
		// A budget whose every pod here a surge moves blocks nothing on
		// this node: its pdb-zero-spec no longer weighs on the grade (the
		// pods' surge-movable findings do).
		out.Findings = slices.DeleteFunc(out.Findings, func(f Finding) bool {
			if f.Code != PDBZeroSpec {
				return false
			}
			for info, s := range surges {
				if s.all && info.pdb.UID == f.Subject.UID {
					return true
				}
			}
			return false
		})
	}
	out.Counts.Pods = len(idx)
	atts := a.vx.attachments(n.Name)
	order := a.vx.drainOrder(n.Name, a.rules, atts)
	out.DrainOrder = order.groups
	out.Findings = append(out.Findings, a.volumeFindings(n.Name, atts, out.DrainOrder)...)
	if a.fc != nil {
		out.Forecast = a.forecast(n, states, surges, order.pods, &sc.forecast)
		out.Forecast.NeedsOverride = evicted(needs, order.pods)
	}
	for _, f := range out.Findings {
		out.Risk = out.Risk.worse(f.Severity)
		switch f.Severity {
		case High:
			out.Counts.High++
		case Medium:
			out.Counts.Medium++
		default:
			out.Counts.Low++
		}
	}
	slices.SortStableFunc(out.Findings, func(a, b Finding) int {
		return cmp.Or(
			b.Severity.rank()-a.Severity.rank(),
			strings.Compare(a.Subject.Namespace, b.Subject.Namespace),
			strings.Compare(a.Subject.Name, b.Subject.Name),
			strings.Compare(a.Subject.Kind, b.Subject.Kind),
			strings.Compare(string(a.Code), string(b.Code)),
		)
	})
	slices.SortFunc(out.PDBs, func(a, b PDBBudget) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// usesBudget reports whether the predicted eviction draws on info's budget:
// it would decrement it, or it is refused by it.
func usesBudget(p Prediction, info *pdbInfo) bool {
	if p.PDB != info.pdb.Name {
		return false
	}
	return p.UsesBudget || p.Outcome == OutcomeBudgetExhausted || p.Outcome == OutcomePDBStale || p.Outcome == OutcomeForbidden
}

func podSubject(p *view.Pod) Subject {
	return Subject{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}

func pdbSubject(p *view.PodDisruptionBudget) Subject {
	return Subject{Kind: "PodDisruptionBudget", Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}

// chain is a pod's owner chain and its last verified owner.
type chain struct {
	hops []OwnerHop
	top  *owner
}

// pod judges one pod of the node.
func (a *analyzer) pod(p *view.Pod, c chain, sc *scratch, v *PodVerdict) (podState, []Finding) {
	hops, top, readyHere := c.hops, c.top, sc.readyHere
	matching := a.x.matching(p)
	pdbs := make([]*view.PodDisruptionBudget, len(matching))
	var refs []Ref
	for i, info := range matching {
		pdbs[i] = info.pdb
		refs = append(refs, Ref{Namespace: info.pdb.Namespace, Name: info.pdb.Name, UID: info.pdb.UID})
	}
	*v = PodVerdict{
		Namespace: p.Namespace, Name: p.Name, UID: p.UID, Owners: hops, PDBs: refs,
		EvictableNow: evictableNow(p, pdbs),
	}
	st := podState{pod: p, chain: c, matching: matching, verdict: v}
	subj := podSubject(p)
	var fs []Finding
	add := func(f Finding) {
		fs = append(fs, f)
		st.verdict.Reasons = append(st.verdict.Reasons, f.Code)
	}

	// Pods a drain does not evict.
	ctrl := controllerOf(p.OwnerReferences)
	switch {
	case p.Annotations[corev1.MirrorPodAnnotationKey] != "":
		add(a.finding(MirrorPod, subj, map[string]string{"annotation": corev1.MirrorPodAnnotationKey}, "pod %s is a static pod's mirror and is not evicted", p.Name))
	case ctrl != nil && ctrl.Kind == "DaemonSet":
		add(a.finding(DaemonSetPod, subj, map[string]string{"daemonSet": ctrl.Name}, "pod %s belongs to DaemonSet %s and is not evicted", p.Name, ctrl.Name))
	case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		add(a.finding(TerminalPod, subj, map[string]string{"phase": string(p.Status.Phase)}, "pod %s has finished (%s)", p.Name, p.Status.Phase))
	case p.DeletionTimestamp != nil:
		add(a.finding(TerminatingPod, subj, map[string]string{"deletionTimestamp": p.DeletionTimestamp.UTC().Format(time.RFC3339)}, "pod %s is already being deleted", p.Name))
	}
	if len(fs) > 0 {
		st.skipped = true
		// A skipped pod's owner chain still matters when it is broken.
		for _, f := range a.ownerFindings(p, subj, hops) {
			add(f)
		}
		return st, fs
	}

	for _, f := range a.doNotEvict(p, subj) {
		add(f)
	}
	if ctrl == nil {
		add(a.finding(UnmanagedPod, subj, nil, "pod %s has no controller: evicting it deletes it for good", p.Name))
	}
	for _, f := range a.ownerFindings(p, subj, hops) {
		add(f)
	}
	if top != nil && top.scalable && allVerified(hops) {
		ev := func() (string, map[string]string) {
			topName := top.kind + " " + top.meta.Name
			return topName, map[string]string{"owner": topName, "replicas": itoa(top.replicas), "readyReplicas": itoa(top.readyReplicas)}
		}
		switch {
		case top.replicas == 1 && !servingReady(p):
			topName, ev := ev()
			ev["phase"], ev["ready"] = string(p.Status.Phase), strconv.FormatBool(podReady(p))
			add(a.finding(SingleReplicaNotServing, subj, ev, "pod %s is the only replica of %s but is not serving (%s, not Ready): evicting it takes no availability away", p.Name, topName, p.Status.Phase))
		case top.replicas == 1:
			topName, ev := ev()
			add(a.finding(SingleReplica, subj, ev, "pod %s is the only replica of %s: evicting it is an outage until the replacement is Ready", p.Name, topName))
		case servingReady(p) && readyHere[top] > 0 && a.x.readyByTop[top.meta.UID] <= readyHere[top] && int(top.readyReplicas) <= readyHere[top]:
			topName, ev := ev()
			ev["readyOnNode"] = strconv.Itoa(readyHere[top])
			add(a.finding(AllReplicasOnNode, subj, ev, "every Ready replica of %s (%d) is on this node: draining it is an outage", topName, readyHere[top]))
		}
	}
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && time.Duration(*g)*time.Second > a.maxGrace {
		add(a.finding(LongGrace, subj, map[string]string{"terminationGracePeriodSeconds": strconv.FormatInt(*g, 10), "threshold": a.maxGrace.String()},
			"pod %s may take up to %s to terminate", p.Name, time.Duration(*g)*time.Second))
	}
	if p.Namespace == "kube-system" && len(matching) == 0 {
		add(a.finding(KubeSystemNoPDB, subj, nil, "kube-system pod %s has no PodDisruptionBudget", p.Name))
	}
	if st.verdict.EvictableNow.Rule == RuleMultiplePDBs {
		names := make([]string, len(pdbs))
		for i, m := range pdbs {
			names[i] = m.Name
		}
		slices.Sort(names)
		add(a.finding(PDBOverlap, subj, map[string]string{"pdbs": strings.Join(names, ",")},
			"pod %s is selected by %d PodDisruptionBudgets (%s): the Eviction API refuses it with 500", p.Name, len(names), strings.Join(names, ", ")))
	}
	if pr := st.verdict.EvictableNow; !podReady(p) && len(matching) == 1 && !pr.Allowed && pr.Outcome == OutcomeBudgetExhausted {
		pdb := pdbs[0]
		policy := "IfHealthyBudget (default)"
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil {
			policy = string(*pdb.Spec.UnhealthyPodEvictionPolicy)
		}
		add(a.finding(UnhealthyBlocks, subj, map[string]string{"pdb": pdb.Name, "unhealthyPodEvictionPolicy": policy,
			"currentHealthy": itoa(pdb.Status.CurrentHealthy), "desiredHealthy": itoa(pdb.Status.DesiredHealthy)},
			"pod %s is not Ready and PDB %s refuses its eviction under %s; AlwaysAllow would let it go", p.Name, pdb.Name, policy))
	}
	for _, f := range a.storage(p, subj) {
		add(f)
	}
	return st, fs
}

func allVerified(hops []OwnerHop) bool {
	for _, h := range hops {
		if !h.Verified {
			return false
		}
	}
	return len(hops) > 0
}

func (a *analyzer) ownerFindings(p *view.Pod, subj Subject, hops []OwnerHop) []Finding {
	var fs []Finding
	for _, h := range hops {
		if h.Problem == "" {
			continue
		}
		ev := map[string]string{"ownerKind": h.Kind, "ownerName": h.Name, "ownerUID": string(h.UID)}
		switch h.Problem {
		case "missing":
			fs = append(fs, a.finding(OwnerMissing, subj, ev, "pod %s: owner %s %s (uid %s) is not in the snapshot", p.Name, h.Kind, h.Name, h.UID))
		case "uid-mismatch":
			fs = append(fs, a.finding(OwnerImpostor, subj, ev, "pod %s: %s %s exists with another uid than the owner reference's %s", p.Name, h.Kind, h.Name, h.UID))
		case "unknown-kind":
			fs = append(fs, a.finding(OwnerUnverifiable, subj, ev, "pod %s: owner %s %s is a kind the snapshot does not hold", p.Name, h.Kind, h.Name))
		}
	}
	return fs
}

func (a *analyzer) doNotEvict(p *view.Pod, subj Subject) []Finding {
	var fs []Finding
	if v, ok := p.Annotations[SafeToEvictAnnotation]; ok && v == "false" {
		fs = append(fs, a.finding(DoNotEvict, subj, map[string]string{"annotation": SafeToEvictAnnotation, "value": v},
			"pod %s is annotated %s=false", p.Name, SafeToEvictAnnotation))
	}
	v, ok := p.Annotations[DoNotDisruptAnnotation]
	if !ok {
		return fs
	}
	ev := map[string]string{"annotation": DoNotDisruptAnnotation, "value": v}
	switch d, err := time.ParseDuration(v); {
	case v == "true":
		fs = append(fs, a.finding(DoNotEvict, subj, ev, "pod %s is annotated %s=true", p.Name, DoNotDisruptAnnotation))
	case err == nil:
		if p.Status.StartTime == nil {
			fs = append(fs, a.finding(DoNotEvict, subj, ev, "pod %s is annotated %s=%s and has not started", p.Name, DoNotDisruptAnnotation, v))
			break
		}
		until := p.Status.StartTime.Add(d)
		if a.now.Before(until) {
			ev["until"] = until.UTC().Format(time.RFC3339)
			fs = append(fs, a.finding(DoNotEvict, subj, ev, "pod %s is annotated %s=%s: not to be disrupted until %s", p.Name, DoNotDisruptAnnotation, v, ev["until"]))
		}
	case v != "false":
		fs = append(fs, a.finding(DoNotEvict, subj, ev, "pod %s is annotated %s=%q, which is neither a boolean nor a duration: treated as true", p.Name, DoNotDisruptAnnotation, v))
	}
	return fs
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
