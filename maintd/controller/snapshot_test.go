package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// cluster is k8s-snapshot's own test cluster: pods on three nodes under
// every owner kind (a Deployment's ReplicaSets, a StatefulSet, a DaemonSet,
// a CronJob's Job, a bare Job, bare pods), PDBs, claims and volumes.
const cluster = "../../k8s-snapshot/snapshot/testdata/cluster.yaml"

// TestSnapshotIsForNodes: the snapshot a reconcile builds from the caches,
// reading only the owners and claims it needs, is the one snapshot.ForNodes
// trims from a snapshot of every cached object (what k8s-snapshot --node
// writes), object for object, for every node; and the analysis of it, from
// objects slimmed as the caches hold them, is the analysis of the objects
// as the API serves them.
func TestSnapshotIsForNodes(t *testing.T) {
	data, err := os.ReadFile(cluster)
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{}
	indexer := func(extra cache.Indexers) cache.Indexer {
		idx := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		for k, f := range extra {
			idx[k] = f
		}
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, idx)
	}
	nodes, pods, pdbs, pvs, pvcs := indexer(nil), cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers()), indexer(nil), indexer(nil), indexer(nil)
	rs, deps, sts, dss, jobs, cjs, hpas := indexer(nil), indexer(nil), indexer(nil), indexer(nil), indexer(nil), indexer(nil), indexer(nil)
	vas := indexer(cache.Indexers{byNode: func(o any) ([]string, error) { return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}, nil }})
	nss := indexer(nil)
	c.attachments, c.namespaces = vas, corelisters.NewNamespaceLister(nss)
	c.nodes, c.pods, c.pdbs = corelisters.NewNodeLister(nodes), podCache{pods}, policylisters.NewPodDisruptionBudgetLister(pdbs)
	c.pvs, c.pvcs = corelisters.NewPersistentVolumeLister(pvs), corelisters.NewPersistentVolumeClaimLister(pvcs)
	c.replicaSets, c.deployments, c.statefulSets = appslisters.NewReplicaSetLister(rs), appslisters.NewDeploymentLister(deps), appslisters.NewStatefulSetLister(sts)
	c.daemonSets, c.jobs, c.cronJobs = appslisters.NewDaemonSetLister(dss), batchlisters.NewJobLister(jobs), batchlisters.NewCronJobLister(cjs)
	c.hpas = autoscalinglisters.NewHorizontalPodAutoscalerLister(hpas)

	// Every object of the kinds maintd caches, in the caches and in one
	// snapshot (StorageClasses are not cached).
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	full, slimmed := snapshot.New(), snapshot.New()
	full.Metadata.CapturedAt.Time, slimmed.Metadata.CapturedAt.Time = now, now
	cached := 0
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The analysis wants every object to have a UID; the file gives
		// those that owner references name.
		if m := obj.(metav1.Object); m.GetUID() == "" {
			m.SetUID(types.UID(fmt.Sprintf("%T/%s/%s", obj, m.GetNamespace(), m.GetName())))
		}
		if !add(full, obj) {
			continue
		}
		cached++
	}
	if cached < 30 {
		t.Fatalf("%s: %d objects of the cached kinds, want the whole test cluster", cluster, cached)
	}
	sortSnapshot(full)
	// The caches hold the objects slimmed; slimmed is a snapshot of them.
	slimmed.Nodes, slimmed.Pods, slimmed.PodDisruptionBudgets = cacheAll(t, nodes, full.Nodes), cacheAll(t, pods, full.Pods), cacheAll(t, pdbs, full.PodDisruptionBudgets)
	slimmed.PersistentVolumes, slimmed.PersistentVolumeClaims = cacheAll(t, pvs, full.PersistentVolumes), cacheAll(t, pvcs, full.PersistentVolumeClaims)
	slimmed.ReplicaSets, slimmed.Deployments, slimmed.StatefulSets = cacheAll(t, rs, full.ReplicaSets), cacheAll(t, deps, full.Deployments), cacheAll(t, sts, full.StatefulSets)
	slimmed.DaemonSets, slimmed.Jobs, slimmed.CronJobs = cacheAll(t, dss, full.DaemonSets), cacheAll(t, jobs, full.Jobs), cacheAll(t, cjs, full.CronJobs)
	slimmed.HorizontalPodAutoscalers = cacheAll(t, hpas, full.HorizontalPodAutoscalers)
	slimmed.VolumeAttachments, slimmed.Namespaces = cacheAll(t, vas, full.VolumeAttachments), cacheAll(t, nss, full.Namespaces)

	for _, node := range full.Nodes {
		t.Run(node.Name, func(t *testing.T) {
			want, err := snapshot.ForNodes(slimmed, node.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Pods) == 0 {
				t.Fatalf("no pod on %s in %s", node.Name, cluster)
			}
			onNode, err := c.pods.onNode(node.Name)
			if err != nil {
				t.Fatal(err)
			}
			var budgets []*policyv1.PodDisruptionBudget
			seen := map[string]bool{}
			for _, o := range onNode {
				if ns := o.Namespace; !seen[ns] {
					seen[ns] = true
					inNS, err := c.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
					if err != nil {
						t.Fatal(err)
					}
					budgets = append(budgets, inNS...)
				}
			}
			cachedNode, err := c.nodes.Get(node.Name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.snapshot(cachedNode, onNode, budgets, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(encode(t, want), encode(t, got)); diff != "" {
				t.Errorf("snapshot of %s from the caches (-ForNodes of every object +built): %s", node.Name, diff)
			}
			served, err := snapshot.ForNodes(full, node.Name)
			if err != nil {
				t.Fatal(err)
			}
			// With and without a surge: the verdicts on every pod (the
			// owner a surge scales, or why none can) agree too.
			for _, surge := range []bool{false, true} {
				opts := analyze.Options{Nodes: []string{node.Name}, Now: now, Surge: surge}
				wantReport, err := analyze.AnalyzeObjects(served, opts)
				if err != nil {
					t.Fatal(err)
				}
				gotReport, err := analyze.AnalyzeObjects(got, opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(encode(t, wantReport), encode(t, gotReport)); diff != "" {
					t.Errorf("analysis of %s, surge %t (-objects as served +as cached): %s", node.Name, surge, diff)
				}

				// The drain forecast maintd makes from its caches is the
				// one k8s-analyze makes from a whole-cluster snapshot.
				c.forecasts = map[string]forecastMemo{}
				plan := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "p"}, Spec: api.MaintenancePlanSpec{NodeName: node.Name}}
				if surge {
					plan.Spec.Surge = api.SurgeIfNeeded
				}
				gotForecast, _, err := c.forecast(plan, got, onNode, budgets, now)
				if err != nil {
					t.Fatal(err)
				}
				whole, err := analyze.AnalyzeObjects(full, analyze.Options{Nodes: []string{node.Name}, Now: now, Surge: surge,
					Forecast: &analyze.ForecastOptions{Concurrency: drain.DefaultMaxConcurrentEvictions, Reaction: Reaction}})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(whole.Nodes[0].Forecast, gotForecast); diff != "" {
					t.Errorf("forecast of %s, surge %t (-k8s-analyze on every object +maintd from its caches): %s", node.Name, surge, diff)
				}
				if gotForecast.Pods == 0 {
					t.Errorf("forecast of %s times no pod", node.Name)
				}
			}
		})
	}
}

// sortSnapshot orders each kind's objects by namespace and name, as the
// snapshot built from the caches is ordered.
func sortSnapshot(s *snapshot.Snapshot) {
	s.Nodes, s.Pods, s.PodDisruptionBudgets = sorted(s.Nodes), sorted(s.Pods), sorted(s.PodDisruptionBudgets)
	s.PersistentVolumes, s.PersistentVolumeClaims = sorted(s.PersistentVolumes), sorted(s.PersistentVolumeClaims)
	s.ReplicaSets, s.Deployments, s.StatefulSets = sorted(s.ReplicaSets), sorted(s.Deployments), sorted(s.StatefulSets)
	s.DaemonSets, s.Jobs, s.CronJobs = sorted(s.DaemonSets), sorted(s.Jobs), sorted(s.CronJobs)
	s.HorizontalPodAutoscalers = sorted(s.HorizontalPodAutoscalers)
	s.VolumeAttachments, s.Namespaces = sorted(s.VolumeAttachments), sorted(s.Namespaces)
}

func sorted[T any, PT interface {
	*T
	metav1.Object
}](objs []T) []T {
	ptrs := make([]PT, len(objs))
	for i := range objs {
		ptrs[i] = &objs[i]
	}
	return values(ptrs)
}

// cacheAll adds objs to a cache as the informers do (slim), and returns
// them as the cache holds them.
func cacheAll[T any, PT interface {
	*T
	runtime.Object
}](t *testing.T, idx cache.Indexer, objs []T) []T {
	t.Helper()
	out := make([]T, len(objs))
	for i := range objs {
		small, err := slim(PT(&objs[i]).DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(small); err != nil {
			t.Fatal(err)
		}
		if p, ok := small.(*cachedPod); ok {
			small = p.pod()
		}
		out[i] = *small.(PT)
	}
	return out
}

// add appends obj to the objects of its kind in s, if maintd caches that
// kind.
func add(s *snapshot.Snapshot, obj runtime.Object) bool {
	switch o := obj.(type) {
	case *corev1.Node:
		s.Nodes = append(s.Nodes, *o)
	case *corev1.Pod:
		s.Pods = append(s.Pods, *o)
	case *policyv1.PodDisruptionBudget:
		s.PodDisruptionBudgets = append(s.PodDisruptionBudgets, *o)
	case *corev1.PersistentVolume:
		s.PersistentVolumes = append(s.PersistentVolumes, *o)
	case *corev1.PersistentVolumeClaim:
		s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, *o)
	case *appsv1.ReplicaSet:
		s.ReplicaSets = append(s.ReplicaSets, *o)
	case *appsv1.Deployment:
		s.Deployments = append(s.Deployments, *o)
	case *appsv1.StatefulSet:
		s.StatefulSets = append(s.StatefulSets, *o)
	case *appsv1.DaemonSet:
		s.DaemonSets = append(s.DaemonSets, *o)
	case *batchv1.Job:
		s.Jobs = append(s.Jobs, *o)
	case *batchv1.CronJob:
		s.CronJobs = append(s.CronJobs, *o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		s.HorizontalPodAutoscalers = append(s.HorizontalPodAutoscalers, *o)
	case *storagev1.VolumeAttachment:
		s.VolumeAttachments = append(s.VolumeAttachments, *o)
	case *corev1.Namespace:
		s.Namespaces = append(s.Namespaces, *o)
	default:
		return false
	}
	return true
}

func encode(t *testing.T, s any) string {
	t.Helper()
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
