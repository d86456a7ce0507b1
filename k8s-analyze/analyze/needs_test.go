package analyze

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/strictjson"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// sameOnProjection checks that s (a full decode) and the projection of its
// JSON on Needs analyse into byte-identical reports, or the same error.
func sameOnProjection(t *testing.T, s *snapshot.Snapshot, opts Options) {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var part snapshot.Snapshot
	if err := strictjson.UnmarshalFields(data, &part, Needs()); err != nil {
		t.Fatalf("the projected decoder refuses a snapshot: %v", err)
	}
	report := func(s *snapshot.Snapshot) string {
		r, err := Analyze(s, opts)
		if err != nil {
			return "error: " + err.Error()
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if diff := cmp.Diff(report(s), report(&part)); diff != "" {
		t.Errorf("the analysis reads a field Needs does not keep: report of the full decode (-) and of the projection (+):\n%s", diff)
	}
}

// TestProjectionKeepsWhatAnalysisReads: the goldens' snapshots and a
// generated one analyse the same whether decoded whole or projected on
// Needs. (Every snapshot of TestChecks is compared too, in build.)
func TestProjectionKeepsWhatAnalysisReads(t *testing.T) {
	files, err := filepath.Glob("../testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if ext := filepath.Ext(f.Name); ext != ".json" && ext != ".yaml" {
				continue
			}
			var s snapshot.Snapshot
			if document.Unmarshal(f.Data, snapshot.Kind, &s) != nil {
				continue // bad input, refused before any analysis
			}
			t.Run(filepath.Base(name)+"/"+f.Name, func(t *testing.T) { sameOnProjection(t, &s, Options{}) })
			n++
		}
	}
	if n == 0 {
		t.Fatal("no snapshot in the goldens")
	}
	t.Run("generated", func(t *testing.T) {
		sameOnProjection(t, bench.Generate(bench.Size{Nodes: 50, Namespaces: 5, DeploymentsPerNamespace: 4, Replicas: 6}), Options{})
	})
}

func TestNeedsCompile(t *testing.T) {
	var s snapshot.Snapshot
	if err := strictjson.UnmarshalFields([]byte(`{}`), &s, Needs()); err != nil {
		t.Fatalf("Needs does not name fields of a Snapshot: %v", err)
	}
}
