package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/fake"
)

// TestBreakerNamesWhyAPodWaits: a pod a campaign moved that is not Ready
// is named with what kubectl get pods shows of it, its waiting container's
// reason (the pod cache keeps it only while the pod is not Ready).
func TestBreakerNamesWhyAPodWaits(t *testing.T) {
	core := kfake.NewClientset()
	c := New(Config{Clients: Clients{Core: core.CoreV1(), Apps: core.AppsV1(), Batch: core.BatchV1(), Policy: core.PolicyV1(), Autoscaling: core.AutoscalingV2(), Storage: core.StorageV1()},
		Plans: fake.NewSimpleClientset().MaintenanceV1alpha1().MaintenancePlans()})
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1", Controller: new(bool)}
	*owner.Controller = true
	pod := func(name string, ready corev1.ConditionStatus, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(start.Add(time.Minute)),
			OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.PodSpec{NodeName: "n2"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}},
				ContainerStatuses: statuses}}
	}
	waiting := func(reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	for _, p := range []*corev1.Pod{
		pod("web-crash", corev1.ConditionFalse, corev1.ContainerStatus{Name: "ok", Ready: true}, waiting("CrashLoopBackOff")),
		pod("web-ready", corev1.ConditionTrue, waiting("ImagePullBackOff")), // Ready: not counted
	} {
		if err := c.pods.idx.Add(cachePod(p)); err != nil {
			t.Fatal(err)
		}
	}
	started := metav1.NewTime(start)
	m := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}, Status: api.MaintenanceCampaignStatus{StartedAt: &started, Nodes: []string{"n1"}, Owners: []types.UID{"rs-1"}}}
	s, err := c.sickness(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Unready) != 1 || s.Unready[0].Name != "web-crash" || !strings.Contains(s.Unready[0].Why, "CrashLoopBackOff") {
		t.Errorf("unready pods %+v: want web-crash, named with CrashLoopBackOff", s.Unready)
	}
}
