//go:build bench

// Package bench measures maintd against kubectl drain (v1.37.2): both drain
// node-1 of a fresh copy of the scenario testdata/scenarios/maintd-bench.yaml
// (a new namespace and four new kwok nodes for every run of every tool), as
// processes, against the same local control plane in the same run. Run it
// with bench/run.sh (or make bench).
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var cp *controlplane.ControlPlane

// Volumes: the attach-detach controller makes the VolumeAttachments of CSI
// volumes, and the volumes benchmark plays their attacher.
func TestMain(m *testing.M) {
	os.Exit(controlplane.Main(m, controlplane.Options{Volumes: true}, &cp))
}

// section is the heading of this benchmark's part of docs/benchmarks.md.
const section = "## maintd"

const (
	// readyDelay is the scenario's pod-ready delay (its pod template's
	// controlplane.PodReadyDelayAnnotation).
	readyDelay = 2 * time.Second
	replicas   = 8
	nodesPer   = 4
	// runLabel on a plan names the run; each maintd runs only its own plan.
	runLabel = "sentinel.dev/bench-run"
	// maxDrain bounds one drain by either tool.
	maxDrain = 4 * time.Minute
)

// size is one drain of the benchmark and its targets.
type size struct {
	deployments int
	kubectl     float64 // maintd/kubectl wall-time target
	floor       float64 // maintd/floor target
	max429      int     // eviction POSTs answered 429, per maintd drain
}

var sizes = map[int]size{
	10: {deployments: 10, kubectl: 0.5, floor: 1.2, max429: 1},
	40: {deployments: 40, kubectl: 0.3, max429: 1}, // the 80-pod target is the kubectl ratio; the floor is reported
}

// run is one drain by one tool.
type run struct {
	ok   bool
	wall time.Duration
	// start and end are the moments wall runs between: the plan's creation
	// and its Drained seen, or kubectl drain's start and exit.
	start, end time.Time
	// forecast is the first status.forecast maintd's plan showed.
	forecast  *api.Forecast
	evictions int // eviction POSTs (not dry run) in the scenario's namespace
	rejected  int // of which answered 429
	other     []string
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

type bench struct {
	t         *testing.T
	admin     kubernetes.Interface
	plans     maintenancev1alpha1.MaintenancePlanInterface
	bin       string
	kubectl   string
	home      string // kubectl's HOME (discovery cache)
	logs      string // maintd's and kubectl's output, plans' status
	tmpl      []byte
	kubecfg   string
	settledIn []time.Duration
}

func TestDrainVersusKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(env("BENCH_N", "3"))
	if err != nil || n < 1 {
		t.Fatalf("BENCH_N=%q", os.Getenv("BENCH_N"))
	}
	var todo []size
	for _, f := range strings.Split(env("BENCH_SIZES", "10,40"), ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		s, ok := sizes[d]
		if err != nil || !ok {
			t.Fatalf("BENCH_SIZES=%q: each must be 10 or 40 (Deployments)", os.Getenv("BENCH_SIZES"))
		}
		todo = append(todo, s)
	}
	root := repoRoot()
	b := newBench(t, ctx, "maintd", "k8s-snapshot", "k8s-analyze")
	if b.tmpl, err = os.ReadFile(filepath.Join(root, "testdata", "scenarios", "maintd-bench.yaml")); err != nil {
		t.Fatal(err)
	}

	var rep strings.Builder
	var failed []string
	for _, s := range todo {
		times := map[string][]run{}
		var rounds int
		var latencies []time.Duration
		for i := range n {
			// Alternate who goes first, so that drift favours no one.
			tools := []string{"maintd", "kubectl"}
			if i%2 == 1 {
				slices.Reverse(tools)
			}
			for _, tool := range tools {
				sc := b.setup(ctx, s.deployments)
				if rounds == 0 {
					rounds = b.rounds(ctx, sc)
				}
				latencies = append(latencies, b.latency(ctx, sc))
				var r run
				if tool == "maintd" {
					r = b.maintd(ctx, sc)
				} else {
					r = b.drain(ctx, sc)
				}
				t.Logf("%d Deployments, run %d, %s: ok=%v wall=%s evictions=%d 429=%d %s", s.deployments, i+1, tool, r.ok, r.wall.Round(time.Millisecond), r.evictions, r.rejected, strings.Join(r.other, " "))
				times[tool] = append(times[tool], r)
				b.teardown(ctx, sc)
			}
		}
		f := b.report(&rep, s, n, rounds, median(latencies), times["maintd"], times["kubectl"])
		failed = append(failed, f...)
	}

	var doc strings.Builder
	fmt.Fprintf(&doc, "%s\n\n", section)
	fmt.Fprintf(&doc, "maintd against `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data` (v1.37.2), both as\n")
	fmt.Fprintf(&doc, "processes with the admin kubeconfig, against the same local control plane in the same run. Every\n")
	fmt.Fprintf(&doc, "drain gets a fresh copy of the scenario (testdata/scenarios/maintd-bench.yaml): a new namespace and\n")
	fmt.Fprintf(&doc, "four new kwok nodes, the Deployments created once every node is Ready and untainted, %d replicas\n", replicas)
	fmt.Fprintf(&doc, "each spread two per node (maxSkew 1, DoNotSchedule, nodeTaintsPolicy Honor), Ready %s after\n", readyDelay)
	fmt.Fprintf(&doc, "scheduling, a PDB with maxUnavailable 1 each; node-1 is drained, the three others take the\n")
	fmt.Fprintf(&doc, "replacements. %d drains per tool and size, interleaved (the order alternates every round), medians\n", n)
	fmt.Fprintf(&doc, "reported. Each timed drain starts once every PDB allows 1 and the control plane has settled (under\n")
	fmt.Fprintf(&doc, "25%% of a CPU for 3 s; median wait %s).\n\n", median(b.settledIn).Round(100*time.Millisecond))
	fmt.Fprintf(&doc, "- maintd: started with `--selector %s=RUN --max-nodes-in-maintenance 1 --workers 4`, its caches\n", runLabel)
	fmt.Fprintf(&doc, "  synced (/readyz), then timed from the creation of the plan (`nodeName`, `allowAllWorkloads: true`,\n")
	fmt.Fprintf(&doc, "  defaults: maxConcurrentEvictions 50, maxCooldown 60s) to the watch event with `status.phase: Drained`;\n")
	fmt.Fprintf(&doc, "  stopped with SIGTERM after each run.\n")
	fmt.Fprintf(&doc, "- kubectl drain: the command's wall time (it evicts every pod concurrently and retries a 429 every 5 s).\n")
	fmt.Fprintf(&doc, "- floor: rounds x ready delay + one eviction's latency; rounds are the largest `roundsNeeded` of the\n")
	fmt.Fprintf(&doc, "  node's PDBs in `k8s-snapshot --node NODE | k8s-analyze --node NODE`; the latency is the median\n")
	fmt.Fprintf(&doc, "  time from an eviction POST of a pod without a PDB to its deletion, measured on each copy before the drain.\n")
	fmt.Fprintf(&doc, "  The floor charges a ready delay to every round, the first included, which waits for none: a drain\n")
	fmt.Fprintf(&doc, "  that evicts each PDB's second pod as soon as the first replacement is Ready can end about one ready\n")
	fmt.Fprintf(&doc, "  delay under it, so maintd/floor may be below 1.\n")
	fmt.Fprintf(&doc, "- 429s: eviction POSTs (dry runs apart) in the scenario's namespace answered 429, from the API\n")
	fmt.Fprintf(&doc, "  server's audit log, per drain.\n\n")
	doc.WriteString(rep.String())
	b.publish(&doc, failed, "Reproduce: `make bench`, or `BENCH_N=%d BENCH_SIZES=%s bash maintd/bench/run.sh`.\n", n, env("BENCH_SIZES", "10,40"))
}

func repoRoot() string {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	return root
}

// newBench checks that the binaries (BIN, default ./bin) and kubectl are
// there, applies maintd's CRD, ServiceAccount and RBAC (deploy/) and warms
// kubectl's discovery cache, as a user's would be.
func newBench(t *testing.T, ctx context.Context, binaries ...string) *bench {
	t.Helper()
	root := repoRoot()
	b := &bench{t: t, admin: cp.Clientset(controlplane.Admin), kubecfg: cp.Kubeconfig(controlplane.Admin), home: t.TempDir()}
	b.bin = env("BIN", filepath.Join(root, "bin"))
	b.kubectl = filepath.Join(env(controlplane.BinsEnv, filepath.Join(root, ".cache", "kube", controlplane.KubeVersion)), "kubectl")
	for _, f := range append([]string{b.kubectl}, binaries...) {
		if !filepath.IsAbs(f) {
			f = filepath.Join(b.bin, f)
		}
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v (run make build kube-bins)", err)
		}
	}
	b.logs = env("BENCH_LOGS", t.TempDir())
	if err := os.MkdirAll(b.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"crd.yaml", "namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "bindings.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "maintd", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Apply(ctx, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	b.plans = mc.MaintenancePlans()
	if out, err := b.command(ctx, b.kubectl, "get", "nodes").CombinedOutput(); err != nil {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	return b
}

// publish ends doc with the load and the machine and the reproduce line
// (format, args), logs it, writes it to BENCH_OUT (the section run.sh puts
// in docs/benchmarks.md), and fails the test on the targets missed.
func (b *bench) publish(doc *strings.Builder, missed []string, format string, args ...any) {
	t := b.t
	t.Helper()
	fmt.Fprintf(doc, "Load average when measured: %s. Measured %s on %s/%s, %d CPUs.\n", loadavg(),
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(doc, format, args...)
	t.Log("\n" + doc.String())
	if out := os.Getenv("BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(missed) > 0 {
		t.Errorf("targets missed: %s (logs in %s)", strings.Join(missed, "; "), b.logs)
	}
}

// report writes the table of one size and returns the targets it missed.
func (b *bench) report(w *strings.Builder, s size, n, rounds int, latency time.Duration, m, k []run) (failed []string) {
	okWalls := func(rs []run) (ds []time.Duration, bad int) {
		for _, r := range rs {
			if r.ok {
				ds = append(ds, r.wall)
			} else {
				bad++
			}
		}
		return ds, bad
	}
	mw, mbad := okWalls(m)
	kw, kbad := okWalls(k)
	floor := time.Duration(rounds)*readyDelay + latency
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	list := func(rs []run, f func(run) string) string {
		var parts []string
		for _, r := range rs {
			parts = append(parts, f(r))
		}
		return strings.Join(parts, ", ")
	}
	wall := func(r run) string {
		if !r.ok {
			return "failed"
		}
		return fmt.Sprintf("%.2f", r.wall.Seconds())
	}
	pods := 2 * s.deployments
	fmt.Fprintf(w, "### %d Deployments x %d, %d pods on node-1\n\n", s.deployments, replicas, pods)
	fmt.Fprintf(w, "| | maintd | kubectl drain | target |\n|---|---|---|---|\n")
	mmed, kmed := "did not drain", "did not drain"
	if len(mw) > 0 {
		mmed = sec(median(mw))
	}
	if len(kw) > 0 {
		kmed = sec(median(kw))
	}
	fmt.Fprintf(w, "| wall time, median of %d | %s | %s | |\n", n, mmed, kmed)
	fmt.Fprintf(w, "| each run (s) | %s | %s | |\n", list(m, wall), list(k, wall))
	ratio, fratio := math.NaN(), math.NaN()
	if len(mw) > 0 && len(kw) > 0 {
		ratio = median(mw).Seconds() / median(kw).Seconds()
	}
	if len(mw) > 0 {
		fratio = median(mw).Seconds() / floor.Seconds()
	}
	fmt.Fprintf(w, "| maintd / kubectl drain | **%.2fx** | | <= %.1fx |\n", ratio, s.kubectl)
	fmt.Fprintf(w, "| floor: %d rounds x %s + %s eviction latency | %s | | |\n", rounds, readyDelay, sec(latency), sec(floor))
	if s.floor > 0 {
		fmt.Fprintf(w, "| maintd / floor | **%.2fx** | | <= %.1fx |\n", fratio, s.floor)
	} else {
		fmt.Fprintf(w, "| maintd / floor | **%.2fx** | | reported |\n", fratio)
	}
	max429 := 0
	for _, r := range m {
		max429 = max(max429, r.rejected)
	}
	fmt.Fprintf(w, "| eviction POSTs answered 429, each run | %s | %s | maintd <= %d |\n",
		list(m, func(r run) string { return strconv.Itoa(r.rejected) }), list(k, func(r run) string { return strconv.Itoa(r.rejected) }), s.max429)
	fmt.Fprintf(w, "| eviction POSTs, each run | %s | %s | |\n\n",
		list(m, func(r run) string { return strconv.Itoa(r.evictions) }), list(k, func(r run) string { return strconv.Itoa(r.evictions) }))
	var miss []string
	if mbad > 0 {
		miss = append(miss, fmt.Sprintf("maintd did not drain in %d of %d runs", mbad, n))
	}
	if kbad > 0 {
		miss = append(miss, fmt.Sprintf("kubectl drain failed in %d of %d runs", kbad, n))
	}
	if !(ratio <= s.kubectl) {
		miss = append(miss, fmt.Sprintf("maintd/kubectl %.2fx > %.1fx", ratio, s.kubectl))
	}
	if s.floor > 0 && !(fratio <= s.floor) {
		miss = append(miss, fmt.Sprintf("maintd/floor %.2fx > %.1fx", fratio, s.floor))
	}
	if max429 > s.max429 {
		miss = append(miss, fmt.Sprintf("maintd got up to %d 429s > %d", max429, s.max429))
	}
	if len(miss) == 0 {
		fmt.Fprintf(w, "Every target met.\n\n")
		return nil
	}
	fmt.Fprintf(w, "Missed: %s.\n\n", strings.Join(miss, "; "))
	for i := range miss {
		miss[i] = fmt.Sprintf("%d pods: %s", pods, miss[i])
	}
	return miss
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// command runs a tool with the admin kubeconfig.
func (b *bench) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+b.kubecfg, "HOME="+b.home)
	return cmd
}

// scenario is one fresh copy of the scenario.
type scenario struct {
	ns, pool string
	nodes    []string
	pods     int // on the node to drain
	// surge: maintd's plan moves pods with a surge (spec.surge IfNeeded).
	surge bool
	// risks are the findings maintd's plan accepts (spec.acceptedRisks).
	risks []string
	// warm, when set, runs once maintd is ready and before the measured
	// plan, with the label value maintd selects plans by: what maintd
	// should have watched before it is measured.
	warm func(ctx context.Context, label string)
}

func (sc *scenario) target() string { return sc.nodes[0] }

// setup creates a namespace, four kwok nodes and, once they are Ready and
// untainted, the Deployments and PDBs; it returns when every pod is Ready,
// spread two per node, and every PDB allows one disruption.
func (b *bench) setup(ctx context.Context, deployments int) *scenario {
	t := b.t
	t.Helper()
	ns, err := cp.Namespace(ctx, "mbench")
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns, pool: ns, pods: 2 * deployments}
	for i := 1; i <= nodesPer; i++ {
		sc.nodes = append(sc.nodes, fmt.Sprintf("%s-node-%d", ns, i))
	}
	if err := cp.CreateNodes(ctx, sc.pool, sc.nodes...); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	b.applyEach(wctx, sc, "d", deployments, "bench=maintd", replicas*deployments)
	pods, err := b.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "bench=maintd"})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			per[p.Spec.NodeName+"/"+p.Labels["app"]]++
		}
	}
	for _, node := range sc.nodes {
		for d := range deployments {
			if got := per[fmt.Sprintf("%s/d-%02d", node, d)]; got != replicas/nodesPer {
				t.Fatalf("scenario %s: Deployment d-%02d has %d pods on %s, want %d", ns, d, got, node, replicas/nodesPer)
			}
		}
	}
	pdbs := b.admin.PolicyV1().PodDisruptionBudgets(ns)
	var last string
	err = wait.PollUntilContextTimeout(wctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := pdbs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range list.Items {
			if p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1 && p.Status.CurrentHealthy == replicas {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d PDBs allow 1 with %d healthy", ready, len(list.Items), replicas)
		return ready == deployments, nil
	})
	if err != nil {
		t.Fatalf("scenario %s: %s: %v", ns, last, err)
	}
	return sc
}

// applyEach applies the benchmark's template once per app (NAME
// prefix-00, prefix-01, ...) into sc's namespace and pool, and waits until
// want pods of selector are Ready.
func (b *bench) applyEach(ctx context.Context, sc *scenario, prefix string, apps int, selector string, want int) {
	t := b.t
	t.Helper()
	var manifests [][]byte
	for d := range apps {
		m, err := controlplane.Expand(b.tmpl, map[string]string{"NAMESPACE": sc.ns, "POOL": sc.pool, "NAME": fmt.Sprintf("%s-%02d", prefix, d)})
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m)
	}
	if err := cp.Apply(ctx, bytes.Join(manifests, []byte("\n---\n")), nil); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, sc.ns, selector, want); err != nil {
		t.Fatal(err)
	}
}

// teardown deletes the scenario's namespace, waits until it is gone, and
// deletes its nodes.
func (b *bench) teardown(ctx context.Context, sc *scenario) {
	t := b.t
	t.Helper()
	if err := b.admin.CoreV1().Namespaces().Delete(ctx, sc.ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := b.admin.CoreV1().Namespaces().Get(ctx, sc.ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("namespace %s not deleted: %v", sc.ns, err)
	}
	for _, node := range sc.nodes {
		if err := b.admin.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// rounds is the largest roundsNeeded of the PDBs of the node to drain, as
// k8s-snapshot | k8s-analyze report it.
func (b *bench) rounds(ctx context.Context, sc *scenario) int {
	t := b.t
	t.Helper()
	snap := b.command(ctx, filepath.Join(b.bin, "k8s-snapshot"), "--node", sc.target())
	analyze := b.command(ctx, filepath.Join(b.bin, "k8s-analyze"), "--node", sc.target())
	pipe, err := snap.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	analyze.Stdin = pipe
	var out, serr bytes.Buffer
	analyze.Stdout, analyze.Stderr, snap.Stderr = &out, &serr, &serr
	if err := snap.Start(); err != nil {
		t.Fatal(err)
	}
	aerr := analyze.Run()
	if err := snap.Wait(); err != nil {
		t.Fatalf("k8s-snapshot: %v\n%s", err, serr.String())
	}
	// Exit 2 (medium risk: several rounds) is expected here.
	if ee := (*exec.ExitError)(nil); aerr != nil && !(errors.As(aerr, &ee) && ee.ExitCode() == 2) {
		t.Fatalf("k8s-analyze: %v\n%s", aerr, serr.String())
	}
	var report struct {
		Nodes []struct {
			Name string `json:"name"`
			PDBs []struct {
				Name         string `json:"name"`
				RoundsNeeded *int   `json:"roundsNeeded"`
			} `json:"pdbs"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("k8s-analyze output: %v", err)
	}
	rounds := 0
	for _, n := range report.Nodes {
		for _, p := range n.PDBs {
			if p.RoundsNeeded == nil {
				t.Fatalf("k8s-analyze: PDB %s allows nothing now", p.Name)
			}
			rounds = max(rounds, *p.RoundsNeeded)
		}
	}
	if rounds == 0 {
		t.Fatalf("k8s-analyze: no PDB with roundsNeeded for %s:\n%s", sc.target(), out.String())
	}
	return rounds
}

// latency is the time from the eviction POST of a Ready pod without a PDB
// (on a node that is not drained) to its deletion.
func (b *bench) latency(ctx context.Context, sc *scenario) time.Duration {
	t := b.t
	t.Helper()
	pods := b.admin.CoreV1().Pods(sc.ns)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "latency-probe", Namespace: sc.ns, Labels: map[string]string{"probe": "latency"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": sc.nodes[len(sc.nodes)-1]},
			Tolerations:  []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers:   []corev1.Container{{Name: "c", Image: "registry.example/probe:1"}},
		},
	}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, sc.ns, "probe=latency", 1); err != nil {
		t.Fatal(err)
	}
	b.settle(ctx)
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: sc.ns}}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch of the latency probe ended")
			}
			if ev.Type == watch.Deleted {
				return time.Since(start)
			}
		case <-timeout:
			t.Fatal("latency probe not deleted within 30 s of its eviction")
		}
	}
}

// settle waits for the control plane to be idle, as k8s-evict's bench does.
func (b *bench) settle(ctx context.Context) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	d, err := cp.WaitIdle(ctx, 0.25, time.Second)
	if err != nil {
		b.t.Fatal(err)
	}
	b.settledIn = append(b.settledIn, d)
}

// evictions counts the eviction POSTs (not dry runs) of the admin user in
// ns, and those answered 429, from the audit log.
func (b *bench) evictions(ns string) (all, rejected int) {
	b.t.Helper()
	events, err := cp.Audit()
	if err != nil {
		b.t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Verb == "create" && ev.Resource == "pods" && ev.Sub == "eviction" && !ev.DryRun &&
			ev.Namespace == ns && ev.User == string(controlplane.Admin) && ev.Name != "latency-probe" {
			all++
			if ev.Code == http.StatusTooManyRequests {
				rejected++
			}
		}
	}
	return all, rejected
}

// leftOn is the scenario's pods still on the drained node.
func (b *bench) leftOn(ctx context.Context, sc *scenario) []string {
	b.t.Helper()
	list, err := b.admin.CoreV1().Pods(sc.ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + sc.target()})
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// drain runs kubectl drain on the scenario's node-1.
func (b *bench) drain(ctx context.Context, sc *scenario) run {
	t := b.t
	t.Helper()
	b.settle(ctx)
	dctx, cancel := context.WithTimeout(ctx, maxDrain)
	defer cancel()
	cmd := b.command(dctx, b.kubectl, "drain", sc.target(), "--ignore-daemonsets", "--delete-emptydir-data")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	end := time.Now()
	r := run{wall: end.Sub(start), start: start, end: end}
	logf := filepath.Join(b.logs, "kubectl-"+sc.ns+".log")
	_ = os.WriteFile(logf, out, 0o644)
	r.evictions, r.rejected = b.evictions(sc.ns)
	left := b.leftOn(ctx, sc)
	switch {
	case err != nil:
		t.Errorf("kubectl drain %s: %v (output in %s)", sc.target(), err, logf)
	case len(left) > 0:
		t.Errorf("kubectl drain %s left %v", sc.target(), left)
	default:
		r.ok = true
	}
	return r
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// maintd starts maintd for this run's plan, waits for its caches, times a
// plan for node-1 from creation to Drained, deletes the plan, and stops
// maintd with SIGTERM.
func (b *bench) maintd(ctx context.Context, sc *scenario) run {
	t := b.t
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(b.logs, "maintd-"+sc.ns+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(filepath.Join(b.bin, "maintd"), "--kubeconfig", b.kubecfg,
		"--selector", runLabel+"="+sc.ns, "--max-nodes-in-maintenance", "1", "--workers", "4",
		"--metrics-address", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	stop := func() {
		if exited {
			return
		}
		exited = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("maintd after SIGTERM: %v (log %s)", err, logPath)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("maintd did not exit within 20 s of SIGTERM (log %s)", logPath)
			_ = cmd.Process.Kill()
			<-done
		}
	}
	defer stop()
	// Its caches synced: /readyz.
	if err := waitReadyz(ctx, addr, time.Minute, done); err != nil {
		exited = errors.Is(err, errExited)
		log, _ := os.ReadFile(logPath)
		t.Fatalf("maintd not ready: %v\n%s", err, log)
	}
	if sc.warm != nil {
		sc.warm(ctx, sc.ns)
	}
	b.settle(ctx)

	name := "bench-" + sc.ns
	w, err := b.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	plan := &api.MaintenancePlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenancePlan"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{runLabel: sc.ns}},
		Spec:       api.MaintenancePlanSpec{NodeName: sc.target(), AllowAllWorkloads: true, Reason: "benchmark"},
	}
	if sc.surge {
		plan.Spec.Surge = api.SurgeIfNeeded
	}
	plan.Spec.AcceptedRisks = sc.risks
	start := time.Now()
	if _, err := b.plans.Create(ctx, plan, metav1.CreateOptions{}); err != nil {
		w.Stop()
		t.Fatal(err)
	}
	r := run{start: start}
	var last *api.MaintenancePlan
	timeout := time.After(maxDrain)
	rv := ""
wait:
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The watch was cut: take it up again where it was.
				if w, err = b.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			p, isPlan := ev.Object.(*api.MaintenancePlan)
			if !isPlan {
				continue
			}
			last, rv = p, p.ResourceVersion
			if r.forecast == nil && p.Status.Forecast != nil {
				r.forecast = p.Status.Forecast.DeepCopy()
			}
			switch p.Status.Phase {
			case api.Drained:
				r.end = time.Now()
				r.wall, r.ok = r.end.Sub(start), true
				break wait
			case api.Failed:
				r.other = append(r.other, fmt.Sprintf("%s/%s: %s", p.Status.Phase, p.Status.Reason, p.Status.Message))
				break wait
			}
		case <-timeout:
			r.other = append(r.other, fmt.Sprintf("not Drained within %s", maxDrain))
			break wait
		}
	}
	w.Stop()
	if cur, err := b.plans.Get(ctx, name, metav1.GetOptions{}); err == nil {
		last = cur
	}
	if last != nil {
		last.ManagedFields = nil
		if y, err := yaml.Marshal(last); err == nil {
			_ = os.WriteFile(filepath.Join(b.logs, "plan-"+sc.ns+".yaml"), y, 0o644)
		}
	}
	r.evictions, r.rejected = b.evictions(sc.ns)
	if r.ok {
		if left := b.leftOn(ctx, sc); len(left) > 0 {
			r.ok = false
			r.other = append(r.other, fmt.Sprintf("Drained but left %v", left))
		}
		if last != nil && last.Status.Pods.Evicted != int32(sc.pods) {
			r.other = append(r.other, fmt.Sprintf("status.pods.evicted %d, want %d", last.Status.Pods.Evicted, sc.pods))
		}
	}
	if !r.ok {
		hist := ""
		if last != nil {
			for _, h := range last.Status.History {
				hist += fmt.Sprintf("\n  %s %s/%s %s", h.Time.Format(time.RFC3339), h.Phase, h.Reason, h.Message)
			}
			hist = fmt.Sprintf("phase %s/%s %q, pods %+v, history:%s", last.Status.Phase, last.Status.Reason, last.Status.Message, last.Status.Pods, hist)
		}
		log, _ := os.ReadFile(logPath)
		if len(log) > 8000 {
			log = log[len(log)-8000:]
		}
		t.Errorf("maintd on %s: %s; %d eviction POSTs, %d answered 429; plan %s\nmaintd log (tail, full in %s):\n%s",
			sc.target(), strings.Join(r.other, "; "), r.evictions, r.rejected, hist, logPath, log)
	}
	// Delete the plan while maintd runs: its finalizer lifts the cordon.
	if err := b.plans.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := b.plans.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("plan %s not deleted within a minute (finalizer): %v (log %s)", name, err, logPath)
	}
	stop()
	if err != nil {
		// Let it go, so that it holds no slot in the next runs.
		if p, gerr := b.plans.Get(ctx, name, metav1.GetOptions{}); gerr == nil {
			p.Finalizers = nil
			_, _ = b.plans.Update(ctx, p, metav1.UpdateOptions{})
		}
	}
	return r
}

// errExited: maintd exited before it was ready.
var errExited = errors.New("maintd exited")

// waitReadyz polls maintd's /readyz at addr until it answers 200 (its
// caches synced), for at most limit. done delivers maintd's exit: an exit
// first is errExited, and the exit is put back on done.
func waitReadyz(ctx context.Context, addr string, limit time.Duration, done chan error) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("%w: %v", errExited, err)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
