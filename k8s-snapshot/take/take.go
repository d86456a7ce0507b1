// Package take fills a snapshot.Snapshot from a cluster: paginated
// protobuf lists of every kind in parallel (bounded), all at the one etcd
// revision the first list fixes (resourceVersionMatch=Exact), the whole
// snapshot started again at a new revision when the API server compacted
// that one (410 Expired), the node-scope closure for --node, and never a
// partial or mixed result.
package take

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// DefaultChunkSize is the page size of every list unless told otherwise.
const DefaultChunkSize = 500

// DefaultParallel is how many lists run at once unless told otherwise.
const DefaultParallel = 8

// Options select what Take captures and how.
type Options struct {
	// Nodes, when set, narrows the snapshot to what judging a drain of
	// these nodes needs (see snapshot.ForNodes); empty means the whole cluster.
	Nodes []string
	// Full keeps managedFields and the last-applied annotation.
	Full bool
	// ChunkSize is the page size of every list (default DefaultChunkSize).
	ChunkSize int64
	// Parallel bounds the lists in flight (default DefaultParallel).
	Parallel int
	// Server is recorded as the API server URL.
	Server string
	// Latest lists each kind at its own latest revision, as kubectl does,
	// instead of every kind at the one revision the first list fixes: for
	// API servers that refuse exact-revision lists. The snapshot is then
	// not consistent, and its metadata says so.
	Latest bool
	// Notify, if set, hears about every finished and every restarted list.
	// Calls never overlap.
	Notify func(Event)
}

// taker is one Take: its options and the lock that keeps Notify calls apart.
type taker struct {
	opts Options
	src  Source
	mu   sync.Mutex
	// cut is the revision of the attempt under way; nil with Latest.
	cut *revision
}

// revision is the etcd revision of one consistent cut: fixed by the first
// list's first page, waited for by every other list.
type revision struct {
	claimed atomic.Bool // a list has taken the job of fixing it
	once    sync.Once
	fixed   chan struct{}
	rv      string
}

func newRevision() *revision { return &revision{fixed: make(chan struct{})} }

// claim reports whether the job of fixing the revision was already taken,
// and takes it.
func (r *revision) claim() bool { return r.claimed.Swap(true) }

// fix sets the revision; only the first call counts.
func (r *revision) fix(rv string) {
	r.once.Do(func() { r.rv = rv; close(r.fixed) })
}

// errNoRevision is the error of a list that ended waiting for the revision.
var errNoRevision = errors.New("snapshot: no revision")

// wait returns the revision once it is fixed.
func (r *revision) wait(ctx context.Context) (string, error) {
	select {
	case <-r.fixed:
		return r.rv, nil
	case <-ctx.Done():
		return "", fmt.Errorf("%w: %w", errNoRevision, context.Cause(ctx))
	}
}

func (t *taker) chunkSize() int64 {
	if t.opts.ChunkSize > 0 {
		return t.opts.ChunkSize
	}
	return DefaultChunkSize
}

func (t *taker) parallel() int {
	if t.opts.Parallel > 0 {
		return t.opts.Parallel
	}
	return DefaultParallel
}

func (t *taker) notify(e Event) {
	if t.opts.Notify == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opts.Notify(e)
}

// Take reads a snapshot.Snapshot from the cluster: the whole cluster, or with
// opts.Nodes what judging a drain of those nodes needs. It only gets and
// lists. The first list fixes an etcd revision R; every other list, page
// and --node query is made at exactly R (unless opts.Latest), so the
// snapshot is the cluster as it was at R. When the API server has compacted
// R away (410 Expired), Take starts again at a new R, at most MaxRestarts
// times. Either every list succeeds or Take returns an error (a *ListError
// naming the resource and the API's answer, or "node X not found") and no
// snapshot.
func Take(ctx context.Context, src Source, opts Options) (*snapshot.Snapshot, error) {
	t := &taker{opts: opts, src: src}
	for restarts := 0; ; restarts++ {
		if !opts.Latest {
			t.cut = newRevision()
		}
		s, err := t.take(ctx)
		var le *ListError
		if err == nil || opts.Latest || !errors.As(err, &le) || !le.expired() {
			return s, err
		}
		if restarts == MaxRestarts {
			le.Expired = restarts + 1
			return nil, le
		}
		t.notify(Event{Resource: le.Resource, Selector: le.Selector, Revision: le.Revision, Restart: le.Err, Restarts: restarts + 1})
	}
}

// take is one attempt at a snapshot.
func (t *taker) take(ctx context.Context) (*snapshot.Snapshot, error) {
	s := snapshot.New()
	s.Metadata = snapshot.Metadata{
		CapturedAt: metav1.Now(),
		Server:     t.opts.Server,
		Scope:      snapshot.Scope{Nodes: slices.Clone(t.opts.Nodes), Full: t.opts.Full},
	}
	v := &versions{m: map[string]string{}}
	var err error
	if len(t.opts.Nodes) == 0 {
		err = t.cluster(ctx, s, v)
	} else {
		s, err = t.nodes(ctx, s, v)
	}
	if err != nil {
		return nil, err
	}
	s.Metadata.ResourceVersions = v.m
	if t.cut != nil {
		s.Metadata.ResourceVersion, s.Metadata.Consistent = t.cut.rv, true
	}
	return s, nil
}

// cluster lists every kind, cluster-wide.
func (t *taker) cluster(ctx context.Context, s *snapshot.Snapshot, v *versions) error {
	c, all := t.src, metav1.ListOptions{}
	return run(ctx, t.parallel(), append([]func(context.Context) error{
		// pods first: the longest list starts at once and fixes the
		// revision with its first page.
		listInto(t, pods(c), all, v, &s.Pods),
		listInto(t, nodes(c), all, v, &s.Nodes),
	}, t.rest(s, v)...))
}

// rest are the tasks that list every kind but nodes and pods,
// cluster-wide, and read the server's version.
func (t *taker) rest(s *snapshot.Snapshot, v *versions) []func(context.Context) error {
	c, all := t.src, metav1.ListOptions{}
	return []func(context.Context) error{
		listInto(t, replicaSets(c), all, v, &s.ReplicaSets),
		listInto(t, deployments(c), all, v, &s.Deployments),
		listInto(t, statefulSets(c), all, v, &s.StatefulSets),
		listInto(t, daemonSets(c), all, v, &s.DaemonSets),
		listInto(t, jobs(c), all, v, &s.Jobs),
		listInto(t, cronJobs(c), all, v, &s.CronJobs),
		listInto(t, pdbs(c), all, v, &s.PodDisruptionBudgets),
		listInto(t, pvcs(c), all, v, &s.PersistentVolumeClaims),
		listInto(t, pvs(c), all, v, &s.PersistentVolumes),
		listInto(t, storageClasses(c), all, v, &s.StorageClasses),
		listInto(t, hpas(c), all, v, &s.HorizontalPodAutoscalers),
		listInto(t, volumeAttachments(c), all, v, &s.VolumeAttachments),
		listInto(t, csiDrivers(c), all, v, &s.CSIDrivers),
		listInto(t, csiNodes(c), all, v, &s.CSINodes),
		listInto(t, namespaces(c), all, v, &s.Namespaces),
		func(ctx context.Context) error { return t.version(ctx, s) },
	}
}

// nodes reads the named nodes and the pods on them, every kind a pod's
// closure may reach, then the pods those owners and PDBs select, and
// narrows the whole to snapshot.ForNodes.
func (t *taker) nodes(ctx context.Context, s *snapshot.Snapshot, v *versions) (*snapshot.Snapshot, error) {
	c := t.src
	names := slices.Compact(slices.Sorted(slices.Values(t.opts.Nodes)))
	nodeLists := make([][]corev1.Node, len(names))
	podLists := make([][]corev1.Pod, len(names))
	tasks := []func(context.Context) error{}
	// the first node's list fixes the revision: a single object, it
	// answers first.
	for i, name := range names {
		tasks = append(tasks,
			listInto(t, nodes(c), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}, v, &nodeLists[i]),
			listInto(t, pods(c), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()}, v, &podLists[i]),
		)
	}
	tasks = append(tasks, t.rest(s, v)...)
	if err := run(ctx, t.parallel(), tasks); err != nil {
		return nil, err
	}
	s.Nodes = slices.Concat(nodeLists...)
	s.Pods = slices.Concat(podLists...)
	if err := snapshot.MissingNodes(s.Nodes, names); err != nil {
		return nil, err
	}

	// The other pods: at the snapshot's revision (listInto pins them), or
	// with Latest from the watch cache, never older than the pods on the
	// nodes (and without a quorum read each).
	queries := snapshot.PodQueries(s, names)
	found := make([][]corev1.Pod, len(queries))
	tasks = tasks[:0]
	for i, q := range queries {
		sel := metav1.ListOptions{LabelSelector: q.Selector}
		if rv := v.get("pods"); rv != "" && t.cut == nil {
			sel.ResourceVersion, sel.ResourceVersionMatch = rv, metav1.ResourceVersionMatchNotOlderThan
		}
		tasks = append(tasks, listInto(t, podsIn(c, q.Namespace), sel, v, &found[i]))
	}
	if err := run(ctx, t.parallel()*2, tasks); err != nil {
		return nil, err
	}
	s.Pods = uniquePods(append(found, s.Pods)...)
	return snapshot.ForNodes(s, names...)
}

// uniquePods is the pods of lists sorted by namespace and name, without
// repeats. Pods are big structs: it sorts pointers and copies each kept
// pod once.
func uniquePods(lists ...[]corev1.Pod) []corev1.Pod {
	var ptrs []*corev1.Pod
	for _, l := range lists {
		for i := range l {
			ptrs = append(ptrs, &l[i])
		}
	}
	slices.SortStableFunc(ptrs, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	ptrs = slices.CompactFunc(ptrs, func(a, b *corev1.Pod) bool { return a.Namespace == b.Namespace && a.Name == b.Name })
	out := make([]corev1.Pod, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

// version records the server's version.
func (t *taker) version(ctx context.Context, s *snapshot.Snapshot) error {
	v, err := t.src.Version(ctx)
	if err != nil {
		return &ListError{Resource: "version", Err: err}
	}
	s.Metadata.KubernetesVersion = v
	return nil
}

// run runs tasks, at most limit at once, started in order. The first error
// cancels the others and is returned; a list's own error beats one of a
// list that was only waiting for the revision (errNoRevision).
func run(ctx context.Context, limit int, tasks []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	parallel.Do(min(limit, len(tasks)), func(int) {
		for i := int(next.Add(1) - 1); i < len(tasks) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
			if err := tasks[i](ctx); err != nil {
				mu.Lock()
				if first == nil || errors.Is(first, errNoRevision) && !errors.Is(err, errNoRevision) {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		}
	})
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("snapshot: %w", context.Cause(ctx))
	}
	return first
}

// versions collects the list resourceVersion per resource; a resource read
// by several lists keeps the newest.
type versions struct {
	mu sync.Mutex
	m  map[string]string
}

func (v *versions) set(resource, rv string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	old, ok := v.m[resource]
	if !ok || newer(rv, old) {
		v.m[resource] = rv
	}
}

func (v *versions) get(resource string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.m[resource]
}

// newer compares etcd-backed resourceVersions, which are numbers; anything
// else keeps the first seen.
func newer(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

// listInto is the task that lists l into *dst. In a consistent snapshot
// the first list to answer fixes the revision and every other one waits
// for it and lists at exactly that revision.
func listInto[T any, PT metaObject[T], L listObject](t *taker, l lister[T, L], sel metav1.ListOptions, v *versions, dst *[]T) func(context.Context) error {
	first := t.cut != nil && !t.cut.claim()
	return func(ctx context.Context) error {
		if t.cut != nil && !first {
			rv, err := t.cut.wait(ctx)
			if err != nil {
				return err
			}
			sel.ResourceVersion, sel.ResourceVersionMatch = rv, metav1.ResourceVersionMatchExact
		}
		got, err := all[T, PT](ctx, l, sel, t)
		if err != nil {
			return err
		}
		*dst = got.items
		v.set(l.resource, got.resourceVersion)
		return nil
	}
}

// from is the lister of resource in namespace ("" for all) on src.
func from[T any, L interface {
	listObject
	runtime.Object
}](src Source, resource, namespace string, newList func() L, items func(L) []T) lister[T, L] {
	return lister[T, L]{resource, func(ctx context.Context, opts metav1.ListOptions) (L, error) {
		l := newList()
		return l, src.List(ctx, resource, namespace, opts, l)
	}, items}
}

func pods(src Source) lister[corev1.Pod, *corev1.PodList] {
	return podsIn(src, metav1.NamespaceAll)
}

func podsIn(src Source, namespace string) lister[corev1.Pod, *corev1.PodList] {
	return from(src, "pods", namespace, func() *corev1.PodList { return &corev1.PodList{} }, func(l *corev1.PodList) []corev1.Pod { return l.Items })
}

func nodes(src Source) lister[corev1.Node, *corev1.NodeList] {
	return from(src, "nodes", "", func() *corev1.NodeList { return &corev1.NodeList{} }, func(l *corev1.NodeList) []corev1.Node { return l.Items })
}

func replicaSets(src Source) lister[appsv1.ReplicaSet, *appsv1.ReplicaSetList] {
	return from(src, "replicasets", "", func() *appsv1.ReplicaSetList { return &appsv1.ReplicaSetList{} }, func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items })
}

func deployments(src Source) lister[appsv1.Deployment, *appsv1.DeploymentList] {
	return from(src, "deployments", "", func() *appsv1.DeploymentList { return &appsv1.DeploymentList{} }, func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
}

func statefulSets(src Source) lister[appsv1.StatefulSet, *appsv1.StatefulSetList] {
	return from(src, "statefulsets", "", func() *appsv1.StatefulSetList { return &appsv1.StatefulSetList{} }, func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items })
}

func daemonSets(src Source) lister[appsv1.DaemonSet, *appsv1.DaemonSetList] {
	return from(src, "daemonsets", "", func() *appsv1.DaemonSetList { return &appsv1.DaemonSetList{} }, func(l *appsv1.DaemonSetList) []appsv1.DaemonSet { return l.Items })
}

func jobs(src Source) lister[batchv1.Job, *batchv1.JobList] {
	return from(src, "jobs", "", func() *batchv1.JobList { return &batchv1.JobList{} }, func(l *batchv1.JobList) []batchv1.Job { return l.Items })
}

func cronJobs(src Source) lister[batchv1.CronJob, *batchv1.CronJobList] {
	return from(src, "cronjobs", "", func() *batchv1.CronJobList { return &batchv1.CronJobList{} }, func(l *batchv1.CronJobList) []batchv1.CronJob { return l.Items })
}

func pdbs(src Source) lister[policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList] {
	return from(src, "poddisruptionbudgets", "", func() *policyv1.PodDisruptionBudgetList { return &policyv1.PodDisruptionBudgetList{} }, func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items })
}

func pvcs(src Source) lister[corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return from(src, "persistentvolumeclaims", "", func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} }, func(l *corev1.PersistentVolumeClaimList) []corev1.PersistentVolumeClaim { return l.Items })
}

func pvs(src Source) lister[corev1.PersistentVolume, *corev1.PersistentVolumeList] {
	return from(src, "persistentvolumes", "", func() *corev1.PersistentVolumeList { return &corev1.PersistentVolumeList{} }, func(l *corev1.PersistentVolumeList) []corev1.PersistentVolume { return l.Items })
}

func storageClasses(src Source) lister[storagev1.StorageClass, *storagev1.StorageClassList] {
	return from(src, "storageclasses", "", func() *storagev1.StorageClassList { return &storagev1.StorageClassList{} }, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items })
}

func hpas(src Source) lister[autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList] {
	return from(src, "horizontalpodautoscalers", "", func() *autoscalingv2.HorizontalPodAutoscalerList { return &autoscalingv2.HorizontalPodAutoscalerList{} }, func(l *autoscalingv2.HorizontalPodAutoscalerList) []autoscalingv2.HorizontalPodAutoscaler {
		return l.Items
	})
}

func volumeAttachments(src Source) lister[storagev1.VolumeAttachment, *storagev1.VolumeAttachmentList] {
	return from(src, "volumeattachments", "", func() *storagev1.VolumeAttachmentList { return &storagev1.VolumeAttachmentList{} }, func(l *storagev1.VolumeAttachmentList) []storagev1.VolumeAttachment { return l.Items })
}

func csiDrivers(src Source) lister[storagev1.CSIDriver, *storagev1.CSIDriverList] {
	return from(src, "csidrivers", "", func() *storagev1.CSIDriverList { return &storagev1.CSIDriverList{} }, func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items })
}

func csiNodes(src Source) lister[storagev1.CSINode, *storagev1.CSINodeList] {
	return from(src, "csinodes", "", func() *storagev1.CSINodeList { return &storagev1.CSINodeList{} }, func(l *storagev1.CSINodeList) []storagev1.CSINode { return l.Items })
}

func namespaces(src Source) lister[corev1.Namespace, *corev1.NamespaceList] {
	return from(src, "namespaces", "", func() *corev1.NamespaceList { return &corev1.NamespaceList{} }, func(l *corev1.NamespaceList) []corev1.Namespace { return l.Items })
}
