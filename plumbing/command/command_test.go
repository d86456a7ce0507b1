package command

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

const testDoc = `// Tool-test does nothing useful.
//
// It exists for the runner's tests.
package main
`

func testApp() *cli.App {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "node", Required: true, Usage: "node `NAME`"},
		&cli.StringFlag{Name: "result", Value: "ok"},
	}
	return New("tool-test", "test the runner", testDoc, flags, func(c *cli.Context) error {
		switch c.String("result") {
		case "ok":
			fmt.Fprintln(c.App.Writer, "done", c.String("node"))
			return nil
		case "medium":
			fmt.Fprintln(c.App.Writer, "report")
			return exitcode.Status(exitcode.NotNow)
		case "blocked":
			return exitcode.Errorf(exitcode.Blocked, "node %s is occupied", c.String("node"))
		case "fail":
			return errors.New("server unreachable")
		case "panic":
			panic("index out of range [3] with length 3")
		case "wait":
			fmt.Fprintln(c.App.Writer, "ready")
			<-c.Context.Done()
			return fmt.Errorf("waiting for node %s: %w", c.String("node"), c.Context.Err())
		}
		return Usage("unknown result %q", c.String("result"))
	})
}

func TestRun(t *testing.T) {
	tests := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string // exact
		wantStderr string // substring; "" means stderr must be empty
	}{
		"ok":               {[]string{"--node", "n1"}, 0, "done n1\n", ""},
		"silent not now":   {[]string{"--node", "n1", "--result", "medium"}, 2, "report\n", ""},
		"blocked":          {[]string{"--node", "n1", "--result", "blocked"}, 3, "", "tool-test: node n1 is occupied\n"},
		"plain error":      {[]string{"--node", "n1", "--result", "fail"}, 1, "", "tool-test: server unreachable\n"},
		"unknown flag":     {[]string{"--bogus"}, 1, "", "tool-test: flag provided but not defined: -bogus (see --help)\n"},
		"missing required": {[]string{}, 1, "", `tool-test: Required flag "node" not set (see --help)`},
		"unexpected arg":   {[]string{"--node", "n1", "extra"}, 1, "", `tool-test: unexpected argument "extra" (see --help)`},
		"bad flag value":   {[]string{"--node", "n1", "--result", "nope"}, 1, "", `unknown result "nope"`},
		"bug":              {[]string{"--node", "n1", "--result", "panic"}, 1, "", "tool-test: internal error, a bug (please report it): index out of range [3] with length 3\ngoroutine"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), testApp(), append([]string{"tool-test"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			if diff := cmp.Diff(tc.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if tc.wantStderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr = %q, want empty", stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), testApp(), []string{"tool-test", "--help"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exit code = %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{"tool-test - test the runner", "It exists for the runner's tests.", "--node NAME"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help output lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := Run(context.Background(), testApp(), []string{"tool-test", "--version"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("--version exit code = %d", code)
	}
	if want := "tool-test version " + Version() + "\n"; stdout.String() != want {
		t.Errorf("--version = %q, want %q", stdout.String(), want)
	}
}

func TestDoc(t *testing.T) {
	tests := map[string]struct{ src, want string }{
		"line comments": {"// K8s-x does X.\n//\n//\tk8s-x --node n\npackage main\n", "K8s-x does X.\n\n\tk8s-x --node n"},
		"block comment": {"/*\nK8s-x does X.\n\n\tk8s-x --node n\n*/\npackage main\n", "K8s-x does X.\n\n\tk8s-x --node n"},
		"directives":    {"//go:build linux\n\n// Tool.\npackage main\n", "Tool."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Doc(tc.src)); diff != "" {
				t.Errorf("Doc (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSignal runs the test binary as the tool, waits until it is inside its
// action, sends SIGTERM, and expects a clean cancellation: exit 1 and an
// "interrupted" message naming what was being done.
func TestSignal(t *testing.T) {
	if os.Getenv("COMMAND_TEST_TOOL") == "1" {
		os.Args = []string{"tool-test", "--node", "n1", "--result", "wait"}
		os.Exit(Main(testApp()))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignal$")
	cmd.Env = append(os.Environ(), "COMMAND_TEST_TOOL=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if line != "ready\n" {
			t.Fatalf("tool printed %q before being ready, stderr %q", line, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("tool did not get ready within 30s")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("tool ended with %v, want exit code 1", err)
	}
	want := "tool-test: interrupted: waiting for node n1: context canceled\n"
	if stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}
