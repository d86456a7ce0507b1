package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

// TestPipeline runs the scripts in testdata/script against the control
// plane with the analyze-pvc scenario applied: the real binaries, piped,
// as the read-only viewer user. Scripts see $NODE1..$NODE3 and $NAMESPACE.
func TestPipeline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := setup(t, ctx, "analyze-pvc.yaml", 1, true)
	kubeconfig := cp.Kubeconfig(controlplane.Viewer)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("KUBECONFIG", kubeconfig)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("NAMESPACE", s.namespace)
			for i, n := range s.nodes {
				env.Setenv("NODE"+string(rune('1'+i)), n)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": scripttest.Exits},
	})
}
