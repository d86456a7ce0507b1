package controller

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// cachedPod is what the pod cache keeps of a pod: what maintd and the drain
// analysis read of it (view.PodOf), that is its metadata but the
// managedFields, its node, grace period, the volumes and the condition the
// analysis reads (view.KeepsVolume, view.KeepsCondition), its phase and
// start time. It is a quarter of a corev1.Pod's size, the largest part of
// maintd's memory when a cluster has thousands of pods; the informer's
// transform makes it (slim) and pod gives the pod back for a snapshot.
type cachedPod struct {
	metav1.ObjectMeta
	NodeName                      string
	TerminationGracePeriodSeconds *int64
	Volumes                       []corev1.Volume
	Phase                         corev1.PodPhase
	StartTime                     *metav1.Time
	Conditions                    []corev1.PodCondition
	// Waiting is why a pod that is not Ready waits, as kubectl get pods
	// shows it (CrashLoopBackOff, ImagePullBackOff): the reason of its
	// first waiting container, init containers first; "" for a Ready pod.
	// A campaign's breaker names it.
	Waiting string
	// Scheduling is what the drain forecast reads (view.SchedulingOf):
	// requests, node selection, tolerations, spread, and the PodScheduled
	// and Ready times its workload's time to Ready is learned from. Its
	// node selection, tolerations and spread are those of placement, shared
	// with every pod that has the same (the replicas of a template).
	Scheduling *view.Scheduling
	placement  *placement
	// PluginPaths name the CSI node plugins it registers
	// (view.PluginPathsOf): how the drain order recognises a storage
	// system's namespace.
	PluginPaths []string
}

// placement is what pods of one template share of their Scheduling: one
// copy serves the replicas, so that thousands of pods do not each keep
// their own maps and slices of the same values.
type placement struct {
	NodeSelector              map[string]string
	Affinity                  *corev1.Affinity
	Tolerations               []corev1.Toleration
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	HostPorts                 []corev1.ContainerPort
}

// placements interns placements by their JSON. An entry lives while a
// cached pod points to it (a weak pointer); entries whose pods are all
// gone are swept when the table has doubled since the last sweep.
type placements struct {
	mu    sync.Mutex
	m     map[string]weak.Pointer[placement]
	sweep int
}

// shared are the placements of every cached pod of this process.
var shared = &placements{m: map[string]weak.Pointer[placement]{}, sweep: 64}

// intern points s's placement fields to the shared copy of equal values,
// and returns that copy, which the pod must keep (nil for no s).
func (t *placements) intern(s *view.Scheduling) *placement {
	if s == nil {
		return nil
	}
	v := placement{s.NodeSelector, s.Affinity, s.Tolerations, s.TopologySpreadConstraints, s.HostPorts}
	key, err := json.Marshal(v)
	if err != nil {
		return nil // not shared: the pod keeps its own
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.m[string(key)].Value()
	if p == nil {
		p = &v
		t.m[string(key)] = weak.Make(p)
		if len(t.m) >= t.sweep {
			maps.DeleteFunc(t.m, func(_ string, w weak.Pointer[placement]) bool { return w.Value() == nil })
			t.sweep = max(64, 2*len(t.m))
		}
	}
	s.NodeSelector, s.Affinity, s.Tolerations, s.TopologySpreadConstraints, s.HostPorts = p.NodeSelector, p.Affinity, p.Tolerations, p.TopologySpreadConstraints, p.HostPorts
	return p
}

// cachePod is the cachedPod of p; p is left alone.
func cachePod(p *corev1.Pod) *cachedPod {
	c := &cachedPod{ObjectMeta: p.ObjectMeta, NodeName: p.Spec.NodeName,
		TerminationGracePeriodSeconds: p.Spec.TerminationGracePeriodSeconds,
		Phase:                         p.Status.Phase, StartTime: p.Status.StartTime, Scheduling: view.SchedulingOf(p),
		PluginPaths: view.PluginPathsOf(&p.Spec)}
	c.placement = shared.intern(c.Scheduling)
	c.ManagedFields = nil
	for i := range p.Spec.Volumes {
		if v := &p.Spec.Volumes[i]; view.KeepsVolume(v) {
			src := corev1.VolumeSource{EmptyDir: v.EmptyDir, HostPath: v.HostPath, PersistentVolumeClaim: v.PersistentVolumeClaim}
			if v.Ephemeral != nil {
				src.Ephemeral = &corev1.EphemeralVolumeSource{}
			}
			c.Volumes = append(c.Volumes, corev1.Volume{Name: v.Name, VolumeSource: src})
		}
	}
	for _, cond := range p.Status.Conditions {
		if view.KeepsCondition(cond.Type) {
			c.Conditions = append(c.Conditions, corev1.PodCondition{Type: cond.Type, Status: cond.Status})
		}
	}
	if !ready(c) {
		c.Waiting = waitingReason(p)
	}
	return c
}

// waitingReason is the reason of p's first waiting container, init
// containers first, "" when none waits with a reason.
func waitingReason(p *corev1.Pod) string {
	for _, l := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, s := range l {
			if w := s.State.Waiting; w != nil && w.Reason != "" {
				return w.Reason
			}
		}
	}
	return ""
}

// into writes the pod back into p: what was cached, nothing else. p shares
// the cached slices and maps; nothing may modify them.
func (c *cachedPod) into(p *corev1.Pod) {
	*p = corev1.Pod{ObjectMeta: c.ObjectMeta}
	p.Spec.NodeName, p.Spec.TerminationGracePeriodSeconds, p.Spec.Volumes = c.NodeName, c.TerminationGracePeriodSeconds, c.Volumes
	p.Status.Phase, p.Status.StartTime, p.Status.Conditions = c.Phase, c.StartTime, c.Conditions
	if len(c.PluginPaths) > 0 {
		p.Spec.Containers = []corev1.Container{{Name: "plugin", Args: c.PluginPaths}}
	}
}

// pod is the pod back from the cache.
func (c *cachedPod) pod() *corev1.Pod {
	p := &corev1.Pod{}
	c.into(p)
	return p
}

// view is the pod as the analysis reads it, with its Scheduling; scratch is
// reused from pod to pod.
func (c *cachedPod) view(scratch *corev1.Pod) view.Pod {
	c.into(scratch)
	v := view.PodOf(scratch)
	v.Scheduling = c.Scheduling
	return v
}

// podValues are the pods, in name order, as a snapshot holds them.
func podValues(pods []*cachedPod) []corev1.Pod {
	sorted := slices.SortedFunc(slices.Values(pods), byKey[*cachedPod])
	out := make([]corev1.Pod, len(sorted))
	for i, p := range sorted {
		p.into(&out[i])
	}
	return out
}

// podCache reads the pod cache.
type podCache struct{ idx cache.Indexer }

// get is the cached pod namespace/name, or a NotFound error.
func (c podCache) get(namespace, name string) (*cachedPod, error) {
	o, ok, err := c.idx.GetByKey(namespace + "/" + name)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	return o.(*cachedPod), nil
}

// byLabel indexes pods by namespace and each of their labels
// ("namespace/key=value"): a snapshot lists the pods of each budget's and
// owner's selector on a node, tens of selectors over namespaces of hundreds
// or thousands of pods, and a selector's pods are found among those of one
// of its labels instead of matched against all of the namespace's.
const byLabel = "namespaceLabel"

func namespaceLabels(o any) ([]string, error) {
	p := o.(*cachedPod)
	out := make([]string, 0, len(p.Labels))
	for k, v := range p.Labels {
		out = append(out, labelKey(p.Namespace, k, v))
	}
	return out, nil
}

func labelKey(namespace, key, value string) string { return namespace + "/" + key + "=" + value }

// podIndexers are the pod cache's indexes.
func podIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byNode:               func(o any) ([]string, error) { return []string{o.(*cachedPod).NodeName}, nil },
		unreadyByController:  unreadyControllerUID,
		byLabel:              namespaceLabels,
	}
}

// list is the cached pods of namespace that sel selects: those of the first
// label sel requires to equal one value (byLabel), or, when it requires
// none, of the whole namespace.
func (c podCache) list(namespace string, sel labels.Selector) ([]*cachedPod, error) {
	var out []*cachedPod
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		if r.Values().Len() != 1 {
			continue
		}
		objs, err := c.idx.ByIndex(byLabel, labelKey(namespace, r.Key(), r.ValuesUnsorted()[0]))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if p := o.(*cachedPod); sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	err := cache.ListAllByNamespace(c.idx, namespace, sel, func(o any) { out = append(out, o.(*cachedPod)) })
	return out, err
}

// onNode is the cached pods on node.
func (c podCache) onNode(node string) ([]*cachedPod, error) {
	objs, err := c.idx.ByIndex(byNode, node)
	if err != nil {
		return nil, err
	}
	out := make([]*cachedPod, len(objs))
	for i, o := range objs {
		out[i] = o.(*cachedPod)
	}
	return out, nil
}
