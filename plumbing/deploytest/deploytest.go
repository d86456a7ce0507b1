// Package deploytest checks what a tool ships for deployment with the real
// tools: a tool of Debian's prometheus package (promtool, prometheus) and
// the alert rules with their unit tests, and that a binary built as a
// Dockerfile builds it is static. Tests that use it fail, never skip, when
// a tool is missing.
package deploytest

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"testing"
)

// LookPath finds a tool of Debian's prometheus package, or fails the test.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install Debian's prometheus package (bash .ci/deps.sh, run by make deps): %v", name, err)
	}
	return path
}

// AlertRules runs `promtool check rules RULES` and `promtool test rules
// TESTS` in dir.
func AlertRules(t *testing.T, dir, rules, tests string) {
	t.Helper()
	promtool := LookPath(t, "promtool")
	for _, args := range [][]string{{"check", "rules", rules}, {"test", "rules", tests}} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// Static is nil when the ELF binary at path has no interpreter and no
// dynamic section: it runs on an empty image.
func Static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("%s has a %v program header: not static", path, p.Type)
		}
	}
	return nil
}
