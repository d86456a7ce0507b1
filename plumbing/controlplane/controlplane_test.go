package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

var cp *ControlPlane

func TestMain(m *testing.M) { os.Exit(Main(m, Options{Log: os.Stderr}, &cp)) }

func scenario(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestEvictionUnderPDB is the foundation's proof that the parts are real:
// scheduling, the disruption controller's arithmetic, the Eviction API's
// verdicts, RBAC, and the request counters that later tests count with.
func TestEvictionUnderPDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := cp.Namespace(ctx, "evict")
	if err != nil {
		t.Fatal(err)
	}
	pool := ns
	if err := cp.CreateNodes(ctx, pool, pool+"-a", pool+"-b", pool+"-c"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Apply(ctx, scenario(t, "foundation-pdb.yaml"), map[string]string{"NAMESPACE": ns, "POOL": pool}); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, ns, "app=web", 3); err != nil {
		t.Fatal(err)
	}
	admin := cp.Clientset(Admin)
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		nodes[p.Spec.NodeName] = true
	}
	if len(nodes) != 3 {
		t.Fatalf("3 replicas landed on %d nodes (%v), want 3", len(nodes), nodes)
	}

	// The disruption controller computes the budget.
	var pdb *policyv1.PodDisruptionBudget
	err = cp.poll(ctx, "kube-controller-manager", func(ctx context.Context) (bool, error) {
		pdb, err = admin.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 3, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Status.DisruptionsAllowed != 1 {
		t.Fatalf("disruptionsAllowed = %d, want 1", pdb.Status.DisruptionsAllowed)
	}

	// kwok deletes an evicted pod at once and its replacement turns Ready
	// within a second, after which the controller would allow a disruption
	// again: freeze the budget while the three evictions are sent.
	if err := cp.StopControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.StartControllerManager(ctx); err != nil {
			t.Error(err)
		}
	}()
	before, err := cp.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evict := func(user User, pod string) error {
		return cp.Clientset(user).PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns},
		})
	}
	if err := evict(Admin, pods.Items[0].Name); err != nil {
		t.Fatalf("first eviction: %v, want accepted", err)
	}
	if err := evict(Admin, pods.Items[1].Name); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction: %v, want 429", err)
	}
	if err := evict(NoEvict, pods.Items[2].Name); !apierrors.IsForbidden(err) {
		t.Fatalf("eviction as %s: %v, want 403", NoEvict, err)
	}
	after, err := cp.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// /metrics counts what reached the handler: the 201 and the 429. The
	// 403 is decided by RBAC before that and shows only in the audit log.
	got := map[string]int{}
	for k, v := range after.Sub(before) {
		if k.Subresource == "eviction" {
			got[k.Verb+" "+k.Code] += v
		}
	}
	if diff := cmp.Diff(map[string]int{"POST 201": 1, "POST 429": 1}, got); diff != "" {
		t.Errorf("eviction requests in apiserver_request_total (-want +got):\n%s", diff)
	}
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	var audited []string
	for _, e := range events {
		if e.Namespace == ns && e.Sub == "eviction" {
			audited = append(audited, fmt.Sprintf("%s %s %s %d", e.User, e.Verb, e.Name, e.Code))
		}
	}
	want := []string{
		"admin create " + pods.Items[0].Name + " 201",
		"admin create " + pods.Items[1].Name + " 429",
		"noevict create " + pods.Items[2].Name + " 403",
	}
	if diff := cmp.Diff(want, audited); diff != "" {
		t.Errorf("eviction requests in the audit log (-want +got):\n%s", diff)
	}
}

func TestViewerCannotWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	viewer := cp.Clientset(Viewer)
	if _, err := viewer.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("viewer list nodes: %v", err)
	}
	_, err := viewer.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "viewer-made"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("viewer create namespace: %v, want forbidden", err)
	}
}

func TestRestartControllerManager(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	old := cp.PIDs()["kube-controller-manager"]
	if err := cp.StopControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	if alive(old) {
		t.Fatalf("kube-controller-manager pid %d still alive after stop", old)
	}
	// While it is down, a new namespace gets no default ServiceAccount.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "while-kcm-down"}}
	if _, err := cp.Clientset(Admin).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cp.waitServiceAccount(ctx, "while-kcm-down"); err != nil {
		t.Fatalf("restarted kube-controller-manager does not work: %v", err)
	}
	if now := cp.PIDs()["kube-controller-manager"]; now == old || !alive(now) {
		t.Errorf("kube-controller-manager pid %d after restart (was %d)", now, old)
	}
}

// TestCloseEndsEveryProcess starts a second control plane and checks by PID
// that Close leaves nothing running.
func TestCloseEndsEveryProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	second, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pids := second.PIDs()
	if len(pids) != 5 {
		t.Errorf("running processes = %v, want 5", pids)
	}
	dir := second.Dir()
	second.Close()
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) still alive after Close", name, pid)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("working directory %s left behind: %v", dir, err)
	}
	second.Close() // idempotent
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestExpand(t *testing.T) {
	got, err := Expand([]byte("ns: ${NAMESPACE}\npool: ${POOL}-x\nkeep: $HOME {x}\n"), map[string]string{"NAMESPACE": "a", "POOL": "p"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("ns: a\npool: p-x\nkeep: $HOME {x}\n", string(got)); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
	_, err = Expand([]byte("${A} ${B} ${A}"), nil)
	if err == nil || !strings.Contains(err.Error(), "undefined variables: A, B") {
		t.Errorf("Expand with undefined variables: %v", err)
	}
}

func TestParseRequests(t *testing.T) {
	in := `# HELP apiserver_request_total Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="policy",resource="pods",scope="resource",subresource="eviction",verb="POST",version="v1"} 2
apiserver_request_total{code="429",component="apiserver",dry_run="All",group="policy",resource="pods",scope="resource",subresource="eviction",verb="POST",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 7
apiserver_request_duration_seconds_count{verb="LIST"} 9
`
	got, err := ParseRequests(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Requests{
		{Verb: "POST", Resource: "pods", Subresource: "eviction", Code: "201"}:                2,
		{Verb: "POST", Resource: "pods", Subresource: "eviction", Code: "429", DryRun: "All"}: 1,
		{Verb: "LIST", Resource: "pods", Code: "200"}:                                         7,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRequests (-want +got):\n%s", diff)
	}
	if n := got.Count("POST", "pods", "eviction", ""); n != 3 {
		t.Errorf("Count(POST pods/eviction) = %d, want 3", n)
	}
	if d := got.Sub(Requests{{Verb: "LIST", Resource: "pods", Code: "200"}: 7}); len(d) != 2 {
		t.Errorf("Sub = %v, want the two eviction series", d)
	}
	// Escaped quotes in a label value, and a malformed exposition.
	got, err = ParseRequests(strings.NewReader(`apiserver_request_total{code="200",resource="a\"b",verb="GET"} 3` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Requests{{Verb: "GET", Resource: `a"b`, Code: "200"}: 3}, got); diff != "" {
		t.Errorf("ParseRequests, escaped label (-want +got):\n%s", diff)
	}
	if _, err := ParseRequests(strings.NewReader("apiserver_request_total{code=\"200\" 3\n")); err == nil || !strings.Contains(err.Error(), "apiserver metrics:") {
		t.Errorf("ParseRequests of a malformed exposition: err = %v, want an apiserver metrics error", err)
	}
}

// TestBindServiceAccount: the account gets exactly the bound role.
func TestBindServiceAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cp.Namespace(ctx, "bind")
	if err != nil {
		t.Fatal(err)
	}
	path, err := cp.BindServiceAccount(ctx, ns, "reader", "sentinel-test-"+string(NoEvict))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kubeclient.Options{Kubeconfig: path}.Config()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of a new binding from its informer: poll.
	err = cp.poll(ctx, "kube-apiserver", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("bound account cannot list pods: %v", err)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("bound account lists configmaps: %v, want forbidden", err)
	}
}

func TestWaitIdle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	took, err := cp.WaitIdle(ctx, 0.5, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took < 3*time.Second {
		t.Errorf("WaitIdle returned after %s, before three calm windows", took)
	}
	// A budget of no CPU at all is never met: the wait ends with ctx.
	short, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, err := cp.WaitIdle(short, 0, 100*time.Millisecond); err == nil {
		t.Error("WaitIdle with no CPU budget returned without an error")
	}
}

func TestProcessCPU(t *testing.T) {
	before, ok := ProcessCPU(os.Getpid())
	if !ok {
		t.Fatal("ProcessCPU of this process: not read")
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) { // burn CPU on purpose
		n++
	}
	after, _ := ProcessCPU(os.Getpid())
	if after-before < 0.05 {
		t.Errorf("ProcessCPU rose by %.3f s over 0.2 s of busy loop (%d turns), want >= 0.05", after-before, n)
	}
	if _, ok := ProcessCPU(-1); ok {
		t.Error("ProcessCPU(-1) read something")
	}
}
