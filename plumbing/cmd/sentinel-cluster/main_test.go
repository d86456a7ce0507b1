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
		"sentinel-cluster": func() { os.Exit(command.Main(app())) },
	})
}

// TestScript runs the scripts of testdata/script; they need no control
// plane. UPDATE=1 rewrites the goldens.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               scripttest.SetRepo,
		Cmds:                scripttest.Cmds(),
	})
}
