package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"k8s-analyze": func() { os.Exit(command.Main(app())) },
	})
}

// TestScript runs the goldens in testdata/script: one scenario per file,
// a snapshot in, the report and the exit code out. UPDATE=1 rewrites them.
//
// Custom command:
//
//	exits N PROG ARGS...   run PROG like exec and require exit code N
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			return scripttest.SetRepo(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": scripttest.Exits,
		},
	})
}
