package snapshot_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-snapshot/internal/snapshottest"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

func TestForNodes(t *testing.T) {
	cluster, _ := snapshottest.Load(t, "testdata/cluster.yaml")
	tests := map[string]struct {
		nodes []string
		want  map[string][]string
	}{
		"n1: other namespace, siblings, PDB pods, owner chains, storage, HPA, attachments": {
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
				"persistentVolumeClaims":   {"shop/data-db-0", "shop/logs", "shop/web-abc-1-scratch"}, // logs: pv-attached's
				"persistentVolumes":        {"pv-1", "pv-attached", "pv-csi", "pv-scratch"},           // va-n1's, and n1's volumesAttached
				"storageClasses":           {"fast", "fast-pv", "scratch"},
				"horizontalPodAutoscalers": {"shop/web"},
				"volumeAttachments":        {"va-n1"},
				"csiDrivers":               {"ebs.csi.aws.com"},
				"csiNodes":                 {"n1"},
				"namespaces":               {"shop"},
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
				"volumeAttachments":        {"va-n2"},
				"persistentVolumes":        {"pv-2"},        // va-n2's
				"persistentVolumeClaims":   {"shop/unused"}, // pv-2's claim
				"storageClasses":           {"slow"},
				"csiDrivers":               {"ebs.csi.aws.com"},
				"csiNodes":                 {"n2"},
				"namespaces":               {"quiet", "shop"},
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
				"namespaces":               {"shop"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := snapshot.ForNodes(cluster, tc.nodes...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, snapshottest.Names(got)); diff != "" {
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
func assertChainsComplete(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	check := func(what string, namespace string, refs []metav1.OwnerReference) {
		for _, r := range refs {
			if !snapshot.HasOwner(s, groupOf(r.APIVersion), r.Kind, namespace, r.Name) {
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
	cluster, _ := snapshottest.Load(t, "testdata/cluster.yaml")
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
			got, err := snapshot.ForNodes(cluster, tc.nodes...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ForNodes(%v) = %v, %v; want error %q", tc.nodes, got, err, tc.want)
			}
		})
	}
}

func TestPodQueries(t *testing.T) {
	cluster, _ := snapshottest.Load(t, "testdata/cluster.yaml")
	tests := map[string]struct {
		nodes []string
		want  []snapshot.PodQuery
	}{
		"n1": {[]string{"n1"}, []snapshot.PodQuery{
			{"ops", ""}, // ops/all ({}) covers every other query of ops
			// app=db and app=web (which covers ReplicaSet web-abc's
			// app=web,pod-template-hash=abc) in one request
			{"shop", "app in (db,web)"},
			{"shop", "batch.kubernetes.io/controller-uid=job-nightly-1"},
		}},
		"n3": {[]string{"n3"}, []snapshot.PodQuery{
			{"ops", ""},
			{"shop", "app in (cache,web)"}, // app in (cache) and app=web
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, snapshot.PodQueries(cluster, tc.nodes)); diff != "" {
				t.Errorf("PodQueries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCSIVolumeName(t *testing.T) {
	for name, want := range map[string][3]string{
		"kubernetes.io/csi/ebs.csi.aws.com^vol-1":          {"ebs.csi.aws.com", "vol-1", "ok"},
		"kubernetes.io/csi/rook-ceph.rbd.csi.ceph.com^a^b": {"rook-ceph.rbd.csi.ceph.com", "a^b", "ok"},
		"kubernetes.io/csi/ebs.csi.aws.com":                {},
		"kubernetes.io/csi/^vol-1":                         {},
		"kubernetes.io/csi/d^":                             {},
		"kubernetes.io/aws-ebs/aws://us-east-1a/vol-1":     {},
		"": {},
	} {
		driver, handle, ok := snapshot.CSIVolumeName(name)
		if got := [3]string{driver, handle, map[bool]string{true: "ok"}[ok]}; got != want {
			t.Errorf("CSIVolumeName(%q) = %q, want %q", name, got, want)
		}
	}
}

// FuzzCSIVolumeName: a name it splits is the driver and handle joined
// back, and the driver has no "^".
func FuzzCSIVolumeName(f *testing.F) {
	f.Add("kubernetes.io/csi/ebs.csi.aws.com^vol-1")
	f.Add("kubernetes.io/aws-ebs/aws://us-east-1a/vol-1")
	f.Add("kubernetes.io/csi/^")
	f.Fuzz(func(t *testing.T, name string) {
		driver, handle, ok := snapshot.CSIVolumeName(name)
		if !ok {
			return
		}
		if "kubernetes.io/csi/"+driver+"^"+handle != name || strings.Contains(driver, "^") || driver == "" || handle == "" {
			t.Fatalf("CSIVolumeName(%q) = %q, %q", name, driver, handle)
		}
	})
}
