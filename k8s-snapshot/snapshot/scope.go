package snapshot

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// ref names an owner object: API group, kind, namespace, name.
type ref struct{ group, kind, namespace, name string }

// replicaKinds are the owners whose other pods are replicas of a pod: their
// pods on other nodes belong in a node-scoped snapshot. DaemonSets (one pod
// per node, never a replica elsewhere) and CronJobs (other runs) are not.
var replicaKinds = map[[2]string]bool{
	{"apps", "ReplicaSet"}: true, {"apps", "Deployment"}: true,
	{"apps", "StatefulSet"}: true, {"batch", "Job"}: true,
}

// owner is one object that may own pods or other owners.
type owner struct {
	refs     []metav1.OwnerReference
	selector *metav1.LabelSelector // pod selector of a replica kind
}

// owners indexes every owner object of s by ref.
func owners(s *Snapshot) map[ref]owner {
	idx := map[ref]owner{}
	add := func(group, kind string, m metav1.ObjectMeta, sel *metav1.LabelSelector) {
		idx[ref{group, kind, m.Namespace, m.Name}] = owner{refs: m.OwnerReferences, selector: sel}
	}
	for i := range s.ReplicaSets {
		o := &s.ReplicaSets[i]
		add("apps", "ReplicaSet", o.ObjectMeta, o.Spec.Selector)
	}
	for i := range s.Deployments {
		o := &s.Deployments[i]
		add("apps", "Deployment", o.ObjectMeta, o.Spec.Selector)
	}
	for i := range s.StatefulSets {
		o := &s.StatefulSets[i]
		add("apps", "StatefulSet", o.ObjectMeta, o.Spec.Selector)
	}
	for i := range s.DaemonSets {
		add("apps", "DaemonSet", s.DaemonSets[i].ObjectMeta, nil)
	}
	for i := range s.Jobs {
		o := &s.Jobs[i]
		add("batch", "Job", o.ObjectMeta, o.Spec.Selector)
	}
	for i := range s.CronJobs {
		add("batch", "CronJob", s.CronJobs[i].ObjectMeta, nil)
	}
	return idx
}

// chain adds to into every owner of an object in namespace with refs, hop
// by hop, as far as the owners are in idx. Owners are matched by name: a
// UID mismatch is for the analysis to find, so the impostor is kept.
func chain(idx map[ref]owner, namespace string, refs []metav1.OwnerReference, into map[ref]bool) {
	for _, r := range refs {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			continue
		}
		k := ref{gv.Group, r.Kind, namespace, r.Name}
		o, ok := idx[k]
		if !ok || into[k] {
			continue
		}
		into[k] = true
		chain(idx, namespace, o.refs, into)
	}
}

// selector is a PDB's or owner's pod selector; an invalid one selects
// nothing, as the API does.
func selector(sel *metav1.LabelSelector) labels.Selector {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

// closure is what ForNodes and PodQueries share: the pods on the nodes,
// their namespaces and owners, and the PDB selectors of those namespaces.
type closure struct {
	idx        map[ref]owner
	nodes      map[string]bool
	namespaces map[string]bool
	owners     map[ref]bool                 // the owner chains of the pods on the nodes
	pdbs       map[string][]labels.Selector // of PDBs that select a pod on the nodes
}

func newClosure(s *Snapshot, names []string) *closure {
	c := &closure{
		idx:        owners(s),
		nodes:      map[string]bool{},
		namespaces: map[string]bool{},
		owners:     map[ref]bool{},
		pdbs:       map[string][]labels.Selector{},
	}
	for _, n := range names {
		c.nodes[n] = true
	}
	var here []*corev1.Pod
	for i := range s.Pods {
		p := &s.Pods[i]
		if c.nodes[p.Spec.NodeName] {
			here = append(here, p)
			c.namespaces[p.Namespace] = true
			chain(c.idx, p.Namespace, p.OwnerReferences, c.owners)
		}
	}
	for i := range s.PodDisruptionBudgets {
		pdb := &s.PodDisruptionBudgets[i]
		if !c.namespaces[pdb.Namespace] {
			continue
		}
		sel := selector(pdb.Spec.Selector)
		if slices.ContainsFunc(here, func(p *corev1.Pod) bool { return p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels)) }) {
			c.pdbs[pdb.Namespace] = append(c.pdbs[pdb.Namespace], sel)
		}
	}
	return c
}

// wants says whether pod belongs in the snapshot: it runs on one of the
// nodes, or is a replica of the same owner as a pod that does, or a PDB
// selects both.
func (c *closure) wants(pod *corev1.Pod) bool {
	if c.nodes[pod.Spec.NodeName] {
		return true
	}
	if !c.namespaces[pod.Namespace] {
		return false
	}
	set := labels.Set(pod.Labels)
	for _, sel := range c.pdbs[pod.Namespace] {
		if sel.Matches(set) {
			return true
		}
	}
	mine := map[ref]bool{}
	chain(c.idx, pod.Namespace, pod.OwnerReferences, mine)
	for k := range mine {
		if c.owners[k] && replicaKinds[[2]string{k.group, k.kind}] {
			return true
		}
	}
	return false
}

// PodQuery is one list of pods: a namespace and a label selector ("" is
// every pod of the namespace).
type PodQuery struct {
	Namespace string
	Selector  string
}

// PodQueries are the pod lists that find, given s with at least the named
// nodes, the pods on them and every owner and PDB, the other pods that
// ForNodes keeps: the pods selected by the replica owners of the pods on
// the nodes and by the PDBs that select one of those. Queries that another query of the same
// namespace covers are left out, and one-key selectors of a namespace
// ("app=a", "app=b") are merged into one ("app in (a,b)").
func PodQueries(s *Snapshot, names []string) []PodQuery {
	c := newClosure(s, names)
	sels := map[PodQuery]labels.Selector{}
	add := func(namespace string, sel labels.Selector) {
		if !isNothing(sel) {
			sels[PodQuery{namespace, sel.String()}] = sel
		}
	}
	for k := range c.owners {
		if replicaKinds[[2]string{k.group, k.kind}] && !c.coveredByOwner(k) {
			add(k.namespace, selector(c.idx[k].selector))
		}
	}
	for ns, sels := range c.pdbs {
		for _, sel := range sels {
			add(ns, sel)
		}
	}
	everything := map[string]bool{}
	for q := range sels {
		if q.Selector == "" {
			everything[q.Namespace] = true
		}
	}
	var out []PodQuery
	type set struct {
		queries []PodQuery
		values  []string
	}
	sets := map[[2]string]*set{} // namespace, key -> the one-key selectors
	for q, sel := range sels {
		switch key, values, ok := oneKey(sel); {
		case everything[q.Namespace] && q.Selector != "":
		case ok:
			k := [2]string{q.Namespace, key}
			if sets[k] == nil {
				sets[k] = &set{}
			}
			sets[k].queries = append(sets[k].queries, q)
			sets[k].values = append(sets[k].values, values...)
		default:
			out = append(out, q)
		}
	}
	for k, set := range sets {
		req, err := labels.NewRequirement(k[1], selection.In, slices.Compact(slices.Sorted(slices.Values(set.values))))
		if len(set.queries) == 1 || err != nil {
			out = append(out, set.queries...)
			continue
		}
		out = append(out, PodQuery{k[0], labels.NewSelector().Add(*req).String()})
	}
	slices.SortFunc(out, func(a, b PodQuery) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Selector, b.Selector))
	})
	return out
}

// oneKey is the key and values of a selector that is one requirement
// "key=value" or "key in (values)": such selectors of one namespace and key
// are asked for in one list ("key in (all the values)"), the union of what
// they select, so that many owners cost one request.
func oneKey(sel labels.Selector) (key string, values []string, ok bool) {
	reqs, selectable := sel.Requirements()
	if !selectable || len(reqs) != 1 {
		return "", nil, false
	}
	switch r := reqs[0]; r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		return r.Key(), r.Values().List(), true
	}
	return "", nil, false
}

// coveredByOwner is true for a ReplicaSet whose Deployment is among the
// owners: the Deployment's selector is part of the ReplicaSet's, so the
// Deployment's query finds the ReplicaSet's pods too.
func (c *closure) coveredByOwner(k ref) bool {
	if k.group != "apps" || k.kind != "ReplicaSet" {
		return false
	}
	for _, r := range c.idx[k].refs {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err == nil && gv.Group == "apps" && r.Kind == "Deployment" && c.owners[ref{"apps", "Deployment", k.namespace, r.Name}] {
			return true
		}
	}
	return false
}

// isNothing is true for labels.Nothing(), which selects no pod at all.
func isNothing(sel labels.Selector) bool {
	_, ok := sel.Requirements()
	return !ok && !sel.Empty()
}

// ForNodes is the part of s that judging a drain of the named nodes needs,
// and no more:
//
//   - the nodes, and every pod on them in every namespace;
//   - each such pod's owner chain (ReplicaSet -> Deployment, StatefulSet,
//     DaemonSet, Job -> CronJob), matched by name;
//   - every PDB of a namespace that has a pod on the nodes;
//   - the other pods that the pods' ReplicaSets, Deployments, StatefulSets
//     or Jobs own (their replicas elsewhere), or that a PDB selecting a pod
//     on the nodes also selects (the rest of its budget), with their owner
//     chains. Pods that only a PDB covering nothing on the nodes selects
//     are left out: their status counts are in the PDB's status;
//   - the PVCs the pods on the nodes mount (persistentVolumeClaim and
//     ephemeral volumes), their PVs and StorageClasses;
//   - the HPAs whose target is an owner of a pod on the nodes, anywhere in
//     its chain (a Deployment reached through its ReplicaSet too): a surge
//     must not scale what an autoscaler scales;
//   - the VolumeAttachments whose spec.nodeName is one of the nodes, the
//     PVs they name and the PVs of the nodes' status.volumesAttached
//     (matched by CSI driver and volume handle, see CSIVolumeName), and the
//     claims those PVs are bound to: an attachment whose PV or claim is
//     gone has leaked;
//   - the CSIDrivers of the kept PVs, attachments and the nodes' CSINodes
//     (whether a volume attaches), the CSINodes of the nodes, and the
//     Namespaces of the pods on the nodes (drain rules select pods by
//     namespace labels).
//
// A name that is not among s.Nodes is an error ("node X not found"). The
// objects are shared with s, in s's order.
func ForNodes(s *Snapshot, names ...string) (*Snapshot, error) {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if err := MissingNodes(s.Nodes, names); err != nil {
		return nil, err
	}
	c := newClosure(s, names)
	out := New()
	out.Metadata = s.Metadata
	out.Metadata.ResourceVersions = maps.Clone(s.Metadata.ResourceVersions)
	out.Metadata.Scope.Nodes = names

	out.Nodes = keep(s.Nodes, func(n *corev1.Node) bool { return c.nodes[n.Name] })
	out.Pods = keep(s.Pods, c.wants)

	all := maps.Clone(c.owners)
	claims := map[[2]string]bool{}
	for i := range out.Pods {
		p := &out.Pods[i]
		chain(c.idx, p.Namespace, p.OwnerReferences, all)
		if !c.nodes[p.Spec.NodeName] {
			continue
		}
		for _, v := range p.Spec.Volumes {
			switch {
			case v.PersistentVolumeClaim != nil:
				claims[[2]string{p.Namespace, v.PersistentVolumeClaim.ClaimName}] = true
			case v.Ephemeral != nil:
				claims[[2]string{p.Namespace, p.Name + "-" + v.Name}] = true
			}
		}
	}
	owned := func(group, kind string) func(m *metav1.ObjectMeta) bool {
		return func(m *metav1.ObjectMeta) bool { return all[ref{group, kind, m.Namespace, m.Name}] }
	}
	out.ReplicaSets = keepMeta(s.ReplicaSets, owned("apps", "ReplicaSet"))
	out.Deployments = keepMeta(s.Deployments, owned("apps", "Deployment"))
	out.StatefulSets = keepMeta(s.StatefulSets, owned("apps", "StatefulSet"))
	out.DaemonSets = keepMeta(s.DaemonSets, owned("apps", "DaemonSet"))
	out.Jobs = keepMeta(s.Jobs, owned("batch", "Job"))
	out.CronJobs = keepMeta(s.CronJobs, owned("batch", "CronJob"))
	out.PodDisruptionBudgets = keepMeta(s.PodDisruptionBudgets, func(m *metav1.ObjectMeta) bool { return c.namespaces[m.Namespace] })
	out.HorizontalPodAutoscalers = keep(s.HorizontalPodAutoscalers, func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		t := h.Spec.ScaleTargetRef
		gv, err := schema.ParseGroupVersion(t.APIVersion)
		return err == nil && c.owners[ref{gv.Group, t.Kind, h.Namespace, t.Name}]
	})

	out.VolumeAttachments = keep(s.VolumeAttachments, func(va *storagev1.VolumeAttachment) bool { return c.nodes[va.Spec.NodeName] })
	out.CSINodes = keepMeta(s.CSINodes, func(m *metav1.ObjectMeta) bool { return c.nodes[m.Name] })
	out.Namespaces = keepMeta(s.Namespaces, func(m *metav1.ObjectMeta) bool { return c.namespaces[m.Name] })

	// The volumes attached to the nodes, and the claims they are bound to:
	// whether an attachment leaked is judged by them.
	attached, handles := map[string]bool{}, map[[2]string]bool{}
	for i := range out.VolumeAttachments {
		if pv := out.VolumeAttachments[i].Spec.Source.PersistentVolumeName; pv != nil {
			attached[*pv] = true
		}
	}
	for i := range out.Nodes {
		for _, v := range out.Nodes[i].Status.VolumesAttached {
			if driver, handle, ok := CSIVolumeName(string(v.Name)); ok {
				handles[[2]string{driver, handle}] = true
			}
		}
	}
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		if csi := pv.Spec.CSI; attached[pv.Name] || csi != nil && handles[[2]string{csi.Driver, csi.VolumeHandle}] {
			attached[pv.Name] = true
			if r := pv.Spec.ClaimRef; r != nil {
				claims[[2]string{r.Namespace, r.Name}] = true
			}
		}
	}

	out.PersistentVolumeClaims = keep(s.PersistentVolumeClaims, func(pvc *corev1.PersistentVolumeClaim) bool {
		return claims[[2]string{pvc.Namespace, pvc.Name}]
	})
	volumes, classes := attached, map[string]bool{}
	for i := range out.PersistentVolumeClaims {
		pvc := &out.PersistentVolumeClaims[i]
		volumes[pvc.Spec.VolumeName] = volumes[pvc.Spec.VolumeName] || pvc.Spec.VolumeName != ""
		if pvc.Spec.StorageClassName != nil {
			classes[*pvc.Spec.StorageClassName] = true
		}
	}
	out.PersistentVolumes = keep(s.PersistentVolumes, func(pv *corev1.PersistentVolume) bool {
		r := pv.Spec.ClaimRef
		return volumes[pv.Name] || r != nil && claims[[2]string{r.Namespace, r.Name}]
	})
	for i := range out.PersistentVolumes {
		if sc := out.PersistentVolumes[i].Spec.StorageClassName; sc != "" {
			classes[sc] = true
		}
	}
	out.StorageClasses = keepMeta(s.StorageClasses, func(m *metav1.ObjectMeta) bool { return classes[m.Name] })
	// The CSIDrivers of those volumes, attachments and the nodes' plugins:
	// whether a driver's volumes attach is judged by them.
	drivers := map[string]bool{}
	for i := range out.PersistentVolumes {
		if csi := out.PersistentVolumes[i].Spec.CSI; csi != nil {
			drivers[csi.Driver] = true
		}
	}
	for i := range out.VolumeAttachments {
		drivers[out.VolumeAttachments[i].Spec.Attacher] = true
	}
	for i := range out.CSINodes {
		for _, d := range out.CSINodes[i].Spec.Drivers {
			drivers[d.Name] = true
		}
	}
	out.CSIDrivers = keepMeta(s.CSIDrivers, func(m *metav1.ObjectMeta) bool { return drivers[m.Name] })
	return out, nil
}

// keep is the items for which want is true, never nil. Objects are big
// structs: it asks first and copies each kept one once.
func keep[T any](items []T, want func(*T) bool) []T {
	wanted := make([]bool, len(items))
	n := 0
	for i := range items {
		if wanted[i] = want(&items[i]); wanted[i] {
			n++
		}
	}
	out := make([]T, 0, n)
	for i := range items {
		if wanted[i] {
			out = append(out, items[i])
		}
	}
	return out
}

// keepMeta is keep by object metadata.
func keepMeta[T any, PT interface {
	*T
	GetObjectMeta() metav1.Object
}](items []T, want func(*metav1.ObjectMeta) bool) []T {
	return keep(items, func(o *T) bool {
		return want(PT(o).GetObjectMeta().(*metav1.ObjectMeta))
	})
}

// MissingNodes is the error for the first name that is not among nodes.
func MissingNodes(nodes []corev1.Node, names []string) error {
	var missing []string
	for _, name := range names {
		if !slices.ContainsFunc(nodes, func(n corev1.Node) bool { return n.Name == name }) {
			missing = append(missing, name)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("node %s not found", missing[0])
	}
	return fmt.Errorf("nodes %s not found", strings.Join(missing, ", "))
}

// CSIVolumeName splits the name of a CSI volume in a node's
// status.volumesAttached (and volumesInUse), "kubernetes.io/csi/<driver>^<volumeHandle>",
// into its driver and volume handle; ok is false for any other name (an
// in-tree plugin's).
func CSIVolumeName(name string) (driver, handle string, ok bool) {
	rest, found := strings.CutPrefix(name, "kubernetes.io/csi/")
	if !found {
		return "", "", false
	}
	driver, handle, ok = strings.Cut(rest, "^")
	if !ok || driver == "" || handle == "" {
		return "", "", false
	}
	return driver, handle, true
}
