package view

import corev1 "k8s.io/api/core/v1"

// SlimPod is a copy of p with only what is read of a pod to judge a drain:
// what PodOf keeps (metadata, spec.nodeName, the grace period, the volumes'
// names and local or claim sources, status.phase, startTime and the
// conditions' type and status), the metadata whole but its managedFields,
// and nothing of the containers, tolerations or container statuses. A
// process that keeps every pod of a cluster in memory (maintd's informer
// cache) keeps this instead; PodOf(SlimPod(p)) is PodOf(p) (tested).
func SlimPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
	out.ManagedFields = nil
	out.Spec.NodeName = p.Spec.NodeName
	out.Spec.TerminationGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
	if p.Spec.Volumes != nil {
		out.Spec.Volumes = make([]corev1.Volume, len(p.Spec.Volumes))
		for i := range p.Spec.Volumes {
			v, src := &p.Spec.Volumes[i], &out.Spec.Volumes[i].VolumeSource
			out.Spec.Volumes[i].Name = v.Name
			src.EmptyDir, src.HostPath, src.PersistentVolumeClaim = v.EmptyDir, v.HostPath, v.PersistentVolumeClaim
			if v.Ephemeral != nil {
				src.Ephemeral = &corev1.EphemeralVolumeSource{}
			}
		}
	}
	out.Status.Phase, out.Status.StartTime = p.Status.Phase, p.Status.StartTime
	if p.Status.Conditions != nil {
		out.Status.Conditions = make([]corev1.PodCondition, len(p.Status.Conditions))
		for i, c := range p.Status.Conditions {
			out.Status.Conditions[i] = corev1.PodCondition{Type: c.Type, Status: c.Status}
		}
	}
	return out
}
