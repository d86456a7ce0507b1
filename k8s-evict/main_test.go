package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

// cp is the one real control plane of this test binary.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	scripttest.MainWithControlPlane(m, &cp, map[string]func(){
		name: func() { os.Exit(command.Main(app())) },
	})
}

// env is one test's namespace and pool (one kwok node, <pool>-1) with a
// scenario from testdata/scenarios applied.
type env struct {
	ns, pool string
}

func setup(ctx context.Context, scenarios ...string) (env, error) {
	ns, err := cp.Namespace(ctx, "evict")
	if err != nil {
		return env{}, err
	}
	e := env{ns: ns, pool: ns}
	if err := cp.CreateNodes(ctx, e.pool, e.pool+"-1"); err != nil {
		return env{}, err
	}
	for _, s := range scenarios {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", s))
		if err != nil {
			return env{}, err
		}
		if err := cp.Apply(ctx, data, map[string]string{"NAMESPACE": e.ns, "POOL": e.pool}); err != nil {
			return env{}, err
		}
	}
	return e, nil
}

func newEnv(t *testing.T, ctx context.Context, scenarios ...string) env {
	t.Helper()
	e, err := setup(ctx, scenarios...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// budgetSettled waits until the PDB's status reflects its spec with want
// disruptions allowed.
func budgetSettled(ctx context.Context, ns, name string, want int32) error {
	pdbs := cp.Clientset(controlplane.Admin).PolicyV1().PodDisruptionBudgets(ns)
	last := "not read"
	for ctx.Err() == nil {
		pdb, err := pdbs.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = fmt.Sprintf("generation %d observed %d, allowed %d, healthy %d/%d", pdb.Generation,
				pdb.Status.ObservedGeneration, pdb.Status.DisruptionsAllowed, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy)
			if pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.DisruptionsAllowed == want && pdb.Status.CurrentHealthy > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("pdb %s/%s did not settle at %d allowed (%s): %w", ns, name, want, last, ctx.Err())
}

type outcome struct {
	code           int
	stdout, stderr string
}

// evictAs runs the k8s-evict command in-process as user.
func evictAs(ctx context.Context, user controlplane.User, args ...string) outcome {
	var stdout, stderr bytes.Buffer
	args = append([]string{name, "--kubeconfig", cp.Kubeconfig(user)}, args...)
	code := command.Run(ctx, app(), args, strings.NewReader(""), &stdout, &stderr)
	return outcome{code, stdout.String(), stderr.String()}
}

func result(t *testing.T, o outcome) *evict.Result {
	t.Helper()
	var res evict.Result
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
		t.Fatalf("stdout is not an EvictionResult: %v\n%s\nstderr: %s", err, o.stdout, o.stderr)
	}
	return &res
}

// evictions are the audited eviction requests in ns since index from.
func evictions(t *testing.T, ns string, from int) []controlplane.AuditEvent {
	t.Helper()
	return audited(t, from, func(e controlplane.AuditEvent) bool {
		return e.Namespace == ns && e.Resource == "pods" && e.Sub == "eviction"
	})
}

// podReads are the audited reads (get) of pod ns/name since index from.
func podReads(t *testing.T, ns, name string, from int) []controlplane.AuditEvent {
	t.Helper()
	return audited(t, from, func(e controlplane.AuditEvent) bool {
		return e.Namespace == ns && e.Resource == "pods" && e.Sub == "" && e.Name == name && e.Verb == "get"
	})
}

// audited are the audit events since index from that keep accepts.
func audited(t *testing.T, from int, keep func(controlplane.AuditEvent) bool) []controlplane.AuditEvent {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	var out []controlplane.AuditEvent
	for _, e := range events[from:] {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func auditLen(t *testing.T) int {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

func podUID(t *testing.T, ctx context.Context, ns, name string) types.UID {
	t.Helper()
	p, err := cp.Clientset(controlplane.Admin).CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.UID
}

func i32(n int32) *int32 { return &n }

// view is the part of a result a test compares.
type view struct {
	Outcome    evict.Outcome
	Reason     string
	HTTPStatus int
	Retry      int
	PDB        *evict.Budget
	PDBs       []string
	Gone       bool
	Code       int
}

func viewOf(t *testing.T, o outcome) view {
	r := result(t, o)
	return view{r.Outcome, r.Reason, r.HTTPStatus, r.RetryAfterSeconds, r.PDB, r.PDBs, r.Gone, o.code}
}

// TestEvict runs the Eviction API's answers one after another, each with
// exactly one eviction request in the audit log.
func TestEvict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, "evict-budget.yaml", "evict-overlap.yaml", "evict-free.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app in (web, api, solo)", 5); err != nil {
		t.Fatal(err)
	}
	if err := budgetSettled(ctx, e.ns, "web", 0); err != nil {
		t.Fatal(err)
	}
	pods := cp.Clientset(controlplane.Admin).CoreV1().Pods(e.ns)

	steps := []struct {
		name       string
		user       controlplane.User
		args       []string
		want       view
		wantStderr string
		podStays   string // a pod that must still exist afterwards
	}{
		{name: "budget exhausted", args: []string{"--pod", "web-0"},
			want:       view{Outcome: evict.BudgetExhausted, HTTPStatus: 429, PDB: &evict.Budget{Name: "web", Need: i32(2), Have: i32(2)}, Code: 2},
			wantStderr: "k8s-evict: " + e.ns + "/web-0: budget-exhausted: Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 2 healthy pods and has 2 currently\n",
			podStays:   "web-0"},
		{name: "dry run of an exhausted budget", args: []string{"--pod", "web-1", "--dry-run"},
			want:     view{Outcome: evict.BudgetExhausted, HTTPStatus: 429, PDB: &evict.Budget{Name: "web", Need: i32(2), Have: i32(2)}, Code: 2},
			podStays: "web-1"},
		{name: "a Pending pod bypasses the exhausted budget", args: []string{"--pod", "web-pending"},
			want: view{Outcome: evict.Accepted, HTTPStatus: 201}},
		{name: "overlapping budgets", args: []string{"--pod", "api-0"},
			want:     view{Outcome: evict.PDBOverlap, HTTPStatus: 500, PDBs: []string{"api", "backend"}, Code: 3},
			podStays: "api-0"},
		{name: "limited user", user: controlplane.NoEvict, args: []string{"--pod", "solo-0"},
			want:       view{Outcome: evict.Forbidden, Reason: evict.ReasonRBAC, HTTPStatus: 403, Code: 3},
			wantStderr: `k8s-evict: ` + e.ns + `/solo-0: forbidden: pods "solo-0" is forbidden: User "noevict" cannot create resource "pods/eviction" in API group "" in the namespace "` + e.ns + `"` + "\n",
			podStays:   "solo-0"},
		{name: "dry run", args: []string{"--pod", "solo-0", "--dry-run"},
			want:     view{Outcome: evict.Accepted, HTTPStatus: 201},
			podStays: "solo-0"},
		{name: "accepted", args: []string{"--pod", "solo-0"},
			want: view{Outcome: evict.Accepted, HTTPStatus: 201}},
		{name: "no such pod", args: []string{"--pod", "nobody"},
			want: view{Outcome: evict.Gone, Reason: evict.ReasonNotFound, HTTPStatus: 404}},
	}
	for _, s := range steps {
		from := auditLen(t)
		user := s.user
		if user == "" {
			user = controlplane.Admin
		}
		o := evictAs(ctx, user, append([]string{"--namespace", e.ns}, s.args...)...)
		if diff := cmp.Diff(s.want, viewOf(t, o)); diff != "" {
			t.Errorf("%s (-want +got):\n%s\nstderr: %s", s.name, diff, o.stderr)
		}
		if s.wantStderr != "" && o.stderr != s.wantStderr {
			t.Errorf("%s: stderr\n%q, want\n%q", s.name, o.stderr, s.wantStderr)
		}
		if got := evictions(t, e.ns, from); len(got) != 1 || got[0].Code != s.want.HTTPStatus || got[0].DryRun != strings.Contains(strings.Join(s.args, " "), "--dry-run") {
			t.Errorf("%s: eviction requests %+v, want exactly one answered %d", s.name, got, s.want.HTTPStatus)
		}
		if s.podStays != "" {
			if _, err := pods.Get(ctx, s.podStays, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: pod %s: %v", s.name, s.podStays, err)
			}
		}
	}
}

// TestStalePDB freezes the PDB's status (no controller-manager) and changes
// its spec: the answer is a 429 with Retry-After 10 that client-go would
// retry silently for up to ~100 s; k8s-evict reports it at once, after
// exactly one request.
func TestStalePDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, "evict-budget.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app=web", 2); err != nil {
		t.Fatal(err)
	}
	if err := budgetSettled(ctx, e.ns, "web", 0); err != nil {
		t.Fatal(err)
	}
	if err := cp.StopControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.StartControllerManager(context.Background()); err != nil {
			t.Errorf("restart kube-controller-manager: %v", err)
		}
	})
	pdbs := cp.Clientset(controlplane.Admin).PolicyV1().PodDisruptionBudgets(e.ns)
	pdb, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	pdb.Spec.MinAvailable = &one
	if _, err := pdbs.Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	before, err := cp.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	from := auditLen(t)
	start := time.Now()
	o := evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "web-0", "--max-retry-after", "60s")
	took := time.Since(start)
	after, err := cp.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := view{Outcome: evict.PDBStale, HTTPStatus: 429, Retry: 10, PDB: &evict.Budget{Name: "web"}, Code: 2}
	if diff := cmp.Diff(want, viewOf(t, o)); diff != "" {
		t.Errorf("stale PDB (-want +got):\n%s", diff)
	}
	d := after.Sub(before)
	if n, n429 := d.Count("POST", "pods", "eviction", ""), d.Count("POST", "pods", "eviction", "429"); n != 1 || n429 != 1 {
		t.Errorf("apiserver counted %d eviction requests (%d answered 429), want exactly 1 (429)", n, n429)
	}
	if got := evictions(t, e.ns, from); len(got) != 1 {
		t.Errorf("audit: %d eviction requests, want 1: %+v", len(got), got)
	}
	if took > 5*time.Second {
		t.Errorf("took %s: the Retry-After was waited for", took)
	}

	// The cap applies to what is reported.
	o = evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "web-0", "--max-retry-after", "3s")
	if r := result(t, o); r.Outcome != evict.PDBStale || r.RetryAfterSeconds != 3 {
		t.Errorf("capped: %s retryAfterSeconds %d, want pdb-stale 3", r.Outcome, r.RetryAfterSeconds)
	}
}

// TestReplaced evicts with the UID of a pod that was deleted and re-created
// under the same name, and with the UID of a pod that is gone: the answer
// is gone (replaced, not-found) from the read before, and the audit log
// shows that no eviction was sent at all (a failed UID precondition would
// still spend a PDB's budget), only the read. The new pod is not touched.
func TestReplaced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, "evict-free.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app=solo", 2); err != nil {
		t.Fatal(err)
	}
	pods := cp.Clientset(controlplane.Admin).CoreV1().Pods(e.ns)
	old := podUID(t, ctx, e.ns, "solo-0")
	// A graceful delete, finished by kwok: a forced one races kwok's own
	// delete, which is by name and can hit the re-created pod.
	if err := pods.Delete(ctx, "solo-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := evict.WaitGone(ctx, pods, "solo-0", old); err != nil {
		t.Fatal(err)
	}

	// Gone for good: not found, no eviction.
	from := auditLen(t)
	o := evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "solo-0", "--uid", string(old))
	if diff := cmp.Diff(view{Outcome: evict.Gone, Reason: evict.ReasonNotFound}, viewOf(t, o)); diff != "" {
		t.Errorf("gone (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
	if got := evictions(t, e.ns, from); len(got) != 0 {
		t.Errorf("pod gone: %d eviction requests, want none: %+v", len(got), got)
	}
	if got := podReads(t, e.ns, "solo-0", from); len(got) != 1 || got[0].Code != 404 {
		t.Errorf("pod gone: reads %+v, want one answered 404", got)
	}

	data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", "evict-free.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Apply(ctx, data, map[string]string{"NAMESPACE": e.ns, "POOL": e.pool}); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "app=solo", 2); err != nil {
		list, _ := pods.List(ctx, metav1.ListOptions{})
		for _, p := range list.Items {
			t.Logf("%s %s %s %v", p.Name, p.UID, p.Status.Phase, p.DeletionTimestamp)
		}
		t.Fatal(err)
	}
	now := podUID(t, ctx, e.ns, "solo-0")
	if now == old {
		t.Fatal("solo-0 was not re-created")
	}

	// Re-created: replaced, no eviction, with or without --dry-run and --wait.
	for _, extra := range [][]string{nil, {"--dry-run"}, {"--wait", "30s"}} {
		from := auditLen(t)
		args := append([]string{"--namespace", e.ns, "--pod", "solo-0", "--uid", string(old)}, extra...)
		o := evictAs(ctx, controlplane.Admin, args...)
		if diff := cmp.Diff(view{Outcome: evict.Gone, Reason: evict.ReasonReplaced}, viewOf(t, o)); diff != "" {
			t.Errorf("%v: replaced (-want +got):\n%s\nstderr: %s", extra, diff, o.stderr)
		}
		if r := result(t, o); r.UID != old || !strings.Contains(r.Message, "is now uid "+string(now)+", not "+string(old)) {
			t.Errorf("%v: uid %s message %q; want the asked-for %s and both UIDs named", extra, r.UID, r.Message, old)
		}
		if got := evictions(t, e.ns, from); len(got) != 0 {
			t.Errorf("%v: %d eviction requests, want none: %+v", extra, len(got), got)
		}
		if got := podReads(t, e.ns, "solo-0", from); len(got) != 1 || got[0].Code != 200 {
			t.Errorf("%v: reads %+v, want one answered 200", extra, got)
		}
	}
	if uid := podUID(t, ctx, e.ns, "solo-0"); uid != now {
		t.Errorf("solo-0 is now %s, want the re-created %s untouched", uid, now)
	}

	// The current UID: one eviction, with it as the precondition.
	from = auditLen(t)
	o = evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "solo-0", "--uid", string(now), "--wait", "30s")
	if diff := cmp.Diff(view{Outcome: evict.Accepted, HTTPStatus: 201, Gone: true}, viewOf(t, o)); diff != "" {
		t.Errorf("current uid (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
	if got := evictions(t, e.ns, from); len(got) != 1 || got[0].Code != 201 {
		t.Errorf("current uid: eviction requests %+v, want exactly one answered 201", got)
	}
}

// TestWait: --wait watches until the pod with that UID is gone, and says
// accepted-not-gone when it is still there at the end.
func TestWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, "evict-free.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app in (solo, held)", 3); err != nil {
		t.Fatal(err)
	}
	pods := cp.Clientset(controlplane.Admin).CoreV1().Pods(e.ns)
	t.Cleanup(func() {
		p, err := pods.Get(context.Background(), "held-0", metav1.GetOptions{})
		if err == nil {
			p.Finalizers = nil
			pods.Update(context.Background(), p, metav1.UpdateOptions{})
		}
	})

	uid := podUID(t, ctx, e.ns, "solo-1")
	o := evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "solo-1", "--wait", "30s")
	if diff := cmp.Diff(view{Outcome: evict.Accepted, HTTPStatus: 201, Gone: true}, viewOf(t, o)); diff != "" {
		t.Errorf("wait (-want +got):\n%s", diff)
	}
	if r := result(t, o); r.UID != uid {
		t.Errorf("uid %q, want the pod's %q (read before, sent as the precondition)", r.UID, uid)
	}
	if _, err := pods.Get(ctx, "solo-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("solo-1 after the wait: %v, want not found", err)
	}

	held := podUID(t, ctx, e.ns, "held-0")
	start := time.Now()
	o = evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "held-0", "--uid", string(held), "--wait", "2s")
	if diff := cmp.Diff(view{Outcome: evict.AcceptedNotGone, Reason: evict.ReasonWaitTimeout, HTTPStatus: 201, Code: 2}, viewOf(t, o)); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
		t.Errorf("the wait took %s, want about 2s", took)
	}

	// Released while waiting: the finalizer is removed by another client.
	done := make(chan outcome)
	go func() {
		done <- evictAs(ctx, controlplane.Admin, "--namespace", e.ns, "--pod", "held-0", "--uid", string(held), "--wait", "60s")
	}()
	p, err := pods.Get(ctx, "held-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Finalizers = nil
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o = <-done
	if r := result(t, o); !(r.Outcome == evict.Accepted && r.Gone) && !(r.Outcome == evict.Gone) {
		t.Errorf("after release: %s gone=%v, want accepted and gone (or gone if it went first)", r.Outcome, r.Gone)
	}
}

// TestBadInput: a clear message, exit 1, nothing on stdout, no eviction.
func TestBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, "evict-free.yaml")
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args       []string
		wantStderr string
	}{
		"no namespace":      {[]string{"--pod", "solo-0"}, "k8s-evict: --namespace is required (see --help)\n"},
		"no pod":            {[]string{"-n", e.ns}, "k8s-evict: --pod is required (see --help)\n"},
		"invalid namespace": {[]string{"-n", "Shop", "--pod", "solo-0"}, `k8s-evict: invalid --namespace "Shop": a lowercase RFC 1123 label`},
		"invalid pod":       {[]string{"-n", e.ns, "--pod", "solo_0"}, `k8s-evict: invalid --pod "solo_0": a lowercase RFC 1123 subdomain`},
		"empty uid":         {[]string{"-n", e.ns, "--pod", "solo-0", "--uid", ""}, "k8s-evict: --uid needs a UID (see --help)\n"},
		"bad timeout":       {[]string{"-n", e.ns, "--pod", "solo-0", "--timeout", "0s"}, "--timeout must be positive"},
		"wait and dry run":  {[]string{"-n", e.ns, "--pod", "solo-0", "--dry-run", "--wait", "5s"}, "--wait has nothing to wait for with --dry-run"},
		"bad output":        {[]string{"-n", e.ns, "--pod", "solo-0", "-o", "xml"}, `unknown output format "xml"`},
		"unknown namespace": {[]string{"-n", e.ns + "-nope", "--pod", "solo-0"}, "k8s-evict: " + e.ns + "-nope/solo-0: namespaces \"" + e.ns + "-nope\" not found\n"},
		"unreachable":       {[]string{"--kubeconfig", unreachable, "-n", e.ns, "--pod", "solo-0"}, "k8s-evict: evict pod " + e.ns + "/solo-0: "},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			from := auditLen(t)
			o := evictAs(ctx, controlplane.Admin, tc.args...)
			if o.code != 1 || o.stdout != "" || !strings.Contains(o.stderr, tc.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", o.code, o.stdout, o.stderr, tc.wantStderr)
			}
			for _, ev := range evictions(t, e.ns, from) {
				t.Errorf("an eviction was sent: %+v", ev)
			}
		})
	}
	if _, err := cp.Clientset(controlplane.Admin).CoreV1().Pods(e.ns).Get(ctx, "solo-0", metav1.GetOptions{}); err != nil {
		t.Errorf("solo-0: %v", err)
	}
}

// TestScript runs the goldens in testdata/script against the control plane.
// Each script gets a fresh namespace $NAMESPACE and pool $POOL with
// evict-budget.yaml applied and settled (web-0, web-1 Ready, web-pending
// Pending, PDB web allowing 0), and KUBECONFIG of the admin user.
// UPDATE=1 rewrites the goldens.
//
// Custom commands: plumbing/scripttest (exits N PROG ARGS...).
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(te *testscript.Env) error {
			if err := scripttest.SetRepo(te); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e, err := setup(ctx, "evict-budget.yaml")
			if err != nil {
				return err
			}
			if err := cp.WaitPodsReady(ctx, e.ns, "app=web", 2); err != nil {
				return err
			}
			if err := budgetSettled(ctx, e.ns, "web", 0); err != nil {
				return err
			}
			te.Setenv("NAMESPACE", e.ns)
			te.Setenv("POOL", e.pool)
			te.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
			return nil
		},
		Cmds: scripttest.Cmds(),
	})
}
