package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	kfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/fake"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
)

// noWatchList is a fake's plans client that says, as the fake Clientset
// does, that it cannot serve streamed lists.
type noWatchList struct {
	maintenancev1alpha1.MaintenancePlanInterface
}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func testPlan(name, team, node string) *api.MaintenancePlan {
	return &api.MaintenancePlan{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": team}},
		Spec:       api.MaintenancePlanSpec{NodeName: node},
	}
}

// TestPlanInformer: the generated plan informer lists and watches every
// plan through Config.Plans (the slots and evictions in flight are counted
// cluster-wide), indexes them by node, and the controller queues only the
// plans its selector selects.
func TestPlanInformer(t *testing.T) {
	cs := fake.NewSimpleClientset(testPlan("a", "infra", "n1"), testPlan("b", "other", "n1"))
	core := &kfake.Clientset{}
	c := New(Config{
		Clients:  Clients{Core: core.CoreV1(), Apps: core.AppsV1(), Batch: core.BatchV1(), Policy: core.PolicyV1(), Autoscaling: core.AutoscalingV2(), Storage: core.StorageV1()},
		Plans:    noWatchList{cs.MaintenanceV1alpha1().MaintenancePlans()},
		Selector: labels.SelectorFromSet(labels.Set{"team": "infra"}),
	})
	// The fake runs its reactors under its lock: a create waits until the
	// watch that the reactor signals is registered.
	watching := make(chan string, 10)
	cs.PrependWatchReactor("maintenanceplans", func(a clienttesting.Action) (bool, watch.Interface, error) {
		watching <- a.(clienttesting.WatchActionImpl).GetWatchRestrictions().Labels.String()
		return false, nil, nil
	})
	added := make(chan string, 10)
	if _, err := c.planInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*api.MaintenancePlan).Name },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.planInformer.RunWithContext(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	if !cache.WaitForCacheSync(ctx.Done(), c.planInformer.HasSynced) {
		t.Fatal("the plan cache never synced")
	}

	var selectors []string
	for _, a := range cs.Actions() {
		if l, ok := a.(clienttesting.ListActionImpl); ok {
			selectors = append(selectors, l.GetListRestrictions().Labels.String())
		}
	}
	if diff := cmp.Diff([]string{""}, selectors); diff != "" {
		t.Errorf("list label selectors (-want +got):\n%s", diff)
	}
	first := []string{<-added, <-added}
	slices.Sort(first)
	if diff := cmp.Diff([]string{"a", "b"}, first); diff != "" {
		t.Errorf("plans added by the list (-want +got):\n%s", diff)
	}

	// A plan created after the list comes through the watch.
	if got := <-watching; got != "" {
		t.Errorf("watch label selector = %q, want none", got)
	}
	if _, err := cs.MaintenanceV1alpha1().MaintenancePlans().Create(ctx, testPlan("c", "infra", "n2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := <-added; got != "c" {
		t.Errorf("plan added by the watch = %s, want c", got)
	}

	all, err := c.plans.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("cached plans (-want +got):\n%s", diff)
	}
	onN1, err := c.planInformer.GetIndexer().ByIndex(byNode, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(onN1) != 2 {
		t.Errorf("plans indexed on n1 = %d, want a and b", len(onN1))
	}
	// The controller's handler ran for the three adds before ours saw the
	// third? Not ordered: wait until it queued what it will queue.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.queue.Len() >= 2, nil
	}); err != nil {
		t.Fatalf("queued %d plans, want 2", c.queue.Len())
	}
	var queued []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		queued = append(queued, k)
		c.queue.Done(k)
	}
	slices.Sort(queued)
	if diff := cmp.Diff([]string{"a", "c"}, queued); diff != "" {
		t.Errorf("queued plans (-want +got):\n%s", diff)
	}
}
