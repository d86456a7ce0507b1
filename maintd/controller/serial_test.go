package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/fake"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
)

// cached is a controller whose caches hold nodes n1, n2 and plans a (for
// n1) and b (for n2), its informers not running: the tests call its steps.
func cached(t *testing.T, wrap func(maintenancev1alpha1.MaintenancePlanInterface) maintenancev1alpha1.MaintenancePlanInterface) (*Controller, *fake.Clientset) {
	t.Helper()
	var plans []runtime.Object
	for _, n := range []string{"a", "b"} {
		p := testPlan(n, "infra", map[string]string{"a": "n1", "b": "n2"}[n])
		p.UID, p.ResourceVersion, p.Finalizers = types.UID("uid-"+n), "1", []string{Finalizer}
		plans = append(plans, p)
	}
	cs := fake.NewSimpleClientset(plans...)
	core := kfake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", UID: "node-2"}})
	c := New(Config{Clients: Clients{Core: core.CoreV1(), Apps: core.AppsV1(), Batch: core.BatchV1(), Policy: core.PolicyV1(), Autoscaling: core.AutoscalingV2(), Storage: core.StorageV1()},
		Plans: noWatchList{wrap(cs.MaintenanceV1alpha1().MaintenancePlans())}, RequestTimeout: time.Second})
	for _, o := range plans {
		if err := c.planInformer.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := core.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		if err := c.nodeIndex.Add(&nodes.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	cs.ClearActions()
	return c, cs
}

// TestStopLeavesTheBacklog: once Run's context ended, a worker takes no
// queued plan (the caches are stopping; the next run reads them anew). The
// workers used to reconcile the whole backlog after SIGTERM.
func TestStopLeavesTheBacklog(t *testing.T) {
	c, cs := cached(t, same)
	c.queue.Add("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.next(ctx, c.queue, "plan", c.reconcile) {
		t.Error("a worker went on after the stop")
	}
	if a := cs.Actions(); len(a) != 0 {
		t.Errorf("%d requests after the stop: %v", len(a), a)
	}
}

// TestSlowWriteStallsNoOtherPlan: while plan a's status write hangs, plan b
// is decided and its status written: no API call is made while the
// decisions are serialised (the write used to hold the slot mutex, and one
// slow write stalled every plan).
func TestSlowWriteStallsNoOtherPlan(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	c, cs := cached(t, func(p maintenancev1alpha1.MaintenancePlanInterface) maintenancev1alpha1.MaintenancePlanInterface {
		return &slowWrite{MaintenancePlanInterface: p, plan: "a", entered: entered, release: release}
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	aDone := make(chan error, 1)
	wg.Go(func() {
		_, err := c.reconcile(context.Background(), "a")
		aDone <- err
	})
	<-entered

	done := make(chan error, 1)
	go func() {
		_, err := c.reconcile(context.Background(), "b")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reconcile b: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("plan b waited for plan a's status write")
	}
	b, err := cs.MaintenanceV1alpha1().MaintenancePlans().Get(context.Background(), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// a decided to cordon first and holds the one slot (its decision is
	// in flight): b waits, and says so.
	if b.Status.Phase != api.Pending || b.Status.Reason != api.WaitingForSlot {
		t.Errorf("plan b is %s/%s, want Pending/waiting-for-slot", b.Status.Phase, b.Status.Reason)
	}
	// a's write ends at the request timeout (1 s here), with an error.
	select {
	case err := <-aDone:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("reconcile a: %v, want the request timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("plan a's write did not end at the request timeout")
	}
}

func same(p maintenancev1alpha1.MaintenancePlanInterface) maintenancev1alpha1.MaintenancePlanInterface {
	return p
}

// slowWrite holds the status writes of one plan until release is closed
// (outside the fake clientset, which runs its reactors under its lock).
type slowWrite struct {
	maintenancev1alpha1.MaintenancePlanInterface
	plan             string
	once             sync.Once
	entered, release chan struct{}
}

func (s *slowWrite) UpdateStatus(ctx context.Context, p *api.MaintenancePlan, opts metav1.UpdateOptions) (*api.MaintenancePlan, error) {
	if p.Name == s.plan {
		s.once.Do(func() { close(s.entered) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.MaintenancePlanInterface.UpdateStatus(ctx, p, opts)
}
