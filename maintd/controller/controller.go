// Package controller runs MaintenancePlans: client-go informers feed a
// rate-limited workqueue; each worker reads the facts from the caches, asks
// package drain what to do, persists the status it returns BEFORE any write
// to a node or a pod, acts through the cordon and evict packages, and
// records the classified outcome.
package controller

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	autoscalingv2client "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	planlisters "github.com/sentinel-go/sentinel/maintd/client/listers/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/metrics"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// Finalizer holds a plan until its cordon is lifted.
const Finalizer = "maintenance.sentinel.dev/uncordon"

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
	// Storage reads the VolumeAttachments: a plan is Drained once the
	// volumes of its pods have detached from the node.
	Storage storagev1client.StorageV1Interface
	// Authorization asks whether maintd may delete pods (break-glass);
	// nil: it may not.
	Authorization authorizationv1client.AuthorizationV1Interface
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
	// Overrides is the MaintenanceOverride client (nil: no break-glass).
	Overrides maintenancev1alpha1.MaintenanceOverrideInterface
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
	// Learned is the ConfigMap the learned exit times and times to Ready
	// are kept in across restarts (learn.go; zero: not kept).
	Learned types.NamespacedName
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
	// Queue and CampaignQueue replace the rate-limited workqueues of the
	// plans and of the campaigns (with ones whose delays follow a
	// simulated clock).
	Queue, CampaignQueue workqueue.TypedRateLimitingInterface[string]
	// Handled is called after each informer event has been handled, so a
	// simulation knows when the caches and the queue show what it sent.
	Handled func()
	// Serial sends a decision's evictions one by one in target order
	// instead of in parallel.
	Serial bool
	// LockViolation, with Serial, hears of a snapshot, an analysis, a
	// forecast or a capacity check made while the decisions' shared lock
	// is held (what names it).
	LockViolation func(what string)
	// LockHeld hears how long each decision held the shared lock, by kind
	// (plan, campaign).
	LockHeld func(kind string, d time.Duration)
	// Interleave is called where one worker's decision may interleave
	// with another's: before it takes the shared lock, before it persists
	// what it decided, and before each eviction it sends. A simulation runs its workers one at a
	// time and switches between them there.
	Interleave func()
}

// DefaultRequestTimeout bounds an API call of the controller.
const DefaultRequestTimeout = 30 * time.Second

// RecordDelay bounds how long the verdict of evictions that were all
// accepted, and the steps of a drain that send nothing, wait in memory for
// the plan's next requests to be written with them (controller.unwritten):
// the steps that follow one another within it cost one write, and every
// moment of a drain shows in the plan's status within it. A restart in
// between loses nothing: the status shows the requests, whose pods are
// read before anything is sent again.
const RecordDelay = time.Second

// unwrittenRecord is a plan as written (its resourceVersion) with the
// verdict recorded at at as its status.
type unwrittenRecord struct {
	plan *api.MaintenancePlan
	at   time.Time
}

// Controller reconciles MaintenancePlans and MaintenanceCampaigns, each
// kind from its own workqueue over the shared informers.
type Controller struct {
	cfg                  Config
	queue, campaignQueue workqueue.TypedRateLimitingInterface[string]
	// planWaits and campaignWaits are what each plan's and campaign's last
	// decision waits on: an event wakes the waiters of what it changed.
	planWaits, campaignWaits *waits.Index

	informers    []cache.SharedIndexInformer // of the built-in kinds
	sources      sources
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
	attachments      cache.Indexer // VolumeAttachments, by node (byNode)
	namespaces       corelisters.NamespaceLister
	// volumeTimes are the drivers' attach and detach times, as watched.
	volumeTimes *volumeTimes
	// learner learns each workload's exits and times to Ready (learn.go).
	learner *learner
	// pause holds the pause ConfigMap, if it exists (nil: no switch).
	pause cache.Store
	// overrides are the MaintenanceOverrides, by plan (byPlan); nil
	// without Config.Overrides. access caches maintd's right to delete
	// pods, by namespace.
	overrides cache.Indexer
	access    accessCache

	mu sync.Mutex
	// observers bounds the observations made at once (snapshots,
	// analyses, forecasts, a campaign's breaker and capacity) by the CPUs:
	// they are CPU work, while a worker spends most of its time waiting for
	// the API server. More at once would only share the same CPUs, slow
	// the decision that holds slot, and grow the heap. Nil with
	// Config.Serial.
	observers chan struct{}
	// slot serialises the decisions' shared part (decide, under it only
	// the slots, the other plans' evictions in flight and throttles, the
	// pause, the wave): the next plan reads what the last one decided
	// (inflight) before its status is written. No API call, snapshot or
	// analysis is made while it is held.
	slot sync.Mutex
	// inflight are the statuses decided and not yet written, by plan name.
	inflight map[string]*api.MaintenancePlan
	// caughtPause and caughtCampaigns are what CatchUp read live that the
	// caches did not show yet: the pause switch (nil: none) and campaigns
	// by name. Each stands for its object until an event of it reaches
	// the cache: a new leader whose warm caches lag does not act on an
	// older switch or breaker than its predecessor saw. caughtMu guards
	// them (they are read under mu).
	caughtMu        sync.Mutex
	caughtPause     *corev1.ConfigMap
	caughtCampaigns map[string]*api.MaintenanceCampaign
	// unwritten are the plans whose evictions were all accepted, recorded
	// here and not yet written, by name; each is the plan as written
	// (its resourceVersion) with the record as its status. The plan's next
	// status change writes it with its own, within RecordDelay: one write
	// per eviction cycle, not one for the request and one for its verdict.
	unwritten map[string]unwrittenRecord
	// campaignProgress are the campaigns' statuses whose changes are
	// counts of evictions alone, not yet written (ProgressDelay), by name.
	campaignProgress map[string]campaignProgress
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
	// analyses are the plans' last analyses, by plan name.
	analyses map[string]analysisMemo
	// placements is the placement model the forecasts and capacity checks
	// share; placeEpoch counts the changes of what it reads: the nodes'
	// cordons, taints, labels and allocatable, and the pods' nodes,
	// phases, deletion and labels.
	placements sharedPlacement
	placeEpoch atomic.Int64
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
	c := &Controller{cfg: cfg, inflight: map[string]*api.MaintenancePlan{}, unwritten: map[string]unwrittenRecord{}, campaignProgress: map[string]campaignProgress{}, caughtCampaigns: map[string]*api.MaintenanceCampaign{}, superseded: map[string]write{}, forecasts: map[string]forecastMemo{}, analyses: map[string]analysisMemo{},
		planWaits: waits.NewIndex(), campaignWaits: waits.NewIndex(), volumeTimes: newVolumeTimes(), learner: newLearner()}
	queue := func(q workqueue.TypedRateLimitingInterface[string], name string) workqueue.TypedRateLimitingInterface[string] {
		if q != nil {
			return q
		}
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: cfg.QueueMetrics})
	}
	if !cfg.Serial {
		c.observers = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	c.queue = queue(cfg.Queue, "maintenanceplans")
	c.campaignQueue = queue(cfg.CampaignQueue, "maintenancecampaigns")

	c.sources = c.makeCaches()
	c.handleEvents(c.sources)
	return c
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
// workers until ctx ends (workers for the plans, one for the campaigns),
// lets the calls in flight finish and returns. The plans and campaigns
// still queued are left: they are read again by the next run.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	defer c.campaignQueue.ShutDown()
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
	wg.Go(func() { c.keepLearned(ctx) })
	for range max(workers, 1) {
		wg.Go(func() {
			for c.next(ctx, c.queue, "plan", c.reconcile) {
			}
		})
	}
	if c.campaignInformer != nil {
		wg.Go(func() {
			for c.next(ctx, c.campaignQueue, "campaign", c.reconcileCampaign) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	c.campaignQueue.ShutDown()
	wg.Wait()
	return nil
}

// ProcessNext reconciles the next queued plan (or, with campaign, the next
// queued campaign), if one is ready, and reports whether it did. A
// simulation calls it instead of Run's workers.
func (c *Controller) ProcessNext(ctx context.Context, campaign bool) bool {
	if campaign {
		return c.campaignQueue.Len() > 0 && c.next(ctx, c.campaignQueue, "campaign", c.reconcileCampaign)
	}
	return c.queue.Len() > 0 && c.next(ctx, c.queue, "plan", c.reconcile)
}

// Stopped waits until the informers Start started have stopped.
func (c *Controller) Stopped() { c.running.Wait() }

// HasSynced reports whether every cache has synced.
func (c *Controller) HasSynced() bool { return c.synced.Load() }

// next processes one key of queue q, of kind, with reconcile. Once ctx has
// ended it takes no new key; a call in flight finishes (it runs on a
// context that is not cancelled with ctx's).
func (c *Controller) next(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], kind string,
	reconcile func(context.Context, string) (time.Duration, error)) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	if ctx.Err() != nil {
		return false
	}
	start := time.Now()
	requeue, err := reconcile(context.WithoutCancel(ctx), key)
	// A conflict is the API's optimistic concurrency at work (a status
	// write that met a newer object): retried, it is no error.
	conflict := apierrors.IsConflict(err)
	if m := c.cfg.Metrics; m != nil {
		result := "ok"
		switch {
		case conflict:
			result = "conflict"
		case err != nil:
			result = "error"
		}
		m.Reconcile.WithLabelValues(result).Observe(time.Since(start).Seconds())
	}
	switch {
	case conflict:
		c.cfg.Log.Info("reconcile met a newer object; retrying", kind, key, "err", err)
		q.AddRateLimited(key)
		return true
	case err != nil:
		c.cfg.Log.Error("reconcile", kind, key, "err", err)
		q.AddRateLimited(key)
		return true
	case requeue > 0:
		q.Forget(key)
		q.AddAfter(key, requeue)
	default:
		q.Forget(key)
	}
	return true
}

// observed runs f, an observation, when one of the CPUs' turns is free
// (Controller.observers), and returns what it returned.
func observed[T any](c *Controller, f func() (T, error)) (T, error) {
	if c.observers != nil {
		c.observers <- struct{}{}
		defer func() { <-c.observers }()
	}
	return f()
}

func (c *Controller) interleave() {
	if c.cfg.Interleave != nil {
		c.cfg.Interleave()
	}
}

func (c *Controller) handled() {
	if c.cfg.Handled != nil {
		c.cfg.Handled()
	}
}

func (c *Controller) selects(p *api.MaintenancePlan) bool {
	return c.cfg.Selector.Matches(labels.Set(p.Labels))
}
