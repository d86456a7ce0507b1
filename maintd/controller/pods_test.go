package controller

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// TestCachedPod: the analysis sees a pod back from the cache as it sees the
// pod, the pod itself is left alone, and what is dropped is dropped.
func TestCachedPod(t *testing.T) {
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
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}},
				{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "r", Message: "m"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "i", Ready: true}}},
	}
	before := p.DeepCopy()
	cached, err := slim(p)
	if err != nil {
		t.Fatal(err)
	}
	back := cached.(*cachedPod).pod()
	if diff := cmp.Diff(view.PodOf(p), view.PodOf(back)); diff != "" {
		t.Errorf("the analysis sees the pod back from the cache differently (-pod +cached):\n%s", diff)
	}
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("caching changed the pod:\n%s", diff)
	}
	if back.ManagedFields != nil || back.Spec.Containers != nil || back.Spec.Tolerations != nil || back.Status.ContainerStatuses != nil ||
		len(back.Spec.Volumes) != 4 || len(back.Status.Conditions) != 1 {
		t.Errorf("the cache keeps what it should drop: %+v", back)
	}
	if back.Name != p.Name || back.ResourceVersion != p.ResourceVersion || back.Spec.Volumes[2].PersistentVolumeClaim.ClaimName != "data-web-0" {
		t.Errorf("the cached pod lost its identity or a claim: %+v", back.ObjectMeta)
	}
	// A transform may see what it made: it is kept as it is.
	again, err := slim(cached)
	if err != nil || again != cached {
		t.Errorf("slim of a cached pod = %p, %v; want the same %p", again, err, cached)
	}
}

// TestPlacementShared: pods with the same node selection, tolerations and
// spread share one copy of them, pods with other values do not, and each
// pod's own times stay its own.
func TestPlacementShared(t *testing.T) {
	pod := func(name, pool string, ready metav1.Time) *cachedPod {
		return cachePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": pool},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready}}}})
	}
	t1, t2 := metav1.Unix(100, 0), metav1.Unix(200, 0)
	a, b, c := pod("a", "blue", t1), pod("b", "blue", t2), pod("c", "green", t1)
	if &a.Scheduling.Tolerations[0] != &b.Scheduling.Tolerations[0] || a.placement != b.placement {
		t.Error("two replicas of one template keep two copies of their tolerations")
	}
	if a.placement == c.placement || c.Scheduling.NodeSelector["pool"] != "green" {
		t.Errorf("pods with other node selectors share a placement: %v", c.Scheduling.NodeSelector)
	}
	if !a.Scheduling.Ready.Equal(&t1) || !b.Scheduling.Ready.Equal(&t2) {
		t.Errorf("ready times %v, %v: want each pod's own", a.Scheduling.Ready, b.Scheduling.Ready)
	}
}

// TestListBySelector: the pods list finds for a selector, from the label
// index, are exactly those the selector matches among the namespace's pods,
// for every kind of requirement (one value, several, none, negations,
// several requirements), pods in other namespaces and labels that differ
// only by value included.
func TestListBySelector(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers())
	r := rand.New(rand.NewPCG(1, 2))
	values := []string{"a", "b", "c"}
	for i := range 400 {
		l := map[string]string{}
		for _, k := range []string{"app", "tier", "track"} {
			if r.IntN(4) > 0 {
				l[k] = values[r.IntN(len(values))]
			}
		}
		ns := []string{"shop", "bank"}[r.IntN(2)]
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i), Labels: l}}
		if err := idx.Add(cachePod(p)); err != nil {
			t.Fatal(err)
		}
	}
	c := podCache{idx}
	for _, s := range []string{"", "app=a", "app==b", "app in (c)", "app in (a,b)", "app!=a", "!tier", "tier", "app notin (a)",
		"app=a,tier=b", "tier in (a,b),app=c", "app=a,track!=c", "app=z", "track=a,!app"} {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{"shop", "bank", "none"} {
			got, err := c.list(ns, sel)
			if err != nil {
				t.Fatalf("list %s %q: %v", ns, s, err)
			}
			var want []string
			for _, o := range idx.List() {
				p := o.(*cachedPod)
				if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
					want = append(want, p.Name)
				}
			}
			names := make([]string, len(got))
			for i, p := range got {
				names[i] = p.Name
			}
			slices.Sort(names)
			slices.Sort(want)
			if diff := cmp.Diff(want, names, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("list %s %q (-want +got):\n%s", ns, s, diff)
			}
		}
	}
}
