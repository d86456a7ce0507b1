package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

// unrunLabel marks the plans and campaigns this test binary's maintd
// leaves alone (its --selector excludes them): a test sets their status
// itself, as maintd would have written it.
const unrunLabel = "kubectl-maint.test/unrun"

// cp is the one real control plane of this test binary; maintd (built
// from ../.. and started once) reconciles every plan on it but those
// labelled unrunLabel.
var (
	cp        *controlplane.ControlPlane
	maintdLog lockedBuffer
)

// TestMain runs the tests against a control plane with the CRD and one
// maintd; the test binary doubles as kubectl-maint for the scripts (and
// for tmux), on PATH.
func TestMain(m *testing.M) {
	testscript.Main(runner(func() int {
		return controlplane.Main(runner(func() int { return withMaintd(m) }), controlplane.Options{}, &cp)
	}), map[string]func(){
		name: func() { os.Exit(command.Main(app())) },
	})
}

type runner func() int

func (r runner) Run() int { return r() }

// withMaintd installs the CRD, builds and starts maintd, runs the tests
// and stops maintd; when any of that fails, the tests fail.
func withMaintd(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
		return 1
	}
	crd, err := os.ReadFile(filepath.Join("..", "..", "deploy", "crd.yaml"))
	if err != nil {
		return fail("%v", err)
	}
	if err := cp.Apply(ctx, crd, nil); err != nil {
		return fail("install the CRD: %v", err)
	}
	dir, err := os.MkdirTemp("", "kubectl-maint-test-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "maintd")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		return fail("build maintd: %v\n%s", err, out)
	}
	md := exec.Command(bin, "--kubeconfig", cp.Kubeconfig(controlplane.Admin), "--max-nodes-in-maintenance", "20", "--selector", "!"+unrunLabel)
	md.Stdout, md.Stderr = &maintdLog, &maintdLog
	if err := md.Start(); err != nil {
		return fail("start maintd: %v", err)
	}
	defer func() {
		_ = md.Process.Signal(syscall.SIGTERM)
		_ = md.Wait()
	}()
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "maintd's log (tail):\n%s\n", tail(maintdLog.String(), 60))
	}
	return code
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// env is one test's namespace and its two kwok nodes, NS-1 and NS-2, with
// testdata/scenarios/maintd-drain.yaml running on them: Deployment web, 4
// replicas (2 a node), Ready delay after scheduling, PDB web
// (maxUnavailable 1) settled at 1 allowed disruption.
type env struct {
	ns, node1, node2 string
	plans            maintenancev1alpha1.MaintenancePlanInterface
}

func newEnv(ctx context.Context, delay string) (env, error) {
	ns, err := cp.Namespace(ctx, "kmaint")
	if err != nil {
		return env{}, err
	}
	e := env{ns: ns, node1: ns + "-1", node2: ns + "-2"}
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		return e, err
	}
	e.plans = mc.MaintenancePlans()
	if err := cp.CreateNodes(ctx, ns, e.node1, e.node2); err != nil {
		return e, err
	}
	scenario, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "scenarios", "maintd-drain.yaml"))
	if err != nil {
		return e, err
	}
	if err := cp.Apply(ctx, scenario, map[string]string{"NAMESPACE": ns, "POOL": ns, "DELAY": delay}); err != nil {
		return e, err
	}
	if err := cp.WaitPodsReady(ctx, ns, "app=web", 4); err != nil {
		return e, err
	}
	pdbs := cp.Clientset(controlplane.Admin).PolicyV1().PodDisruptionBudgets(ns)
	for {
		pdb, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
		if err == nil && pdb.Status.ObservedGeneration >= pdb.Generation && pdb.Status.DisruptionsAllowed == 1 {
			return e, nil
		}
		select {
		case <-ctx.Done():
			return e, fmt.Errorf("PDB web in %s did not settle at 1 allowed disruption: %v", ns, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestScript runs the goldens of testdata/script against the control
// plane and maintd. Each script gets its own env: $NS, $NODE1, $NODE2, a
// kubeconfig of the admin user in $KUBECONFIG, $KUBECTL (kubectl
// v1.37.2), and on PATH kubectl-maint (this binary), kubectl and
// kubectl_complete-maint. UPDATE=1 rewrites the goldens.
//
// Custom commands: plumbing/scripttest (exits N PROG ARGS...), and
// addnodes NAME... (kwok nodes of the script's pool, $NS, Ready).
func TestScript(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                cmds(),
		Setup: func(te *testscript.Env) error {
			if err := scripttest.SetRepo(te); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e, err := newEnv(ctx, "2s")
			if err != nil {
				return err
			}
			te.Setenv("NS", e.ns)
			te.Setenv("NODE1", e.node1)
			te.Setenv("NODE2", e.node2)
			te.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
			te.Setenv("KUBECTL", filepath.Join(cp.BinDir(), "kubectl"))
			te.Setenv("PATH", strings.Join([]string{cp.BinDir(), here, te.Getenv("PATH")}, string(filepath.ListSeparator)))
			te.Setenv("TERM", "dumb")
			return nil
		},
	})
}

// cmds are plumbing/scripttest's commands and addnodes.
func cmds() map[string]func(*testscript.TestScript, bool, []string) {
	m := scripttest.Cmds()
	m["addnodes"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) == 0 {
			ts.Fatalf("usage: addnodes NAME...")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ts.Check(cp.CreateNodes(ctx, ts.Getenv("NS"), args...))
	}
	return m
}
