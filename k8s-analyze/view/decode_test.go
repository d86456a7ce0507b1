package view

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kjson "sigs.k8s.io/json"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/internal/golden"
	"github.com/sentinel-go/sentinel/k8s-analyze/strictjson"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// sameOnBothPaths checks that the JSON of s decodes on the fast path into
// the view of what the canonical decoder gives, and that Decode agrees.
func sameOnBothPaths(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fast Snapshot
	if err := strictjson.UnmarshalProjection(data, &fast, reflect.TypeFor[snapshot.Snapshot]()); err != nil {
		t.Fatalf("the fast path refuses a snapshot: %v", err)
	}
	var full snapshot.Snapshot
	if err := document.Unmarshal(data, snapshot.Kind, &full); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Of(&full), &fast); diff != "" {
		t.Errorf("views of the canonical decoding (-) and of the fast path (+):\n%s", diff)
	}
	decoded, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&fast, decoded); diff != "" {
		t.Errorf("Decode differs from the fast path (-want +got):\n%s", diff)
	}
}

// TestFastPathAgrees: the goldens' snapshots and a generated one decode into
// the same view on the fast path as through the canonical decoder.
func TestFastPathAgrees(t *testing.T) {
	for _, f := range golden.Snapshots(t, "../testdata/script") {
		var s snapshot.Snapshot
		if document.Unmarshal(f.Data, snapshot.Kind, &s) != nil {
			continue // bad input
		}
		t.Run(f.Name, func(t *testing.T) { sameOnBothPaths(t, &s) })
	}
	t.Run("generated", func(t *testing.T) {
		sameOnBothPaths(t, bench.Generate(bench.Size{Nodes: 50, Namespaces: 5, DeploymentsPerNamespace: 4, Replicas: 6}))
	})
}

// TestDecodeYAML: YAML takes the canonical path to the same view as its
// JSON, and its errors name the problem.
func TestDecodeYAML(t *testing.T) {
	const doc = `apiVersion: sentinel.dev/v1alpha1
kind: Snapshot
metadata: {capturedAt: "2026-11-29T12:00:00Z"}
nodes: [{metadata: {name: n1, uid: u1, labels: {kubernetes.io/hostname: n1}}}]
pods: [{metadata: {name: p, namespace: ns, uid: u2}, spec: {nodeName: n1, containers: [{name: c}], volumes: [{name: v, ephemeral: {}}]}, status: {phase: Running}}]
`
	fromYAML, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var full snapshot.Snapshot
	if err := document.Unmarshal([]byte(doc), snapshot.Kind, &full); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(&full)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
		t.Errorf("YAML and JSON decode differently (-json +yaml):\n%s", diff)
	}
	if v := fromYAML.Pods[0].Spec.Volumes[0]; v.Name != "v" || v.Ephemeral == nil {
		t.Errorf("volume = %+v, want v, ephemeral", v)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"unknown field": {strings.Replace(doc, "nodeName", "nodeNmae", 1), `unknown field "pods[0].spec.nodeNmae"`},
		"wrong kind":    {strings.Replace(doc, "kind: Snapshot", "kind: Report", 1), "Report"},
		"json":          {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","pods":[{"spec":{"nodeNmae":"x"}}]}`, `unknown field "pods[0].spec.nodeNmae"`},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Decode([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || s != nil {
				t.Errorf("Decode = %v, %v; want an error containing %q", s, err, tc.want)
			}
		})
	}
	if _, err := Decode(bytes.Repeat([]byte(" "), 3)); err == nil {
		t.Errorf("Decode of blank input succeeded")
	}
}

// FuzzDecode holds the fast path to its promise on the analysis's own
// projection: what it accepts, the canonical strict decoder accepts, into
// the same view; and Decode never panics.
func FuzzDecode(f *testing.F) {
	for _, file := range golden.Snapshots(f, "../testdata/script") {
		f.Add(file.Data)
	}
	generated, err := json.Marshal(bench.Generate(bench.Size{Nodes: 3, Namespaces: 1, DeploymentsPerNamespace: 1, Replicas: 2}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(generated)
	schema := reflect.TypeFor[snapshot.Snapshot]()
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast Snapshot
		if strictjson.UnmarshalProjection(data, &fast, schema) == nil {
			var full snapshot.Snapshot
			strict, err := kjson.UnmarshalStrict(data, &full, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
			if err == nil && len(strict) > 0 {
				err = strict[0]
			}
			if err != nil {
				t.Fatalf("the fast path accepted what the canonical decoder refuses (%v):\n%s", err, data)
			}
			if diff := cmp.Diff(Of(&full), &fast); diff != "" {
				t.Fatalf("views of the canonical decoding (-) and of the fast path (+):\n%s\non:\n%s", diff, data)
			}
		}
		if s, err := Decode(data); (s == nil) == (err == nil) {
			t.Fatalf("Decode = %v, %v", s, err)
		}
	})
}
