package take

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/sentinel-go/sentinel/k8s-snapshot/internal/snapshottest"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// TestTakeWiring runs Take against client-go's fake clientset, which
// ignores field selectors and limits: it checks the wiring (every list
// lands in its field, managedFields are dropped unless Full) and that a
// node-scoped Take is snapshot.ForNodes of the whole-cluster one.
func TestTakeWiring(t *testing.T) {
	cluster, objs := snapshottest.Load(t, "../snapshot/testdata/cluster.yaml")
	client := clientset{fake.NewClientset(objs...)}
	ctx := context.Background()

	full, err := Take(ctx, client, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshottest.Names(cluster), snapshottest.Names(full)); diff != "" {
		t.Errorf("whole-cluster Take (-want +got):\n%s", diff)
	}
	for _, p := range full.Pods {
		if p.ManagedFields != nil {
			t.Errorf("pod %s kept its managedFields without Full", p.Name)
		}
	}
	kept, err := Take(ctx, client, Options{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if !kept.Metadata.Scope.Full || !slicesContainsManaged(kept.Pods) {
		t.Errorf("Take with Full dropped managedFields (scope %+v)", kept.Metadata.Scope)
	}

	for _, node := range []string{"n1", "n2", "n3"} {
		got, err := Take(ctx, client, Options{Nodes: []string{node}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := snapshot.ForNodes(full, node)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(snapshottest.Names(want), snapshottest.Names(got)); diff != "" {
			t.Errorf("Take --node %s (-want +got):\n%s", node, diff)
		}
	}
	if _, err := Take(ctx, client, Options{Nodes: []string{"n9"}}); err == nil || err.Error() != "node n9 not found" {
		t.Errorf("Take of an unknown node: err = %v, want node n9 not found", err)
	}
}

func slicesContainsManaged(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.ManagedFields != nil {
			return true
		}
	}
	return false
}

// pager serves pods n at a time and answers 410 to the continue requests
// listed in expire (by request number, from 1).
type pager struct {
	pods     int
	expire   map[int]bool
	requests int
}

func (p *pager) list(_ context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	p.requests++
	if p.expire[p.requests] {
		return nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
	}
	from := 0
	if opts.Continue != "" {
		from, _ = strconv.Atoi(opts.Continue)
	}
	to := min(from+int(opts.Limit), p.pods)
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for i := from; i < to; i++ {
		l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)}})
	}
	if to < p.pods {
		l.Continue = strconv.Itoa(to)
	}
	return l, nil
}

func TestAllRestartsOn410(t *testing.T) {
	tests := map[string]struct {
		expire       map[int]bool
		wantErr      string
		wantRestarts int
		wantRequests int
	}{
		"no expiry":          {nil, "", 0, 4},
		"one expiry":         {map[int]bool{3: true}, "", 1, 7},
		"expired every time": {map[int]bool{2: true, 4: true, 6: true, 8: true}, "list pods: 410 Gone: the continue token expired 4 times in a row (The provided continue parameter is too old)", 3, 8},
		"first page 410":     {map[int]bool{1: true}, "list pods: 410 Gone: The provided continue parameter is too old", 0, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &pager{pods: 10, expire: tc.expire}
			var restarts []Event
			tk := &taker{opts: Options{ChunkSize: 3, Notify: func(e Event) {
				if e.Restart != nil {
					restarts = append(restarts, e)
				}
			}}}
			l := lister[corev1.Pod, *corev1.PodList]{"pods", p.list, func(l *corev1.PodList) []corev1.Pod { return l.Items }}
			got, err := all(context.Background(), l, metav1.ListOptions{}, tk)
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var le *ListError
				if !errors.As(err, &le) || le.Resource != "pods" {
					t.Errorf("err is not a *ListError for pods: %#v", err)
				}
			case err != nil:
				t.Fatal(err)
			case len(got.items) != 10 || got.items[9].Name != "p9" || got.resourceVersion != "42":
				t.Errorf("got %d pods (rv %q), want p0..p9 (rv 42)", len(got.items), got.resourceVersion)
			}
			if len(restarts) != tc.wantRestarts || p.requests != tc.wantRequests {
				t.Errorf("restarts = %d, requests = %d; want %d, %d", len(restarts), p.requests, tc.wantRestarts, tc.wantRequests)
			}
		})
	}
}

func TestListErrorMessages(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	tests := map[string]struct {
		err  error
		want string
	}{
		"forbidden": {
			apierrors.NewForbidden(gr, "", errors.New(`User "noevict" cannot list resource "replicasets" in API group "apps" at the cluster scope`)),
			`list replicasets: 403 Forbidden: replicasets.apps is forbidden: User "noevict" cannot list resource "replicasets" in API group "apps" at the cluster scope`,
		},
		"unauthorized": {apierrors.NewUnauthorized("Unauthorized"), "list replicasets: 401 Unauthorized: the server rejected the credentials (Unauthorized)"},
		"deadline":     {fmt.Errorf("Get \"https://x\": %w", context.DeadlineExceeded), `list replicasets: no answer in time: Get "https://x": context deadline exceeded`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := (&ListError{Resource: "replicasets", Err: tc.err}).Error()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// clientset is the Source of a typed clientset (here client-go's fake).
type clientset struct{ c kubernetes.Interface }

func (c clientset) List(ctx context.Context, resource, ns string, opts metav1.ListOptions, into runtime.Object) error {
	var got runtime.Object
	var err error
	switch resource {
	case "pods":
		got, err = c.c.CoreV1().Pods(ns).List(ctx, opts)
	case "nodes":
		got, err = c.c.CoreV1().Nodes().List(ctx, opts)
	case "persistentvolumeclaims":
		got, err = c.c.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts)
	case "persistentvolumes":
		got, err = c.c.CoreV1().PersistentVolumes().List(ctx, opts)
	case "replicasets":
		got, err = c.c.AppsV1().ReplicaSets(ns).List(ctx, opts)
	case "deployments":
		got, err = c.c.AppsV1().Deployments(ns).List(ctx, opts)
	case "statefulsets":
		got, err = c.c.AppsV1().StatefulSets(ns).List(ctx, opts)
	case "daemonsets":
		got, err = c.c.AppsV1().DaemonSets(ns).List(ctx, opts)
	case "jobs":
		got, err = c.c.BatchV1().Jobs(ns).List(ctx, opts)
	case "cronjobs":
		got, err = c.c.BatchV1().CronJobs(ns).List(ctx, opts)
	case "poddisruptionbudgets":
		got, err = c.c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, opts)
	case "storageclasses":
		got, err = c.c.StorageV1().StorageClasses().List(ctx, opts)
	case "horizontalpodautoscalers":
		got, err = c.c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, opts)
	case "volumeattachments":
		got, err = c.c.StorageV1().VolumeAttachments().List(ctx, opts)
	case "csidrivers":
		got, err = c.c.StorageV1().CSIDrivers().List(ctx, opts)
	case "csinodes":
		got, err = c.c.StorageV1().CSINodes().List(ctx, opts)
	case "namespaces":
		got, err = c.c.CoreV1().Namespaces().List(ctx, opts)
	default:
		return fmt.Errorf("no fake for %s", resource)
	}
	if err != nil {
		return err
	}
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(got).Elem())
	return nil
}

func (c clientset) Version(context.Context) (string, error) {
	v, err := c.c.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

func TestUniquePods(t *testing.T) {
	pod := func(ns, name, node string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	got := uniquePods(
		[]corev1.Pod{pod("b", "x", "first"), pod("a", "y", "")},
		nil,
		[]corev1.Pod{pod("a", "y", "later"), pod("a", "a", ""), pod("b", "x", "later")},
	)
	var names []string
	for _, p := range got {
		names = append(names, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
	}
	want := []string{"a/a@", "a/y@", "b/x@first"} // the first list's copy wins
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("uniquePods (-want +got):\n%s", diff)
	}
	if got := uniquePods(); len(got) != 0 {
		t.Errorf("uniquePods() = %v, want none", got)
	}
}
