package controller

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/slots"
)

// observe reads what Decide needs of plan p's own node from the informer
// caches: the node, its pods and every object the analysis of its drain
// needs, in the namespaces involved, with the analysis, the surge owners and
// the forecast. It takes no lock (c.slot is not held: the decisions of other
// plans go on meanwhile); shared adds what is shared between plans. A plan
// that is final (and not being deleted: finalize handles that) observes
// nothing but its surges' owners: nothing it decides reads the rest. A read
// error is returned, never replaced by a default.
func (c *Controller) observe(p *api.MaintenancePlan, now time.Time) (drain.Facts, error) {
	c.observing("observe plan " + p.Name)
	f := drain.Facts{Pods: map[types.UID]drain.Pod{}, PDBs: map[string]drain.PDB{}, Workloads: map[api.WorkloadRef]types.UID{}, MaxNodes: c.cfg.MaxNodes}
	node, err := c.nodes.Get(p.Spec.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		node = nil
	case err != nil:
		return f, fmt.Errorf("read node %s: %w", p.Spec.NodeName, err)
	}
	f.Node = node
	if drain.Final(&p.Status) {
		return f, c.surgeOwners(p, &f)
	}

	onNode, err := c.pods.onNode(p.Spec.NodeName)
	if err != nil {
		return f, fmt.Errorf("pods on node %s: %w", p.Spec.NodeName, err)
	}
	namespaces := map[string]bool{}
	for _, pod := range onNode {
		f.Pods[pod.UID] = podFact(pod)
		namespaces[pod.Namespace] = true
	}
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, a := range ep.ActivePods {
			pod, err := c.pods.get(a.Namespace, a.Name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return f, fmt.Errorf("read pod %s/%s: %w", a.Namespace, a.Name, err)
			case pod.UID == a.UID:
				f.Pods[pod.UID] = podFact(pod)
			}
			namespaces[a.Namespace] = true
		}
	}
	for _, w := range p.Spec.Workloads {
		uid, err := c.workloadUID(w)
		if err != nil {
			return f, err
		}
		if uid != "" {
			f.Workloads[w] = uid
		}
	}

	var pdbs []*policyv1.PodDisruptionBudget
	for _, ns := range sortedKeys(namespaces) {
		inNS, err := c.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
		if err != nil {
			return f, fmt.Errorf("list pod disruption budgets in %s: %w", ns, err)
		}
		pdbs = append(pdbs, inNS...)
		for _, b := range inNS {
			disrupted := make(map[string]bool, len(b.Status.DisruptedPods))
			for name := range b.Status.DisruptedPods {
				disrupted[name] = true
			}
			f.PDBs[b.Namespace+"/"+b.Name] = drain.PDB{ResourceVersion: b.ResourceVersion, Generation: b.Generation,
				ObservedGeneration: b.Status.ObservedGeneration, DisruptionsAllowed: b.Status.DisruptionsAllowed,
				CurrentHealthy: b.Status.CurrentHealthy, DesiredHealthy: b.Status.DesiredHealthy, ExpectedPods: b.Status.ExpectedPods, DisruptedPods: disrupted}
		}
	}
	if node != nil {
		s, err := c.snapshot(node, onNode, pdbs, now)
		if err != nil {
			return f, err
		}
		if f.Analysis, err = c.analysis(p, s, now); err != nil {
			return f, err
		}
		f.Attachments, f.Groups = analyze.NodeVolumes(s, node.Name, drain.Rules(p.Spec.DrainRules))
		if err := c.surgeOwners(p, &f); err != nil {
			return f, err
		}
		// A right checked live (bounded by the request timeout), cached:
		// observe runs outside the decisions' shared lock.
		if err := c.overrideFacts(context.Background(), p, &f); err != nil {
			return f, err
		}
		if !drain.Final(&p.Status) && p.DeletionTimestamp == nil && !p.Spec.Release {
			if f.Forecast, f.ForecastAt, err = c.forecast(p, s, onNode, pdbs, now); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// shared adds to f what plan p shares with the other plans: the slots
// they hold, their evictions in flight and throttles, the pause switch and
// the campaign's breaker, the wave and the rivals for the node. It reads
// the newest version of every plan this controller knows, those decided
// and not yet written included, so c.slot is held: it is cheap (no
// snapshot, no analysis), and the lock's hold time is measured.
func (c *Controller) shared(p *api.MaintenancePlan, f *drain.Facts) error {
	plans, err := c.plans.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list plans: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	byName := c.newestOf(plans)
	// The maintenance slots the other plans take, cluster-wide.
	f.Holders = len(slots.Others(c.held(byName), p))
	f.ThrottledUntil = c.throttledUntil
	f.Pause = c.pauseFacts()
	if m := c.campaignOf(p); m != nil {
		// A campaign that ended with its breaker open keeps it open: its
		// started plans stay paused, never released into a sick cluster.
		if b := m.Status.Breaker; f.Pause == nil && b != nil && b.Open && b.OpenedAt != nil {
			f.Pause = &drain.Pause{Object: m.Name, Since: b.OpenedAt.Time, Reason: b.Message, Campaign: true}
		}
	}
	if p.Labels[api.CampaignLabel] != "" {
		f.Wave = waveOf(p, byName) // its campaign gone or not: the wave still cordons first
	}
	for _, o := range plans {
		if o.UID == p.UID || byName[o.Name] == nil {
			continue
		}
		o = byName[o.Name]
		// An owner another plan decided to surge, its scale-up not yet
		// in the caches (or not yet made), carries that plan's surge.
		if ep := o.Status.EvictionProgress; ep != nil && !drain.Final(&o.Status) {
			for _, sg := range ep.Surges {
				key := drain.OwnerKey(sg.Kind, sg.Namespace, sg.Name)
				if ow, ok := f.Owners[key]; ok && ow.SurgedBy == "" && sg.State != drain.SurgeRestored {
					ow.SurgedBy = drain.Owner(o)
					f.Owners[key] = ow
				}
			}
		}
		active, until := drain.Shares(&o.Status)
		if until.After(f.ThrottledUntil) {
			f.ThrottledUntil = until
		}
		for _, a := range active {
			if pod, err := c.pods.get(a.Namespace, a.Name); err == nil && pod.UID == a.UID {
				f.Pods[pod.UID] = podFact(pod)
			}
			f.Others = append(f.Others, a)
		}
		if o.DeletionTimestamp == nil && o.Spec.NodeName == p.Spec.NodeName && !drain.Final(&o.Status) && o.Status.Phase != api.Blocked && before(o, p) {
			f.Rivals = append(f.Rivals, o.Name)
		}
	}
	slices.Sort(f.Rivals)
	return nil
}

// held is the nodes in maintenance as the caches show them, with the plans
// byName (the newest versions this controller knows; c.mu is held).
func (c *Controller) held(byName map[string]*api.MaintenancePlan) []slots.Holder {
	owners := map[string]string{}
	for _, owner := range c.nodeIndex.ListIndexFuncValues(byOwner) {
		nodes, _ := c.nodeIndex.ByIndex(byOwner, owner) // the index exists
		for _, n := range nodes {
			owners[n.(*corev1.Node).Name] = owner
		}
	}
	return slots.Held(slices.Collect(maps.Values(byName)), owners)
}

// podNamespaces are the namespaces of pods, in order.
func podNamespaces(pods []*cachedPod) []string {
	ns := map[string]bool{}
	for _, p := range pods {
		ns[p.Namespace] = true
	}
	return sortedKeys(ns)
}

// before orders plans by creation, then name.
func before(a, b *api.MaintenancePlan) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

func podFact(p *cachedPod) drain.Pod {
	f := drain.Pod{Namespace: p.Namespace, Name: p.Name, Terminating: p.DeletionTimestamp != nil, Labels: p.Labels,
		GracePeriodSeconds: int64(analyze.DefaultGrace / time.Second)}
	if g := p.TerminationGracePeriodSeconds; g != nil {
		f.GracePeriodSeconds = *g
	}
	return f
}

// workloadUID is the current UID of a listed workload, "" when it does not
// exist.
func (c *Controller) workloadUID(w api.WorkloadRef) (types.UID, error) {
	m, err := c.owner(w.Kind, w.Namespace, w.Name)
	switch {
	case m == nil && err == nil, apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s %s/%s: %w", w.Kind, w.Namespace, w.Name, err)
	}
	return m.GetUID(), nil
}

// ownerGroups are the kinds that own pods or other owners, with their API
// group: the owners a snapshot holds.
var ownerGroups = map[string]string{"ReplicaSet": "apps", "Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "Job": "batch", "CronJob": "batch"}

// owner reads an owner of kind in namespace from the cache: nil and no
// error for a kind that is not an owner kind.
func (c *Controller) owner(kind, namespace, name string) (metav1.Object, error) {
	var m metav1.Object
	var err error
	switch kind {
	case "ReplicaSet":
		m, err = c.replicaSets.ReplicaSets(namespace).Get(name)
	case "Deployment":
		m, err = c.deployments.Deployments(namespace).Get(name)
	case "StatefulSet":
		m, err = c.statefulSets.StatefulSets(namespace).Get(name)
	case "DaemonSet":
		m, err = c.daemonSets.DaemonSets(namespace).Get(name)
	case "Job":
		m, err = c.jobs.Jobs(namespace).Get(name)
	case "CronJob":
		m, err = c.cronJobs.CronJobs(namespace).Get(name)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// snapshot is the Snapshot the analysis of node needs, built from the
// caches as k8s-snapshot --node builds it from the API and trimmed by the
// same snapshot.ForNodes: the node, its pods (onNode), the budgets of
// their namespaces (pdbs), the sibling pods that snapshot.PodQueries names
// (the other replicas of their owners and the rest of their budgets), the
// owner chains of all these pods, the claims of the pods on the node, and
// the persistent volumes. Of the owners and claims it reads only those
// ForNodes keeps, not every one of the namespaces: a reconcile copies tens
// of objects, not hundreds. Objects are shallow copies of the cached ones;
// nothing here modifies them.
func (c *Controller) snapshot(node *corev1.Node, onNode []*cachedPod, pdbs []*policyv1.PodDisruptionBudget, now time.Time) (*snapshot.Snapshot, error) {
	return c.snapshotOf([]*corev1.Node{node}, onNode, pdbs, now)
}

// snapshotOf is snapshot for several nodes: onNode are the pods of all of
// them.
func (c *Controller) snapshotOf(nodes []*corev1.Node, onNode []*cachedPod, pdbs []*policyv1.PodDisruptionBudget, now time.Time) (*snapshot.Snapshot, error) {
	c.observing("snapshot")
	s := snapshot.New()
	s.Metadata.CapturedAt = metav1.NewTime(now)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		s.Nodes = append(s.Nodes, *n)
		names[i] = n.Name
	}
	s.PodDisruptionBudgets = values(slices.Clone(pdbs))
	pvs, err := c.pvs.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list persistent volumes: %w", err)
	}
	s.PersistentVolumes = values(pvs)
	if err := c.volumesOf(s, names); err != nil {
		return nil, err
	}
	// The namespaces of the pods on the nodes: the drain rules' namespace
	// selectors read their labels.
	for _, ns := range podNamespaces(onNode) {
		switch n, err := c.namespaces.Get(ns); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("read namespace %s: %w", ns, err)
		default:
			s.Namespaces = append(s.Namespaces, *n)
		}
	}
	pods := slices.Clone(onNode)
	// By key: the cache may replace a pod's object between two reads.
	seen := map[string]bool{}
	for _, pod := range onNode {
		seen[pod.Namespace+"/"+pod.Name] = true
	}
	if err := c.volumeClaims(s, pods); err != nil {
		return nil, err
	}
	chains := ownerChains{seen: map[string]bool{}}
	if err := c.chains(&chains, pods); err != nil {
		return nil, err
	}
	chains.into(s)
	s.Pods = podValues(pods)
	mine := len(pods)
	for _, q := range snapshot.PodQueries(s, names) {
		sel, err := labels.Parse(q.Selector)
		if err != nil {
			return nil, fmt.Errorf("pods of %s %q: %w", q.Namespace, q.Selector, err)
		}
		siblings, err := c.pods.list(q.Namespace, sel)
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", q.Namespace, err)
		}
		for _, p := range siblings {
			if key := p.Namespace + "/" + p.Name; !seen[key] {
				pods, seen[key] = append(pods, p), true
			}
		}
	}
	if err := c.chains(&chains, pods[mine:]); err != nil {
		return nil, err
	}
	chains.into(s)
	s.Pods = podValues(pods)
	// The autoscalers of the pods' namespaces: ForNodes keeps those whose
	// target owns a pod of the node.
	for _, ns := range podNamespaces(onNode) {
		hpas, err := c.hpas.HorizontalPodAutoscalers(ns).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list horizontal pod autoscalers in %s: %w", ns, err)
		}
		s.HorizontalPodAutoscalers = append(s.HorizontalPodAutoscalers, values(hpas)...)
	}
	return snapshot.ForNodes(s, names...)
}

// volumesOf adds to s the VolumeAttachments of the nodes and the claims
// their volumes are bound to (a claim gone makes an attachment leaked).
// volumeClaims adds the claims of the pods after them.
func (c *Controller) volumesOf(s *snapshot.Snapshot, nodes []string) error {
	for _, n := range nodes {
		vas, err := c.attachments.ByIndex(byNode, n)
		if err != nil {
			return fmt.Errorf("volume attachments of node %s: %w", n, err)
		}
		for _, o := range vas {
			s.VolumeAttachments = append(s.VolumeAttachments, *o.(*storagev1.VolumeAttachment))
		}
	}
	slices.SortFunc(s.VolumeAttachments, func(a, b storagev1.VolumeAttachment) int { return cmp.Compare(a.Name, b.Name) })
	// The volumes attached: those the attachments name, and those the
	// nodes' status lists (a CSI volume by its driver and handle).
	attached := map[string]bool{}
	for _, va := range s.VolumeAttachments {
		if name := va.Spec.Source.PersistentVolumeName; name != nil {
			attached[*name] = true
		}
	}
	listed := map[[2]string]bool{}
	for _, n := range s.Nodes {
		for _, v := range n.Status.VolumesAttached {
			if driver, handle, ok := snapshot.CSIVolumeName(string(v.Name)); ok {
				listed[[2]string{driver, handle}] = true
			}
		}
	}
	for _, pv := range s.PersistentVolumes {
		if csi := pv.Spec.CSI; csi != nil && listed[[2]string{csi.Driver, csi.VolumeHandle}] {
			attached[pv.Name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(attached)) {
		pv, err := c.pvs.Get(name)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("read persistent volume %s: %w", name, err)
		}
		if ref := pv.Spec.ClaimRef; ref != nil {
			pvc, err := c.pvcs.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("read persistent volume claim %s/%s: %w", ref.Namespace, ref.Name, err)
			default:
				s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, *pvc)
			}
		}
	}
	return nil
}

// volumeClaims sets the claims of s to those of pods that exist (named by a
// volume, or a generic ephemeral volume's, named by Kubernetes), in name
// order.
func (c *Controller) volumeClaims(s *snapshot.Snapshot, pods []*cachedPod) error {
	var pvcs []*corev1.PersistentVolumeClaim
	for _, p := range pods {
		for _, v := range p.Volumes {
			var name string
			switch {
			case v.PersistentVolumeClaim != nil:
				name = v.PersistentVolumeClaim.ClaimName
			case v.Ephemeral != nil:
				name = p.Name + "-" + v.Name
			default:
				continue
			}
			pvc, err := c.pvcs.PersistentVolumeClaims(p.Namespace).Get(name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("read persistent volume claim %s/%s: %w", p.Namespace, name, err)
			case !slices.Contains(pvcs, pvc):
				pvcs = append(pvcs, pvc)
			}
		}
	}
	for _, pvc := range values(pvcs) {
		if !slices.ContainsFunc(s.PersistentVolumeClaims, func(o corev1.PersistentVolumeClaim) bool { return o.Namespace == pvc.Namespace && o.Name == pvc.Name }) {
			s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, pvc)
		}
	}
	slices.SortFunc(s.PersistentVolumeClaims, func(a, b corev1.PersistentVolumeClaim) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return nil
}

// ownerChains are owners read from the caches, each once.
type ownerChains struct {
	seen   map[string]bool // group/kind/namespace/name
	owners []metav1.Object
}

// chains adds the owner chains of pods to o: each owner reference, hop by
// hop, as far as the owners are in the caches. Owners are matched by name,
// as snapshot.ForNodes matches them.
func (c *Controller) chains(o *ownerChains, pods []*cachedPod) error {
	var walk func(namespace string, refs []metav1.OwnerReference) error
	walk = func(namespace string, refs []metav1.OwnerReference) error {
		for _, r := range refs {
			gv, err := schema.ParseGroupVersion(r.APIVersion)
			if group, ok := ownerGroups[r.Kind]; err != nil || !ok || group != gv.Group {
				continue
			}
			key := gv.Group + "/" + r.Kind + "/" + namespace + "/" + r.Name
			if o.seen[key] {
				continue
			}
			m, err := c.owner(r.Kind, namespace, r.Name)
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return fmt.Errorf("read %s %s/%s: %w", r.Kind, namespace, r.Name, err)
			}
			o.seen[key] = true
			o.owners = append(o.owners, m)
			if err := walk(namespace, m.GetOwnerReferences()); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range pods {
		if err := walk(p.Namespace, p.OwnerReferences); err != nil {
			return err
		}
	}
	return nil
}

// into sets the owners of s to those of o, by kind, in name order.
func (o *ownerChains) into(s *snapshot.Snapshot) {
	s.ReplicaSets = values(ofType[*appsv1.ReplicaSet](o.owners))
	s.Deployments = values(ofType[*appsv1.Deployment](o.owners))
	s.StatefulSets = values(ofType[*appsv1.StatefulSet](o.owners))
	s.DaemonSets = values(ofType[*appsv1.DaemonSet](o.owners))
	s.Jobs = values(ofType[*batchv1.Job](o.owners))
	s.CronJobs = values(ofType[*batchv1.CronJob](o.owners))
}

// ofType is the objects of type T.
func ofType[T any](objs []metav1.Object) []T {
	var out []T
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// values copies the cached objects' structs (not what they point to) into a
// slice, in name order.
func values[T any, PT interface {
	*T
	metav1.Object
}](objs []PT) []T {
	slices.SortFunc(objs, byKey[PT])
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = *o
	}
	return out
}

// byKey orders objects by namespace, then name.
func byKey[O metav1.Object](a, b O) int {
	return cmp.Or(strings.Compare(a.GetNamespace(), b.GetNamespace()), strings.Compare(a.GetName(), b.GetName()))
}

func sortedKeys[K ~string](m map[K]bool) []K {
	return slices.Sorted(maps.Keys(m))
}

func everything() labels.Selector { return labels.Everything() }

func derefs[T any](objs []*T) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = *o
	}
	return out
}
