package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStatic: a binary built with CGO off is static; a shell from the
// system is not.
func TestStatic(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hello")
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := Static(bin); err != nil {
		t.Error(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(sh); err == nil {
		sh = real
	}
	if err := Static(sh); err == nil {
		t.Errorf("%s reported static", sh)
	}
}
