package view

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Of is the view of s. It shares s's strings, maps and the values it keeps
// whole.
func Of(s *snapshot.Snapshot) *Snapshot {
	return &Snapshot{
		Header:                   s.Header,
		Metadata:                 s.Metadata,
		Nodes:                    each(s.Nodes, NodeOf),
		Pods:                     each(s.Pods, PodOf),
		ReplicaSets:              each(s.ReplicaSets, ReplicaSetOf),
		Deployments:              each(s.Deployments, DeploymentOf),
		StatefulSets:             each(s.StatefulSets, StatefulSetOf),
		DaemonSets:               each(s.DaemonSets, DaemonSetOf),
		Jobs:                     each(s.Jobs, JobOf),
		CronJobs:                 each(s.CronJobs, CronJobOf),
		PodDisruptionBudgets:     each(s.PodDisruptionBudgets, PodDisruptionBudgetOf),
		PersistentVolumeClaims:   each(s.PersistentVolumeClaims, PersistentVolumeClaimOf),
		PersistentVolumes:        each(s.PersistentVolumes, PersistentVolumeOf),
		StorageClasses:           each(s.StorageClasses, StorageClassOf),
		HorizontalPodAutoscalers: each(s.HorizontalPodAutoscalers, HorizontalPodAutoscalerOf),
	}
}

// each is the views of objs: nil for nil, as a decoded null list.
func each[T, V any](objs []T, of func(*T) V) []V {
	if objs == nil {
		return nil
	}
	out := make([]V, len(objs))
	for i := range objs {
		out[i] = of(&objs[i])
	}
	return out
}

// MetaOf is the view of m.
func MetaOf(m *metav1.ObjectMeta) ObjectMeta {
	return ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, Generation: m.Generation,
		Labels: m.Labels, Annotations: m.Annotations, DeletionTimestamp: m.DeletionTimestamp, OwnerReferences: m.OwnerReferences,
	}
}

func NodeOf(n *corev1.Node) Object                    { return Object{MetaOf(&n.ObjectMeta)} }
func DaemonSetOf(d *appsv1.DaemonSet) Object          { return Object{MetaOf(&d.ObjectMeta)} }
func JobOf(j *batchv1.Job) Object                     { return Object{MetaOf(&j.ObjectMeta)} }
func CronJobOf(j *batchv1.CronJob) Object             { return Object{MetaOf(&j.ObjectMeta)} }
func StorageClassOf(c *storagev1.StorageClass) Object { return Object{MetaOf(&c.ObjectMeta)} }
func HorizontalPodAutoscalerOf(h *autoscalingv2.HorizontalPodAutoscaler) Object {
	return Object{MetaOf(&h.ObjectMeta)}
}

func scalable(m *metav1.ObjectMeta, replicas *int32, ready int32) Scalable {
	s := Scalable{ObjectMeta: MetaOf(m)}
	s.Spec.Replicas, s.Status.ReadyReplicas = replicas, ready
	return s
}

func ReplicaSetOf(r *appsv1.ReplicaSet) Scalable {
	return scalable(&r.ObjectMeta, r.Spec.Replicas, r.Status.ReadyReplicas)
}

func DeploymentOf(d *appsv1.Deployment) Scalable {
	return scalable(&d.ObjectMeta, d.Spec.Replicas, d.Status.ReadyReplicas)
}

func StatefulSetOf(s *appsv1.StatefulSet) Scalable {
	return scalable(&s.ObjectMeta, s.Spec.Replicas, s.Status.ReadyReplicas)
}

// PodOf keeps of a pod what the analysis reads: the metadata, the node, the
// grace period, the volumes that tie its data to the node or to its life
// (local and claim sources, see Volume), the phase, the start time and the
// Ready condition. Other volumes and conditions weigh on no check.
func PodOf(p *corev1.Pod) Pod {
	v := Pod{ObjectMeta: MetaOf(&p.ObjectMeta)}
	v.Spec.NodeName = p.Spec.NodeName
	v.Spec.TerminationGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
	for i := range p.Spec.Volumes {
		if vol := &p.Spec.Volumes[i]; KeepsVolume(vol) {
			out := Volume{Name: vol.Name, EmptyDir: vol.EmptyDir, HostPath: vol.HostPath, PersistentVolumeClaim: vol.PersistentVolumeClaim}
			if vol.Ephemeral != nil {
				out.Ephemeral = &struct{}{}
			}
			v.Spec.Volumes = append(v.Spec.Volumes, out)
		}
	}
	v.Status.Phase, v.Status.StartTime = p.Status.Phase, p.Status.StartTime
	for _, c := range p.Status.Conditions {
		if KeepsCondition(c.Type) {
			v.Status.Conditions = append(v.Status.Conditions, PodCondition{Type: c.Type, Status: c.Status})
		}
	}
	return v
}

// KeepsVolume reports whether PodOf keeps a volume: one with a local or
// claim source, which the analysis reads.
func KeepsVolume(v *corev1.Volume) bool {
	return v.EmptyDir != nil || v.HostPath != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil
}

// KeepsCondition reports whether PodOf keeps a pod condition of type t:
// Ready, the one the analysis reads.
func KeepsCondition(t corev1.PodConditionType) bool { return t == corev1.PodReady }

func PodDisruptionBudgetOf(p *policyv1.PodDisruptionBudget) PodDisruptionBudget {
	return PodDisruptionBudget{ObjectMeta: MetaOf(&p.ObjectMeta), Spec: p.Spec, Status: p.Status}
}

func PersistentVolumeClaimOf(c *corev1.PersistentVolumeClaim) PersistentVolumeClaim {
	v := PersistentVolumeClaim{ObjectMeta: MetaOf(&c.ObjectMeta)}
	v.Spec.AccessModes, v.Spec.VolumeName = c.Spec.AccessModes, c.Spec.VolumeName
	return v
}

func PersistentVolumeOf(pv *corev1.PersistentVolume) PersistentVolume {
	v := PersistentVolume{ObjectMeta: MetaOf(&pv.ObjectMeta)}
	v.Spec.AccessModes, v.Spec.NodeAffinity = pv.Spec.AccessModes, pv.Spec.NodeAffinity
	if pv.Spec.Local != nil {
		v.Spec.Local = &struct{}{}
	}
	if pv.Spec.HostPath != nil {
		v.Spec.HostPath = &struct{}{}
	}
	return v
}
