package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	planinformers "github.com/sentinel-go/sentinel/maintd/client/informers/api/v1alpha1"
	planlisters "github.com/sentinel-go/sentinel/maintd/client/listers/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// byNode indexes pods by spec.nodeName and plans by spec.nodeName; byOwner
// indexes nodes by a cordon owner annotation that maintd wrote.
const (
	byNode  = "nodeName"
	byOwner = "cordonOwner"
)

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

// pauseFacts is the pause switch as the cache shows it (or as CatchUp read
// it, until its first event reaches the cache), nil when it is off.
func (c *Controller) pauseFacts() *drain.Pause {
	if c.pause == nil {
		return nil
	}
	o, ok, err := c.pause.GetByKey(c.cfg.Pause.String())
	if err != nil {
		return nil
	}
	var cm *corev1.ConfigMap
	if ok {
		cm = o.(*corev1.ConfigMap)
	}
	c.caughtMu.Lock()
	if c.caughtPause != nil {
		cm = c.caughtPause
	}
	c.caughtMu.Unlock()
	if cm == nil {
		return nil
	}
	return &drain.Pause{Object: c.cfg.Pause.String(), Since: cm.CreationTimestamp.Time, Reason: cm.Data["reason"]}
}

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
		// reads its Ready condition, a health gate its other conditions:
		// their type, status and reason, not their heartbeats.
		conds := make([]corev1.NodeCondition, 0, len(o.Status.Conditions))
		for _, cd := range o.Status.Conditions {
			conds = append(conds, corev1.NodeCondition{Type: cd.Type, Status: cd.Status, Reason: cd.Reason})
		}
		// A plan is Drained once no volume of its pods is in its
		// volumesAttached.
		o.Status = corev1.NodeStatus{Allocatable: o.Status.Allocatable, Conditions: conds, VolumesAttached: o.Status.VolumesAttached}
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
	case *corev1.Namespace:
		o.Spec, o.Status = corev1.NamespaceSpec{}, corev1.NamespaceStatus{} // its labels are what a drain rule reads
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

// sources are the informers of the built-in kinds whose events wake plans
// and campaigns (wakeups.go); the pause switch's is nil without a switch.
type sources struct {
	node, pod, pdb, rs, dep, sts, ds, job, cron, pv, pvc, hpa, va, ns, pause, override cache.SharedIndexInformer
}

// makeCaches makes the informers and listers of every kind maintd reads.
func (c *Controller) makeCaches() sources {
	cfg, cl := c.cfg, c.cfg.Clients
	var s sources
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	s.node = informer(c, cl.Core.Nodes(), &corev1.Node{}, cache.Indexers{byOwner: func(o any) ([]string, error) {
		if owner := o.(*corev1.Node).Annotations[cordon.OwnerAnnotation]; drain.IsOwner(owner) {
			return []string{owner}, nil
		}
		return nil, nil
	}})
	c.nodeIndex = s.node.GetIndexer()
	s.pod = informer(c, cl.Core.Pods(""), &corev1.Pod{}, podIndexers())
	s.pdb = informer(c, cl.Policy.PodDisruptionBudgets(""), &policyv1.PodDisruptionBudget{}, byNamespace)
	surged := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, bySurge: surgePlan}
	s.rs = informer(c, cl.Apps.ReplicaSets(""), &appsv1.ReplicaSet{}, surged)
	s.dep = informer(c, cl.Apps.Deployments(""), &appsv1.Deployment{}, surged)
	s.sts = informer(c, cl.Apps.StatefulSets(""), &appsv1.StatefulSet{}, byNamespace)
	s.ds = informer(c, cl.Apps.DaemonSets(""), &appsv1.DaemonSet{}, byNamespace)
	s.job = informer(c, cl.Batch.Jobs(""), &batchv1.Job{}, byNamespace)
	s.cron = informer(c, cl.Batch.CronJobs(""), &batchv1.CronJob{}, byNamespace)
	s.pv = informer(c, cl.Core.PersistentVolumes(), &corev1.PersistentVolume{}, cache.Indexers{})
	s.pvc = informer(c, cl.Core.PersistentVolumeClaims(""), &corev1.PersistentVolumeClaim{}, byNamespace)
	s.hpa = informer(c, cl.Autoscaling.HorizontalPodAutoscalers(""), &autoscalingv2.HorizontalPodAutoscaler{}, byNamespace)
	s.va = informer(c, cl.Storage.VolumeAttachments(), &storagev1.VolumeAttachment{}, cache.Indexers{byNode: func(o any) ([]string, error) {
		return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}, nil
	}})
	c.attachments = s.va.GetIndexer()
	s.ns = informer(c, cl.Core.Namespaces(), &corev1.Namespace{}, cache.Indexers{})
	c.namespaces = corelisters.NewNamespaceLister(s.ns.GetIndexer())
	s.override = c.overrideInformer()
	c.nodes = corelisters.NewNodeLister(s.node.GetIndexer())
	c.pods = podCache{s.pod.GetIndexer()}
	c.pdbs = policylisters.NewPodDisruptionBudgetLister(s.pdb.GetIndexer())
	c.replicaSets = appslisters.NewReplicaSetLister(s.rs.GetIndexer())
	c.deployments = appslisters.NewDeploymentLister(s.dep.GetIndexer())
	c.statefulSets = appslisters.NewStatefulSetLister(s.sts.GetIndexer())
	c.daemonSets = appslisters.NewDaemonSetLister(s.ds.GetIndexer())
	c.jobs = batchlisters.NewJobLister(s.job.GetIndexer())
	c.cronJobs = batchlisters.NewCronJobLister(s.cron.GetIndexer())
	c.pvs = corelisters.NewPersistentVolumeLister(s.pv.GetIndexer())
	c.pvcs = corelisters.NewPersistentVolumeClaimLister(s.pvc.GetIndexer())
	c.hpas = autoscalinglisters.NewHorizontalPodAutoscalerLister(s.hpa.GetIndexer())

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
	}

	if cfg.Pause.Name != "" {
		// The switch alone: a watch of one ConfigMap by name.
		s.pause = informer(c, named[*corev1.ConfigMapList]{cl.Core.ConfigMaps(cfg.Pause.Namespace), cfg.Pause.Name}, &corev1.ConfigMap{}, cache.Indexers{})
		c.pause = s.pause.GetStore()
	}
	return s
}
