package snapshot_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/k8s-snapshot/internal/snapshottest"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// FuzzForNodes feeds snapshots from outside (owner references, selectors,
// volumes as the API returned them, including cycles and nonsense) to
// ForNodes and PodQueries: no panic, the pods on the node always kept,
// nothing invented, and Encode still writes what document.Encode would.
func FuzzForNodes(f *testing.F) {
	cluster, _ := snapshottest.Load(f, "testdata/cluster.yaml")
	var seed bytes.Buffer
	if err := snapshot.Encode(&seed, document.JSON, cluster); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.Bytes(), "n1")
	f.Add(seed.Bytes(), "n3")
	f.Add([]byte(`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","metadata":{"capturedAt":null,"server":"","kubernetesVersion":"","scope":{}},
"nodes":[{"metadata":{"name":"a"}}],
"pods":[{"metadata":{"name":"p","namespace":"x","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"1"}]},"spec":{"nodeName":"a","containers":null}}],
"replicaSets":[{"metadata":{"name":"r","namespace":"x","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"2"}]},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]},"template":{"metadata":{},"spec":{"containers":null}}},"status":{"replicas":0}}],
"deployments":[{"metadata":{"name":"d","namespace":"x","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"1"}]},"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},"status":{}}],
"podDisruptionBudgets":[{"metadata":{"name":"b","namespace":"x"},"spec":{"selector":{}},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}}]}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, node string) {
		var s snapshot.Snapshot
		if document.Unmarshal(data, snapshot.Kind, &s) != nil {
			return
		}
		snapshot.PodQueries(&s, []string{node})
		got, err := snapshot.ForNodes(&s, node)
		if err != nil {
			return
		}
		in := 0
		for _, p := range s.Pods {
			if p.Spec.NodeName == node {
				in++
			}
		}
		out := 0
		for _, p := range got.Pods {
			if p.Spec.NodeName == node {
				out++
			}
		}
		if in != out || len(got.Pods) > len(s.Pods) || len(got.Nodes) != 1 {
			t.Fatalf("ForNodes(%q): %d of %d pods on the node kept, %d pods of %d, %d nodes", node, out, in, len(got.Pods), len(s.Pods), len(got.Nodes))
		}
		var want, enc bytes.Buffer
		if err := document.Encode(&want, document.JSON, got); err != nil {
			return // e.g. a value encoding/json refuses; Encode must refuse it too
		}
		if err := snapshot.Encode(&enc, document.JSON, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), enc.String()); diff != "" {
			t.Fatalf("Encode (-want +got):\n%s", diff)
		}
	})
}
