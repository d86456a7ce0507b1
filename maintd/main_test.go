package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

// cp is the one real control plane of this test binary.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	// Volumes: the attach-detach controller makes the VolumeAttachments of
	// CSI volumes, and a test plays their attacher (plumbing/attacher).
	scripttest.MainWithControlPlaneOptions(m, controlplane.Options{Volumes: true}, &cp, map[string]func(){
		name: func() { os.Exit(command.Main(app())) },
	})
}

var crdOnce = sync.OnceValue(func() error {
	data, err := os.ReadFile(filepath.Join("deploy", "crd.yaml"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cp.Apply(ctx, data, nil)
})

// env is one test's namespace, pool of kwok nodes (<pool>-1, ...) and label
// (test=<namespace>) that its plans carry and its maintd selects.
type env struct {
	ns, pool string
	// label is the value of the test label of e's plans and of its
	// maintd's selector (default: ns).
	label     string
	admin     kubernetes.Interface
	plans     maintenancev1alpha1.MaintenancePlanInterface
	campaigns maintenancev1alpha1.MaintenanceCampaignInterface
}

func (e env) node(i int) string { return fmt.Sprintf("%s-%d", e.pool, i) }

// newEnv makes a namespace and nodes <pool>-1..<pool>-n, then applies the
// scenarios (testdata/scenarios) with NAMESPACE, POOL and NODE1 set.
func newEnv(t *testing.T, ctx context.Context, nodes int, scenarios ...string) env {
	t.Helper()
	if err := crdOnce(); err != nil {
		t.Fatalf("install the CRD: %v", err)
	}
	ns, err := cp.Namespace(ctx, "maintd")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	e := env{ns: ns, pool: ns, label: ns, admin: cp.Clientset(controlplane.Admin), plans: mc.MaintenancePlans(), campaigns: mc.MaintenanceCampaigns()}
	var names []string
	for i := 1; i <= nodes; i++ {
		names = append(names, e.node(i))
	}
	if err := cp.CreateNodes(ctx, e.pool, names...); err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		e.apply(t, ctx, s, nil)
	}
	return e
}

func (e env) apply(t *testing.T, ctx context.Context, scenario string, vars map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", scenario))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"NAMESPACE": e.ns, "POOL": e.pool, "NODE1": e.node(1), "DELAY": "1s"}
	for k, v := range vars {
		all[k] = v
	}
	if err := cp.Apply(ctx, data, all); err != nil {
		t.Fatal(err)
	}
}

// plan creates plan name for node with the given spec, labelled for e.
func (e env) plan(t *testing.T, ctx context.Context, name string, spec api.MaintenancePlanSpec) *api.MaintenancePlan {
	t.Helper()
	p := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name, Labels: map[string]string{"test": e.label}}, Spec: spec}
	out, err := e.plans.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create plan %s: %v", p.Name, err)
	}
	t.Cleanup(func() { e.deletePlan(t, out) })
	return out
}

// deletePlan deletes a test's plan and leaves no cordon of it behind:
// maintd counts the maintenance slots cluster-wide, so a cordon left by
// one test would hold a slot in the tests after it. A maintd still running
// lifts the cordon and lets the plan go; when none does (killed first, or
// never started) the test does what a person would: it lifts the plan's
// cordon and removes the finalizer.
func (e env) deletePlan(t *testing.T, p *api.MaintenancePlan) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.plans.Delete(ctx, p.Name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		return
	}
	gone := func(context.Context) (bool, error) {
		_, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}
	if wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, gone) == nil {
		return
	}
	if _, err := cordon.Apply(ctx, e.admin.CoreV1().Nodes(), p.Spec.NodeName, cordon.Request{Owner: drain.Owner(p), Uncordon: true}, time.Now()); err != nil {
		t.Logf("cleanup: uncordon %s for plan %s: %v", p.Spec.NodeName, p.Name, err)
	}
	for {
		cur, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Errorf("cleanup: plan %s: %v", p.Name, err)
			return
		}
		cur.Finalizers = nil
		if _, err := e.plans.Update(ctx, cur, metav1.UpdateOptions{}); err == nil || apierrors.IsNotFound(err) {
			return
		} else if !apierrors.IsConflict(err) {
			t.Errorf("cleanup: remove the finalizer of plan %s: %v", p.Name, err)
			return
		}
	}
}

// wait polls plan name until ok, failing the test at ctx's deadline with
// the last status seen.
func (e env) wait(t *testing.T, ctx context.Context, name, what string, ok func(*api.MaintenancePlan) bool) *api.MaintenancePlan {
	t.Helper()
	var last *api.MaintenancePlan
	for {
		p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = p
			if ok(p) {
				return p
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				t.Fatalf("plan %s: %s: not reached; last status %s/%s: %s\nhistory: %s", name, what, last.Status.Phase, last.Status.Reason, last.Status.Message, history(last))
			}
			t.Fatalf("plan %s: %s: not reached: %v", name, what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (e env) waitPhase(t *testing.T, ctx context.Context, name string, phase api.Phase, reason api.Reason) *api.MaintenancePlan {
	t.Helper()
	return e.wait(t, ctx, name, fmt.Sprintf("%s/%s", phase, reason), func(p *api.MaintenancePlan) bool {
		return p.Status.Phase == phase && (reason == "" || p.Status.Reason == reason)
	})
}

// waitGone polls until plan name no longer exists.
func (e env) waitGone(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	for {
		_, err := e.plans.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("plan %s still exists: %v", name, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func history(p *api.MaintenancePlan) string {
	var parts []string
	for _, h := range p.Status.History {
		parts = append(parts, fmt.Sprintf("%s/%s", h.Phase, h.Reason))
	}
	return strings.Join(parts, " -> ")
}

// steps is the plan's history as phase/reason strings.
func steps(p *api.MaintenancePlan) []string {
	var out []string
	for _, h := range p.Status.History {
		out = append(out, string(h.Phase)+"/"+string(h.Reason))
	}
	return out
}

// inOrder reports whether want is a subsequence of got.
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func (e env) getNode(t *testing.T, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	n, err := e.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// maintd is a maintd process: the test binary run as maintd.
type maintd struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  *bytes.Buffer
	mu   *sync.Mutex
	done chan error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startMaintd runs maintd for e's plans with the admin user's kubeconfig
// (or the given one) and extra flags; it is killed when the test ends, and
// its log is shown when the test failed.
func (e env) startMaintd(t *testing.T, kubeconfig string, flags ...string) *maintd {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = cp.Kubeconfig(controlplane.Admin)
	}
	args := append([]string{"--kubeconfig", kubeconfig, "--selector", "test=" + e.label, "--max-nodes-in-maintenance", "10"}, flags...)
	m := &maintd{t: t, log: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan error, 1)}
	m.cmd = exec.Command(name, args...)
	m.cmd.Stdout = lockedWriter{m.mu, m.log}
	m.cmd.Stderr = lockedWriter{m.mu, m.log}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("start maintd: %v", err)
	}
	go func() { m.done <- m.cmd.Wait() }()
	t.Cleanup(func() {
		m.kill()
		if t.Failed() {
			m.mu.Lock()
			t.Logf("maintd log:\n%s", m.log.String())
			m.mu.Unlock()
		}
	})
	return m
}

// kill ends maintd with SIGKILL (no chance to clean up) and waits for it.
func (m *maintd) kill() {
	select {
	case err := <-m.done:
		m.done <- err
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	m.done <- <-m.done
}

// stop sends SIGTERM and wants exit 0 within 20 s.
func (m *maintd) stop(t *testing.T) {
	t.Helper()
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.done:
		m.done <- err
		if err != nil {
			t.Errorf("maintd after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("maintd did not exit within 20 s of SIGTERM")
		m.kill()
	}
}

// evictions are the eviction requests of e's namespace in the audit log,
// dry runs apart.
func (e env) evictions(t *testing.T) (real, dry []controlplane.AuditEvent) {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Verb == "create" && ev.Resource == "pods" && ev.Sub == "eviction" && ev.Namespace == e.ns {
			if ev.DryRun {
				dry = append(dry, ev)
			} else {
				real = append(real, ev)
			}
		}
	}
	return real, dry
}

// nodeWrites are the writes to node name in the audit log by anyone but
// the admin user of the test itself.
func nodeWrites(t *testing.T, name string) []controlplane.AuditEvent {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	var out []controlplane.AuditEvent
	for _, ev := range events {
		if ev.Resource == "nodes" && ev.Name == name && slices.Contains([]string{"patch", "update", "delete"}, ev.Verb) && ev.User != "admin" {
			out = append(out, ev)
		}
	}
	return out
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                scripttest.Cmds(),
		Setup: func(te *testscript.Env) error {
			if err := scripttest.SetRepo(te); err != nil {
				return err
			}
			if err := crdOnce(); err != nil {
				return err
			}
			te.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
			te.Setenv("PATH", cp.BinDir()+string(filepath.ListSeparator)+te.Getenv("PATH"))
			return nil
		},
	})
}
