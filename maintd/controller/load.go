package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Load puts objects into the caches as their informers would, each slimmed
// as the informers' transform does, for a controller whose informers do not
// run: kubectl maint preflight fills them from a snapshot of the cluster
// and asks Preview what maintd would decide. A kind maintd does not cache
// is an error.
func (c *Controller) Load(objs ...runtime.Object) error {
	s := c.sources
	for _, o := range objs {
		var i cache.SharedIndexInformer
		switch o.(type) {
		case *corev1.Node:
			i = s.node
		case *corev1.Pod:
			i = s.pod
		case *policyv1.PodDisruptionBudget:
			i = s.pdb
		case *appsv1.ReplicaSet:
			i = s.rs
		case *appsv1.Deployment:
			i = s.dep
		case *appsv1.StatefulSet:
			i = s.sts
		case *appsv1.DaemonSet:
			i = s.ds
		case *batchv1.Job:
			i = s.job
		case *batchv1.CronJob:
			i = s.cron
		case *corev1.PersistentVolume:
			i = s.pv
		case *corev1.PersistentVolumeClaim:
			i = s.pvc
		case *autoscalingv2.HorizontalPodAutoscaler:
			i = s.hpa
		case *storagev1.VolumeAttachment:
			i = s.va
		case *corev1.Namespace:
			i = s.ns
		case *corev1.ConfigMap:
			i = s.pause
		case *api.MaintenancePlan:
			i = c.planInformer
		case *api.MaintenanceCampaign:
			i = c.campaignInformer
		}
		if i == nil {
			return fmt.Errorf("maintd does not cache a %T", o)
		}
		obj, err := slim(o.DeepCopyObject())
		if err != nil {
			return err
		}
		if err := i.GetIndexer().Add(obj); err != nil {
			return fmt.Errorf("load %T: %w", o, err)
		}
	}
	return nil
}
