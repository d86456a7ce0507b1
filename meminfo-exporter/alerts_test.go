package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAlertRules checks deploy/alerts.yaml with promtool and runs its unit
// tests (deploy/alerts_test.yaml).
func TestAlertRules(t *testing.T) {
	promtool := lookPath(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "alerts.yaml"},
		{"test", "rules", "alerts_test.yaml"},
	} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = filepath.Join("deploy")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// lookPath finds a tool from Debian's prometheus package, or fails the
// test: these tests never skip.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install Debian's prometheus package (bash .ci/deps.sh, run by make deps): %v", name, err)
	}
	return path
}
