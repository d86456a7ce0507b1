package decode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/internal/golden"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// sameAsCanonical fails t when Full and document.Unmarshal disagree on
// data (one accepts what the other refuses, or they decode it differently),
// or when Snapshot does not decode data into the view of what Full decodes.
func sameAsCanonical(t *testing.T, data []byte) {
	t.Helper()
	got, err := Full(bytes.NewReader(data), int64(len(data)))
	var want snapshot.Snapshot
	werr := document.Unmarshal(data, snapshot.Kind, &want)
	v, verr := Snapshot(data)
	if (err == nil) != (verr == nil) || (err == nil && (v == nil || cmp.Diff(view.Of(got), v) != "")) {
		t.Fatalf("Full: %v; Snapshot: %v, or they differ; on:\n%.2000s", err, verr, data)
	}
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("Snapshot: %v; document.Unmarshal: %v; on:\n%.2000s", err, werr, data)
	case err != nil:
		if got != nil {
			t.Fatalf("Snapshot returned a snapshot and the error %v", err)
		}
		return
	}
	if diff := cmp.Diff(&want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Fatalf("document.Unmarshal (-) and Snapshot (+) decode differently:\n%s\non:\n%.2000s", diff, data)
	}
}

// TestSameAsCanonical: the goldens' snapshots, and generated ones in JSON
// and YAML, decode as document.Unmarshal decodes them.
func TestSameAsCanonical(t *testing.T) {
	for _, f := range golden.Snapshots(t, "../testdata/script") {
		t.Run(f.Name, func(t *testing.T) { sameAsCanonical(t, f.Data) })
	}
	s := bench.Generate(bench.Size{Nodes: 50, Namespaces: 5, DeploymentsPerNamespace: 4, Replicas: 6})
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("generated", func(t *testing.T) { sameAsCanonical(t, data) })
	var yaml strings.Builder
	if err := document.Encode(&yaml, document.YAML, s); err != nil {
		t.Fatal(err)
	}
	t.Run("generated yaml", func(t *testing.T) { sameAsCanonical(t, []byte(yaml.String())) })
}

// TestErrors: bad input is refused with the JSON path of the culprit, and
// the first culprit in document order is the one named, wherever the
// workers meet it.
func TestErrors(t *testing.T) {
	const head = `{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot",`
	many := strings.Repeat(`{"metadata":{"name":"n"}},`, 500)
	for name, tc := range map[string]struct{ doc, want string }{
		"unknown field":     {head + `"pods":[{"spec":{"nodeNmae":"x"}}]}`, "invalid Snapshot document: /pods/0/spec/nodeNmae: unknown field"},
		"other case":        {head + `"pods":[{"spec":{"NodeName":"x"}}]}`, "invalid Snapshot document: /pods/0/spec/NodeName: unknown field"},
		"duplicate":         {head + `"pods":[{"spec":{"nodeName":"x","nodeName":"y"}}]}`, "invalid Snapshot document: /pods/0/spec/nodeName: duplicate field"},
		"duplicate list":    {head + `"pods":[],"pods":[]}`, "invalid Snapshot document: /pods: duplicate field"},
		"unknown list":      {head + `"podz":[]}`, "invalid Snapshot document: /podz: unknown field"},
		"not a list":        {head + `"pods":{}}`, "invalid Snapshot document: /pods: want a JSON array or null, not object"},
		"wrong type":        {head + `"pods":[{"spec":{"nodeName":3}}]}`, "invalid Snapshot document: /pods/0/spec/nodeName: cannot decode JSON number into string"},
		"bad quantity":      {head + `"pods":[{"spec":{"overhead":{"cpu":"x"}}}]}`, "invalid Snapshot document: /pods/0/spec/overhead/cpu: cannot decode into resource.Quantity: quantities must match"},
		"first in order":    {head + `"nodes":[` + many + `{"metadata":{"nmae":"a"}},` + many + `{"metadata":{"nmae":"b"}}]}`, "invalid Snapshot document: /nodes/500/metadata/nmae: unknown field"},
		"syntax":            {head + "\n\"pods\":[}", "invalid JSON at line 2, column 9"},
		"truncated":         {head + "\n\"pods\":[", "truncated JSON at line 2, column 9"},
		"trailing":          {head + `"pods":[]} {}`, "invalid JSON at line 1, column"},
		"not an object":     {`[]`, "invalid Snapshot document: want a JSON object, not array"},
		"kind before field": {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Report","nodes":[{"x":1}]}`, `unexpected kind "Report": want "Snapshot"`},
		"missing kind":      {`{"apiVersion":"sentinel.dev/v1alpha1"}`, `missing "kind": want a Snapshot document`},
		"yaml":              {"apiVersion: sentinel.dev/v1alpha1\nkind: Snapshot\npods: [{spec: {nodeNmae: x}}]\n", "invalid Snapshot document: /pods/0/spec/nodeNmae: unknown field"},
		"yaml duplicate":    {"apiVersion: sentinel.dev/v1alpha1\nkind: Snapshot\nkind: Snapshot\n", "invalid YAML"},
		"empty":             {" \n", "empty input: want a Snapshot document"},
		"time not a string": {head + `"metadata":{"capturedAt":{}}}`, "invalid Snapshot document: /metadata/capturedAt: cannot decode into v1.Time: want a string or null, not object"},
		"bad time":          {head + `"metadata":{"capturedAt":"yesterday"}}`, "invalid Snapshot document: /metadata/capturedAt: cannot decode into v1.Time: parsing time"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Snapshot([]byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || s != nil {
				t.Errorf("Snapshot = %v, %v; want an error starting %q", s, err, tc.want)
			}
			sameAsCanonical(t, []byte(tc.doc))
		})
	}
}

// FuzzSnapshot holds Snapshot to document.Unmarshal, the canonical strict
// decoder: both accept or both refuse, and what they accept they decode
// alike.
func FuzzSnapshot(f *testing.F) {
	for _, file := range golden.Snapshots(f, "../testdata/script") {
		f.Add(file.Data)
	}
	generated, err := json.Marshal(bench.Generate(bench.Size{Nodes: 3, Namespaces: 1, DeploymentsPerNamespace: 1, Replicas: 2}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(generated)
	f.Add([]byte(`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","pods":[{"metadata":{"labels":{"a":"1","a":"2"}}}],"nodes":null}`))
	f.Fuzz(func(t *testing.T, data []byte) { sameAsCanonical(t, data) })
}
