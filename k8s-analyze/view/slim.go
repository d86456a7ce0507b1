package view

import corev1 "k8s.io/api/core/v1"

// SlimPod is a copy of p with only what PodOf reads (the metadata whole but
// its managedFields, spec.nodeName, the grace period, the volumes with a
// local or claim source, status.phase, startTime and the Ready condition)
// and nothing of the containers, tolerations, other volumes, other
// conditions or container statuses. A process that keeps every pod of a
// cluster in memory (maintd's informer cache) keeps this instead;
// PodOf(SlimPod(p)) is PodOf(p) (tested).
func SlimPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
	out.ManagedFields = nil
	out.Spec.NodeName = p.Spec.NodeName
	out.Spec.TerminationGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
	for i := range p.Spec.Volumes {
		if v := &p.Spec.Volumes[i]; kept(v) {
			src := corev1.VolumeSource{EmptyDir: v.EmptyDir, HostPath: v.HostPath, PersistentVolumeClaim: v.PersistentVolumeClaim}
			if v.Ephemeral != nil {
				src.Ephemeral = &corev1.EphemeralVolumeSource{}
			}
			out.Spec.Volumes = append(out.Spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: src})
		}
	}
	out.Status.Phase, out.Status.StartTime = p.Status.Phase, p.Status.StartTime
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Status.Conditions = append(out.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status})
		}
	}
	return out
}
