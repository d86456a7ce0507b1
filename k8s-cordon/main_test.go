package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
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

func randomName(prefix string) string {
	b := make([]byte, 3)
	rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// nodes creates kwok nodes <pool>-1 .. <pool>-n in a fresh pool.
func nodes(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	pool := randomName(strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:min(20, len(t.Name()))])
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, pool+"-"+strconv.Itoa(i))
	}
	if err := cp.CreateNodes(ctx, pool, names...); err != nil {
		t.Fatal(err)
	}
	return names
}

type outcome struct {
	code           int
	stdout, stderr string
}

// cordonAs runs the k8s-cordon command in-process as user.
func cordonAs(ctx context.Context, user controlplane.User, args ...string) outcome {
	var stdout, stderr bytes.Buffer
	args = append([]string{name, "--kubeconfig", cp.Kubeconfig(user)}, args...)
	code := command.Run(ctx, app(), args, strings.NewReader(""), &stdout, &stderr)
	return outcome{code, stdout.String(), stderr.String()}
}

// cordonProc runs k8s-cordon as a process (testscript.Main puts it on
// PATH) as the admin user.
func cordonProc(ctx context.Context, args ...string) outcome {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, append([]string{"--kubeconfig", cp.Kubeconfig(controlplane.Admin)}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		stderr.WriteString(err.Error())
	}
	return outcome{code, stdout.String(), stderr.String()}
}

func result(t *testing.T, r outcome) *cordon.Result {
	t.Helper()
	var res cordon.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not a CordonResult: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return &res
}

// summary is the part of a result that does not change between runs.
type summary struct {
	Action                       cordon.Outcome
	Owner, PreviousOwner, Reason string
	Unschedulable, Observed      bool
	Code                         int
}

func summarize(t *testing.T, r outcome) summary {
	res := result(t, r)
	return summary{res.Action, res.Owner, res.PreviousOwner, res.Reason, res.Unschedulable, res.Observed, r.code}
}

// nodeWrites counts the audited writes to node since audit event index from;
// every one must be a patch (never a full-object update).
func nodeWrites(t *testing.T, node string, from int) int {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events[from:] {
		if e.Resource == "nodes" && e.Name == node && e.Verb != "get" && e.Verb != "list" && e.Verb != "watch" {
			n++
			if e.Verb != "patch" {
				t.Errorf("node %s written with %s, want a merge patch", node, e.Verb)
			}
		}
	}
	return n
}

func auditLen(t *testing.T) int {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

func kubectl(t *testing.T, args ...string) {
	t.Helper()
	bins := os.Getenv(controlplane.BinsEnv)
	if bins == "" {
		bins = filepath.Join("..", ".cache", "kube", controlplane.KubeVersion)
	}
	out, err := exec.Command(filepath.Join(bins, "kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig(controlplane.Admin)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestCordon walks one node through the owner protocol, step by step,
// against the real API server.
func TestCordon(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := nodes(t, ctx, 1)[0]
	api := cp.Clientset(controlplane.Admin).CoreV1().Nodes()
	steps := []struct {
		name       string
		args       []string
		want       summary
		wantWrites int
		wantStderr string
	}{
		{"fresh node", []string{"--owner", "chg-1", "--reason", "kernel update"},
			summary{Action: cordon.Cordoned, Owner: "chg-1", Reason: "kernel update", Unschedulable: true, Observed: true}, 1, ""},
		{"second cordon is idempotent", []string{"--owner", "chg-1", "--reason", "kernel update"},
			summary{Action: cordon.AlreadyOwned, Owner: "chg-1", PreviousOwner: "chg-1", Reason: "kernel update", Unschedulable: true, Observed: true}, 0, ""},
		{"other owner is refused", []string{"--owner", "chg-2"},
			summary{Action: cordon.Occupied, Owner: "chg-2", PreviousOwner: "chg-1", Reason: "kernel update", Unschedulable: true, Code: 3}, 0,
			"k8s-cordon: node " + node + " is cordoned by owner chg-1\n"},
		{"foreign uncordon is refused", []string{"--uncordon", "--owner", "chg-2"},
			summary{Action: cordon.NotOwner, Owner: "chg-2", PreviousOwner: "chg-1", Reason: "kernel update", Unschedulable: true, Code: 3}, 0,
			"k8s-cordon: node " + node + " is cordoned by owner chg-1, not by chg-2\n"},
		{"uncordon ours", []string{"--uncordon", "--owner", "chg-1"},
			summary{Action: cordon.Uncordoned, Owner: "chg-1", PreviousOwner: "chg-1", Observed: true}, 1, ""},
		{"uncordon again: nothing to do", []string{"--uncordon", "--owner", "chg-1"},
			summary{Action: cordon.NotCordoned, Owner: "chg-1", Observed: true}, 0, ""},
	}
	for _, s := range steps {
		from := auditLen(t)
		r := cordonAs(ctx, controlplane.Admin, append([]string{"--node", node}, s.args...)...)
		if diff := cmp.Diff(s.want, summarize(t, r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
		if r.stderr != s.wantStderr {
			t.Errorf("%s: stderr %q, want %q", s.name, r.stderr, s.wantStderr)
		}
		if got := nodeWrites(t, node, from); got != s.wantWrites {
			t.Errorf("%s: %d writes to the node, want %d", s.name, got, s.wantWrites)
		}
		n, err := api.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := result(t, r)
		if res.NodeUID != n.UID || (s.wantWrites > 0 && res.ResourceVersion == "") {
			t.Errorf("%s: nodeUID %s resourceVersion %q; node has %s", s.name, res.NodeUID, res.ResourceVersion, n.UID)
		}
		if owner := n.Annotations[cordon.OwnerAnnotation]; n.Spec.Unschedulable != s.want.Unschedulable || (s.want.Unschedulable && owner != "chg-1") || (!s.want.Unschedulable && len(n.Annotations[cordon.CordonedAtAnnotation]+owner) > 0) {
			t.Errorf("%s: node unschedulable=%v annotations %v", s.name, n.Spec.Unschedulable, n.Annotations)
		}
	}
}

func TestCordonedByKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := nodes(t, ctx, 1)[0]
	kubectl(t, "cordon", node)
	for _, args := range [][]string{{"--owner", "chg-1"}, {"--uncordon", "--owner", "chg-1"}} {
		from := auditLen(t)
		r := cordonAs(ctx, controlplane.Admin, append([]string{"--node", node}, args...)...)
		res := result(t, r)
		wantAction := cordon.Occupied
		wantMsg := "node " + node + " is cordoned without an owner"
		if args[0] == "--uncordon" {
			wantAction, wantMsg = cordon.NotOwner, wantMsg+": not lifting a cordon chg-1 did not set"
		}
		if r.code != 3 || res.Action != wantAction || res.Message != wantMsg || res.PreviousOwner != "" {
			t.Errorf("%v: exit %d, %s %q; want 3, %s %q", args, r.code, res.Action, res.Message, wantAction, wantMsg)
		}
		if got := nodeWrites(t, node, from); got != 0 {
			t.Errorf("%v: %d writes to the node, want none", args, got)
		}
	}
}

// TestCordonRace runs two k8s-cordon processes with different owners at
// the same time, a few rounds: exactly one wins, the other reports occupied naming the
// winner, and the node's annotation names the winner.
func TestCordonRace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := cp.Clientset(controlplane.Admin).CoreV1().Nodes()
	for _, node := range nodes(t, ctx, 3) {
		var wg sync.WaitGroup
		runs := make([]outcome, 2)
		start := make(chan struct{})
		for i, owner := range []string{"team-a", "team-b"} {
			wg.Go(func() {
				<-start
				runs[i] = cordonProc(ctx, "--node", node, "--owner", owner)
			})
		}
		close(start)
		wg.Wait()
		a, b := result(t, runs[0]), result(t, runs[1])
		winner, loser := a, b
		if b.Action == cordon.Cordoned {
			winner, loser = b, a
		}
		if winner.Action != cordon.Cordoned || loser.Action != cordon.Occupied || loser.PreviousOwner != winner.Owner {
			t.Errorf("%s: outcomes %s (%s) and %s (%s, previous owner %q); want one cordoned, the other occupied naming it",
				node, a.Action, a.Owner, b.Action, b.Owner, b.PreviousOwner)
		}
		n, err := api.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Annotations[cordon.OwnerAnnotation]; got != winner.Owner || !n.Spec.Unschedulable {
			t.Errorf("%s: owner annotation %q unschedulable %v, want %q true", node, got, n.Spec.Unschedulable, winner.Owner)
		}
		t.Logf("%s: %s won, %s saw %d conflicts", node, winner.Owner, loser.Owner, loser.Conflicts)
	}
}

// TestApplyRace races the library itself, two goroutines per node, where
// the window between read and update is short enough for real 409s.
func TestApplyRace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := cp.Clientset(controlplane.Admin).CoreV1().Nodes()
	conflicts := 0
	for _, node := range nodes(t, ctx, 4) {
		var wg sync.WaitGroup
		results := make([]*cordon.Result, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		for i, owner := range []string{"team-a", "team-b"} {
			wg.Go(func() {
				<-start
				results[i], errs[i] = cordon.Apply(ctx, api, node, cordon.Request{Owner: owner}, time.Now())
			})
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("%s: %v, %v", node, errs[0], errs[1])
		}
		got := []cordon.Outcome{results[0].Action, results[1].Action}
		if !(got[0] == cordon.Cordoned && got[1] == cordon.Occupied || got[0] == cordon.Occupied && got[1] == cordon.Cordoned) {
			t.Errorf("%s: outcomes %v, want one cordoned and one occupied", node, got)
		}
		conflicts += results[0].Conflicts + results[1].Conflicts
	}
	t.Logf("%d conflicts met and resolved by re-reading", conflicts)
}

// TestPatchGuard sends a decision's patch after someone else changed the
// node: the real API server refuses it with 409 (the read resourceVersion
// guards the merge patch), and the other writer's change is kept.
func TestPatchGuard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := nodes(t, ctx, 1)[0]
	api := cp.Clientset(controlplane.Admin).CoreV1().Nodes()
	read, err := api.Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := cordon.Decide(read, cordon.Request{Owner: "chg-1"}, time.Now())
	if d.Outcome != cordon.Cordoned {
		t.Fatalf("decision %s, want cordoned", d.Outcome)
	}
	if _, err := api.Patch(ctx, node, types.MergePatchType, []byte(`{"metadata":{"labels":{"other-writer":"x"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = api.Patch(ctx, node, types.MergePatchType, d.Patch, metav1.PatchOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale patch: %v, want a conflict", err)
	}
	// Apply re-reads and decides again: the cordon lands, the label stays.
	res, err := cordon.Apply(ctx, api, node, cordon.Request{Owner: "chg-1"}, time.Now())
	if err != nil || res.Action != cordon.Cordoned || !res.Observed {
		t.Fatalf("Apply: %v %+v", err, res)
	}
	n, err := api.Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["other-writer"] != "x" || n.Labels[controlplane.PoolLabel] == "" || !n.Spec.Unschedulable {
		t.Errorf("node after the cordon: labels %v unschedulable %v; want the other writer's label and the pool kept", n.Labels, n.Spec.Unschedulable)
	}
}

// TestExpectUID deletes a node and re-creates it under the same name: the
// old UID no longer matches.
func TestExpectUID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := nodes(t, ctx, 1)[0]
	api := cp.Clientset(controlplane.Admin).CoreV1().Nodes()
	old, err := api.Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := cordonAs(ctx, controlplane.Admin, "--node", node, "--owner", "chg-1", "--expect-uid", string(old.UID))
	if res := result(t, r); r.code != 0 || res.Action != cordon.Cordoned {
		t.Fatalf("cordon with the right uid: exit %d, %s", r.code, res.Action)
	}
	if err := api.Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, old.Labels[controlplane.PoolLabel], node); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--owner", "chg-1"}, {"--uncordon", "--owner", "chg-1"}} {
		from := auditLen(t)
		r := cordonAs(ctx, controlplane.Admin, append([]string{"--node", node, "--expect-uid", string(old.UID)}, args...)...)
		res := result(t, r)
		if r.code != 3 || res.Action != cordon.UIDMismatch || res.NodeUID == old.UID || !strings.Contains(r.stderr, "deleted and re-created") {
			t.Errorf("%v: exit %d, %s, uid %s, stderr %q; want 3, uid-mismatch with the new uid", args, r.code, res.Action, res.NodeUID, r.stderr)
		}
		if got := nodeWrites(t, node, from); got != 0 {
			t.Errorf("%v: %d writes to the node, want none", args, got)
		}
	}
}

// TestBadInput: a clear message, exit 1, nothing on stdout, no write.
func TestBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := nodes(t, ctx, 1)[0]
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
		user       controlplane.User
		args       []string
		wantStderr string
	}{
		"no node":         {controlplane.Admin, []string{"--owner", "a"}, "k8s-cordon: --node is required (see --help)\n"},
		"no owner":        {controlplane.Admin, []string{"--node", node}, "k8s-cordon: --owner is required (see --help)\n"},
		"invalid node":    {controlplane.Admin, []string{"--node", "Node_1", "--owner", "a"}, `k8s-cordon: invalid --node "Node_1": a lowercase RFC 1123 subdomain`},
		"owner w/ space":  {controlplane.Admin, []string{"--node", node, "--owner", "a b"}, `k8s-cordon: invalid --owner "a b": no spaces allowed`},
		"reason uncordon": {controlplane.Admin, []string{"--node", node, "--owner", "a", "--uncordon", "--reason", "x"}, "--reason goes with a cordon"},
		"empty uid":       {controlplane.Admin, []string{"--node", node, "--owner", "a", "--expect-uid", ""}, "--expect-uid needs a UID"},
		"bad output":      {controlplane.Admin, []string{"--node", node, "--owner", "a", "-o", "xml"}, `unknown output format "xml"`},
		"unknown node":    {controlplane.Admin, []string{"--node", node + "-nope", "--owner", "a"}, "k8s-cordon: node \"" + node + "-nope\" not found\n"},
		"no permission":   {controlplane.Viewer, []string{"--node", node, "--owner", "a"}, `k8s-cordon: patch node ` + node + `: nodes "` + node + `" is forbidden: User "viewer" cannot patch resource "nodes"`},
		"unreachable":     {"", []string{"--kubeconfig", unreachable, "--node", node, "--owner", "a", "--timeout", "5s"}, "k8s-cordon: read node " + node + ": "},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			from := auditLen(t)
			var r outcome
			if tc.user == "" {
				var stdout, stderr bytes.Buffer
				code := command.Run(ctx, app(), append([]string{"k8s-cordon"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
				r = outcome{code, stdout.String(), stderr.String()}
			} else {
				r = cordonAs(ctx, tc.user, tc.args...)
			}
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, tc.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, tc.wantStderr)
			}
			if got := nodeWrites(t, node, from); got != 0 && name != "no permission" {
				t.Errorf("%d writes to the node, want none", got)
			}
		})
	}
	if n, err := cp.Clientset(controlplane.Admin).CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil || n.Spec.Unschedulable || len(n.Annotations[cordon.OwnerAnnotation]) > 0 {
		t.Errorf("the node changed: %v %v", err, n.Annotations)
	}
}

// TestScript runs the goldens in testdata/script against the control plane.
// Each script gets a fresh pool with one node, $NODE, and KUBECONFIG of the
// admin user; $KUBECTL is kubectl v1.37.2. UPDATE=1 rewrites the goldens.
//
// Custom commands: plumbing/scripttest (exits N PROG ARGS...).
func TestScript(t *testing.T) {
	bins := os.Getenv(controlplane.BinsEnv)
	if bins == "" {
		abs, err := filepath.Abs(filepath.Join("..", ".cache", "kube", controlplane.KubeVersion))
		if err != nil {
			t.Fatal(err)
		}
		bins = abs
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			if err := scripttest.SetRepo(env); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pool := randomName("script")
			if err := cp.CreateNodes(ctx, pool, pool+"-1"); err != nil {
				return err
			}
			env.Setenv("NODE", pool+"-1")
			env.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
			env.Setenv("KUBECTL", filepath.Join(bins, "kubectl"))
			return nil
		},
		Cmds: scripttest.Cmds(),
	})
}
