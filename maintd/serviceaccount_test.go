package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// shippedAccess applies the shipped namespace, ServiceAccount, ClusterRole
// and bindings (what `kubectl apply -k deploy` installs besides the CRD and
// the workload) and returns a kubeconfig with a TokenRequest token of that
// ServiceAccount.
func shippedAccess(t *testing.T, ctx context.Context) string {
	t.Helper()
	for _, f := range []string{"namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "bindings.yaml"} {
		data, err := os.ReadFile(filepath.Join("deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Apply(ctx, data, nil); err != nil {
			t.Fatalf("deploy/%s: %v", f, err)
		}
	}
	kc, err := cp.TokenKubeconfig(ctx, "maintd-system", "maintd")
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestServiceAccount: maintd with a token of the shipped ServiceAccount,
// leader election on, completes the drain scenario: the shipped RBAC is
// enough. Each evicted pod gets an event naming the plan and its PDB, and
// `kubectl get mp -w` shows the plan's progress.
func TestServiceAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	kc := shippedAccess(t, ctx)
	watch := kubectlWatch(t, ctx, "get", "mp", "-l", "test="+e.label, "-w", "--no-headers")
	m := e.startMaintd(t, kc, "--leader-elect", "--leader-elect-lease-duration", "4s")
	// A plan for a node that does not exist: once kubectl shows it
	// Blocked, its watch runs and maintd leads.
	marker := e.plan(t, ctx, "marker", api.MaintenancePlanSpec{NodeName: e.ns + "-absent", AllowAllWorkloads: true})
	watch.phases(t, ctx, marker.Name, "Blocked")

	// The scheduler spreads 4 replicas over 3 nodes: node 1 holds one or
	// two of them, as it placed them.
	n := int32(len(e.podsOn(t, ctx, e.node(1))))
	if n == 0 {
		t.Fatalf("no pod of %s on %s", e.ns, e.node(1))
	}
	p := e.plan(t, ctx, "drain", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns)})
	done := e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
	if got := done.Status.Pods; got != (api.PodCounts{Total: n, Evicted: n}) {
		t.Errorf("pods %+v, want %d evicted of %d", got, n, n)
	}
	real, _ := e.evictions(t)
	for _, ev := range real {
		if want := "system:serviceaccount:maintd-system:maintd"; ev.User != want {
			t.Errorf("eviction of %s sent by %s, want %s", ev.Name, ev.User, want)
		}
	}
	if len(real) != int(n) {
		t.Errorf("%d eviction requests, want %d", len(real), n)
	}

	// One Evicted event per evicted pod, about the pod, related to the plan.
	evicted := map[string]bool{}
	for _, ev := range real {
		evicted[ev.Name] = true
	}
	got := map[string]string{}
	err := pollUntil(ctx, func() bool {
		list, err := e.admin.EventsV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Evicted"})
		if err != nil {
			return false
		}
		got = map[string]string{}
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "Pod" && ev.Related != nil && ev.Related.Name == p.Name {
				got[ev.Regarding.Name] = ev.Note
			}
		}
		return len(got) == len(evicted)
	})
	if err != nil {
		t.Errorf("Evicted events on pods: %v, want one for each of %v", got, evicted)
	}
	for pod, note := range got {
		if !evicted[pod] || !strings.Contains(note, p.Name) || !strings.Contains(note, "PodDisruptionBudget "+e.ns+"/web") {
			t.Errorf("event on pod %s: %q: want an evicted pod, the plan %s and PDB %s/web named", pod, note, p.Name, e.ns)
		}
	}

	e.release(t, ctx, p.Name)
	e.waitPhase(t, ctx, p.Name, api.Completed, api.Uncordoned)
	m.stop(t)

	// kubectl get mp -w printed a line per change: Node, Phase, Reason,
	// Evicted and Total in the CRD's printer columns.
	phases := watch.phases(t, ctx, p.Name, "Completed")
	if !inOrder(phases, []string{"Cordoning", "Cordoned", "Draining", "Drained", "Uncordoning", "Completed"}) {
		t.Errorf("kubectl get mp -w showed phases %v", phases)
	}
}

// watched is a `kubectl ... -w` process and the lines it printed.
type watched struct {
	mu    sync.Mutex
	lines []string
	cmd   *exec.Cmd
}

// kubectlWatch starts kubectl with the admin kubeconfig; it is killed when
// the test ends.
func kubectlWatch(t *testing.T, ctx context.Context, args ...string) *watched {
	t.Helper()
	w := &watched{}
	w.cmd = exec.CommandContext(ctx, filepath.Join(cp.BinDir(), "kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig(controlplane.Admin)}, args...)...)
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, s.Text())
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); _ = w.cmd.Wait() })
	return w
}

// phases polls until plan's line with phase last was printed and returns
// the plan's phases as printed, repeats dropped. The columns are NAME NODE
// PHASE REASON EVICTED TOTAL AGE.
func (w *watched) phases(t *testing.T, ctx context.Context, plan, last string) []string {
	t.Helper()
	var out []string
	err := pollUntil(ctx, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		out = nil
		for _, l := range w.lines {
			f := strings.Fields(l)
			if len(f) < 3 || f[0] != plan {
				continue
			}
			if n := len(out); n == 0 || out[n-1] != f[2] {
				out = append(out, f[2])
			}
		}
		return len(out) > 0 && out[len(out)-1] == last
	})
	if err != nil {
		w.mu.Lock()
		t.Errorf("kubectl -w: no line with phase %s for %s:\n%s", last, plan, strings.Join(w.lines, "\n"))
		w.mu.Unlock()
	}
	return out
}

// pollUntil polls ok every 50 ms until it holds or ctx ends.
func pollUntil(ctx context.Context, ok func() bool) error {
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return ok(), nil })
}
