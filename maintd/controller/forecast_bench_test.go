package controller

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// BenchmarkForecast is what one forecast of a plan costs maintd: the
// analysis of the plan's node on the shared placement model (forecast), and
// the model made anew from every cached node and pod, once per change of
// where pods can go, whatever the number of forecasts (model). 200 nodes x
// 30 pods is the scale benchmark's cluster (maintd/bench); 1,000 x 30 a
// large one. Run:
//
//	go test ./controller -run '^$' -bench Forecast -benchmem
func BenchmarkForecast(b *testing.B) {
	for _, nodes := range []int{200, 1000} {
		c, plan, onNode := benchCluster(b, nodes, 30)
		node, err := c.nodes.Get(plan.Spec.NodeName)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		s, err := c.snapshot(node, onNode, nil, now)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("forecast/%d-nodes-%d-pods", nodes, nodes*30), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.forecasts = map[string]forecastMemo{}
				f, _, err := c.forecast(plan, s, onNode, nil, now)
				if err != nil || f.Pods != 30 {
					b.Fatalf("forecast %+v: %v", f, err)
				}
			}
		})
		b.Run(fmt.Sprintf("model/%d-nodes-%d-pods", nodes, nodes*30), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.placeEpoch.Add(1)
				if _, err := c.placement(true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchCluster caches nodes nodes with perNode pods each, every 10 pods a
// Deployment (a ReplicaSet) across 10 nodes under a PDB, each pod
// requesting CPU and memory; plan drains the first node.
func benchCluster(b testing.TB, nodes, perNode int) (*Controller, *api.MaintenancePlan, []*cachedPod) {
	idx := func(extra cache.Indexers) cache.Indexer {
		all := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		for k, f := range extra {
			all[k] = f
		}
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, all)
	}
	nodeIdx, podIdx, pdbIdx, rsIdx, depIdx := idx(nil), cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers()), idx(nil), idx(nil), idx(nil)
	c := &Controller{forecasts: map[string]forecastMemo{}}
	c.nodes, c.pods, c.pdbs = corelisters.NewNodeLister(nodeIdx), podCache{podIdx}, policylisters.NewPodDisruptionBudgetLister(pdbIdx)
	c.pvs, c.pvcs = corelisters.NewPersistentVolumeLister(idx(nil)), corelisters.NewPersistentVolumeClaimLister(idx(nil))
	c.replicaSets, c.deployments, c.statefulSets = appslisters.NewReplicaSetLister(rsIdx), appslisters.NewDeploymentLister(depIdx), appslisters.NewStatefulSetLister(idx(nil))
	c.daemonSets, c.jobs, c.cronJobs = appslisters.NewDaemonSetLister(idx(nil)), batchlisters.NewJobLister(idx(nil)), batchlisters.NewCronJobLister(idx(nil))
	c.hpas = autoscalinglisters.NewHorizontalPodAutoscalerLister(idx(nil))
	c.attachments, c.namespaces = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byNode: func(any) ([]string, error) { return nil, nil }}), corelisters.NewNamespaceLister(idx(nil))
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
	for n := range nodes {
		name := fmt.Sprintf("n%04d", n)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Allocatable: alloc}}
		must(nodeIdx.Add(node))
	}
	ready := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	apps := nodes * perNode / 10
	one := intstr.FromInt32(1)
	for a := range apps {
		app := fmt.Sprintf("app%05d", a)
		labels := map[string]string{"app": app}
		sel := &metav1.LabelSelector{MatchLabels: labels}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app, UID: types.UID("d-" + app)}, Spec: appsv1.DeploymentSpec{Selector: sel}}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app + "-1", UID: types.UID("rs-" + app),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
		must(depIdx.Add(dep))
		must(rsIdx.Add(rs))
		must(pdbIdx.Add(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: app, UID: types.UID("pdb-" + app), Generation: 1},
			Spec:   policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 10, DesiredHealthy: 9, ExpectedPods: 10}}))
		for i := range 10 {
			name := fmt.Sprintf("%s-%d", app, i)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), Labels: labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
				Spec: corev1.PodSpec{NodeName: fmt.Sprintf("n%04d", (a*10+i)%nodes), Containers: []corev1.Container{{Name: "c",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ready},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready.Add(20 * time.Second))}}}}
			must(podIdx.Add(cachePod(pod)))
		}
	}
	onNode, err := c.pods.onNode("n0000")
	must(err)
	plan := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "p"}, Spec: api.MaintenancePlanSpec{NodeName: "n0000"}}
	return c, plan, onNode
}
