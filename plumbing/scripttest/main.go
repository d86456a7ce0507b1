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
	testscript.Main(withControlPlane{m: m, cp: cp}, commands)
}

type withControlPlane struct {
	m  *testing.M
	cp **controlplane.ControlPlane
}

func (w withControlPlane) Run() int { return controlplane.Main(w.m, controlplane.Options{}, w.cp) }
