package view

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func container(cpu, memory string) corev1.Container {
	r := corev1.ResourceList{}
	if cpu != "" {
		r[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		r[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: r}}
}

func sidecar(cpu, memory string) corev1.Container {
	c := container(cpu, memory)
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// TestRequests: a pod's effective requests, as the scheduler counts them.
func TestRequests(t *testing.T) {
	for name, tc := range map[string]struct {
		spec corev1.PodSpec
		want Resources
	}{
		"containers add up": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "128Mi"), container("250m", "")}},
			want: Resources{MilliCPU: 350, Memory: 128 << 20},
		},
		"an init container that needs more wins": {
			spec: corev1.PodSpec{InitContainers: []corev1.Container{container("2", "64Mi")}, Containers: []corev1.Container{container("500m", "1Gi")}},
			want: Resources{MilliCPU: 2000, Memory: 1 << 30},
		},
		"sidecars run alongside: they add to the containers and to later init containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{sidecar("200m", "100Mi"), container("1", "")},
				Containers:     []corev1.Container{container("500m", "")},
			},
			want: Resources{MilliCPU: 1200, Memory: 100 << 20},
		},
		"pod-level requests replace cpu and memory; overhead adds": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container("100m", "1Gi"), {Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}},
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
				Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
			},
			want: Resources{MilliCPU: 3050, Memory: 1 << 30, EphemeralStorage: 1 << 30},
		},
		"other resources are named": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				"nvidia.com/gpu": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("4Mi")}}}}},
			want: Resources{Other: []corev1.ResourceName{"hugepages-2Mi", "nvidia.com/gpu"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, requests(&tc.spec)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchedulingOf: what the forecast reads of a pod, and nothing for a pod
// that has none of it (as maintd's cached pods).
func TestSchedulingOf(t *testing.T) {
	scheduled, ready := metav1.Unix(1000, 0), metav1.Unix(1042, 0)
	p := &corev1.Pod{
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"disk": "ssd"},
			Containers:   []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP}}}},
		},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: scheduled},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1040, 0)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
		}},
	}
	want := &Scheduling{
		Requests: Resources{Pods: 1}, NodeSelector: map[string]string{"disk": "ssd"},
		HostPorts: []corev1.ContainerPort{{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP}},
		Scheduled: scheduled, Ready: ready,
	}
	if diff := cmp.Diff(want, SchedulingOf(p)); diff != "" {
		t.Errorf("SchedulingOf (-want +got):\n%s", diff)
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 1}}
	if got := SchedulingOf(p); !got.Ready.IsZero() || !got.Scheduled.Equal(&scheduled) {
		t.Errorf("a pod whose container restarted gave Ready %v (its Ready is not its first), scheduled %v", got.Ready, got.Scheduled)
	}
	p.Status.ContainerStatuses = nil
	p.Status.Conditions[2].Status = corev1.ConditionFalse
	if got := SchedulingOf(p); !got.Ready.IsZero() {
		t.Errorf("a Ready condition that is not True gave the time %v", got.Ready)
	}
	bare := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if got := SchedulingOf(bare); got != nil {
		t.Errorf("SchedulingOf a pod without any of it = %+v, want nil", got)
	}
	if got := PodOf(p); got.Scheduling != nil {
		t.Errorf("PodOf kept the scheduling: %+v", got.Scheduling)
	}
}

// TestNodeOf: taints, cordon and allocatable; nil without status.
func TestNodeOf(t *testing.T) {
	n := &corev1.Node{
		Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m"),
			corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}},
	}
	got := NodeOf(n)
	if !got.Spec.Unschedulable || len(got.Spec.Taints) != 1 {
		t.Errorf("NodeOf spec = %+v", got.Spec)
	}
	if diff := cmp.Diff(&Resources{MilliCPU: 3500, Memory: 8 << 30, Pods: 110}, got.Status.Allocatable); diff != "" {
		t.Errorf("allocatable (-want +got):\n%s", diff)
	}
	if got := NodeOf(&corev1.Node{}); got.Status.Allocatable != nil {
		t.Errorf("a node without status has allocatable %+v", got.Status.Allocatable)
	}
}

// TestHorizontalPodAutoscalerOf: the object an autoscaler scales and its
// bounds, which a surge must not fight; nothing of its metrics or status.
func TestHorizontalPodAutoscalerOf(t *testing.T) {
	one := int32(1)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "hpa-1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &one, MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3},
	}
	want := HorizontalPodAutoscaler{ObjectMeta: ObjectMeta{Name: "web", Namespace: "shop", UID: "hpa-1"}}
	want.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	want.Spec.MinReplicas, want.Spec.MaxReplicas = &one, 5
	if diff := cmp.Diff(want, HorizontalPodAutoscalerOf(h)); diff != "" {
		t.Errorf("HorizontalPodAutoscalerOf (-want +got):\n%s", diff)
	}
}

// TestPluginPathsOf: the args and env values that name a CSI plugin's
// directory, init containers first; nothing else.
func TestPluginPathsOf(t *testing.T) {
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{{Args: []string{"--path=/var/lib/kubelet/plugins/a.example.com/"}}},
		Containers: []corev1.Container{
			{Args: []string{"--v=5", "--csi-address=/csi/csi.sock", "--kubelet-registration-path=/var/lib/kubelet/plugins/rook-ceph.rbd.csi.ceph.com/csi.sock"}},
			{Env: []corev1.EnvVar{{Name: "ADDRESS", Value: "/var/lib/kubelet/plugins_registry/x"}, {Name: "DRIVER_REG_SOCK_PATH", Value: "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock"}}},
		},
	}
	want := []string{"--path=/var/lib/kubelet/plugins/a.example.com/", "--kubelet-registration-path=/var/lib/kubelet/plugins/rook-ceph.rbd.csi.ceph.com/csi.sock", "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock"}
	if diff := cmp.Diff(want, PluginPathsOf(&spec)); diff != "" {
		t.Errorf("PluginPathsOf (-want +got):\n%s", diff)
	}
	if got := PluginPathsOf(&corev1.PodSpec{Containers: []corev1.Container{{Args: []string{"serve"}}}}); got != nil {
		t.Errorf("PluginPathsOf of a pod without plugin paths = %q, want nil", got)
	}
}

// TestVolumeAttachmentOf: the PV, node, driver, attached and the detach
// error's message are kept; an inline volume has no PV.
func TestVolumeAttachmentOf(t *testing.T) {
	pv := "pv-1"
	va := storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "va", UID: "u"},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: "d", NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
		Status:     storagev1.VolumeAttachmentStatus{Attached: true, DetachError: &storagev1.VolumeError{Message: "stuck"}},
	}
	got := VolumeAttachmentOf(&va)
	if got.Name != "va" || got.Spec.Attacher != "d" || got.Spec.NodeName != "n" || got.Spec.PersistentVolumeName != "pv-1" || !got.Status.Attached || got.Status.DetachError != "stuck" {
		t.Errorf("VolumeAttachmentOf = %+v", got)
	}
	va.Spec.Source.PersistentVolumeName, va.Status.DetachError = nil, nil
	if got := VolumeAttachmentOf(&va); got.Spec.PersistentVolumeName != "" || got.Status.DetachError != "" {
		t.Errorf("VolumeAttachmentOf of an inline volume = %+v", got)
	}
}
