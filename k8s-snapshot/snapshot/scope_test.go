package snapshot

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// load reads a multi-document YAML file of Kubernetes objects into a
// Snapshot (in file order) and the same objects for a fake clientset.
func load(t testing.TB, path string) (*Snapshot, []runtime.Object) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := New()
	var objs []runtime.Object
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var obj runtime.Object
		switch tm.Kind {
		case "Node":
			obj = decode(t, doc, &s.Nodes)
		case "Pod":
			obj = decode(t, doc, &s.Pods)
		case "ReplicaSet":
			obj = decode(t, doc, &s.ReplicaSets)
		case "Deployment":
			obj = decode(t, doc, &s.Deployments)
		case "StatefulSet":
			obj = decode(t, doc, &s.StatefulSets)
		case "DaemonSet":
			obj = decode(t, doc, &s.DaemonSets)
		case "Job":
			obj = decode(t, doc, &s.Jobs)
		case "CronJob":
			obj = decode(t, doc, &s.CronJobs)
		case "PodDisruptionBudget":
			obj = decode(t, doc, &s.PodDisruptionBudgets)
		case "PersistentVolumeClaim":
			obj = decode(t, doc, &s.PersistentVolumeClaims)
		case "PersistentVolume":
			obj = decode(t, doc, &s.PersistentVolumes)
		case "StorageClass":
			obj = decode(t, doc, &s.StorageClasses)
		case "HorizontalPodAutoscaler":
			obj = decode(t, doc, &s.HorizontalPodAutoscalers)
		default:
			t.Fatalf("%s: unexpected kind %q", path, tm.Kind)
		}
		objs = append(objs, obj)
	}
	return s, objs
}

func decode[T any, PT interface {
	*T
	runtime.Object
}](t testing.TB, doc []byte, into *[]T) runtime.Object {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	*into = append(*into, v)
	return PT(&v)
}

// names is each list of s as sorted "namespace/name" strings.
func names(s *Snapshot) map[string][]string {
	out := map[string][]string{}
	add := func(kind string, m metav1.Object) {
		n := m.GetName()
		if m.GetNamespace() != "" {
			n = m.GetNamespace() + "/" + n
		}
		out[kind] = append(out[kind], n)
	}
	each(s.Nodes, "nodes", add)
	each(s.Pods, "pods", add)
	each(s.ReplicaSets, "replicaSets", add)
	each(s.Deployments, "deployments", add)
	each(s.StatefulSets, "statefulSets", add)
	each(s.DaemonSets, "daemonSets", add)
	each(s.Jobs, "jobs", add)
	each(s.CronJobs, "cronJobs", add)
	each(s.PodDisruptionBudgets, "podDisruptionBudgets", add)
	each(s.PersistentVolumeClaims, "persistentVolumeClaims", add)
	each(s.PersistentVolumes, "persistentVolumes", add)
	each(s.StorageClasses, "storageClasses", add)
	each(s.HorizontalPodAutoscalers, "horizontalPodAutoscalers", add)
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func each[T any, PT interface {
	*T
	metav1.Object
}](items []T, kind string, f func(string, metav1.Object)) {
	for i := range items {
		f(kind, PT(&items[i]))
	}
}

func TestForNodes(t *testing.T) {
	cluster, _ := load(t, "testdata/cluster.yaml")
	tests := map[string]struct {
		nodes []string
		want  map[string][]string
	}{
		"n1: other namespace, siblings, PDB pods, owner chains, storage, HPA": {
			nodes: []string{"n1"},
			want: map[string][]string{
				"nodes": {"n1"},
				"pods": {
					"ops/fake-1", "ops/ops-2", "ops/tool", // on n1, or selected by ops/all ({}) with tool
					"shop/agent-n1", "shop/db-0", "shop/nightly-1-x", // not cache-1: PDB cache covers nothing on n1
					"shop/web-abc-1", "shop/web-abc-2", "shop/web-old-1",
				},
				"replicaSets":              {"ops/fake", "shop/web-abc", "shop/web-old"},
				"deployments":              {"shop/web"},
				"statefulSets":             {"shop/db"},
				"daemonSets":               {"shop/agent"},
				"jobs":                     {"shop/nightly-1"},
				"cronJobs":                 {"shop/nightly"},
				"podDisruptionBudgets":     {"ops/all", "shop/cache", "shop/web"},
				"persistentVolumeClaims":   {"shop/data-db-0", "shop/web-abc-1-scratch"},
				"persistentVolumes":        {"pv-1", "pv-scratch"},
				"storageClasses":           {"fast", "fast-pv", "scratch"},
				"horizontalPodAutoscalers": {"shop/web"},
			},
		},
		"n2: a namespace with only a PDB-covered pod here": {
			nodes: []string{"n2"},
			want: map[string][]string{
				"nodes": {"n2"},
				"pods": {
					"ops/fake-1", "ops/ops-2", "ops/tool",
					"quiet/q-1",
					"shop/agent-n2", "shop/nightly-2-y",
					"shop/web-abc-1", "shop/web-abc-2", "shop/web-old-1",
				},
				"replicaSets":              {"ops/fake", "shop/web-abc", "shop/web-old"},
				"deployments":              {"shop/web"},
				"daemonSets":               {"shop/agent"},
				"jobs":                     {"shop/nightly-2"},
				"cronJobs":                 {"shop/nightly"},
				"podDisruptionBudgets":     {"ops/all", "quiet/q", "shop/cache", "shop/web"},
				"horizontalPodAutoscalers": {"shop/web"},
			},
		},
		"n3 and n3 again: a lonely pod and nothing of quiet": {
			nodes: []string{"n3", "n3"},
			want: map[string][]string{
				"nodes": {"n3"},
				"pods": {
					"ops/fake-1", "ops/ops-2", "ops/tool",
					"shop/cache-1", "shop/lonely",
					"shop/web-abc-1", "shop/web-abc-2", "shop/web-old-1",
				},
				"replicaSets":              {"ops/fake", "shop/web-abc", "shop/web-old"},
				"deployments":              {"shop/web"},
				"podDisruptionBudgets":     {"ops/all", "shop/cache", "shop/web"},
				"horizontalPodAutoscalers": {"shop/web"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ForNodes(cluster, tc.nodes...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("ForNodes(%v) (-want +got):\n%s", tc.nodes, diff)
			}
			if diff := cmp.Diff(slices.Compact(slices.Sorted(slices.Values(tc.nodes))), got.Metadata.Scope.Nodes); diff != "" {
				t.Errorf("scope nodes (-want +got):\n%s", diff)
			}
			assertChainsComplete(t, got)
		})
	}
}

// assertChainsComplete fails when a pod or owner in s names an owner of a
// known kind that s lacks.
func assertChainsComplete(t *testing.T, s *Snapshot) {
	t.Helper()
	idx := owners(s)
	check := func(what string, namespace string, refs []metav1.OwnerReference) {
		for _, r := range refs {
			if _, ok := idx[ref{groupOf(r.APIVersion), r.Kind, namespace, r.Name}]; !ok {
				t.Errorf("%s: owner %s %s/%s is missing", what, r.Kind, namespace, r.Name)
			}
		}
	}
	for _, p := range s.Pods {
		check("pod "+p.Name, p.Namespace, p.OwnerReferences)
	}
	for _, rs := range s.ReplicaSets {
		check("replicaset "+rs.Name, rs.Namespace, rs.OwnerReferences)
	}
	for _, j := range s.Jobs {
		check("job "+j.Name, j.Namespace, j.OwnerReferences)
	}
}

func groupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}

func TestForNodesUnknown(t *testing.T) {
	cluster, _ := load(t, "testdata/cluster.yaml")
	tests := map[string]struct {
		nodes []string
		want  string
	}{
		"one":  {[]string{"n1", "n9"}, "node n9 not found"},
		"two":  {[]string{"n8", "n9"}, "nodes n8, n9 not found"},
		"case": {[]string{"N1"}, "node N1 not found"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ForNodes(cluster, tc.nodes...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ForNodes(%v) = %v, %v; want error %q", tc.nodes, got, err, tc.want)
			}
		})
	}
}

func TestPodQueries(t *testing.T) {
	cluster, _ := load(t, "testdata/cluster.yaml")
	tests := map[string]struct {
		nodes []string
		want  []PodQuery
	}{
		"n1": {[]string{"n1"}, []PodQuery{
			{"ops", ""}, // ops/all ({}) covers every other query of ops
			{"shop", "app=db"},
			{"shop", "app=web"}, // covers ReplicaSet web-abc's app=web,pod-template-hash=abc
			{"shop", "batch.kubernetes.io/controller-uid=job-nightly-1"},
		}},
		"n3": {[]string{"n3"}, []PodQuery{
			{"ops", ""},
			{"shop", "app in (cache)"},
			{"shop", "app=web"},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodQueries(cluster, tc.nodes)); diff != "" {
				t.Errorf("PodQueries (-want +got):\n%s", diff)
			}
		})
	}
}
