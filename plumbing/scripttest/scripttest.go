// Package scripttest holds the testscript commands sentinel's script tests
// share.
package scripttest

import (
	"errors"
	"os/exec"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// Cmds are the shared custom commands, for testscript.Params.Cmds.
func Cmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": Exits}
}

// Exits is the script command
//
//	exits N PROG ARGS...
//
// which runs PROG like exec (its stdout and stderr kept for the next
// commands) and requires exit code N.
func Exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// SetRepo sets $REPO, the repository's root, in a script's environment,
// for comparisons with files such as docs/tools/<tool>.md.
func SetRepo(env *testscript.Env) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	env.Setenv("REPO", root)
	return nil
}
