package view

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSlimPod: the analysis sees a slimmed pod as it sees the pod, the
// pod itself is left alone, and what is dropped is dropped.
func TestSlimPod(t *testing.T) {
	grace := int64(30)
	now := metav1.Now()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1", ResourceVersion: "7", Generation: 2,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"kubernetes.io/config.mirror": "x"},
			DeletionTimestamp: &now, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "o1"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{NodeName: "n1", TerminationGracePeriodSeconds: &grace,
			Containers:  []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}},
				{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "i", Ready: true}}},
	}
	before := p.DeepCopy()
	s := SlimPod(p)
	if diff := cmp.Diff(PodOf(p), PodOf(s)); diff != "" {
		t.Errorf("PodOf of the slim pod differs (-pod +slim):\n%s", diff)
	}
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("SlimPod changed the pod:\n%s", diff)
	}
	if s.ManagedFields != nil || s.Spec.Containers != nil || s.Spec.Tolerations != nil || s.Status.ContainerStatuses != nil || len(s.Spec.Volumes) != 4 || len(s.Status.Conditions) != 1 {
		t.Errorf("slim pod keeps what it should drop: %+v", s)
	}
	if s.Name != p.Name || s.ResourceVersion != p.ResourceVersion || s.Spec.Volumes[2].PersistentVolumeClaim.ClaimName != "data-web-0" {
		t.Errorf("slim pod lost its identity or a claim: %+v", s.ObjectMeta)
	}
}
