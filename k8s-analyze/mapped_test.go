//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// TestTruncatedInput: a mapped snapshot file truncated before it is read
// is an error naming the cause, whether the fault is met by this goroutine
// or by the decoder's workers (a snapshot of over 1,024 pods).
func TestTruncatedInput(t *testing.T) {
	data, err := json.MarshalIndent(bench.Generate(bench.Size{Nodes: 40, Namespaces: 4, DeploymentsPerNamespace: 10, Replicas: 30}), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, cut := range map[string]int{"whole": 0, "half": len(data) / 2} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "snapshot.json")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			mappedData, mapped, err := read(f, int64(len(data)))
			if err != nil || !mapped {
				t.Fatalf("read: mapped %v, %v", mapped, err)
			}
			if err := os.Truncate(file, int64(cut)); err != nil {
				t.Fatal(err)
			}
			err = whileMapped(mappedData, func() error {
				s, err := view.Decode(mappedData)
				if err == nil {
					_, err = analyze.Analyze(s, analyze.Options{})
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "changed (truncated?) while it was being read") {
				t.Errorf("error = %v, want the input file changed", err)
			}
		})
	}
	// Another panic is not taken for a fault on the input.
	defer func() {
		if r := recover(); r == nil {
			t.Error("a panic of f was swallowed")
		}
	}()
	_ = whileMapped(data, func() error { panic(errors.New("a bug")) })
}
