package controller

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/slots"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// An event wakes the plans and campaigns whose last decision declared a
// wait on what it changed (drain.Decision.Waits, campaign.Decision.Waits):
// the event says what changed, the index says who waits on it. Nothing
// here knows why a decision waits.

// wake queues the plans and campaigns waiting on w.
func (c *Controller) wake(w waits.Wait) {
	c.planWaits.Waiting(w, c.queue.Add)
	c.campaignWaits.Waiting(w, c.campaignQueue.Add)
}

// paused handles an event of the pause switch: once it is of the switch
// CatchUp read (by UID), the cache shows what was read; its waiters decide
// again, and the gauge follows. An event of an older switch (deleted before
// the one read was made) leaves the one read in force: a cache that lags
// never lifts a pause its leader read live.
func (c *Controller) paused(old, obj any) {
	if m, err := meta(old, obj); err == nil {
		c.caughtMu.Lock()
		if c.caughtPause != nil && c.caughtPause.UID == m.GetUID() {
			c.caughtPause = nil
		}
		c.caughtMu.Unlock()
	}
	if m := c.cfg.Metrics; m != nil {
		v := 0.0
		if c.pauseFacts() != nil {
			v = 1
		}
		m.Paused.Set(v)
	}
	c.wake(waits.Wait{On: waits.Pause})
}

// nodeChanged handles an event of a node (old is nil but for an update;
// handleEvents hands a delete over as an add, its tombstone unwrapped).
func (c *Controller) nodeChanged(old, obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	c.wake(waits.Wait{On: waits.Node, Key: n.Name})
	if name, _, ok := drain.ParseOwner(n.Annotations[cordon.OwnerAnnotation]); ok && old == nil {
		c.queue.Add(name) // a cordon its plan may have left behind (releaseOrphans)
	}
	o, ok := old.(*corev1.Node)
	if !ok || o.Annotations[cordon.OwnerAnnotation] != n.Annotations[cordon.OwnerAnnotation] {
		c.wake(waits.Wait{On: waits.Slot}) // slots.Held reads the annotation
	}
	if !ok || placesDifferently(o, n) {
		c.nodeEpoch.Add(1)
		c.placeEpoch.Add(1)
		c.wake(waits.Wait{On: waits.Placement})
	}
	if !ok || nodeReady(o) != nodeReady(n) {
		c.wake(waits.Wait{On: waits.Nodes})
	}
}

// placesDifferently reports whether a node's update changes where the
// scheduler may place pods: its cordon, taints, labels or allocatable.
func placesDifferently(a, b *corev1.Node) bool {
	return a.Spec.Unschedulable != b.Spec.Unschedulable || !apiequality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints) ||
		!maps.Equal(a.Labels, b.Labels) || !apiequality.Semantic.DeepEqual(a.Status.Allocatable, b.Status.Allocatable)
}

// podChanged handles an event of a pod (old is nil but for an update).
func (c *Controller) podChanged(old, obj any) {
	p, ok := obj.(*cachedPod)
	if !ok {
		return
	}
	if p.NodeName != "" {
		c.wake(waits.Wait{On: waits.Node, Key: p.NodeName})
	}
	o, ok := old.(*cachedPod)
	// The placement model reads where pods are, whether they finished or
	// are going, and their labels (spread, anti-affinity).
	if !ok || o.NodeName != p.NodeName || o.Phase != p.Phase || (o.DeletionTimestamp == nil) != (p.DeletionTimestamp == nil) || !maps.Equal(o.Labels, p.Labels) {
		c.placeEpoch.Add(1)
	}
	// A pod bound, gone or finished frees or takes a node's room.
	if !ok || o.NodeName != p.NodeName || o.Phase != p.Phase {
		c.podEpoch.Add(1)
		c.wake(waits.Wait{On: waits.Placement})
	}
	if !ok || o.NodeName != p.NodeName || ready(o) != ready(p) {
		c.wake(waits.Wait{On: waits.Pods, Key: p.Namespace})
	}
}

// budgetChanged handles an event of a PodDisruptionBudget (old is nil but
// for an update).
func (c *Controller) budgetChanged(old, obj any) {
	b, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	c.wake(waits.Wait{On: waits.PDB, Key: b.Namespace + "/" + b.Name})
	c.wake(waits.Wait{On: waits.PDBs, Key: b.Namespace})
	if o, ok := old.(*policyv1.PodDisruptionBudget); !ok || o.Generation != b.Generation {
		c.wake(waits.Wait{On: waits.Budgets, Key: b.Namespace})
	}
}

// planChanged handles an event of a plan (old is nil for a plan created,
// p nil for one deleted).
func (c *Controller) planChanged(old, p *api.MaintenancePlan) {
	q := p
	if q == nil {
		q = old
	}
	if c.selects(q) {
		c.queue.Add(q.Name)
	}
	c.wake(waits.Wait{On: waits.Node, Key: q.Spec.NodeName}) // the other plans of its node
	if slots.Changed(old, p) {
		c.wake(waits.Wait{On: waits.Slot})
	}
	if p == nil || old == nil || drain.SharesLess(&old.Status, &p.Status) {
		c.wake(waits.Wait{On: waits.Others})
	}
	name := q.Labels[api.CampaignLabel]
	if name == "" || (old != nil && p != nil && old.Status.Phase == p.Status.Phase && old.Status.Reason == p.Status.Reason && old.Spec.Release == p.Spec.Release) {
		return
	}
	c.wake(waits.Wait{On: waits.Campaign, Key: name})
	if w := campaign.WaveOf(q); w > 0 {
		c.wake(waits.Wait{On: waits.Wave, Key: drain.WaveKey(name, w)})
	}
}

// handleEvents registers what each informer's events wake.
func (c *Controller) handleEvents(s sources) {
	// on calls f with the old and the new object of every event of i
	// (old nil for an add, new nil for a delete).
	on := func(i cache.SharedIndexInformer, f func(old, obj any)) {
		_, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { f(nil, obj); c.handled() },
			UpdateFunc: func(old, obj any) { f(old, obj); c.handled() },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				f(obj, nil)
				c.handled()
			},
		})
		utilruntime.Must(err)
	}
	if c.campaignInformer != nil {
		on(c.campaignInformer, func(old, obj any) {
			if m, err := meta(old, obj); err == nil {
				c.caughtMu.Lock()
				delete(c.caughtCampaigns, m.GetName()) // the cache shows it now
				c.caughtMu.Unlock()
			}
			if obj != nil {
				c.campaignChanged(old, obj)
			}
		})
	}
	on(c.planInformer, func(old, obj any) {
		o, _ := old.(*api.MaintenancePlan)
		p, _ := obj.(*api.MaintenancePlan)
		if o != nil || p != nil {
			c.planChanged(o, p)
		}
	})
	// A deleted object is handled as an update from nothing, so that
	// every change it makes wakes its waiters.
	gone := func(f func(old, obj any)) func(old, obj any) {
		return func(old, obj any) {
			if obj == nil {
				f(nil, old)
				return
			}
			f(old, obj)
		}
	}
	on(s.node, gone(c.nodeChanged))
	podChanged := gone(c.podChanged)
	on(s.pod, func(old, obj any) {
		c.learnPod(old, obj) // forecast learning (learn.go): adds and deletes told apart
		podChanged(old, obj)
	})
	on(s.pdb, gone(c.budgetChanged))
	// The owners and volumes the analysis reads: their adds, deletes and
	// spec changes (a new generation), and their replicas and Ready
	// replicas (a workload whose every Ready replica is on the node:
	// all-replicas-on-node); their other updates are status churn.
	for _, i := range []cache.SharedIndexInformer{s.rs, s.dep, s.sts, s.ds, s.job, s.cron, s.pv, s.pvc, s.hpa} {
		on(i, func(old, obj any) {
			m, err := meta(old, obj)
			if err != nil {
				return
			}
			if obj != nil {
				// An owner carrying a surge: its plan looks whether it is
				// left behind (releaseOrphans).
				if name, _, ok := drain.ParseOwner(m.GetAnnotations()[drain.SurgeAnnotation]); ok {
					c.queue.Add(name)
				}
			}
			// A surge's mark put or taken away is no new generation, and
			// another plan's surge waits for it.
			if o, err := apimeta.Accessor(old); old != nil && obj != nil && err == nil && o.GetGeneration() == m.GetGeneration() &&
				o.GetAnnotations()[drain.SurgeAnnotation] == m.GetAnnotations()[drain.SurgeAnnotation] && replicasOf(old) == replicasOf(obj) {
				return
			}
			c.wake(waits.Wait{On: waits.Owners, Key: m.GetNamespace()})
		})
	}
	// A volume attached or detached: the plans of its node decide again
	// (node.status.volumesAttached comes with the node's events).
	on(s.va, func(old, obj any) {
		o, _ := old.(*storagev1.VolumeAttachment)
		n, _ := obj.(*storagev1.VolumeAttachment)
		c.volumeTimes.observe(o, n, c.cfg.Now())
		for _, o := range []any{old, obj} {
			if va, ok := o.(*storagev1.VolumeAttachment); ok {
				c.wake(waits.Wait{On: waits.Node, Key: va.Spec.NodeName})
			}
		}
	})
	if s.pause != nil {
		on(s.pause, c.paused)
	}
	if s.override != nil {
		on(s.override, c.overrideChanged)
	}
}

// replicasOf is what the analysis reads of an owner's status: its replicas
// and Ready replicas (zero for the other kinds).
func replicasOf(o any) [2]int32 {
	switch o := o.(type) {
	case *appsv1.ReplicaSet:
		return [2]int32{o.Status.Replicas, o.Status.ReadyReplicas}
	case *appsv1.Deployment:
		return [2]int32{o.Status.Replicas, o.Status.ReadyReplicas}
	case *appsv1.StatefulSet:
		return [2]int32{o.Status.Replicas, o.Status.ReadyReplicas}
	}
	return [2]int32{}
}

// meta is the object of an add (obj) or a delete (old).
func meta(old, obj any) (metav1.Object, error) {
	if obj == nil {
		obj = old
	}
	return apimeta.Accessor(obj)
}
