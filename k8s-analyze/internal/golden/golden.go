// Package golden reads the snapshots of k8s-analyze's testscript goldens
// (testdata/script/*.txtar) for the tests and fuzz seeds of its packages.
package golden

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// File is one file of a golden archive.
type File struct {
	Name string // archive/file
	Data []byte
}

// Snapshots are the .json and .yaml files of the goldens in dir (a
// package's path to k8s-analyze/testdata/script), in a stable order. It
// fails tb when there are none.
func Snapshots(tb testing.TB, dir string) []File {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []File
	for _, name := range names {
		a, err := txtar.ParseFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range a.Files {
			if ext := filepath.Ext(f.Name); ext == ".json" || ext == ".yaml" {
				out = append(out, File{Name: filepath.Base(name) + "/" + f.Name, Data: f.Data})
			}
		}
	}
	if len(out) == 0 {
		tb.Fatalf("no snapshot in the goldens of %s", dir)
	}
	return out
}
