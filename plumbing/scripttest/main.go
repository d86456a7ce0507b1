package scripttest

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// MainWithControlPlane is TestMain for a tool's test binary whose tests use
// a local control plane (stored in *cp) and whose scripts run the tool as a
// command (commands, as for testscript.Main). The control plane starts only
// for the test run itself, not when the binary runs as one of the commands.
// It does not return.
func MainWithControlPlane(m *testing.M, cp **controlplane.ControlPlane, commands map[string]func()) {
	MainWithControlPlaneOptions(m, controlplane.Options{}, cp, commands)
}

// MainWithControlPlaneOptions is MainWithControlPlane with the control
// plane's options (Volumes: the attach-detach controller).
func MainWithControlPlaneOptions(m *testing.M, opts controlplane.Options, cp **controlplane.ControlPlane, commands map[string]func()) {
	testscript.Main(withControlPlane{m: m, opts: opts, cp: cp}, commands)
}

type withControlPlane struct {
	m    *testing.M
	opts controlplane.Options
	cp   **controlplane.ControlPlane
}

func (w withControlPlane) Run() int { return controlplane.Main(w.m, w.opts, w.cp) }
