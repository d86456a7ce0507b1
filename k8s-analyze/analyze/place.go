package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The placement model: can the replacement of a pod that a drain evicts
// run on another node? It judges, on the snapshot, what the scheduler's
// filters would: node selector, required node affinity, NoSchedule and
// NoExecute taints, CPU, memory, ephemeral storage and the pod count against
// allocatable, required pod anti-affinity on the hostname key, and
// DoNotSchedule topology spread on the hostname key. Anything else that can
// keep a pod off a node is named (unknown), never guessed. docs/design.md,
// "Drain forecast", says what it assumes.

// fit is a three-valued answer: a node takes the pod, does not, or cannot
// be judged.
type fit int

const (
	fitNo fit = iota
	fitMaybe
	fitYes
)

// Placement is the placement model of a cluster: every node, the pods on
// each with their requests and anti-affinity, and the spread domains they
// make; where the drain forecast (ForecastOptions.Placement) and Capacity
// (Placement.Capacity) judge that replacements can go. What a replacement
// needs (its requests, node selection, tolerations, constraints, the
// topology of its volumes) is read from the analysed snapshot, where it
// may go from the Placement. Made once by NewPlacement, it can be shared
// by the analyses of many snapshots, node-scoped ones included.
//
// It is immutable once made (its spread caches are built on first use,
// each once, under a lock) and safe for concurrent use by many analyses.
type Placement struct {
	p *placer
}

// NewPlacement is the placement model of s, which should be a snapshot of
// the whole cluster: it reads only s's nodes and pods, and checks nothing
// (the analyses that use it validate their own snapshots). The model
// points into s: s must not change while the Placement is in use.
func NewPlacement(s *view.Snapshot) *Placement {
	return &Placement{newPlacer(podsByNamespace(s.Pods), s)}
}

// has reports whether the model holds node name.
func (pl *Placement) has(name string) bool {
	_, ok := pl.p.at[name]
	return ok
}

// placerOf is the placement model an analysis of s (indexed as x) places
// replacements with: given's, else s's own, else (s is node-scoped: it
// holds no other node) nil.
func placerOf(given *Placement, x *index, s *view.Snapshot) *placer {
	switch {
	case given != nil:
		return given.p
	case len(s.Metadata.Scope.Nodes) > 0:
		return nil
	}
	return newPlacer(x.podsByNS, s)
}

// placer holds what judging placements reads, built once per snapshot and
// read-only afterwards (but for the spread domains, built once each under
// their own sync.Once), so that concurrent analyses may share it. The pods
// it is asked to place may come from another view of the cluster than its
// own (ForecastOptions.Placement): it tells them from its pods by identity
// (samePod) or labels, never by pointer, and what it reads of them (their
// scheduling, their volumes' topology: leaving) is the analysed
// snapshot's.
type placer struct {
	// podsByNS are its pods by namespace, where the spread domains count.
	podsByNS map[string][]*view.Pod
	nodes    []*view.Node // every node, by name
	at       map[string]int
	// used are the requests of each node's pods that are not terminal
	// (Pods counts them); on are those pods; anti are those with required
	// pod anti-affinity on the hostname key, with those terms parsed.
	used []view.Resources
	on   [][]*view.Pod
	anti [][]antiPod
	// far are the required pod anti-affinity terms, on other topology keys
	// than the hostname, of every pod assigned a node: they may keep a pod
	// off nodes the model cannot tell.
	far []affinityTerm
	// The caches of the spread constraints, by key: parsed selectors, the
	// nodes that count as domains, and the matching pods on them.
	mu        sync.Mutex
	selectors map[string]*spreadSelector
	eligible  map[string]*eligible
	spread    map[string]*spreadDomain
	byLabel   map[string]*byLabel
}

func newPlacer(podsByNS map[string][]*view.Pod, s *view.Snapshot) *placer {
	p := &placer{podsByNS: podsByNS, at: make(map[string]int, len(s.Nodes)),
		selectors: map[string]*spreadSelector{}, eligible: map[string]*eligible{}, spread: map[string]*spreadDomain{}, byLabel: map[string]*byLabel{}}
	for i := range s.Nodes {
		p.nodes = append(p.nodes, &s.Nodes[i])
	}
	slices.SortFunc(p.nodes, func(a, b *view.Node) int { return strings.Compare(a.Name, b.Name) })
	for i, n := range p.nodes {
		p.at[n.Name] = i
	}
	p.used = make([]view.Resources, len(p.nodes))
	p.on = make([][]*view.Pod, len(p.nodes))
	p.anti = make([][]antiPod, len(p.nodes))
	for i := range s.Pods {
		pod := &s.Pods[i]
		n, ok := p.at[pod.Spec.NodeName]
		if !ok || terminal(pod) {
			continue
		}
		p.on[n] = append(p.on[n], pod)
		addResources(&p.used[n], requestsOf(pod))
		var near []affinityTerm
		for _, t := range antiTerms(pod) {
			if t.TopologyKey == corev1.LabelHostname {
				near = append(near, parseTerm(pod, &t))
			} else {
				p.far = append(p.far, parseTerm(pod, &t))
			}
		}
		if near != nil {
			p.anti[n] = append(p.anti[n], antiPod{pod, near})
		}
	}
	return p
}

// samePod says whether a and b are one pod, maybe of two views of the
// cluster (an analysed snapshot and its Placement's): no two pods of one cut
// share a namespace and name.
func samePod(a, b *view.Pod) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name
}

func terminal(p *view.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// requestsOf are p's requests, Pods 1.
func requestsOf(p *view.Pod) view.Resources {
	if p.Scheduling == nil {
		return view.Resources{Pods: 1}
	}
	return p.Scheduling.Requests
}

func addResources(to *view.Resources, r view.Resources) {
	to.MilliCPU += r.MilliCPU
	to.Memory += r.Memory
	to.EphemeralStorage += r.EphemeralStorage
	to.Pods += r.Pods
}

// antiTerms are p's required pod anti-affinity terms.
func antiTerms(p *view.Pod) []corev1.PodAffinityTerm {
	if s := p.Scheduling; s != nil && s.Affinity != nil && s.Affinity.PodAntiAffinity != nil {
		return s.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// antiPod is a pod with its required anti-affinity terms on the hostname
// key.
type antiPod struct {
	pod   *view.Pod
	terms []affinityTerm
}

// affinityTerm is a required pod (anti-)affinity term of pod owner, parsed.
type affinityTerm struct {
	owner *view.Pod
	key   string
	sel   labels.Selector // nil when it does not parse
	// The namespaces whose pods it selects: all, the listed ones, and with
	// a namespaceSelector that is not empty, namespaces the snapshot
	// cannot tell (it holds no Namespace objects).
	all        bool
	namespaces []string
	byLabels   bool
}

// parseTerm parses t of owner as the scheduler does: a nil label selector
// selects nothing; matchLabelKeys and mismatchLabelKeys add owner's values
// (the API server merges them into the selector already; adding them again
// changes nothing); no namespaces and no namespaceSelector mean owner's
// namespace; an empty namespaceSelector means every namespace.
func parseTerm(owner *view.Pod, t *corev1.PodAffinityTerm) affinityTerm {
	out := affinityTerm{owner: owner, key: t.TopologyKey, namespaces: t.Namespaces}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err == nil {
		sel, err = withLabelKeys(sel, owner.Labels, t.MatchLabelKeys, selection.In)
	}
	if err == nil {
		sel, err = withLabelKeys(sel, owner.Labels, t.MismatchLabelKeys, selection.NotIn)
	}
	if err == nil {
		out.sel = sel
	}
	switch ns := t.NamespaceSelector; {
	case ns == nil && len(t.Namespaces) == 0:
		out.namespaces = []string{owner.Namespace}
	case ns != nil && len(ns.MatchLabels) == 0 && len(ns.MatchExpressions) == 0:
		out.all = true
	case ns != nil:
		out.byLabels = true
	}
	return out
}

// withLabelKeys adds to sel "key op (value)" for each key of keys that
// podLabels has.
func withLabelKeys(sel labels.Selector, podLabels map[string]string, keys []string, op selection.Operator) (labels.Selector, error) {
	for _, k := range keys {
		v, ok := podLabels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, op, []string{v})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// selects says whether t selects pod: fitYes, fitNo, or fitMaybe when its
// labels match and only a namespaceSelector could tell the namespace.
func (t *affinityTerm) selects(pod *view.Pod) fit {
	if t.sel == nil || !t.sel.Matches(labels.Set(pod.Labels)) {
		return fitNo
	}
	if t.all || slices.Contains(t.namespaces, pod.Namespace) {
		return fitYes
	}
	if t.byLabels {
		return fitMaybe
	}
	return fitNo
}

// nodeTerm is one required node selector term, parsed; an empty term or one
// that does not parse matches no node.
type nodeTerm struct {
	sel    labels.Selector // of matchExpressions; nil when there are none
	fields []corev1.NodeSelectorRequirement
	bad    bool
}

func parseNodeTerm(t *corev1.NodeSelectorTerm) nodeTerm {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return nodeTerm{bad: true}
	}
	out := nodeTerm{fields: t.MatchFields}
	if len(t.MatchExpressions) > 0 {
		out.sel = labels.NewSelector()
		for _, e := range t.MatchExpressions {
			op, ok := map[corev1.NodeSelectorOperator]selection.Operator{
				corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
				corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
				corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
			}[e.Operator]
			if !ok {
				return nodeTerm{bad: true}
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				return nodeTerm{bad: true}
			}
			out.sel = out.sel.Add(*r)
		}
	}
	for _, f := range t.MatchFields {
		if (f.Operator != corev1.NodeSelectorOpIn && f.Operator != corev1.NodeSelectorOpNotIn) || len(f.Values) != 1 {
			return nodeTerm{bad: true}
		}
	}
	return out
}

func (t *nodeTerm) matches(n *view.Node) bool {
	if t.bad || (t.sel != nil && !t.sel.Matches(labels.Set(n.Labels))) {
		return false
	}
	for _, f := range t.fields {
		// matchFields knows metadata.name only: any other key is absent.
		value, ok := "", f.Key == "metadata.name"
		if ok {
			value = n.Name
		}
		if (f.Operator == corev1.NodeSelectorOpIn) != (ok && value == f.Values[0]) {
			return false
		}
	}
	return true
}

// tolerates says whether tolerations tolerate taint (the API's
// ToleratesTaint); fitMaybe when only a Lt or Gt toleration would, which
// depends on a feature gate of the cluster.
func tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) fit {
	out := fitNo
	for i := range tolerations {
		t := &tolerations[i]
		if (t.Effect != "" && t.Effect != taint.Effect) || (t.Key != "" && t.Key != taint.Key) {
			continue
		}
		switch t.Operator {
		case "", corev1.TolerationOpEqual:
			if t.Value == taint.Value {
				return fitYes
			}
		case corev1.TolerationOpExists:
			return fitYes
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			out = fitMaybe
		}
	}
	return out
}

// blocking is a taint that keeps pods that do not tolerate it off a node.
func blocking(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// unschedulableTaint is the taint a cordoned node carries.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// want is what a replacement needs of a node, parsed once per pod.
type want struct {
	pod      *view.Pod
	req      view.Resources
	selector map[string]string
	// terms are the required node affinity's terms (ORed); affinity is
	// false when there is none.
	affinity    bool
	terms       []nodeTerm
	tolerations []corev1.Toleration
	anti        []affinityTerm // on the hostname key
	spread      []spreadWant
	// unjudged name the constraints the model cannot judge.
	unjudged []string
}

// noScheduling is the Scheduling of a pod that has none.
var noScheduling view.Scheduling

// wantOf parses into w what the replacement of l's pod needs; w's lists
// are reused.
func (p *placer) wantOf(l *leaving, w *want) {
	pod := l.pod
	*w = want{pod: pod, req: requestsOf(pod), terms: w.terms[:0], anti: w.anti[:0], spread: w.spread[:0], unjudged: w.unjudged[:0]}
	s := pod.Scheduling
	if s == nil {
		s = &noScheduling
	}
	w.selector, w.tolerations = s.NodeSelector, s.Tolerations
	for _, name := range w.req.Other {
		w.unjudged = append(w.unjudged, "requests of "+string(name))
	}
	if a := s.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil && na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			w.affinity = true
			for i := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				w.terms = append(w.terms, parseNodeTerm(&na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i]))
			}
		}
		if pa := a.PodAffinity; pa != nil && len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			w.unjudged = append(w.unjudged, "required pod affinity")
		}
		for i, t := range antiTerms(pod) {
			switch term := parseTerm(pod, &antiTerms(pod)[i]); {
			case t.TopologyKey != corev1.LabelHostname:
				w.unjudged = append(w.unjudged, "required pod anti-affinity on topology key "+t.TopologyKey)
			case term.sel == nil:
				w.unjudged = append(w.unjudged, "a required pod anti-affinity term whose selector does not parse")
			default:
				w.anti = append(w.anti, term)
			}
		}
	}
	for i := range s.TopologySpreadConstraints {
		c := &s.TopologySpreadConstraints[i]
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue // ScheduleAnyway only scores
		}
		if c.TopologyKey != corev1.LabelHostname {
			w.unjudged = append(w.unjudged, "topology spread on topology key "+c.TopologyKey)
			continue
		}
		sw, ok := p.spreadWant(w, c)
		if !ok {
			w.unjudged = append(w.unjudged, "a topology spread constraint whose selector does not parse")
			continue
		}
		w.spread = append(w.spread, sw)
	}
	for _, port := range s.HostPorts {
		w.unjudged = append(w.unjudged, fmt.Sprintf("hostPort %d/%s", port.HostPort, cmp.Or(port.Protocol, corev1.ProtocolTCP)))
	}
	if s.ResourceClaims > 0 {
		w.unjudged = append(w.unjudged, "resource claims (dynamic resource allocation)")
	}
	w.unjudged = append(w.unjudged, l.volumes...)
	for i := range p.far {
		t := &p.far[i]
		if !samePod(t.owner, pod) && t.selects(pod) != fitNo {
			w.unjudged = append(w.unjudged, fmt.Sprintf("required pod anti-affinity of pod %s on topology key %s", name(t.owner.Namespace, t.owner.Name), t.key))
			break
		}
	}
}

// volumeTopology names the volumes that may tie pod to some nodes: a claim
// the snapshot does not hold or that is not bound, a volume with node
// affinity (or local or hostPath), a generic ephemeral volume (its new claim
// is provisioned where the storage class allows). The claims and volumes
// are the pod's snapshot's (a node-scoped one holds those of its nodes'
// pods), not a Placement's.
func (x *index) volumeTopology(pod *view.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Ephemeral != nil:
			out = append(out, "generic ephemeral volume "+v.Name+" (storage topology)")
		case v.PersistentVolumeClaim != nil:
			claim := v.PersistentVolumeClaim.ClaimName
			pvc := x.pvcs[objKey{"PersistentVolumeClaim", pod.Namespace, claim}]
			switch {
			case pvc == nil:
				out = append(out, "claim "+claim+", not in the snapshot")
			case pvc.Spec.VolumeName == "":
				out = append(out, "claim "+claim+", not bound (storage topology)")
			default:
				pv := x.pvs[pvc.Spec.VolumeName]
				switch {
				case pv == nil:
					out = append(out, "volume "+pvc.Spec.VolumeName+", not in the snapshot")
				case pv.Spec.NodeAffinity != nil || pv.Spec.Local != nil || pv.Spec.HostPath != nil:
					out = append(out, "volume topology of PersistentVolume "+pv.Name)
				}
			}
		}
	}
	return out
}

// spreadWant is one DoNotSchedule topology spread constraint on the
// hostname key.
type spreadWant struct {
	c    *corev1.TopologySpreadConstraint
	sel  labels.Selector
	self bool // the selector selects the pod itself
	// honorTaints: nodes whose taints the pod does not tolerate are not
	// domains (nodeTaintsPolicy Honor).
	honorTaints bool
	ns          string
	tolerations []corev1.Toleration
	dom         *spreadDomain
}

// eligible are the nodes that count as domains of the constraints of pods
// that share a node selection and inclusion policies (most pods share one).
type eligible struct {
	once  sync.Once
	nodes []bool
	n     int
}

// spreadDomain is, for one constraint's selector in a namespace and the
// nodes that count, the matching pods on each.
type spreadDomain struct {
	once     sync.Once
	eligible *eligible
	counts   map[int]int
}

// spreadSelector is a topology spread constraint's selector, parsed once
// per distinct selector.
type spreadSelector struct {
	sel labels.Selector
	err error
}

func (p *placer) spreadWant(w *want, c *corev1.TopologySpreadConstraint) (spreadWant, bool) {
	var key strings.Builder
	writeSelector(&key, c.LabelSelector)
	for _, k := range c.MatchLabelKeys {
		v, ok := w.pod.Labels[k]
		writeString(&key, k)
		writeString(&key, strconv.FormatBool(ok))
		writeString(&key, v)
	}
	parsed := cached(p, p.selectors, key.String(), func() *spreadSelector {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err == nil {
			sel, err = withLabelKeys(sel, w.pod.Labels, c.MatchLabelKeys, selection.In)
		}
		return &spreadSelector{sel, err}
	})
	if parsed.err != nil {
		return spreadWant{}, false
	}
	sel := parsed.sel
	honorAffinity := c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
	honorTaints := c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	var ek strings.Builder
	fmt.Fprintf(&ek, "%t %t|", honorAffinity, honorTaints)
	if honorAffinity {
		keys := make([]string, 0, len(w.selector))
		for k := range w.selector {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			writeString(&ek, k)
			writeString(&ek, w.selector[k])
		}
		if w.affinity {
			// %#v quotes the strings.
			fmt.Fprintf(&ek, "|%#v", w.pod.Scheduling.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
		}
	}
	if honorTaints {
		b := &ek
		b.WriteByte('|')
		for _, t := range w.tolerations {
			for _, f := range []string{t.Key, string(t.Operator), t.Value, string(t.Effect)} {
				writeString(b, f)
			}
		}
	}
	el := cached(p, p.eligible, ek.String(), func() *eligible { return &eligible{} })
	el.once.Do(func() {
		el.nodes = make([]bool, len(p.nodes))
		for i, n := range p.nodes {
			if _, ok := n.Labels[corev1.LabelHostname]; !ok || (honorAffinity && !w.selects(n)) || (honorTaints && !w.tolerated(n)) {
				continue
			}
			el.nodes[i] = true
			el.n++
		}
	})
	var dk strings.Builder
	writeString(&dk, w.pod.Namespace)
	writeString(&dk, key.String())
	dk.WriteString(ek.String())
	dom := cached(p, p.spread, dk.String(), func() *spreadDomain { return &spreadDomain{eligible: el} })
	dom.once.Do(func() {
		dom.counts = map[int]int{}
		for _, pod := range p.candidates(w.pod.Namespace, c.LabelSelector) {
			// The scheduler counts neither terminating nor terminal pods.
			if i, ok := p.at[pod.Spec.NodeName]; ok && el.nodes[i] && pod.DeletionTimestamp == nil && !terminal(pod) && sel.Matches(labels.Set(pod.Labels)) {
				dom.counts[i]++
			}
		}
	})
	return spreadWant{c: c, sel: sel, self: sel.Matches(labels.Set(w.pod.Labels)), honorTaints: honorTaints,
		ns: w.pod.Namespace, tolerations: w.tolerations, dom: dom}, true
}

// byLabel indexes the pods of a namespace by label pair, built the first
// time a spread constraint of the namespace asks.
type byLabel struct {
	once sync.Once
	pods map[labelPair][]*view.Pod
}

// candidates are the pods of namespace that ls may select: those with the
// rarest of its matchLabels, or every pod of the namespace.
func (p *placer) candidates(namespace string, ls *metav1.LabelSelector) []*view.Pod {
	all := p.podsByNS[namespace]
	if ls == nil || len(ls.MatchLabels) == 0 {
		return all
	}
	idx := cached(p, p.byLabel, namespace, func() *byLabel { return &byLabel{} })
	idx.once.Do(func() {
		idx.pods = map[labelPair][]*view.Pod{}
		for _, pod := range all {
			for k, v := range pod.Labels {
				idx.pods[labelPair{k, v}] = append(idx.pods[labelPair{k, v}], pod)
			}
		}
	})
	var best []*view.Pod
	first := true
	for k, v := range ls.MatchLabels {
		if l := idx.pods[labelPair{k, v}]; first || len(l) < len(best) {
			best, first = l, false
		}
	}
	return best
}

// cached is m[key], made by make the first time; m is guarded by p.mu.
func cached[V any](p *placer, m map[string]*V, key string, make func() *V) *V {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := m[key]
	if v == nil {
		v = make()
		m[key] = v
	}
	return v
}

// writeSelector writes a key of ls to b: equal selectors write the same,
// different ones differ.
func writeSelector(b *strings.Builder, ls *metav1.LabelSelector) {
	if ls == nil {
		b.WriteString("nil")
		return
	}
	keys := make([]string, 0, len(ls.MatchLabels))
	for k := range ls.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		writeString(b, k)
		writeString(b, ls.MatchLabels[k])
	}
	b.WriteByte('|')
	for _, e := range ls.MatchExpressions {
		writeString(b, e.Key)
		writeString(b, string(e.Operator))
		b.WriteString(strconv.Itoa(len(e.Values)))
		for _, v := range e.Values {
			writeString(b, v)
		}
	}
}

// writeString writes s to b, prefixed with its length: keys of several
// strings cannot run together.
func writeString(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// selects says whether n satisfies w's node selector and required node
// affinity.
func (w *want) selects(n *view.Node) bool {
	for k, v := range w.selector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	if !w.affinity {
		return true
	}
	for i := range w.terms {
		if w.terms[i].matches(n) {
			return true
		}
	}
	return false
}

// taint judges n's blocking taints against w's tolerations, and the
// cordon's when n is cordoned. why names the first taint not tolerated.
func (w *want) taint(n *view.Node) (f fit, why string) {
	f = fitYes
	check := func(t *corev1.Taint) bool {
		if !blocking(t) {
			return true
		}
		switch tolerates(w.tolerations, t) {
		case fitNo:
			f, why = fitNo, "taint "+taintString(t)+" not tolerated"
			return false
		case fitMaybe:
			f, why = fitMaybe, "taint "+taintString(t)+" tolerated only by a Lt or Gt toleration (feature-gated)"
		}
		return true
	}
	for i := range n.Spec.Taints {
		if !check(&n.Spec.Taints[i]) {
			return f, why
		}
	}
	if n.Spec.Unschedulable {
		check(&unschedulableTaint)
	}
	return f, why
}

// tolerated: w tolerates every blocking taint of n for sure.
func (w *want) tolerated(n *view.Node) bool {
	f, _ := w.taint(n)
	return f == fitYes
}

func taintString(t *corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

// placement is the state of one node's drain, or of a set of nodes drained
// together (Capacity), as the replacements are placed one after the other:
// what they add to the other nodes, and the pods gone from the drained
// nodes.
type placement struct {
	// drained is the node drained alone (the forecast), -1 for a set.
	drained int
	// set marks, by node, the nodes of a set drained together (nil when one
	// node is); setNodes lists them.
	set      []bool
	setNodes []int
	extra    map[int]view.Resources
	placed   map[int][]*view.Pod
	// placedAnti are the placed replacements with anti-affinity terms.
	placedAnti map[int][]antiPod
	// gone are the pods gone from drained; goneAt those gone from each node
	// of set.
	gone   []*view.Pod
	goneAt map[int][]*view.Pod
	// want is the replacement being placed.
	want want
}

func (s *placement) reset(drained int) {
	if s.extra == nil {
		s.extra, s.placed, s.placedAnti = map[int]view.Resources{}, map[int][]*view.Pod{}, map[int][]antiPod{}
	}
	clear(s.extra)
	clear(s.placed)
	clear(s.placedAnti)
	s.drained, s.gone = drained, s.gone[:0]
}

// resetSet starts the drain of the nodes set marks (listed in nodes), every
// one of them cordoned.
func (s *placement) resetSet(set []bool, nodes []int) {
	s.reset(-1)
	s.set, s.setNodes = set, nodes
	if s.goneAt == nil {
		s.goneAt = map[int][]*view.Pod{}
	}
	clear(s.goneAt)
}

// drains says whether node i is drained in s: no replacement goes there.
func (s *placement) drains(i int) bool {
	return i == s.drained || (s.set != nil && s.set[i])
}

// leave records pod, of node i (a drained one), as gone.
func (s *placement) leave(i int, pod *view.Pod) {
	if i == s.drained {
		s.gone = append(s.gone, pod)
		return
	}
	s.goneAt[i] = append(s.goneAt[i], pod)
}

// alone is a fresh state of the same drain in which only pod, of node i,
// is gone and nothing is placed yet.
func (s *placement) alone(i int, pod *view.Pod) *placement {
	var a placement
	if s.set != nil {
		a.resetSet(s.set, s.setNodes)
	} else {
		a.reset(s.drained)
	}
	a.leave(i, pod)
	return &a
}

func (s *placement) place(i int, w *want) {
	r := s.extra[i]
	addResources(&r, w.req)
	s.extra[i] = r
	s.placed[i] = append(s.placed[i], w.pod)
	if len(w.anti) > 0 {
		s.placedAnti[i] = append(s.placedAnti[i], antiPod{w.pod, slices.Clone(w.anti)})
	}
}

// verdict is where a replacement can go: the node it was placed on (fitYes),
// or why it cannot be placed (fitNo: the rejections, by reason) or judged
// (fitMaybe).
type verdict struct {
	fit      fit
	node     int
	why      string
	reason   string // of a fitMaybe: ReasonNotModelled or ReasonNodeStatus
	rejected map[string]int
}

// find is the first node, by name, that takes w's replacement in state s:
// not a drained node, not cordoned, and every judged constraint met. A
// node where a constraint cannot be judged makes the answer fitMaybe unless
// another takes the pod for sure.
func (p *placer) find(w *want, s *placement) verdict {
	var mins []int
	for k := range w.spread {
		mins = append(mins, p.spreadMin(&w.spread[k], s))
	}
	out := verdict{fit: fitNo}
	for i, n := range p.nodes {
		if n.Spec.Unschedulable || s.drains(i) {
			continue
		}
		f, why, reason := p.judge(w, s, i, mins)
		switch {
		case f == fitYes && len(w.unjudged) == 0:
			return verdict{fit: fitYes, node: i}
		case f == fitYes || f == fitMaybe:
			if out.fit == fitNo {
				out.fit, out.node, out.why, out.reason = fitMaybe, i, why, reason
				if len(w.unjudged) > 0 {
					out.why, out.reason = strings.Join(w.unjudged, "; "), ReasonNotModelled
				}
			}
		default:
			if out.rejected == nil {
				out.rejected = map[string]int{}
			}
			out.rejected[why]++
		}
	}
	return out
}

// judge is whether node i takes w's replacement in state s, and why not (or
// why it cannot be told, and the reason code of that). mins are the spread
// constraints' global minimums.
func (p *placer) judge(w *want, s *placement, i int, mins []int) (fit, string, string) {
	n := p.nodes[i]
	if !w.selects(n) {
		if w.affinity {
			return fitNo, "node selector or required node affinity", ""
		}
		return fitNo, "node selector", ""
	}
	out, maybe, reason := fitYes, "", ReasonNotModelled
	taint, why := w.taint(n)
	switch taint {
	case fitNo:
		return fitNo, why, ""
	case fitMaybe:
		out, maybe = fitMaybe, why
	}
	if a := n.Status.Allocatable; a == nil {
		if out == fitYes {
			out, maybe, reason = fitMaybe, "node "+n.Name+" has no status.allocatable", ReasonNodeStatus
		}
	} else {
		used, extra := p.used[i], s.extra[i]
		free := func(alloc, used, extra int64) int64 { return alloc - used - extra }
		switch {
		case w.req.MilliCPU > 0 && w.req.MilliCPU > free(a.MilliCPU, used.MilliCPU, extra.MilliCPU):
			return fitNo, "insufficient cpu", ""
		case w.req.Memory > 0 && w.req.Memory > free(a.Memory, used.Memory, extra.Memory):
			return fitNo, "insufficient memory", ""
		case w.req.EphemeralStorage > 0 && w.req.EphemeralStorage > free(a.EphemeralStorage, used.EphemeralStorage, extra.EphemeralStorage):
			return fitNo, "insufficient ephemeral-storage", ""
		case free(a.Pods, used.Pods, extra.Pods) < 1:
			return fitNo, "too many pods", ""
		}
	}
	// Pod anti-affinity on the hostname key, both ways: the pod's terms
	// against the pods on the node, and theirs against the pod.
	if len(w.anti) > 0 {
		if _, ok := n.Labels[corev1.LabelHostname]; ok {
			for q := range p.podsWith(i, s, p.on) {
				for k := range w.anti {
					switch w.anti[k].selects(q) {
					case fitYes:
						return fitNo, "pod anti-affinity", ""
					case fitMaybe:
						if out == fitYes {
							out, maybe = fitMaybe, "pod anti-affinity with a namespaceSelector"
						}
					}
				}
			}
		}
	}
	if _, ok := n.Labels[corev1.LabelHostname]; ok {
		for _, l := range [][]antiPod{p.anti[i], s.placedAnti[i]} {
			for _, q := range l {
				for k := range q.terms {
					switch q.terms[k].selects(w.pod) {
					case fitYes:
						return fitNo, "pod anti-affinity of pod " + name(q.pod.Namespace, q.pod.Name), ""
					case fitMaybe:
						if out == fitYes {
							out, maybe = fitMaybe, "pod anti-affinity of pod "+name(q.pod.Namespace, q.pod.Name)+" with a namespaceSelector"
						}
					}
				}
			}
		}
	}
	for k := range w.spread {
		sw := &w.spread[k]
		if _, ok := n.Labels[corev1.LabelHostname]; !ok {
			return fitNo, "no " + corev1.LabelHostname + " label (topology spread)", ""
		}
		self := 0
		if sw.self {
			self = 1
		}
		if skew := p.spreadCount(sw, s, i) + self - mins[k]; skew > int(sw.c.MaxSkew) {
			return fitNo, fmt.Sprintf("topology spread (maxSkew %d)", sw.c.MaxSkew), ""
		}
	}
	return out, maybe, reason
}

// podsWith iterates the pods of node i in lists, then the replacements
// placed there in s.
func (p *placer) podsWith(i int, s *placement, lists [][]*view.Pod) func(yield func(*view.Pod) bool) {
	return func(yield func(*view.Pod) bool) {
		for _, l := range [][]*view.Pod{lists[i], s.placed[i]} {
			for _, q := range l {
				if !yield(q) {
					return
				}
			}
		}
	}
}

// spreadCount is how many pods sw's selector matches on node i in state s:
// the snapshot's, less those gone from the drained nodes, plus the
// replacements placed there.
func (p *placer) spreadCount(sw *spreadWant, s *placement, i int) int {
	if !sw.dom.eligible.nodes[i] {
		return 0
	}
	n := sw.dom.counts[i]
	match := func(q *view.Pod) bool {
		return q.Namespace == sw.ns && q.DeletionTimestamp == nil && sw.sel.Matches(labels.Set(q.Labels))
	}
	var gone []*view.Pod
	switch {
	case i == s.drained:
		gone = s.gone
	case s.set != nil && s.set[i]:
		gone = s.goneAt[i]
	}
	for _, q := range gone {
		if match(q) {
			n--
		}
	}
	for _, q := range s.placed[i] {
		if match(q) {
			n++
		}
	}
	return n
}

// spreadMin is the smallest count of matching pods over sw's eligible nodes
// in state s (0 when fewer domains than minDomains). The drained nodes are
// cordoned: under nodeTaintsPolicy Honor they are no domains unless the pod
// tolerates the cordon.
func (p *placer) spreadMin(sw *spreadWant, s *placement) int {
	d := sw.dom
	el := d.eligible.nodes
	n := d.eligible.n
	drainedOut, setOut := false, false
	if s.drained >= 0 && el[s.drained] && sw.honorTaints {
		if tolerates(sw.tolerations, &unschedulableTaint) != fitYes {
			drainedOut = true
			n--
		}
	}
	if s.set != nil && sw.honorTaints && tolerates(sw.tolerations, &unschedulableTaint) != fitYes {
		setOut = true
		for _, i := range s.setNodes {
			if el[i] {
				n--
			}
		}
	}
	if c := sw.c.MinDomains; c != nil && int32(n) < *c {
		return 0
	}
	// The nodes whose count may not be 0: those with matching pods, those
	// replacements were placed on, and the drained nodes.
	least, touched := -1, 0
	visit := func(i int) {
		touched++
		if c := p.spreadCount(sw, s, i); least < 0 || c < least {
			least = c
		}
	}
	for i := range d.counts {
		if !(drainedOut && i == s.drained) && !(setOut && s.set[i]) {
			visit(i)
		}
	}
	for i := range s.placed {
		if _, counted := d.counts[i]; el[i] && !counted {
			visit(i)
		}
	}
	if s.drained >= 0 && el[s.drained] && !drainedOut {
		if _, counted := d.counts[s.drained]; !counted {
			visit(s.drained)
		}
	}
	if s.set != nil && !setOut {
		for _, i := range s.setNodes {
			if _, counted := d.counts[i]; el[i] && !counted {
				visit(i)
			}
		}
	}
	if n > touched {
		least = 0 // an eligible node no matching pod is on
	}
	return max(least, 0)
}

// leaving is a pod a drain evicts, as placement takes it: of node node, its
// replacement placed when placed (as item.placed), else it only leaves.
// volumes are those of its volumes that may tie it to some nodes
// (index.volumeTopology, of the analysed snapshot), when placed.
type leaving struct {
	pod     *view.Pod
	top     *owner
	node    int
	placed  bool
	volumes []string
}

// leavingOf is pod, with owner top, as placement takes it (its node yet to
// be set): its replacement placed when placed.
func (x *index) leavingOf(pod *view.Pod, top *owner, placed bool) leaving {
	l := leaving{pod: pod, top: top, placed: placed}
	if placed {
		l.volumes = x.volumeTopology(pod)
	}
	return l
}

// placeWords are the words of placement's causes: a node's drain (the
// forecast) and a set's (Capacity) say where replacements may go
// differently.
type placeWords struct {
	// elsewhere, another: where a replacement may go ("any other node",
	// "another node").
	elsewhere, another string
	// order is the order of first fit.
	order string
	// noCandidate: no node to judge at all; candidates: the nodes judged,
	// after their count.
	noCandidate, candidates string
	// model is what does not model a constraint.
	model string
}

var forecastWords = placeWords{elsewhere: "any other node", another: "another node", order: "in pod order",
	noCandidate: "no other schedulable node in the snapshot", candidates: "other schedulable nodes", model: "the forecast"}

// placeRun places, in pl, the replacements of the n pods at gives, one
// after the other, each on the first node (by name) that takes it given
// those placed before (first fit), a pod counting as gone from its node
// from its own turn on. It adds the causes of those that cannot be placed
// or judged to cs: shortfall says which resource the candidates lack in
// total for demand, the requests of every replacement ("" when none, or
// when that cannot be told).
func (p *placer) placeRun(pl *placement, n int, at func(int) leaving, words *placeWords, shortfall func(demand view.Resources, eligible []bool) string, cs *causes) {
	type failed struct {
		pod *view.Pod
		top *owner
		why string
	}
	var (
		firstFit []leaving
		demand   view.Resources
		verdicts = map[string][]failed{} // by reason and workload
		order    []string
	)
	note := func(reason string, l leaving, why string) {
		key := reason + "\x00" + string(l.top.meta.UID)
		if _, ok := verdicts[key]; !ok {
			order = append(order, key)
		}
		verdicts[key] = append(verdicts[key], failed{l.pod, l.top, why})
	}
	for k := range n {
		l := at(k)
		pl.leave(l.node, l.pod)
		if !l.placed {
			continue
		}
		w := &pl.want
		p.wantOf(&l, w)
		addResources(&demand, w.req)
		v := p.find(w, pl)
		switch v.fit {
		case fitYes:
			pl.place(v.node, w)
			continue
		case fitMaybe:
			note(v.reason, l, v.why)
			continue
		}
		// Not placed after the others: would it be alone?
		switch v := p.find(w, pl.alone(l.node, l.pod)); v.fit {
		case fitYes:
			firstFit = append(firstFit, l)
		case fitMaybe:
			note(v.reason, l, v.why)
		default:
			note(ReasonUnschedulable, l, unschedulableWhy(v.rejected, words))
		}
	}
	if len(firstFit) > 0 {
		// The room that counts is on the nodes these replacements may go
		// to (their node selection and taints), not on every node.
		eligible := make([]bool, len(p.nodes))
		for _, l := range firstFit {
			w := &pl.want
			p.wantOf(&l, w)
			for i, node := range p.nodes {
				eligible[i] = eligible[i] || (w.selects(node) && w.tolerated(node))
			}
		}
		if short := shortfall(demand, eligible); short != "" {
			for _, l := range firstFit {
				note(ReasonNoCapacity, l, short)
			}
		} else {
			for _, l := range firstFit {
				note(ReasonFirstFit, l, "")
			}
		}
	}
	for _, key := range order {
		fs := verdicts[key]
		reason, _, _ := strings.Cut(key, "\x00")
		first, top := fs[0].pod, fs[0].top
		subject := Subject{Kind: top.kind, Namespace: top.meta.Namespace, Name: top.meta.Name, UID: top.meta.UID}
		which := "the replacement of pod " + first.Name
		if len(fs) > 1 {
			which += fmt.Sprintf(" (and of %d more of %s %s)", len(fs)-1, top.kind, top.meta.Name)
		}
		switch reason {
		case ReasonUnschedulable:
			cs.add(VerdictNever, reason, subject, "%s cannot run on %s: %s", which, words.elsewhere, fs[0].why)
		case ReasonNoCapacity:
			cs.add(VerdictNever, reason, subject, "%s does not fit: %s", which, fs[0].why)
		case ReasonFirstFit:
			cs.add(VerdictUnknown, reason, subject, "%s fits on %s alone, but not after the replacements placed before it (first fit, %s); another placement may exist", which, words.another, words.order)
		case ReasonNodeStatus:
			cs.add(VerdictUnknown, reason, subject, "%s: %s, so whether it fits there cannot be judged", which, fs[0].why)
		default:
			cs.add(VerdictUnknown, reason, subject, "%s: %s does not model %s", which, words.model, fs[0].why)
		}
	}
}

// free sums, over the schedulable nodes pl does not drain (of those
// eligible marks, when it is not nil), what is free on each (allocatable
// less the requests of its pods, at least 0): nodes is how many they are,
// known false when one has no status.allocatable.
func (p *placer) free(pl *placement, eligible []bool) (free view.Resources, nodes int, known bool) {
	known = true
	for i, n := range p.nodes {
		if n.Spec.Unschedulable || pl.drains(i) || (eligible != nil && !eligible[i]) {
			continue
		}
		nodes++
		a := n.Status.Allocatable
		if a == nil {
			known = false
			continue
		}
		u := p.used[i]
		free.MilliCPU += max(a.MilliCPU-u.MilliCPU, 0)
		free.Memory += max(a.Memory-u.Memory, 0)
		free.EphemeralStorage += max(a.EphemeralStorage-u.EphemeralStorage, 0)
		free.Pods += max(a.Pods-u.Pods, 0)
	}
	return free, nodes, known
}

// short is the first resource of which demand exceeds free: "cpu",
// "memory", "ephemeral-storage" or "pods"; "" when none.
func short(demand, free view.Resources) string {
	switch {
	case demand.MilliCPU > free.MilliCPU:
		return "cpu"
	case demand.Memory > free.Memory:
		return "memory"
	case demand.EphemeralStorage > free.EphemeralStorage:
		return "ephemeral-storage"
	case demand.Pods > free.Pods:
		return "pods"
	}
	return ""
}

// unschedulableWhy sums up rejections: "none of the 3 other schedulable
// nodes takes it (2 nodes: insufficient cpu; 1 node: taint ... not
// tolerated)", the most common first, in words' terms.
func unschedulableWhy(rejected map[string]int, words *placeWords) string {
	if len(rejected) == 0 {
		return words.noCandidate
	}
	type kv struct {
		why string
		n   int
	}
	var all []kv
	total := 0
	for why, n := range rejected {
		all = append(all, kv{why, n})
		total += n
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Or(b.n-a.n, strings.Compare(a.why, b.why)) })
	parts := make([]string, 0, len(all))
	for _, r := range all {
		unit := "nodes"
		if r.n == 1 {
			unit = "node"
		}
		parts = append(parts, strconv.Itoa(r.n)+" "+unit+": "+r.why)
	}
	return fmt.Sprintf("none of the %d %s takes it (%s)", total, words.candidates, strings.Join(parts, "; "))
}
