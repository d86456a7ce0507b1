package controller

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	planlisters "github.com/sentinel-go/sentinel/maintd/client/listers/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// BenchmarkShared is what a plan's decision does under the lock every
// decision shares, at 1,000 nodes and 30,000 pods with a campaign's wave of
// 100 plans draining (each with its node cordoned and 3 evictions in
// flight): the shared facts (slots held, the others' evictions and
// throttles, the wave, the rivals) and drain.Decide. Run:
//
//	go test ./controller -run '^$' -bench Shared -benchmem
func BenchmarkShared(b *testing.B) {
	const nodes, plans = 1000, 100
	c, _, _ := benchCluster(b, nodes, 30)
	c.inflight, c.superseded, c.analyses = map[string]*api.MaintenancePlan{}, map[string]write{}, map[string]analysisMemo{}
	c.cfg.MaxNodes = plans
	nodeIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byOwner: func(o any) ([]string, error) {
		if v := o.(*corev1.Node).Annotations[cordon.OwnerAnnotation]; v != "" {
			return []string{v}, nil
		}
		return nil, nil
	}})
	planIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c.plans, c.nodeIndex = planlisters.NewMaintenancePlanLister(planIdx), nodeIdx
	started := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	var first *api.MaintenancePlan
	for i := range plans {
		node := fmt.Sprintf("n%04d", i*10)
		p := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + node, UID: types.UID("uid-" + node), ResourceVersion: "1",
			Labels: map[string]string{api.CampaignLabel: "fleet", api.WaveLabel: "1"}},
			Spec: api.MaintenancePlanSpec{NodeName: node, AllowAllWorkloads: true}}
		ep := &api.EvictionProgress{Scope: drain.Scope(p.Spec), StartedAt: &started, NodeUID: types.UID(node)}
		onNode, err := c.pods.onNode(node)
		if err != nil {
			b.Fatal(err)
		}
		for _, pod := range onNode[:3] {
			ep.ActivePods = append(ep.ActivePods, api.ActivePod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, PDB: pod.Labels["app"], Outcome: drain.Accepted, RequestedAt: started})
		}
		p.Status = api.MaintenancePlanStatus{Phase: api.Draining, Reason: api.EvictionAccepted, EvictionProgress: ep}
		if err := planIdx.Add(p); err != nil {
			b.Fatal(err)
		}
		if first == nil {
			first = p
		}
	}
	for n := range nodes {
		name := fmt.Sprintf("n%04d", n)
		o, err := c.nodes.Get(name)
		if err != nil {
			b.Fatal(err)
		}
		node := o.DeepCopy()
		if n%10 == 0 && n/10 < plans {
			node.Spec.Unschedulable = true
			node.Annotations = map[string]string{cordon.OwnerAnnotation: drain.Owner(&api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + name, UID: types.UID("uid-" + name)}})}
		}
		if err := nodeIdx.Add(node); err != nil {
			b.Fatal(err)
		}
	}
	c.nodes = corelisters.NewNodeLister(nodeIdx)
	c.hpas = autoscalinglisters.NewHorizontalPodAutoscalerLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
	now := started.Add(time.Minute)
	f, err := c.observe(first, now)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g := f
		g.Pods = map[types.UID]drain.Pod{}
		for k, v := range f.Pods {
			g.Pods[k] = v
		}
		c.slot.Lock()
		if err := c.shared(first, &g); err != nil {
			b.Fatal(err)
		}
		dec := drain.Decide(g, first, now)
		c.slot.Unlock()
		if g.Holders != plans-1 || len(g.Others) != 3*(plans-1) || dec.Status.Phase == "" {
			b.Fatalf("holders %d, others %d, phase %q", g.Holders, len(g.Others), dec.Status.Phase)
		}
	}
}
