package controlplane

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Runner is what a test binary's *testing.M offers.
type Runner interface{ Run() int }

// Main starts one control plane for a test binary, stores it in *cp, runs
// the tests and stops it. When the control plane cannot start, every test
// of the binary fails. When a test fails, the logs are kept and their
// directory is printed. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(controlplane.Main(m, controlplane.Options{}, &cp)) }
func Main(m Runner, opts Options, cp **ControlPlane) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the local control plane did not start: %v\n", err)
		return 1
	}
	*cp = c
	code := m.Run()
	if code != 0 {
		c.KeepFiles()
		fmt.Fprintf(os.Stderr, "control-plane logs kept in %s\n", c.LogDir())
	}
	c.Close()
	return code
}
