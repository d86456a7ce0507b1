// Package controller runs MaintenancePlans: client-go informers feed a
// rate-limited workqueue; each worker reads the facts from the caches, asks
// package drain what to do, persists the status it returns BEFORE any write
// to a node or a pod, acts through the cordon and evict packages, and
// records the classified outcome.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	autoscalingv2client "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	planinformers "github.com/sentinel-go/sentinel/maintd/client/informers/api/v1alpha1"
	planlisters "github.com/sentinel-go/sentinel/maintd/client/listers/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/metrics"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// Finalizer holds a plan until its cordon is lifted.
const Finalizer = "maintenance.sentinel.dev/uncordon"

// byNode indexes pods by spec.nodeName and plans by spec.nodeName; byOwner
// indexes nodes by a cordon owner annotation that maintd wrote.
const (
	byNode  = "nodeName"
	byOwner = "cordonOwner"
)

// Clients are the typed clients of the API groups maintd reads and writes,
// each made on its own: the clientset would make one for every group.
type Clients struct {
	Core   corev1client.CoreV1Interface
	Apps   appsv1client.AppsV1Interface
	Batch  batchv1client.BatchV1Interface
	Policy policyv1client.PolicyV1Interface
	// Autoscaling reads the HorizontalPodAutoscalers: a surge never scales
	// an owner one of them scales.
	Autoscaling autoscalingv2client.AutoscalingV2Interface
}

// Config is what a Controller needs.
type Config struct {
	Clients Clients
	// Plans is the MaintenancePlan client (generated: maintd/client). The
	// plan informer lists and watches through it too, with streamed lists
	// unless it has IsWatchListSemanticsUnSupported() returning true, as
	// the fake Clientset has and its typed clients have not.
	Plans maintenancev1alpha1.MaintenancePlanInterface
	// Campaigns is the MaintenanceCampaign client (nil: campaigns are not
	// run).
	Campaigns maintenancev1alpha1.MaintenanceCampaignInterface
	// Poster sends evictions (one call each, no hidden retries).
	Poster evict.Poster
	// Selector selects the plans this maintd runs (empty: all).
	Selector labels.Selector
	// MaxNodes is the number of nodes in maintenance at once.
	MaxNodes int
	// Pause is the cluster-wide pause switch: while a ConfigMap of this
	// namespace and name exists, no plan cordons, evicts or surges (zero:
	// no switch).
	Pause types.NamespacedName
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives the controller's log (default slog.Default()).
	Log *slog.Logger
	// Events records Kubernetes events (optional).
	Events events.EventRecorder
	// Metrics and QueueMetrics instrument the controller (optional).
	Metrics      *metrics.Metrics
	QueueMetrics workqueue.MetricsProvider
	// RequestTimeout bounds every API call but the evictions, which
	// spec.evictionTimeout bounds (default DefaultRequestTimeout).
	RequestTimeout time.Duration

	// The seams of a deterministic simulation (package sim); a real maintd
	// leaves them unset.
	//
	// Queue replaces the rate-limited workqueue (one whose delays follow a
	// simulated clock).
	Queue workqueue.TypedRateLimitingInterface[string]
	// Handled is called after each informer event has been handled, so a
	// simulation knows when the caches and the queue show what it sent.
	Handled func()
	// Serial sends a decision's evictions one by one in target order
	// instead of in parallel.
	Serial bool
}

// DefaultRequestTimeout bounds an API call of the controller.
const DefaultRequestTimeout = 30 * time.Second

// Controller reconciles MaintenancePlans.
type Controller struct {
	cfg   Config
	queue workqueue.TypedRateLimitingInterface[string]

	informers    []cache.SharedIndexInformer // of the built-in kinds
	planInformer cache.SharedIndexInformer
	plans        planlisters.MaintenancePlanLister
	// campaignInformer is nil when Config.Campaigns is.
	campaignInformer cache.SharedIndexInformer
	campaigns        planlisters.MaintenanceCampaignLister
	nodes            corelisters.NodeLister
	nodeIndex        cache.Indexer
	pods             podCache
	pvs              corelisters.PersistentVolumeLister
	pvcs             corelisters.PersistentVolumeClaimLister
	pdbs             policylisters.PodDisruptionBudgetLister
	replicaSets      appslisters.ReplicaSetLister
	deployments      appslisters.DeploymentLister
	statefulSets     appslisters.StatefulSetLister
	daemonSets       appslisters.DaemonSetLister
	jobs             batchlisters.JobLister
	cronJobs         batchlisters.CronJobLister
	hpas             autoscalinglisters.HorizontalPodAutoscalerLister
	// pause holds the pause ConfigMap, if it exists (nil: no switch).
	pause cache.Store

	mu sync.Mutex
	// slot serialises the plans' decisions (decide): the next plan reads
	// what the last one decided (inflight) before its status is written.
	// No API call is made while it is held.
	slot sync.Mutex
	// inflight are the statuses decided and not yet written, by plan name.
	inflight map[string]*api.MaintenancePlan
	// throttledUntil is when the last throttling 429 stops holding every
	// eviction.
	throttledUntil time.Time
	// synced is set once every cache has synced.
	synced atomic.Bool
	// start starts the informers once; running waits for them.
	start   sync.Once
	running sync.WaitGroup
	// superseded maps a plan's name to the resourceVersion this controller
	// last wrote over, and what it wrote: while the cache still holds that
	// version, it is behind maintd's own write; a reconcile would only meet
	// a conflict (the watch event of the write queues the plan again), and
	// the other plans read what was written.
	superseded map[string]write
	// forecasts are the plans' last drain forecasts, by plan name.
	forecasts map[string]forecastMemo
	// forecastPods is the forecasts' view of the cached pods, reused;
	// c.slot is held.
	forecastPods []view.Pod
	// nodeEpoch and podEpoch count the changes of where pods can go: of
	// the nodes' cordons, taints, labels and allocatable, and of the pods'
	// nodes and phases.
	nodeEpoch, podEpoch atomic.Int64
}

// New builds a Controller and its informers; Run starts them.
func New(cfg Config) *Controller {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Selector == nil {
		cfg.Selector = labels.Everything()
	}
	if cfg.MaxNodes <= 0 {
		cfg.MaxNodes = 1
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	c := &Controller{cfg: cfg, inflight: map[string]*api.MaintenancePlan{}, superseded: map[string]write{}, forecasts: map[string]forecastMemo{}}
	c.queue = cfg.Queue
	if c.queue == nil {
		c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "maintenanceplans", MetricsProvider: cfg.QueueMetrics})
	}

	cl := cfg.Clients
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	nodeInformer := informer(c, cl.Core.Nodes(), &corev1.Node{}, cache.Indexers{byOwner: func(o any) ([]string, error) {
		if owner := o.(*corev1.Node).Annotations[cordon.OwnerAnnotation]; drain.IsOwner(owner) {
			return []string{owner}, nil
		}
		return nil, nil
	}})
	c.nodeIndex = nodeInformer.GetIndexer()
	podInformer := informer(c, cl.Core.Pods(""), &corev1.Pod{}, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		byNode:               func(o any) ([]string, error) { return []string{o.(*cachedPod).NodeName}, nil },
		byController:         controllerUID,
	})
	pdbInformer := informer(c, cl.Policy.PodDisruptionBudgets(""), &policyv1.PodDisruptionBudget{}, byNamespace)
	rsInformer := informer(c, cl.Apps.ReplicaSets(""), &appsv1.ReplicaSet{}, byNamespace)
	depInformer := informer(c, cl.Apps.Deployments(""), &appsv1.Deployment{}, byNamespace)
	stsInformer := informer(c, cl.Apps.StatefulSets(""), &appsv1.StatefulSet{}, byNamespace)
	dsInformer := informer(c, cl.Apps.DaemonSets(""), &appsv1.DaemonSet{}, byNamespace)
	jobInformer := informer(c, cl.Batch.Jobs(""), &batchv1.Job{}, byNamespace)
	cronInformer := informer(c, cl.Batch.CronJobs(""), &batchv1.CronJob{}, byNamespace)
	pvInformer := informer(c, cl.Core.PersistentVolumes(), &corev1.PersistentVolume{}, cache.Indexers{})
	pvcInformer := informer(c, cl.Core.PersistentVolumeClaims(""), &corev1.PersistentVolumeClaim{}, byNamespace)
	hpaInformer := informer(c, cl.Autoscaling.HorizontalPodAutoscalers(""), &autoscalingv2.HorizontalPodAutoscaler{}, byNamespace)
	c.nodes = corelisters.NewNodeLister(nodeInformer.GetIndexer())
	c.pods = podCache{podInformer.GetIndexer()}
	c.pdbs = policylisters.NewPodDisruptionBudgetLister(pdbInformer.GetIndexer())
	c.replicaSets = appslisters.NewReplicaSetLister(rsInformer.GetIndexer())
	c.deployments = appslisters.NewDeploymentLister(depInformer.GetIndexer())
	c.statefulSets = appslisters.NewStatefulSetLister(stsInformer.GetIndexer())
	c.daemonSets = appslisters.NewDaemonSetLister(dsInformer.GetIndexer())
	c.jobs = batchlisters.NewJobLister(jobInformer.GetIndexer())
	c.cronJobs = batchlisters.NewCronJobLister(cronInformer.GetIndexer())
	c.pvs = corelisters.NewPersistentVolumeLister(pvInformer.GetIndexer())
	c.pvcs = corelisters.NewPersistentVolumeClaimLister(pvcInformer.GetIndexer())
	c.hpas = autoscalinglisters.NewHorizontalPodAutoscalerLister(hpaInformer.GetIndexer())

	// Every plan of the cluster, whatever --selector says: the slots and
	// the evictions in flight are counted cluster-wide; only the selected
	// plans are reconciled.
	c.planInformer = planinformers.NewMaintenancePlanInformer(planClientset{plans: cfg.Plans}, 0,
		cache.Indexers{byNode: func(o any) ([]string, error) {
			return []string{o.(*api.MaintenancePlan).Spec.NodeName}, nil
		}})
	c.plans = planlisters.NewMaintenancePlanLister(c.planInformer.GetIndexer())
	if cfg.Campaigns != nil {
		c.campaignInformer = planinformers.NewMaintenanceCampaignInformer(planClientset{plans: cfg.Plans, campaigns: cfg.Campaigns}, 0, cache.Indexers{})
		c.campaigns = planlisters.NewMaintenanceCampaignLister(c.campaignInformer.GetIndexer())
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
	_, err = nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeChanged(nil, obj); c.handled() },
		UpdateFunc: func(old, obj any) { c.nodeChanged(old, obj); c.handled() },
		DeleteFunc: func(obj any) { c.nodeChanged(nil, obj); c.handled() },
	})
	utilruntime.Must(err)
	_, err = podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(nil, obj); c.handled() },
		UpdateFunc: func(old, obj any) { c.podChanged(old, obj); c.handled() },
		DeleteFunc: func(obj any) { c.podChanged(nil, obj); c.handled() },
	})
	utilruntime.Must(err)
	live := func(any) { c.enqueueLive() }
	handle(pdbInformer, true, func(obj any) {
		if b, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			c.enqueueBudget(b)
			c.enqueueCampaigns(func(m *api.MaintenanceCampaign) bool {
				return running(m) && slices.Contains(m.Status.Namespaces, b.Namespace)
			})
		}
	})
	// The owners and volumes the analysis reads: a change to one wakes the
	// live plans on their add and delete (their updates are status churn).
	for _, i := range []cache.SharedIndexInformer{rsInformer, depInformer, stsInformer, dsInformer, jobInformer, cronInformer, pvInformer, pvcInformer, hpaInformer} {
		handle(i, false, live)
	}
	if cfg.Pause.Name != "" {
		// The switch alone: a watch of one ConfigMap by name.
		pauseInformer := informer(c, named[*corev1.ConfigMapList]{cl.Core.ConfigMaps(cfg.Pause.Namespace), cfg.Pause.Name}, &corev1.ConfigMap{}, cache.Indexers{})
		c.pause = pauseInformer.GetStore()
		handle(pauseInformer, true, func(any) { c.paused() })
	}
	return c
}

// named lists and watches the one object of lw called name.
type named[L runtime.Object] struct {
	lw   listWatcher[L]
	name string
}

func (n named[L]) List(ctx context.Context, o metav1.ListOptions) (L, error) {
	o.FieldSelector = "metadata.name=" + n.name
	return n.lw.List(ctx, o)
}

func (n named[L]) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	o.FieldSelector = "metadata.name=" + n.name
	return n.lw.Watch(ctx, o)
}

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

// pauseFacts is the pause switch as the cache shows it, nil when it is off.
func (c *Controller) pauseFacts() *drain.Pause {
	if c.pause == nil {
		return nil
	}
	o, ok, err := c.pause.GetByKey(c.cfg.Pause.String())
	if err != nil || !ok {
		return nil
	}
	cm := o.(*corev1.ConfigMap)
	return &drain.Pause{Object: c.cfg.Pause.String(), Since: cm.CreationTimestamp.Time, Reason: cm.Data["reason"]}
}

// listWatcher is a typed client of one resource: L is its list kind.
type listWatcher[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// informer is an informer of the built-in kind of obj, on lw, with the
// indexers and the transform that slims what it caches. Run starts it.
func informer[L runtime.Object](c *Controller, lw listWatcher[L], obj runtime.Object, indexers cache.Indexers) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return lw.List(ctx, o)
		},
		WatchFuncWithContext: lw.Watch,
	}, obj, 0, indexers)
	utilruntime.Must(i.SetTransform(slim))
	c.informers = append(c.informers, i)
	return i
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

func (c *Controller) handled() {
	if c.cfg.Handled != nil {
		c.cfg.Handled()
	}
}

func (c *Controller) selects(p *api.MaintenancePlan) bool {
	return c.cfg.Selector.Matches(labels.Set(p.Labels))
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
// another plan holds.
func (c *Controller) enqueueWaiting() {
	c.enqueueIf(func(p *api.MaintenancePlan) bool {
		return p.Status.Reason == api.WaitingForSlot || p.Status.Reason == api.NodeOccupied
	})
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

// Start starts the informers, once; they run until ctx ends. A standby
// calls it before it leads, so that its caches are warm when it takes over.
func (c *Controller) Start(ctx context.Context) {
	c.start.Do(func() {
		for _, i := range c.allInformers() {
			c.running.Go(func() { i.RunWithContext(ctx) })
		}
	})
}

// WaitForSync waits until every cache has synced; false when ctx ended
// first.
func (c *Controller) WaitForSync(ctx context.Context) bool {
	var synced []cache.InformerSynced
	for _, i := range c.allInformers() {
		synced = append(synced, i.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return false
	}
	c.synced.Store(true)
	return true
}

// allInformers are the informers of the built-in kinds, the plans' and
// the campaigns'.
func (c *Controller) allInformers() []cache.SharedIndexInformer {
	all := append(slices.Clone(c.informers), c.planInformer)
	if c.campaignInformer != nil {
		all = append(all, c.campaignInformer)
	}
	return all
}

// Synced reports, without waiting, whether every cache has synced.
func (c *Controller) Synced() bool {
	for _, i := range c.allInformers() {
		if !i.HasSynced() {
			return false
		}
	}
	c.synced.Store(true)
	return true
}

// Run starts the informers (if Start has not), waits for their caches, runs
// workers until ctx ends, lets the calls in flight finish and returns. The
// plans still queued are left: they are read again by the next run.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	c.Start(ctx)
	c.cfg.Log.Info("waiting for the caches")
	if !c.WaitForSync(ctx) {
		// It gives up only when ctx ends: a stop before the caches synced
		// is a clean stop, nothing was done.
		c.cfg.Log.Info("stopped before the caches synced")
		return nil
	}
	if err := c.CatchUp(ctx); err != nil {
		c.cfg.Log.Info("stopped before catching up with the plans", "err", err)
		return nil
	}
	c.cfg.Log.Info("caches synced; reconciling", "workers", workers)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for c.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// CatchUp reads the plans live before the first decision: a standby's warm
// caches may not show yet what the last leader wrote. A plan whose cached
// version is older is decided on the live one until the cache shows it
// (as after this controller's own writes: newest, behind). It retries until
// ctx ends.
func (c *Controller) CatchUp(ctx context.Context) error {
	for {
		lctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		list, err := c.cfg.Plans.List(lctx, metav1.ListOptions{})
		cancel()
		if err == nil {
			alive := map[string]bool{}
			for i := range list.Items {
				live := &list.Items[i]
				alive[live.Name] = true
				cached, err := c.plans.Get(live.Name)
				if err == nil && cached.UID == live.UID && cached.ResourceVersion != live.ResourceVersion {
					c.wrote(live, cached.ResourceVersion)
				}
			}
			cached, err := c.plans.List(labels.Everything())
			if err != nil {
				return err
			}
			c.mu.Lock()
			for _, p := range cached {
				if !alive[p.Name] {
					// Gone: decided on by nobody until the cache drops it.
					c.superseded[p.Name] = write{over: map[string]bool{p.ResourceVersion: true}}
				}
			}
			c.mu.Unlock()
			return nil
		}
		c.cfg.Log.Error("catch up with the plans", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// ProcessNext reconciles the next queued plan, if one is ready, and reports
// whether it did. A simulation calls it instead of Run's workers.
func (c *Controller) ProcessNext(ctx context.Context) bool {
	if c.queue.Len() == 0 {
		return false
	}
	return c.next(ctx)
}

// Stopped waits until the informers Start started have stopped.
func (c *Controller) Stopped() { c.running.Wait() }

// HasSynced reports whether every cache has synced.
func (c *Controller) HasSynced() bool { return c.synced.Load() }

// next processes one key. Once ctx has ended it takes no new key; a call in
// flight finishes (it runs on a context that is not cancelled with ctx's).
func (c *Controller) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if ctx.Err() != nil {
		return false
	}
	start := time.Now()
	requeue, err := c.reconcile(context.WithoutCancel(ctx), key)
	if m := c.cfg.Metrics; m != nil {
		result := "ok"
		if err != nil {
			result = "error"
		}
		m.Reconcile.WithLabelValues(result).Observe(time.Since(start).Seconds())
	}
	switch {
	case err != nil:
		c.cfg.Log.Error("reconcile", "plan", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	case requeue > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, requeue)
	default:
		c.queue.Forget(key)
	}
	return true
}

// Reconcile runs one plan once: read, decide, persist, act, record. It
// returns when to run it again without an event.
func (c *Controller) reconcile(ctx context.Context, name string) (time.Duration, error) {
	if campaign, ok := strings.CutPrefix(name, campaignKey); ok {
		return c.reconcileCampaign(ctx, campaign)
	}
	cached, err := c.plans.Get(name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.superseded, name)
		delete(c.forecasts, name)
		c.mu.Unlock()
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !c.selects(cached) || c.behind(cached) {
		return 0, nil
	}
	p := cached.DeepCopy()
	if p.DeletionTimestamp != nil {
		return 0, c.finalize(ctx, p)
	}
	if !hasFinalizer(p) {
		p.Finalizers = append(p.Finalizers, Finalizer)
		rv := p.ResourceVersion
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		p, err = c.cfg.Plans.Update(tctx, p, metav1.UpdateOptions{})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("add finalizer: %w", err)
		}
		c.wrote(p, rv)
	}
	dec, p, now, err := c.decide(ctx, p)
	if err != nil {
		return 0, err
	}
	switch dec.Action {
	case drain.Cordon, drain.Uncordon:
		err = c.cordon(ctx, p, dec, now)
	case drain.Evict, drain.DryRunEvict:
		err = c.evict(ctx, p, dec)
	case drain.Scale:
		err = c.scale(ctx, p, dec)
	}
	if err != nil {
		return 0, err
	}
	return dec.Requeue, nil
}

// decide reads the facts and decides, one plan at a time, then persists the
// decision. What a plan decided (a slot it takes, the evictions it is about
// to send) is in inflight before the next plan reads its facts, and until
// its status is written (or the write failed); no API call is made while
// the decisions are serialised, so one slow write stalls no other plan.
func (c *Controller) decide(ctx context.Context, p *api.MaintenancePlan) (drain.Decision, *api.MaintenancePlan, time.Time, error) {
	c.slot.Lock()
	now := c.cfg.Now()
	f, err := c.facts(p, now)
	if err != nil {
		c.slot.Unlock()
		return drain.Decision{}, nil, now, err
	}
	dec := drain.Decide(f, p, now)
	changed := !apiequality.Semantic.DeepEqual(p.Status, dec.Status)
	if changed {
		q := p.DeepCopy()
		q.Status = dec.Status
		c.mu.Lock()
		c.inflight[p.Name] = q
		c.mu.Unlock()
	}
	c.slot.Unlock()
	if !changed {
		return dec, p, now, nil
	}
	out, err := c.persist(ctx, p, dec.Status)
	c.mu.Lock()
	delete(c.inflight, p.Name)
	c.mu.Unlock()
	return dec, out, now, err
}

// persist writes the status; a conflict is an error, and the plan is read
// again and decided again.
func (c *Controller) persist(ctx context.Context, p *api.MaintenancePlan, st api.MaintenancePlanStatus) (*api.MaintenancePlan, error) {
	before := p.Status
	p = p.DeepCopy()
	p.Status = st
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	out, err := c.cfg.Plans.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status: %w", err)
	}
	c.wrote(out, p.ResourceVersion)
	c.changed(out, before, st)
	return out, nil
}

// write is a plan as this controller wrote it over version rv.
type write struct {
	// over are the versions this controller wrote over, one write after
	// the other: a cache that holds one of them is behind plan.
	over map[string]bool
	plan *api.MaintenancePlan
}

// wrote notes that this controller replaced version rv of a plan with out.
func (c *Controller) wrote(out *api.MaintenancePlan, rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.superseded[out.Name]
	if !ok || w.plan == nil || w.plan.ResourceVersion != rv || w.plan.UID != out.UID {
		w = write{over: map[string]bool{}}
	}
	w.over[rv], w.plan = true, out
	c.superseded[out.Name] = w
}

// newest is the newest of a cached plan, what this controller wrote over it
// and what it decided and is writing; c.mu is held.
func (c *Controller) newest(cached *api.MaintenancePlan) *api.MaintenancePlan {
	if d, ok := c.inflight[cached.Name]; ok && d.UID == cached.UID {
		return d
	}
	if w, ok := c.superseded[cached.Name]; ok && w.over[cached.ResourceVersion] && w.plan != nil {
		return w.plan
	}
	return cached
}

// deleted reports whether a cached plan is known to be deleted (CatchUp read
// the plans live and did not find it); c.mu is held.
func (c *Controller) deleted(cached *api.MaintenancePlan) bool {
	w, ok := c.superseded[cached.Name]
	return ok && w.plan == nil && w.over[cached.ResourceVersion]
}

// behind reports whether the cached plan is a version this controller has
// already written over; once the cache has moved on, the note goes.
func (c *Controller) behind(cached *api.MaintenancePlan) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.superseded[cached.Name]
	if ok && !w.over[cached.ResourceVersion] {
		delete(c.superseded, cached.Name)
		return false
	}
	return ok
}

// changed logs, records events and counts what a status write changed.
func (c *Controller) changed(p *api.MaintenancePlan, before, st api.MaintenancePlanStatus) {
	if before.Phase != st.Phase || before.Reason != st.Reason {
		c.cfg.Log.Info("plan", "plan", p.Name, "phase", st.Phase, "reason", st.Reason, "message", st.Message)
		c.event(p, st)
	}
	if f := st.Forecast; f != nil && (before.Forecast == nil || before.Forecast.Verdict != f.Verdict) {
		c.forecastEvent(p, f)
	}
	m := c.cfg.Metrics
	if m == nil || st.EvictionProgress == nil {
		return
	}
	old := map[string]metav1.Time{}
	if before.EvictionProgress != nil {
		for _, cd := range before.EvictionProgress.Cooldowns {
			old[cd.PDB] = cd.NextActionAt
		}
	}
	now := c.cfg.Now()
	for _, cd := range st.EvictionProgress.Cooldowns {
		if t, ok := old[cd.PDB]; !ok || !t.Equal(&cd.NextActionAt) {
			m.Cooldowns.WithLabelValues(string(cd.Reason)).Observe(max(cd.NextActionAt.Sub(now), 0).Seconds())
		}
	}
}

// Plans lists the cached plans for the per-plan metrics (a plan not yet
// reconciled has phase New).
func (c *Controller) Plans() []metrics.Plan {
	var out []metrics.Plan
	for _, o := range c.planInformer.GetIndexer().List() {
		p := o.(*api.MaintenancePlan)
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = "New"
		}
		out = append(out, metrics.Plan{Name: p.Name, Node: p.Spec.NodeName, Phase: phase, Reason: string(p.Status.Reason),
			Evicted: int(p.Status.Pods.Evicted), Total: int(p.Status.Pods.Total)})
		if f := p.Status.Forecast; f != nil && f.P50 != nil && f.P90 != nil && !drain.Final(&p.Status) {
			out[len(out)-1].Forecast = []float64{f.P50.Seconds(), f.P90.Seconds()}
		}
	}
	return out
}

func (c *Controller) event(p *api.MaintenancePlan, st api.MaintenancePlanStatus) {
	if c.cfg.Events == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if st.Phase == api.Blocked || st.Phase == api.Failed {
		typ = corev1.EventTypeWarning
	}
	c.cfg.Events.Eventf(p, nil, typ, string(st.Phase), string(st.Reason), "%s", truncate(st.Message, 1000))
}

// forecastEvent records a forecast that is new or changed its verdict.
func (c *Controller) forecastEvent(p *api.MaintenancePlan, f *api.Forecast) {
	if c.cfg.Events == nil {
		return
	}
	typ, note := corev1.EventTypeNormal, ""
	switch {
	case f.Verdict == string(analyze.VerdictNever) && len(f.Causes) > 0:
		typ, note = corev1.EventTypeWarning, "the drain never completes: "+f.Causes[0].Message
	case f.P50 != nil && f.P90 != nil:
		note = fmt.Sprintf("the node is empty of its %d pods to evict in %s (p50) to %s (p90)", f.Pods, f.P50.Duration, f.P90.Duration)
		if f.CriticalPath != "" {
			note += "; critical path " + f.CriticalPath
		}
		if f.Verdict == string(analyze.VerdictUnknown) && len(f.Causes) > 0 {
			note += "; unknown: " + f.Causes[0].Message
		}
	}
	c.cfg.Events.Eventf(p, nil, typ, "Forecast", f.Verdict, "%s", truncate(note, 1000))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func hasFinalizer(p *api.MaintenancePlan) bool {
	for _, f := range p.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// cordon cordons or uncordons the node through package cordon, guarded by the
// node's UID and the owner annotation, as read live. A released plan is
// Completed from that live answer, never from the cache (which may not yet
// show a cordon that just landed); a cordon that another owner won is
// Blocked from it at once.
func (c *Controller) cordon(ctx context.Context, p *api.MaintenancePlan, dec drain.Decision, now time.Time) error {
	if dec.Action == drain.Cordon {
		held, err := c.heldLive(ctx, p)
		if err != nil {
			return err
		}
		if len(held) >= c.cfg.MaxNodes {
			return c.record(ctx, p, func(st api.MaintenancePlanStatus) api.MaintenancePlanStatus {
				return drain.SlotTaken(p, st, held, c.cfg.MaxNodes, c.cfg.Now())
			})
		}
	}
	req := cordon.Request{Owner: dec.Owner, Reason: dec.Reason, ExpectUID: dec.NodeUID, Uncordon: dec.Action == drain.Uncordon}
	res, err := c.applyCordon(ctx, p.Spec.NodeName, req, now)
	if err != nil {
		return err
	}
	c.cfg.Log.Info("cordon", "plan", p.Name, "node", res.Node, "action", res.Action, "observed", res.Observed, "message", res.Message)
	if c.cfg.Events != nil && res.Action.Writes() {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: res.Node, UID: res.NodeUID}}
		node.Kind, node.APIVersion = "Node", "v1"
		c.cfg.Events.Eventf(node, p, corev1.EventTypeNormal, string(res.Action), string(dec.Action), "%s (plan %s)", res.Message, p.Name)
	}
	switch {
	case dec.Action == drain.Uncordon:
		return c.record(ctx, p, func(st api.MaintenancePlanStatus) api.MaintenancePlanStatus {
			return drain.Uncordoned(p, st, res.Message, c.cfg.Now())
		})
	case res.Action == cordon.Occupied || res.Action == cordon.UIDMismatch:
		return c.record(ctx, p, func(st api.MaintenancePlanStatus) api.MaintenancePlanStatus {
			return drain.CordonLost(p, st, res.Message, c.cfg.Now())
		})
	}
	return nil
}

// heldLive is the nodes in maintenance as the API server shows them now,
// read before a cordon takes a slot (the caches, a new leader's above all,
// may lag): the nodes carrying the cordon of another plan, and those that
// another plan, created before p, decided to cordon (Cordoning). Of two
// plans that decided on caches that lagged, the older goes on. The plans
// are read live, and the nodes of the plans that hold or are about to hold
// one, at once, when they could fill the slots; when they could not, the
// answer is none, as only whether the slots are full matters.
func (c *Controller) heldLive(ctx context.Context, p *api.MaintenancePlan) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	list, err := c.cfg.Plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the plans before cordoning: %w", err)
	}
	self := false
	seen := map[string]bool{}
	var holders []*api.MaintenancePlan
	for i := range list.Items {
		o := &list.Items[i]
		self = self || (o.UID == p.UID && o.DeletionTimestamp == nil)
		if o.UID != p.UID && drain.HoldsCordon(&o.Status) && !seen[o.Spec.NodeName] {
			seen[o.Spec.NodeName] = true
			holders = append(holders, o)
		}
	}
	if !self {
		return nil, fmt.Errorf("plan %s is gone or being deleted: not cordoning for it", p.Name)
	}
	if len(holders) < c.cfg.MaxNodes {
		// Even if every one of them holds its node, a slot is free:
		// nothing to read. (A campaign's wave, sized to the free slots,
		// cordons tens of nodes at once; reading each other's nodes took
		// seconds.)
		return nil, nil
	}
	holds := make([]bool, len(holders))
	errs := make([]error, len(holders))
	read := func(i int) {
		o := holders[i]
		node, err := c.cfg.Clients.Core.Nodes().Get(ctx, o.Spec.NodeName, metav1.GetOptions{})
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			errs[i] = fmt.Errorf("read node %s before cordoning: %w", o.Spec.NodeName, err)
		case err == nil && node.Annotations[cordon.OwnerAnnotation] == drain.Owner(o):
			holds[i] = true // its cordon landed
		case o.Status.Phase == api.Cordoning && before(o, p):
			holds[i] = true // its cordon is on its way
		}
	}
	if c.cfg.Serial {
		for i := range holders {
			read(i)
		}
	} else {
		parallel.Do(len(holders), read)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var held []string
	for i, o := range holders {
		if holds[i] {
			held = append(held, o.Spec.NodeName)
		}
	}
	slices.Sort(held)
	return held, nil
}

// applyCordon is cordon.Apply on the live node, bounded by the request
// timeout; a node that does not exist has nothing to lift (nil, nil for an
// uncordon).
func (c *Controller) applyCordon(ctx context.Context, node string, req cordon.Request, now time.Time) (*cordon.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	nodes := c.cfg.Clients.Core.Nodes()
	if _, err := nodes.Get(ctx, node, metav1.GetOptions{}); apierrors.IsNotFound(err) && req.Uncordon {
		return &cordon.Result{Node: node, Action: cordon.NotCordoned, Message: "node " + node + " does not exist"}, nil
	}
	return cordon.Apply(ctx, nodes, node, req, now)
}

// finalize lifts this plan's cordon through a live cordon.Apply (which
// removes only this plan's own cordon), then releases the plan.
func (c *Controller) finalize(ctx context.Context, p *api.MaintenancePlan) error {
	if !hasFinalizer(p) {
		return nil
	}
	if err := c.restoreSurges(ctx, p); err != nil {
		return fmt.Errorf("restore the surges on delete: %w", err)
	}
	req := cordon.Request{Owner: drain.Owner(p), Uncordon: true}
	res, err := c.applyCordon(ctx, p.Spec.NodeName, req, c.cfg.Now())
	if err != nil {
		return fmt.Errorf("uncordon on delete: %w", err)
	}
	c.cfg.Log.Info("plan deleted: uncordon", "plan", p.Name, "node", p.Spec.NodeName, "action", res.Action)
	kept := p.Finalizers[:0]
	for _, f := range p.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	p.Finalizers = kept
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := c.cfg.Plans.Update(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }

// slim drops what maintd never reads from cached objects, so that a
// cluster's objects cost the cache a fraction of their full size: the
// managedFields of every object; of a pod everything the drain analysis does
// not read (cachedPod); the pod templates of the owners (the analysis
// reads their metadata, replicas, selector and status); a node's status
// (maintd reads its metadata and spec; the status holds the image lists,
// often the biggest part of a node).
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return cachePod(o), nil
	case *corev1.Node:
		// The forecast places pods by its allocatable; a campaign's breaker
		// reads its Ready condition.
		var ready []corev1.NodeCondition
		for _, cd := range o.Status.Conditions {
			if cd.Type == corev1.NodeReady {
				ready = []corev1.NodeCondition{{Type: cd.Type, Status: cd.Status, Reason: cd.Reason}}
			}
		}
		o.Status = corev1.NodeStatus{Allocatable: o.Status.Allocatable, Conditions: ready}
	case *appsv1.ReplicaSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.Deployment:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.StatefulSet:
		o.Spec.Template, o.Spec.VolumeClaimTemplates = corev1.PodTemplateSpec{}, nil
	case *appsv1.DaemonSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *batchv1.Job:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *batchv1.CronJob:
		o.Spec.JobTemplate = batchv1.JobTemplateSpec{}
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = map[string]string{"reason": o.Data["reason"]}, nil // the pause switch: its reason
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.Spec.Metrics, o.Spec.Behavior, o.Status = nil, nil, autoscalingv2.HorizontalPodAutoscalerStatus{} // its target is what a surge reads
	}
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
