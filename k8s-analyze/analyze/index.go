package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// index holds the snapshot's objects keyed the ways the checks look them up,
// built once so that no check rescans all pods or PDBs.
type index struct {
	nodes map[string]*view.Node
	pods  []view.Pod
	// chains are the owner chains of pods, by index in pods.
	chains []chain
	// podsByNode are indices in pods, sorted by namespace and name.
	podsByNode map[string][]int
	podsByNS   map[string][]*view.Pod
	pdbsByNS   map[string][]*pdbInfo
	// pdbCandidates narrows, per namespace, the PDBs that may select a pod.
	pdbCandidates map[string]*candidates
	owners        map[objKey]*owner
	pvcs          map[objKey]*view.PersistentVolumeClaim
	pvs           map[string]*view.PersistentVolume
	// readyByTop counts Ready, running pods per top controller UID, over
	// every node.
	readyByTop map[types.UID]int
	// hpas are the HorizontalPodAutoscalers by the kind, namespace and
	// name of the object they scale.
	hpas map[objKey][]*view.HorizontalPodAutoscaler
}

type objKey struct{ kind, namespace, name string }

// owner is a controller object a pod's owner chain can go through.
type owner struct {
	kind string
	meta *view.ObjectMeta
	// scalable owners have replicas and readyReplicas.
	scalable      bool
	replicas      int32
	readyReplicas int32
}

// pdbInfo is a PDB with its selector parsed once.
type pdbInfo struct {
	pdb    *view.PodDisruptionBudget
	sel    labels.Selector // nil when the selector is nil or invalid: matches nothing
	selErr error
	// whole is how many pods it selects once their workloads are whole
	// (wholePods), made once.
	wholeOnce sync.Once
	whole     int
}

func (p *pdbInfo) matches(pod *view.Pod) bool {
	return p.sel != nil && p.sel.Matches(labels.Set(pod.Labels))
}

// wholePods is how many pods info's budget selects once their workloads are
// whole: the replicas of each controller with replicas (a ReplicaSet, a
// StatefulSet) of the pods it selects, plus the pods of any other. An
// integer minAvailable is judged against the pods there are
// (status.expectedPods), which dip while a pod is being replaced.
func (x *index) wholePods(info *pdbInfo) int {
	info.wholeOnce.Do(func() {
		counted := map[*owner]bool{}
		for _, p := range x.podsByNS[info.pdb.Namespace] {
			if !info.matches(p) {
				continue
			}
			var o *owner
			for _, r := range p.OwnerReferences {
				if r.Controller != nil && *r.Controller {
					o = x.owners[objKey{r.Kind, p.Namespace, r.Name}]
				}
			}
			switch {
			case o == nil || !o.scalable:
				info.whole++
			case !counted[o]:
				counted[o] = true
				info.whole += int(o.replicas)
			}
		}
	})
	return info.whole
}

// ownerGroup is the API group of a controller kind the snapshot holds.
func ownerGroup(kind string) (group string, known bool) {
	switch kind {
	case "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet":
		return "apps", true
	case "Job", "CronJob":
		return "batch", true
	case "Node":
		return "", true
	}
	return "", false
}

// validate checks what the analysis relies on: every object has a UID, no
// UID appears twice, no name appears twice within a kind and namespace, and
// every pod's node is in the snapshot (for a whole-cluster snapshot) or every
// scoped node is (for a node-scoped one).
func validate(s *view.Snapshot) error {
	lists := []objList{
		{"nodes", "Node", len(s.Nodes), func(i int) *view.ObjectMeta { return &s.Nodes[i].ObjectMeta }},
		{"pods", "Pod", len(s.Pods), func(i int) *view.ObjectMeta { return &s.Pods[i].ObjectMeta }},
		{"replicaSets", "ReplicaSet", len(s.ReplicaSets), func(i int) *view.ObjectMeta { return &s.ReplicaSets[i].ObjectMeta }},
		{"deployments", "Deployment", len(s.Deployments), func(i int) *view.ObjectMeta { return &s.Deployments[i].ObjectMeta }},
		{"statefulSets", "StatefulSet", len(s.StatefulSets), func(i int) *view.ObjectMeta { return &s.StatefulSets[i].ObjectMeta }},
		{"daemonSets", "DaemonSet", len(s.DaemonSets), func(i int) *view.ObjectMeta { return &s.DaemonSets[i].ObjectMeta }},
		{"jobs", "Job", len(s.Jobs), func(i int) *view.ObjectMeta { return &s.Jobs[i].ObjectMeta }},
		{"cronJobs", "CronJob", len(s.CronJobs), func(i int) *view.ObjectMeta { return &s.CronJobs[i].ObjectMeta }},
		{"podDisruptionBudgets", "PodDisruptionBudget", len(s.PodDisruptionBudgets), func(i int) *view.ObjectMeta { return &s.PodDisruptionBudgets[i].ObjectMeta }},
		{"persistentVolumeClaims", "PersistentVolumeClaim", len(s.PersistentVolumeClaims), func(i int) *view.ObjectMeta { return &s.PersistentVolumeClaims[i].ObjectMeta }},
		{"persistentVolumes", "PersistentVolume", len(s.PersistentVolumes), func(i int) *view.ObjectMeta { return &s.PersistentVolumes[i].ObjectMeta }},
		{"storageClasses", "StorageClass", len(s.StorageClasses), func(i int) *view.ObjectMeta { return &s.StorageClasses[i].ObjectMeta }},
		{"horizontalPodAutoscalers", "HorizontalPodAutoscaler", len(s.HorizontalPodAutoscalers), func(i int) *view.ObjectMeta { return &s.HorizontalPodAutoscalers[i].ObjectMeta }},
		{"volumeAttachments", "VolumeAttachment", len(s.VolumeAttachments), func(i int) *view.ObjectMeta { return &s.VolumeAttachments[i].ObjectMeta }},
		{"csiDrivers", "CSIDriver", len(s.CSIDrivers), func(i int) *view.ObjectMeta { return &s.CSIDrivers[i].ObjectMeta }},
		{"csiNodes", "CSINode", len(s.CSINodes), func(i int) *view.ObjectMeta { return &s.CSINodes[i].ObjectMeta }},
		{"namespaces", "Namespace", len(s.Namespaces), func(i int) *view.ObjectMeta { return &s.Namespaces[i].ObjectMeta }},
	}
	total := 0
	for _, l := range lists {
		total += l.n
	}
	// Objects are numbered across the lists, in order; the maps hold those
	// numbers (small), and where turns one back into a place for errors.
	where := func(seq int) place {
		for _, l := range lists {
			if seq < l.n {
				return place{l.list, seq, l.meta(seq)}
			}
			seq -= l.n
		}
		panic("object number out of range")
	}
	uids := make(map[types.UID]int, total)
	names := make(map[objKey]int, total)
	seq := 0
	for _, l := range lists {
		for i := range l.n {
			m := l.meta(i)
			if m.Name == "" {
				return fmt.Errorf("%s[%d]: metadata.name is missing", l.list, i)
			}
			if m.UID == "" {
				return fmt.Errorf("%s: metadata.uid is missing", where(seq))
			}
			if prev, dup := uids[m.UID]; dup {
				return fmt.Errorf("duplicate uid %q: %s and %s", m.UID, where(prev), where(seq))
			}
			uids[m.UID] = seq
			k := objKey{l.kind, m.Namespace, m.Name}
			if prev, dup := names[k]; dup {
				return fmt.Errorf("duplicate %s %s: %s and %s", l.kind, name(m.Namespace, m.Name), where(prev), where(seq))
			}
			names[k] = seq
			seq++
		}
	}
	nodes := make(map[string]bool, len(s.Nodes))
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = true
	}
	if scope := s.Metadata.Scope.Nodes; len(scope) > 0 {
		for _, n := range scope {
			if !nodes[n] {
				return fmt.Errorf("metadata.scope.nodes names node %q, which the snapshot does not hold", n)
			}
		}
		return nil
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			return fmt.Errorf("pods[%d] %s is on node %q, which the snapshot does not hold", i, name(p.Namespace, p.Name), p.Spec.NodeName)
		}
	}
	return nil
}

// objList is one list of a snapshot, for validate.
type objList struct {
	list, kind string
	n          int
	meta       func(int) *view.ObjectMeta
}

// place is where an object is in the snapshot, for errors.
type place struct {
	list string
	i    int
	m    *view.ObjectMeta
}

func (p place) String() string {
	return fmt.Sprintf("%s[%d] %s", p.list, p.i, name(p.m.Namespace, p.m.Name))
}

func name(namespace, n string) string {
	if namespace == "" {
		return n
	}
	return namespace + "/" + n
}

func newIndex(s *view.Snapshot) *index {
	x := &index{
		nodes:         make(map[string]*view.Node, len(s.Nodes)),
		pods:          s.Pods,
		podsByNode:    make(map[string][]int, len(s.Nodes)),
		podsByNS:      podsByNamespace(s.Pods),
		pdbsByNS:      make(map[string][]*pdbInfo),
		pdbCandidates: make(map[string]*candidates),
		owners:        make(map[objKey]*owner, len(s.ReplicaSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.DaemonSets)+len(s.Jobs)+len(s.CronJobs)+len(s.Nodes)),
		pvcs:          make(map[objKey]*view.PersistentVolumeClaim, len(s.PersistentVolumeClaims)),
		pvs:           make(map[string]*view.PersistentVolume, len(s.PersistentVolumes)),
		readyByTop:    make(map[types.UID]int),
		hpas:          make(map[objKey][]*view.HorizontalPodAutoscaler),
	}
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		t := h.Spec.ScaleTargetRef
		k := objKey{t.Kind, h.Namespace, t.Name}
		x.hpas[k] = append(x.hpas[k], h)
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		x.nodes[n.Name] = n
		x.owners[objKey{"Node", "", n.Name}] = &owner{kind: "Node", meta: &n.ObjectMeta}
	}
	add := func(kind string, m *view.ObjectMeta, replicas *int32, ready int32, scalable bool) {
		o := &owner{kind: kind, meta: m, scalable: scalable, readyReplicas: ready, replicas: 1}
		if replicas != nil {
			o.replicas = *replicas
		}
		x.owners[objKey{kind, m.Namespace, m.Name}] = o
	}
	for i := range s.ReplicaSets {
		r := &s.ReplicaSets[i]
		add("ReplicaSet", &r.ObjectMeta, r.Spec.Replicas, r.Status.ReadyReplicas, true)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		add("Deployment", &d.ObjectMeta, d.Spec.Replicas, d.Status.ReadyReplicas, true)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		add("StatefulSet", &d.ObjectMeta, d.Spec.Replicas, d.Status.ReadyReplicas, true)
	}
	for i := range s.DaemonSets {
		add("DaemonSet", &s.DaemonSets[i].ObjectMeta, nil, 0, false)
	}
	for i := range s.Jobs {
		add("Job", &s.Jobs[i].ObjectMeta, nil, 0, false)
	}
	for i := range s.CronJobs {
		add("CronJob", &s.CronJobs[i].ObjectMeta, nil, 0, false)
	}
	for i := range s.PodDisruptionBudgets {
		p := &s.PodDisruptionBudgets[i]
		info := &pdbInfo{pdb: p}
		if p.Spec.Selector != nil {
			info.sel, info.selErr = metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if info.selErr != nil {
				info.sel = nil
			}
		}
		x.pdbsByNS[p.Namespace] = append(x.pdbsByNS[p.Namespace], info)
		c := x.pdbCandidates[p.Namespace]
		if c == nil {
			c = &candidates{byLabel: map[labelPair][]int{}}
			x.pdbCandidates[p.Namespace] = c
		}
		c.add(info)
	}
	for i := range s.PersistentVolumeClaims {
		c := &s.PersistentVolumeClaims[i]
		x.pvcs[objKey{"PersistentVolumeClaim", c.Namespace, c.Name}] = c
	}
	for i := range s.PersistentVolumes {
		x.pvs[s.PersistentVolumes[i].Name] = &s.PersistentVolumes[i]
	}
	// Owner chains, on every core. A chain depends only on the pod's
	// namespace and controller reference: the pods of one controller share
	// it (a worker follows each chain once).
	x.chains = make([]chain, len(s.Pods))
	var next atomic.Int64
	const batch = 1024
	parallel.Do(runtime.GOMAXPROCS(0), func(int) {
		followed := map[chainStart]chain{}
		for lo := int(next.Add(batch) - batch); lo < len(s.Pods); lo = int(next.Add(batch) - batch) {
			for i := lo; i < min(lo+batch, len(s.Pods)); i++ {
				p := &s.Pods[i]
				ref := controllerOf(p.OwnerReferences)
				if ref == nil {
					continue
				}
				start := chainStart{p.Namespace, ref.APIVersion, ref.Kind, ref.Name, ref.UID}
				c, ok := followed[start]
				if !ok {
					c.hops, c.top = x.chain(p.Namespace, ref)
					followed[start] = c
				}
				x.chains[i] = c
			}
		}
	})
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName != "" {
			x.podsByNode[p.Spec.NodeName] = append(x.podsByNode[p.Spec.NodeName], i)
		}
		if top := x.chains[i].top; top != nil && servingReady(p) {
			x.readyByTop[top.meta.UID]++
		}
	}
	for _, pods := range x.podsByNode {
		slices.SortFunc(pods, func(a, b int) int {
			pa, pb := &s.Pods[a], &s.Pods[b]
			return cmp.Or(strings.Compare(pa.Namespace, pb.Namespace), strings.Compare(pa.Name, pb.Name))
		})
	}
	return x
}

// podsByNamespace are pods by namespace, in their order.
func podsByNamespace(pods []view.Pod) map[string][]*view.Pod {
	out := make(map[string][]*view.Pod)
	for i := range pods {
		p := &pods[i]
		out[p.Namespace] = append(out[p.Namespace], p)
	}
	return out
}

// servingReady: running, Ready and not being deleted.
func servingReady(p *view.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podReady(p)
}

// controllerOf is the owner reference with controller: true, if any.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// maxHops bounds owner chains (Pod -> ReplicaSet -> Deployment is 2).
const maxHops = 8

// chainStart is what a pod's owner chain depends on: its namespace and
// controller reference.
type chainStart struct {
	namespace, apiVersion, kind, name string
	uid                               types.UID
}

// chain follows the controller references upwards from ref, the controller
// of a pod of namespace, verifying the UID at every hop. top is the last
// verified owner.
func (x *index) chain(namespace string, ref *metav1.OwnerReference) (out []OwnerHop, top *owner) {
	for n := 0; ref != nil && n < maxHops; n++ {
		hop := OwnerHop{Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
		group, _, versioned := strings.Cut(ref.APIVersion, "/")
		if !versioned {
			group = ""
		}
		want, known := ownerGroup(ref.Kind)
		var o *owner
		switch {
		case !known || want != group:
			hop.Problem = "unknown-kind"
		default:
			ns := namespace
			if ref.Kind == "Node" {
				ns = ""
			}
			o = x.owners[objKey{ref.Kind, ns, ref.Name}]
			switch {
			case o == nil:
				hop.Problem = "missing"
			case o.meta.UID != ref.UID:
				hop.Problem = "uid-mismatch"
				o = nil
			default:
				hop.Verified = true
			}
		}
		out = append(out, hop)
		if o == nil {
			break
		}
		top = o
		ref = controllerOf(o.meta.OwnerReferences)
	}
	return out, top
}

// candidates are the PDBs of a namespace, indexed by one label pair their
// selector requires (matchLabels), so that a pod is matched only against
// the PDBs that can select it.
type candidates struct {
	all     []*pdbInfo
	byLabel map[labelPair][]int // indices in all
	keys    []string            // the label keys of byLabel, sorted
	rest    []int               // selectors without matchLabels
}

type labelPair struct{ key, value string }

func (c *candidates) add(info *pdbInfo) {
	i := len(c.all)
	c.all = append(c.all, info)
	var sel map[string]string
	if info.sel != nil {
		sel = info.pdb.Spec.Selector.MatchLabels
	}
	if len(sel) == 0 {
		c.rest = append(c.rest, i)
		return
	}
	// Every pair is required: any one narrows exactly. The smallest key
	// keeps the choice deterministic.
	k := slices.Min(slices.Collect(maps.Keys(sel)))
	pair := labelPair{k, sel[k]}
	c.byLabel[pair] = append(c.byLabel[pair], i)
	if j, found := slices.BinarySearch(c.keys, k); !found {
		c.keys = slices.Insert(c.keys, j, k)
	}
}

// matching are the PDBs of p's namespace that select it, in snapshot order.
func (x *index) matching(p *view.Pod) []*pdbInfo {
	c := x.pdbCandidates[p.Namespace]
	if c == nil {
		return nil
	}
	var buf [8]int
	idx := append(buf[:0], c.rest...)
	for _, k := range c.keys {
		if v, ok := p.Labels[k]; ok {
			idx = append(idx, c.byLabel[labelPair{k, v}]...)
		}
	}
	slices.Sort(idx)
	var out []*pdbInfo
	for j, i := range idx {
		if j > 0 && idx[j-1] == i {
			continue
		}
		if info := c.all[i]; info.matches(p) {
			out = append(out, info)
		}
	}
	return out
}

// selectsAny reports whether info selects a pod of the snapshot.
func (x *index) selectsAny(info *pdbInfo) bool {
	if info.sel == nil {
		return false
	}
	if info.pdb.Status.ExpectedPods > 0 {
		return true
	}
	for _, p := range x.podsByNS[info.pdb.Namespace] {
		if info.matches(p) {
			return true
		}
	}
	return false
}
