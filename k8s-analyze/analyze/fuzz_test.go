package analyze

import (
	"io"
	"testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-analyze/internal/golden"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// FuzzAnalyze feeds arbitrary bytes through decoding, analysis and encoding:
// it must never panic, and whatever decodes either analyses into a report
// that encodes, or fails with an error.
func FuzzAnalyze(f *testing.F) {
	for _, file := range golden.Snapshots(f, "../testdata/script") {
		f.Add(file.Data)
	}
	f.Add([]byte(`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","metadata":{"capturedAt":"2026-11-29T12:00:00Z"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decode.Snapshot(data)
		if err != nil {
			return
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			return
		}
		if err := document.Encode(io.Discard, document.JSON, r); err != nil {
			t.Fatalf("encode: %v", err)
		}
		if err := WriteTable(io.Discard, r, true); err != nil {
			t.Fatalf("table: %v", err)
		}
	})
}
