package kfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meminfo")
	long := strings.Repeat("x", 10000)
	k := New(path)
	defer k.Close()

	if _, err := k.Read(); err == nil {
		t.Fatal("read of a missing file: no error")
	}
	for _, content := range []string{"one\n", long, "", "short again\n"} {
		// Rewritten in place, as a kernel file changes under a kept fd.
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := k.Read()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(content, string(got)); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
	}
}

func TestReadProc(t *testing.T) {
	k := New("/proc/meminfo")
	defer k.Close()
	for range 3 {
		got, err := k.Read()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(got), "MemTotal:") || !strings.HasSuffix(string(got), "\n") {
			t.Fatalf("/proc/meminfo read as %q", got)
		}
	}
	if n := testing.AllocsPerRun(50, func() { k.Read() }); n != 0 {
		t.Errorf("%v allocations per read, want 0", n)
	}
}
