//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// surgeSection is the surge benchmark's part of docs/benchmarks.md.
const surgeSection = "## maintd surge"

// surgeApps is the number of single-replica apps on node-1.
const surgeApps = 10

// TestSurgeVersusKubectl: ten single-replica apps whose PDB (minAvailable
// 1) never allows their eviction, all on node-1. maintd with spec.surge
// IfNeeded drains the node with no moment without a Ready pod per app;
// kubectl drain --timeout=60s, the control, fails with the pods left.
func TestSurgeVersusKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(env("BENCH_N", "3"))
	if err != nil || n < 1 {
		t.Fatalf("BENCH_N=%q", os.Getenv("BENCH_N"))
	}
	b := newBench(t, ctx, "maintd")
	if b.tmpl, err = os.ReadFile(filepath.Join(repoRoot(), "testdata", "scenarios", "maintd-surge-bench.yaml")); err != nil {
		t.Fatal(err)
	}
	var m, k []run
	var latencies []time.Duration
	created, moved, lowest := 0, 0, surgeApps
	for i := range n {
		tools := []string{"maintd", "kubectl"}
		if i%2 == 1 {
			slices.Reverse(tools)
		}
		for _, tool := range tools {
			sc := b.surgeSetup(ctx)
			latencies = append(latencies, b.latency(ctx, sc))
			w := b.watchApps(ctx, sc)
			var r run
			if tool == "maintd" {
				sc.surge = true
				r = b.maintd(ctx, sc)
			} else {
				r = b.drainTimeout(ctx, sc, time.Minute)
			}
			c, low := w()
			if tool == "maintd" {
				created += c
				moved += sc.pods
				lowest = min(lowest, low)
				if low < 1 {
					t.Errorf("maintd: an app had no Ready pod during the drain")
				}
			}
			t.Logf("run %d, %s: ok=%v wall=%s evictions=%d 429=%d created=%d fewest-ready=%d %s", i+1, tool, r.ok, r.wall.Round(time.Millisecond), r.evictions, r.rejected, c, low, strings.Join(r.other, " "))
			if tool == "maintd" {
				m = append(m, r)
			} else {
				k = append(k, r)
			}
			b.teardown(ctx, sc)
		}
	}
	latency := median(latencies)
	floor := readyDelay + latency
	var mw, kw []time.Duration
	var missed []string
	m429, kleft := 0, 0
	for _, r := range m {
		mw = append(mw, r.wall)
		m429 += r.rejected
		if !r.ok {
			missed = append(missed, "a maintd drain did not complete: "+strings.Join(r.other, " "))
		}
	}
	for _, r := range k {
		kw = append(kw, r.wall)
		if r.ok {
			missed = append(missed, "kubectl drain completed: the control must fail")
		}
		kleft += len(r.other)
	}
	ratio := median(mw).Seconds() / floor.Seconds()
	if ratio > 1.5 {
		missed = append(missed, fmt.Sprintf("maintd/floor %.2fx > 1.5x", ratio))
	}
	if per := float64(created) / float64(moved); per > 2 {
		missed = append(missed, fmt.Sprintf("%.2f pods created per pod moved > 2", per))
	}
	if m429 > 0 {
		missed = append(missed, fmt.Sprintf("%d evictions answered 429", m429))
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	var doc strings.Builder
	fmt.Fprintf(&doc, "%s\n\n", surgeSection)
	fmt.Fprintf(&doc, "%d single-replica Deployments, each with a PDB `minAvailable: 1` (it never allows an eviction), all\n", surgeApps)
	fmt.Fprintf(&doc, "on node-1 of three fresh kwok nodes (testdata/scenarios/maintd-surge-bench.yaml), Ready %s after\n", readyDelay)
	fmt.Fprintf(&doc, "scheduling. maintd drains node-1 with `spec.surge: IfNeeded` (timed from the plan's creation to\n")
	fmt.Fprintf(&doc, "`Drained`); the control is `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data\n")
	fmt.Fprintf(&doc, "--timeout=60s` (v1.37.2) on a fresh copy. %d drains per tool, interleaved, medians reported. A watch\n", n)
	fmt.Fprintf(&doc, "started before each drain counts the pods created and the fewest Ready pods any app had.\n\n")
	fmt.Fprintf(&doc, "| | maintd (surge) | kubectl drain --timeout=60s |\n|---|---|---|\n")
	fmt.Fprintf(&doc, "| wall time (median) | %s | %s |\n", sec(median(mw)), sec(median(kw)))
	fmt.Fprintf(&doc, "| outcome | Drained in %d of %d | failed in %d of %d, %d pods left in all |\n", countOK(m), n, n-countOK(k), n, kleft)
	fmt.Fprintf(&doc, "| floor: one ready delay (%s) + one eviction's latency (%s) | %s | |\n", readyDelay, sec(latency), sec(floor))
	fmt.Fprintf(&doc, "| maintd / floor | **%.2fx** (target <= 1.5x) | |\n", ratio)
	fmt.Fprintf(&doc, "| pods created per pod moved | %.2f (%d for %d; target <= 2) | |\n", float64(created)/float64(max(moved, 1)), created, moved)
	fmt.Fprintf(&doc, "| fewest Ready pods of an app, at any event | %d | |\n", lowest)
	fmt.Fprintf(&doc, "| eviction POSTs answered 429 (all runs) | %d | %s |\n\n", m429, count429(k))
	fmt.Fprintf(&doc, "Each moved pod costs two creations: the surge's pod, which stays, and the ReplicaSet's replacement\n")
	fmt.Fprintf(&doc, "of the evicted pod, which the restore deletes before it is Ready (docs/design.md, section 9).\n\n")
	b.publish(&doc, missed, "Reproduce: `BENCH_N=%d bash maintd/bench/run.sh surge`.\n", n)
}

func countOK(rs []run) int {
	n := 0
	for _, r := range rs {
		if r.ok {
			n++
		}
	}
	return n
}

func count429(rs []run) string {
	n, all := 0, 0
	for _, r := range rs {
		n += r.rejected
		all += r.evictions
	}
	return fmt.Sprintf("%d of %d", n, all)
}

// surgeSetup makes a namespace, three kwok nodes and the apps, every pod on
// node-1 (the other nodes cordoned meanwhile), Ready, each budget computed.
func (b *bench) surgeSetup(ctx context.Context) *scenario {
	t := b.t
	t.Helper()
	ns, err := cp.Namespace(ctx, "sbench")
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns, pool: ns, pods: surgeApps}
	for i := 1; i <= 3; i++ {
		sc.nodes = append(sc.nodes, fmt.Sprintf("%s-node-%d", ns, i))
	}
	if err := cp.CreateNodes(ctx, sc.pool, sc.nodes...); err != nil {
		t.Fatal(err)
	}
	cordon := func(v bool) {
		for _, node := range sc.nodes[1:] {
			if _, err := b.admin.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, v), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cordon(true)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	b.applyEach(wctx, sc, "s", surgeApps, "bench=surge", surgeApps)
	cordon(false)
	err = wait.PollUntilContextTimeout(wctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := b.admin.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range list.Items {
			if p.Status.ObservedGeneration == p.Generation && p.Status.ExpectedPods == 1 && p.Status.CurrentHealthy == 1 {
				ready++
			}
		}
		return ready == surgeApps, nil
	})
	if err != nil {
		t.Fatalf("scenario %s: budgets not computed: %v", ns, err)
	}
	return sc
}

// watchApps watches the scenario's pods until the returned function is
// called, which tells how many pods were created and the fewest Ready
// pods (not being deleted) any app had at any event.
func (b *bench) watchApps(ctx context.Context, sc *scenario) func() (created, fewest int) {
	t := b.t
	t.Helper()
	list, err := b.admin.CoreV1().Pods(sc.ns).List(ctx, metav1.ListOptions{LabelSelector: "bench=surge"})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]map[string]bool{}
	note := func(p *corev1.Pod, gone bool) {
		app := p.Labels["app"]
		if ready[app] == nil {
			ready[app] = map[string]bool{}
		}
		if !gone && controlplane.PodReady(p) && p.DeletionTimestamp == nil {
			ready[app][p.Name] = true
		} else {
			delete(ready[app], p.Name)
		}
	}
	for i := range list.Items {
		note(&list.Items[i], false)
	}
	w, err := b.admin.CoreV1().Pods(sc.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "bench=surge", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ created, fewest int }
	out := make(chan result, 1)
	fewest := surgeApps
	for _, pods := range ready {
		fewest = min(fewest, len(pods))
	}
	go func() {
		r := result{fewest: fewest}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Added {
				r.created++
			}
			note(p, ev.Type == watch.Deleted)
			for _, pods := range ready {
				r.fewest = min(r.fewest, len(pods))
			}
		}
		out <- r
	}()
	return func() (int, int) {
		w.Stop()
		r := <-out
		return r.created, r.fewest
	}
}

// drainTimeout runs kubectl drain --timeout on the scenario's node-1; ok
// is whether it succeeded, other lists the pods it left.
func (b *bench) drainTimeout(ctx context.Context, sc *scenario, timeout time.Duration) run {
	b.settle(ctx)
	cmd := b.command(ctx, b.kubectl, "drain", sc.target(), "--ignore-daemonsets", "--delete-emptydir-data", "--timeout="+timeout.String())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := run{wall: time.Since(start), ok: err == nil}
	_ = os.WriteFile(filepath.Join(b.logs, "kubectl-"+sc.ns+".log"), out, 0o644)
	r.evictions, r.rejected = b.evictions(sc.ns)
	r.other = b.leftOn(ctx, sc)
	return r
}
