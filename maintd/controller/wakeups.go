package controller

import (
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// paused handles an event of the pause switch: every plan that is not final
// decides again, and the gauge follows.
func (c *Controller) paused() {
	if m := c.cfg.Metrics; m != nil {
		v := 0.0
		if c.pauseFacts() != nil {
			v = 1
		}
		m.Paused.Set(v)
	}
	c.enqueueIf(func(p *api.MaintenancePlan) bool { return !drain.Final(&p.Status) || p.DeletionTimestamp != nil })
	c.enqueueCampaigns(func(*api.MaintenanceCampaign) bool { return true })
}

// othersChanged reports whether a plan's update can let another plan act:
// evictions of it stopped counting (fewer in flight), it can no longer act
// (its bookkeeping cleared), or it met a throttle (which holds every plan).
// New evictions only make the others wait, and the PDBs' events wake them.
func othersChanged(old, p *api.MaintenancePlan) bool {
	if drain.Final(&old.Status) != drain.Final(&p.Status) {
		return true
	}
	a, b := old.Status.EvictionProgress, p.Status.EvictionProgress
	switch {
	case a == nil || b == nil:
		return false
	case len(b.ActivePods) < len(a.ActivePods):
		return true
	}
	return throttle(b) != throttle(a)
}

// throttle is the end of a throttle a plan's status records, or zero.
func throttle(ep *api.EvictionProgress) time.Time {
	for _, c := range ep.Cooldowns {
		if c.PDB == drain.GlobalKey && c.Reason == api.EvictionThrottled {
			return c.NextActionAt.Time
		}
	}
	return time.Time{}
}

// enqueueNode queues the plans of a node.
func (c *Controller) enqueueNode(node string) {
	objs, err := c.planInformer.GetIndexer().ByIndex(byNode, node)
	if err != nil {
		return
	}
	for _, o := range objs {
		if p := o.(*api.MaintenancePlan); c.selects(p) {
			c.queue.Add(p.Name)
		}
	}
}

// enqueueWaiting queues the plans that wait for a slot or for a node that
// another plan holds, and the campaigns whose next wave waits for a slot:
// a plan's or a node's change may have freed one (slots.Held).
func (c *Controller) enqueueWaiting() {
	c.enqueueIf(func(p *api.MaintenancePlan) bool {
		return p.Status.Reason == api.WaitingForSlot || p.Status.Reason == api.NodeOccupied
	})
	c.enqueueCampaigns(func(m *api.MaintenanceCampaign) bool { return m.Status.Reason == api.WaitingForSlot })
}

// enqueueIf queues the selected plans for which want holds.
func (c *Controller) enqueueIf(want func(*api.MaintenancePlan) bool) {
	for _, o := range c.planInformer.GetIndexer().List() {
		if p := o.(*api.MaintenancePlan); c.selects(p) && want(p) {
			c.queue.Add(p.Name)
		}
	}
}

// nodeChanged handles an event of a node (old is nil but for an update).
func (c *Controller) nodeChanged(old, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	c.enqueueNode(n.Name)
	c.enqueueWaiting() // a node's cordon may have been lifted: a slot is free
	o, ok := old.(*corev1.Node)
	if !ok || placesDifferently(o, n) {
		c.nodeEpoch.Add(1)
		c.enqueueNever()
	}
	// A node new, gone or whose readiness changed: the breakers judge
	// again; one that changes where pods go may clear a capacity block.
	if !ok || nodeReady(o) != nodeReady(n) || placesDifferently(o, n) {
		c.enqueueCampaigns(func(m *api.MaintenanceCampaign) bool {
			return running(m) || m.Status.Reason == api.NoNodes || m.Status.Reason == api.InsufficientCapacity
		})
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
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*cachedPod)
	if !ok {
		return
	}
	if p.NodeName != "" {
		c.enqueueNode(p.NodeName)
	}
	// A pod bound, gone or finished frees or takes a node's room.
	o, ok := old.(*cachedPod)
	if !ok || o.NodeName != p.NodeName || o.Phase != p.Phase {
		c.podEpoch.Add(1)
		c.enqueueNever()
	}
	// A pod created, bound or Ready elsewhere may be the one a waiting
	// surge added: its plan says so.
	if !ok || o.NodeName != p.NodeName || ready(o) != ready(p) {
		c.enqueueSurging(p.Namespace)
		c.enqueueCampaigns(func(m *api.MaintenanceCampaign) bool {
			return running(m) && slices.Contains(m.Status.Namespaces, p.Namespace)
		})
	}
}

// enqueueSurging queues the plans that wait for a surge of an owner in
// namespace.
func (c *Controller) enqueueSurging(namespace string) {
	c.enqueueIf(func(p *api.MaintenancePlan) bool {
		ep := p.Status.EvictionProgress
		return p.Status.Reason == api.SurgePending && ep != nil &&
			slices.ContainsFunc(ep.Surges, func(s api.Surge) bool { return s.Namespace == namespace })
	})
}

// enqueueBudget queues the plans a budget's change concerns: those with a
// pod it selects on their node, an eviction in flight or a cooldown under
// it, and those that have not started their drain (their analysis and
// forecast read every budget of their pods' namespaces). The others do not
// read it: waking every live plan on every budget's change made a campaign
// of 20 nodes reconcile thousands of times for nothing.
func (c *Controller) enqueueBudget(b *policyv1.PodDisruptionBudget) {
	sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
	if err != nil || b.Spec.Selector == nil {
		sel = labels.Nothing()
	}
	key := b.Namespace + "/" + b.Name
	c.enqueueIf(func(p *api.MaintenancePlan) bool {
		if drain.Final(&p.Status) && p.DeletionTimestamp == nil {
			return false
		}
		ep := p.Status.EvictionProgress
		if ep == nil || ep.Scope == "" || p.DeletionTimestamp != nil {
			return p.Status.Reason != api.WaitingForSlot || p.DeletionTimestamp != nil
		}
		for _, a := range ep.ActivePods {
			if a.Namespace == b.Namespace {
				return true // its PDB field is the name the API answered with, or none yet
			}
		}
		for _, cd := range ep.Cooldowns {
			if cd.PDB == key || cd.PDB == drain.GlobalKey {
				return true
			}
		}
		pods, err := c.pods.onNode(p.Spec.NodeName)
		if err != nil {
			return true
		}
		return slices.ContainsFunc(pods, func(pod *cachedPod) bool {
			return pod.Namespace == b.Namespace && sel.Matches(labels.Set(pod.Labels))
		})
	})
}

// enqueueNever queues the plans that a drain forecast of never blocks: a
// change of where pods can go may clear it.
func (c *Controller) enqueueNever() {
	c.enqueueIf(func(p *api.MaintenancePlan) bool { return p.Status.Reason == api.DrainNeverCompletes })
}

// enqueueLive queues every plan that can still act, except those waiting
// for a slot: another plan's change wakes them (enqueueWaiting).
func (c *Controller) enqueueLive() {
	c.enqueueIf(func(p *api.MaintenancePlan) bool {
		return (!drain.Final(&p.Status) && p.Status.Reason != api.WaitingForSlot) || p.DeletionTimestamp != nil
	})
}

// handleEvents registers what each informer's events wake: the plans and
// campaigns whose decision they may change.
func (c *Controller) handleEvents(s sources) {
	if c.campaignInformer != nil {
		_, err := c.campaignInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.campaignChanged(nil, obj); c.handled() },
			UpdateFunc: func(old, obj any) { c.campaignChanged(old, obj); c.handled() },
			DeleteFunc: func(obj any) { c.handled() },
		})
		utilruntime.Must(err)
	}
	// handle calls f on every event of i; update is false for the
	// informers whose updates are status churn (f runs on add and delete).
	handle := func(i cache.SharedIndexInformer, update bool, f func(obj any)) {
		_, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { f(obj); c.handled() },
			UpdateFunc: func(_, obj any) {
				if update {
					f(obj)
				}
				c.handled()
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				f(obj)
				c.handled()
			},
		})
		utilruntime.Must(err)
	}
	plan := func(obj any) {
		if p, ok := obj.(*api.MaintenancePlan); ok {
			if c.selects(p) {
				c.queue.Add(p.Name)
			}
			c.enqueueWaiting() // a slot or a node may have been freed
		}
	}
	campaignPlan := func(old, obj any) {
		p, ok := obj.(*api.MaintenancePlan)
		if !ok {
			return
		}
		o, _ := old.(*api.MaintenancePlan)
		c.campaignPlanChanged(o, p)
	}
	_, err := c.planInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { plan(obj); campaignPlan(nil, obj); c.handled() },
		UpdateFunc: func(old, obj any) {
			plan(obj)
			campaignPlan(old, obj)
			if o, ok := old.(*api.MaintenancePlan); ok {
				if p, ok := obj.(*api.MaintenancePlan); ok && othersChanged(o, p) {
					c.enqueueLive() // what the other plans count of this one changed
				}
			}
			c.handled()
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			plan(obj)
			campaignPlan(nil, obj)
			c.enqueueLive() // its evictions in flight and its throttle no longer count
			c.handled()
		},
	})
	utilruntime.Must(err)
	// Nodes and pods: a change wakes the plans of the node; one that
	// changes where pods can go (placement) wakes the plans that a drain
	// forecast blocked, and changes their forecasts' facts.
	_, err = s.node.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeChanged(nil, obj); c.handled() },
		UpdateFunc: func(old, obj any) { c.nodeChanged(old, obj); c.handled() },
		DeleteFunc: func(obj any) { c.nodeChanged(nil, obj); c.handled() },
	})
	utilruntime.Must(err)
	_, err = s.pod.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(nil, obj); c.handled() },
		UpdateFunc: func(old, obj any) { c.podChanged(old, obj); c.handled() },
		DeleteFunc: func(obj any) { c.podChanged(nil, obj); c.handled() },
	})
	utilruntime.Must(err)
	live := func(any) { c.enqueueLive() }
	handle(s.pdb, true, func(obj any) {
		if b, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			c.enqueueBudget(b)
			c.enqueueCampaigns(func(m *api.MaintenanceCampaign) bool {
				return running(m) && slices.Contains(m.Status.Namespaces, b.Namespace)
			})
		}
	})
	// The owners and volumes the analysis reads: a change to one wakes the
	// live plans on their add and delete (their updates are status churn).
	for _, i := range []cache.SharedIndexInformer{s.rs, s.dep, s.sts, s.ds, s.job, s.cron, s.pv, s.pvc, s.hpa} {
		handle(i, false, live)
	}
	if s.pause != nil {
		handle(s.pause, true, func(any) { c.paused() })
	}
}
