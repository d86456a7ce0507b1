package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/follow"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// tmuxTerm is a terminal: a tmux server of its own (its own socket)
// running one command in a 100x30 window; its screen is read with
// capture-pane. The command runs under sh, which prints its exit status
// when it ends ("[exited N]"): the test sees the exit on the screen, as a
// person does, not through tmux's own notion of a dead pane (which also
// waits for the end of the terminal's output).
type tmuxTerm struct {
	t      *testing.T
	socket string
}

func newTerm(t *testing.T, env []string, args ...string) *tmuxTerm {
	t.Helper()
	tm := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux")}
	cmd := []string{"-S", tm.socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30"}
	for _, e := range env {
		cmd = append(cmd, "-e", e)
	}
	// trap: Ctrl-C goes to the command; sh lives on to print its status.
	cmd = append(cmd, "sh", "-c", `trap true INT; "$@"; echo "[exited $?]"; sleep 600`, "sh")
	tm.run(append(cmd, args...)...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows now, wrapped lines joined.
func (tm *tmuxTerm) screen() string { return tm.run("-S", tm.socket, "capture-pane", "-p", "-J") }

var exitLine = regexp.MustCompile(`(?m)^\[exited (\d+)\]$`)

// exited is the command's exit status once screen shows it has exited.
func exited(screen string) (int, bool) {
	m := exitLine.FindStringSubmatch(screen)
	if m == nil {
		return 0, false
	}
	code, err := strconv.Atoi(m[1])
	return code, err == nil
}

// until reads the screen every 50 ms until ok holds, calling seen with
// each screen; the test fails at ctx's deadline with the last screen.
func (tm *tmuxTerm) until(ctx context.Context, what string, seen func(string), ok func(screen string) bool) string {
	tm.t.Helper()
	for {
		s := tm.screen()
		if seen != nil {
			seen(s)
		}
		if ok(s) {
			return s
		}
		select {
		case <-ctx.Done():
			tm.t.Fatalf("%s: not seen; the screen:\n%s", what, s)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var progress = regexp.MustCompile(`\[(#*)(-*)\]  (\d+)/(\d+) pods evicted`)

// liveEnv is the environment of kubectl-maint in tmux: this test binary
// as kubectl-maint on PATH, the admin's kubeconfig, a real terminal type.
func liveEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + cp.Kubeconfig(controlplane.Admin), "TERM=xterm-256color", "LANG=C.UTF-8"}
}

// TestLiveView runs kubectl maint drain in a real terminal (tmux): the live
// view's progress bar advances, the frame is redrawn in place (one frame
// on the screen at any time), and the final screen names the outcome.
func TestLiveView(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := newEnv(ctx, "3s")
	if err != nil {
		t.Fatal(err)
	}
	plan := e.ns + "-live"
	tm := newTerm(t, liveEnv(), name, "drain", e.node1, "--all-workloads", "--name", plan)
	bars := map[string]bool{}
	frames := regexp.MustCompile(`(?m)^plan ` + plan + `  node `)
	etaLine := regexp.MustCompile(`(?m)^ETA: \d\d:\d\d:\d\d \(in \S+, p90 \S+\); critical path `)
	var eta string
	seen := func(s string) {
		if m := etaLine.FindString(s); m != "" {
			eta = m
		}
		if m := progress.FindStringSubmatch(s); m != nil {
			bars[fmt.Sprintf("%s/%s pods: %d of %d cells", m[3], m[4], len(m[1]), len(m[1])+len(m[2]))] = true
		}
		if n := len(frames.FindAllString(s, -1)); n > 1 {
			t.Errorf("%d frames on the screen, want the one redrawn in place:\n%s", n, s)
		}
	}
	// Diagnostics for a hang: kubectl-maint still running 30 s on (the
	// drain takes about 7) gets its process tree logged and a SIGQUIT (its
	// goroutines then show on the screen the failure prints).
	hung := time.AfterFunc(30*time.Second, func() {
		out, _ := exec.Command("tmux", "-S", tm.socket, "display-message", "-p", "#{pane_pid}").Output()
		ps, _ := exec.Command("ps", "-eo", "pid,ppid,stat,wchan:20,args", "--forest").Output()
		fmt.Fprintf(os.Stderr, "TestLiveView: kubectl-maint (child of the pane's sh, pid %s) still runs:\n%s\n", strings.TrimSpace(string(out)), ps)
		_ = exec.Command("pkill", "-QUIT", "-P", strings.TrimSpace(string(out))).Run() // the pane runs sh, sh runs kubectl-maint
	})
	defer hung.Stop()
	final := tm.until(ctx, "the drain's end", seen, func(s string) bool { _, done := exited(s); return done })
	if code, _ := exited(final); code != 0 {
		t.Errorf("exit %d, want 0; the screen:\n%s", code, final)
	}
	// 100 columns: a bar of 40 cells; 1/2 lasts the 3 s a replacement takes
	// to be Ready, the screen is read every 50 ms.
	if !bars["1/2 pods: 20 of 40 cells"] || !bars["2/2 pods: 40 of 40 cells"] {
		t.Errorf("progress bars seen %v: want it half full at 1/2, then full at 2/2", bars)
	}
	if eta == "" {
		t.Errorf("no ETA of the plan's forecast seen during the drain")
	}
	for _, want := range []string{
		"Drained/drained  [2/2 evicted]",
		"plan " + plan + "  node " + e.node1 + "  Drained/drained",
		"[" + strings.Repeat("#", 40) + "]  2/2 pods evicted",
		"maintenanceplan/" + plan + " drained",
	} {
		if !strings.Contains(final, want) {
			t.Errorf("the final screen lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "\x1b") {
		t.Errorf("escape sequences left on the screen:\n%s", final)
	}
}

// TestLiveViewInterrupted: Ctrl-C stops watching, says so and how to watch
// again, exit 2; the plan goes on to Drained.
func TestLiveViewInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := newEnv(ctx, "5s")
	if err != nil {
		t.Fatal(err)
	}
	plan := e.ns + "-int"
	tm := newTerm(t, liveEnv(), name, "drain", e.node1, "--all-workloads", "--name", plan)
	tm.until(ctx, "the live view while the drain waits", nil, func(s string) bool {
		m := progress.FindStringSubmatch(s)
		return m != nil && m[3] != m[4] && strings.Contains(s, "plan "+plan)
	})
	tm.run("-S", tm.socket, "send-keys", "C-c")
	final := tm.until(ctx, "kubectl-maint's exit", nil, func(s string) bool { _, done := exited(s); return done })
	if code, _ := exited(final); code != 2 {
		t.Errorf("exit %d after Ctrl-C, want 2; the screen:\n%s", code, final)
	}
	want := fmt.Sprintf(`stopped watching; plan %s goes on: "kubectl maint status -w %s" watches it again`, plan, plan)
	if !strings.Contains(strings.Join(strings.Fields(final), " "), want) {
		t.Errorf("the screen lacks %q:\n%s", want, final)
	}
	p, err := e.plans.Get(ctx, plan, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the plan after Ctrl-C: %v", err)
	}
	if p.DeletionTimestamp != nil || p.Status.Phase == api.Drained {
		t.Errorf("the plan after Ctrl-C: deleting %v, phase %s; want it still at work", p.DeletionTimestamp != nil, p.Status.Phase)
	}
	if _, err := follow.Watch(ctx, e.plans, plan, func(p *api.MaintenancePlan) (bool, error) {
		done, _ := follow.Outcome(p, follow.Drained)
		return done && p.Status.Phase == api.Drained, nil
	}); err != nil {
		t.Errorf("the plan did not go on to Drained: %v", err)
	}
}
