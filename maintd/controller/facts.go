package controller

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// facts reads what Decide needs from the informer caches: the node, its pods
// and every object the analysis of its drain needs, in the namespaces
// involved. A read error is returned, never replaced by a default.
func (c *Controller) facts(p *api.MaintenancePlan, now time.Time) (drain.Facts, error) {
	f := drain.Facts{Pods: map[types.UID]drain.Pod{}, PDBs: map[string]drain.PDB{}, Workloads: map[api.WorkloadRef]types.UID{}, MaxNodes: c.cfg.MaxNodes}
	node, err := c.nodes.Get(p.Spec.NodeName)
	switch {
	case apierrors.IsNotFound(err):
		node = nil
	case err != nil:
		return f, fmt.Errorf("read node %s: %w", p.Spec.NodeName, err)
	}
	f.Node = node

	onNode, err := c.podIndex.ByIndex(byNode, p.Spec.NodeName)
	if err != nil {
		return f, fmt.Errorf("pods on node %s: %w", p.Spec.NodeName, err)
	}
	namespaces := map[string]bool{}
	for _, o := range onNode {
		pod := o.(*corev1.Pod)
		f.Pods[pod.UID] = podFact(pod)
		namespaces[pod.Namespace] = true
	}
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, a := range ep.ActivePods {
			pod, err := c.pods.Pods(a.Namespace).Get(a.Name)
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
				CurrentHealthy: b.Status.CurrentHealthy, DesiredHealthy: b.Status.DesiredHealthy, DisruptedPods: disrupted}
		}
	}
	if node != nil {
		s, err := c.snapshot(node, onNode, sortedKeys(namespaces), pdbs, now)
		if err != nil {
			return f, err
		}
		report, err := analyze.AnalyzeObjects(s, analyze.Options{Nodes: []string{node.Name}, Now: now})
		if err != nil {
			return f, fmt.Errorf("analyse node %s: %w", node.Name, err)
		}
		f.Analysis = &report.Nodes[0]
	}

	plans, err := c.plans.List(labels.Everything())
	if err != nil {
		return f, fmt.Errorf("list plans: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range plans {
		if o.UID == p.UID || o.DeletionTimestamp != nil || !c.selects(o) {
			continue
		}
		o = c.newest(o)
		if ep := o.Status.EvictionProgress; ep != nil {
			for _, a := range ep.ActivePods {
				if pod, err := c.pods.Pods(a.Namespace).Get(a.Name); err == nil && pod.UID == a.UID {
					f.Pods[pod.UID] = podFact(pod)
				}
				f.Others = append(f.Others, a)
			}
		}
		started := o.Status.EvictionProgress != nil && o.Status.EvictionProgress.Scope != ""
		if started {
			delete(c.claims, o.UID) // the cache shows what the claim stood for
		}
		if drain.HoldsCordon(&o.Status) || c.claims[o.UID] {
			f.Holders++
		}
		if o.Spec.NodeName == p.Spec.NodeName && !drain.Final(&o.Status) && o.Status.Phase != api.Blocked && before(o, p) {
			f.Rivals = append(f.Rivals, o.Name)
		}
	}
	slices.Sort(f.Rivals)
	return f, nil
}

// before orders plans by creation, then name.
func before(a, b *api.MaintenancePlan) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

func podFact(p *corev1.Pod) drain.Pod {
	return drain.Pod{Namespace: p.Namespace, Name: p.Name, Terminating: p.DeletionTimestamp != nil}
}

// workloadUID is the current UID of a listed workload, "" when it does not
// exist.
func (c *Controller) workloadUID(w api.WorkloadRef) (types.UID, error) {
	var m metav1.Object
	var err error
	switch w.Kind {
	case "Deployment":
		m, err = c.deployments.Deployments(w.Namespace).Get(w.Name)
	case "StatefulSet":
		m, err = c.statefulSets.StatefulSets(w.Namespace).Get(w.Name)
	case "ReplicaSet":
		m, err = c.replicaSets.ReplicaSets(w.Namespace).Get(w.Name)
	case "Job":
		m, err = c.jobs.Jobs(w.Namespace).Get(w.Name)
	default:
		return "", nil
	}
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s %s/%s: %w", w.Kind, w.Namespace, w.Name, err)
	}
	return m.GetUID(), nil
}

// snapshot is the Snapshot the analysis of node needs, built from the
// caches as k8s-snapshot --node builds it from the API: the node, its pods
// (onNode), the owners and claims of their namespaces, their budgets
// (pdbs), and the
// sibling pods that snapshot.PodQueries names (the other replicas of their
// owners and the rest of their budgets), trimmed by snapshot.ForNodes.
// Objects are shallow copies of the cached ones; nothing here modifies
// them. Its cost follows the node's pods and their workloads, not the
// cluster's size.
func (c *Controller) snapshot(node *corev1.Node, onNode []any, namespaces []string, pdbs []*policyv1.PodDisruptionBudget, now time.Time) (*snapshot.Snapshot, error) {
	s := snapshot.New()
	s.Metadata.CapturedAt = metav1.NewTime(now)
	s.Nodes = []corev1.Node{*node}
	s.PodDisruptionBudgets = values(slices.Clone(pdbs))
	pvs, err := c.pvs.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list persistent volumes: %w", err)
	}
	s.PersistentVolumes = values(pvs)
	for _, ns := range namespaces {
		if err := c.namespace(s, ns); err != nil {
			return nil, err
		}
	}
	pods := make([]*corev1.Pod, 0, len(onNode))
	seen := map[types.UID]bool{}
	for _, o := range onNode {
		pod := o.(*corev1.Pod)
		pods, seen[pod.UID] = append(pods, pod), true
	}
	s.Pods = values(slices.Clone(pods))
	for _, q := range snapshot.PodQueries(s, []string{node.Name}) {
		sel, err := labels.Parse(q.Selector)
		if err != nil {
			return nil, fmt.Errorf("pods of %s %q: %w", q.Namespace, q.Selector, err)
		}
		siblings, err := c.pods.Pods(q.Namespace).List(sel)
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", q.Namespace, err)
		}
		for _, p := range siblings {
			if !seen[p.UID] {
				pods, seen[p.UID] = append(pods, p), true
			}
		}
	}
	s.Pods = values(pods)
	return snapshot.ForNodes(s, node.Name)
}

// namespace adds the owners and claims of namespace ns to s.
func (c *Controller) namespace(s *snapshot.Snapshot, ns string) error {
	all := labels.Everything()
	rs, err := c.replicaSets.ReplicaSets(ns).List(all)
	if err != nil {
		return fmt.Errorf("list replica sets in %s: %w", ns, err)
	}
	s.ReplicaSets = append(s.ReplicaSets, values(rs)...)
	deps, err := c.deployments.Deployments(ns).List(all)
	if err != nil {
		return fmt.Errorf("list deployments in %s: %w", ns, err)
	}
	s.Deployments = append(s.Deployments, values(deps)...)
	sts, err := c.statefulSets.StatefulSets(ns).List(all)
	if err != nil {
		return fmt.Errorf("list stateful sets in %s: %w", ns, err)
	}
	s.StatefulSets = append(s.StatefulSets, values(sts)...)
	dss, err := c.daemonSets.DaemonSets(ns).List(all)
	if err != nil {
		return fmt.Errorf("list daemon sets in %s: %w", ns, err)
	}
	s.DaemonSets = append(s.DaemonSets, values(dss)...)
	jobs, err := c.jobs.Jobs(ns).List(all)
	if err != nil {
		return fmt.Errorf("list jobs in %s: %w", ns, err)
	}
	s.Jobs = append(s.Jobs, values(jobs)...)
	cjs, err := c.cronJobs.CronJobs(ns).List(all)
	if err != nil {
		return fmt.Errorf("list cron jobs in %s: %w", ns, err)
	}
	s.CronJobs = append(s.CronJobs, values(cjs)...)
	pvcs, err := c.pvcs.PersistentVolumeClaims(ns).List(all)
	if err != nil {
		return fmt.Errorf("list persistent volume claims in %s: %w", ns, err)
	}
	s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, values(pvcs)...)
	return nil
}

// values copies the cached objects' structs (not what they point to) into a
// slice, in name order.
func values[T any, PT interface {
	*T
	metav1.Object
}](objs []PT) []T {
	slices.SortFunc(objs, func(a, b PT) int {
		if a.GetNamespace() != b.GetNamespace() {
			if a.GetNamespace() < b.GetNamespace() {
				return -1
			}
			return 1
		}
		if a.GetName() < b.GetName() {
			return -1
		}
		if a.GetName() > b.GetName() {
			return 1
		}
		return 0
	})
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = *o
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func everything() labels.Selector { return labels.Everything() }

func derefs[T any](objs []*T) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = *o
	}
	return out
}
