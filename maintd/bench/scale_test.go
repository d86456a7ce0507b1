//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// The cluster of the scale benchmark: 200 kwok nodes; 20 namespaces of 10
// Deployments of 30 replicas (6,000 pods), each spread at most one per node
// and under a PDB with maxUnavailable 1, so a node's pods each have a PDB
// of their own.
const (
	scaleNodes       = 200
	scaleNamespaces  = 20
	scaleDeployments = 10 // per namespace
	scaleReplicas    = 30
	scalePlans       = 20
	scaleSlots       = 5
	// maintd's identity: the shipped ServiceAccount.
	maintdUser = "system:serviceaccount:maintd-system:maintd"
)

// scaleSection is this benchmark's part of docs/benchmarks.md.
const scaleSection = "## maintd at scale"

// TestScale: maintd, with the shipped ServiceAccount's token, on a cluster
// of 200 nodes and 6,000 pods: its cost while idle, the drain of the
// busiest nodes against kubectl drain, then 20 plans through 5 slots.
func TestScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	b := newBench(t, ctx, "maintd")
	pairs, err := strconv.Atoi(env("BENCH_N", "3"))
	if err != nil || pairs < 1 {
		t.Fatalf("BENCH_N=%q", os.Getenv("BENCH_N"))
	}
	idle, err := time.ParseDuration(env("BENCH_IDLE", "60s"))
	if err != nil {
		t.Fatalf("BENCH_IDLE: %v", err)
	}
	kc, err := cp.TokenKubeconfig(ctx, "maintd-system", "maintd")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	scaleCluster(t, ctx, b, scaleNodes, scaleNamespaces)
	t.Logf("cluster of %d nodes and %d pods ready in %s", scaleNodes, scaleNamespaces*scaleDeployments*scaleReplicas, time.Since(start).Round(time.Second))

	m := startScaleMaintd(t, ctx, b, kc, scaleSlots)
	defer m.stop(t)
	syncedRSS := m.rss("VmHWM")

	// Idle: no plan; maintd's CPU and writes over a window.
	m.during("idle")
	b.settle(ctx)
	auditFrom := b.auditLen()
	cpu0 := m.cpu()
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	idleCPU := (m.cpu() - cpu0) / idle.Seconds()
	idleRSS, idleAnon, idleFile := m.rss("VmRSS"), m.rss("RssAnon"), m.rss("RssFile")
	idleWrites := b.writesBy(maintdUser, auditFrom)

	// The busiest nodes, drained in pairs: one by maintd, one by kubectl,
	// the order alternating.
	busiest := b.busiest(ctx, 2*pairs+scalePlans)
	m.during("busiest nodes")
	var mWalls, kWalls []time.Duration
	var mPods, kPods []int
	for i := range pairs {
		tools := []string{"maintd", "kubectl"}
		if i%2 == 1 {
			slices.Reverse(tools)
		}
		for j, tool := range tools {
			n := busiest[2*i+j]
			b.settle(ctx)
			if tool == "maintd" {
				mWalls = append(mWalls, b.planDrain(ctx, n.name))
				mPods = append(mPods, n.pods)
			} else {
				kWalls = append(kWalls, b.kubectlDrain(ctx, n.name))
				kPods = append(kPods, n.pods)
			}
		}
	}

	// 20 plans at once through 5 slots; each plan is released once Drained.
	m.during("20 plans")
	b.settle(ctx)
	auditFrom = b.auditLen()
	cpu0 = m.cpu()
	var targets []string
	for _, n := range busiest[2*pairs:] {
		targets = append(targets, n.name)
	}
	profile := m.cpuProfile(ctx, b, "maintd-20-plans.cpu.pprof", 30*time.Second)
	start = time.Now()
	b.manyPlans(ctx, targets)
	total := time.Since(start)
	profile()
	manyCPU := (m.cpu() - cpu0) / total.Seconds()
	codes := b.evictionCodes(maintdUser, auditFrom)
	// The kernel's high-water mark of maintd's own memory, read before it
	// exits: the maxrss that wait4 reports for a child started by os/exec
	// also counts the parent's memory (the child runs in it until exec).
	peak := m.rss("VmHWM")
	m.stop(t)

	ratio := median(mWalls).Seconds() / median(kWalls).Seconds()
	var miss []string
	check := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	check(idleCPU < 0.02, fmt.Sprintf("idle CPU %.2f%% of a core (target < 2%%)", 100*idleCPU))
	check(idleWrites == 0, fmt.Sprintf("%d writes while idle (target 0)", idleWrites))
	check(ratio <= 0.3, fmt.Sprintf("busiest-node drain %.2fx kubectl (target <= 0.3x)", ratio))
	check(peak <= 100, fmt.Sprintf("peak RSS %.0f MiB (target <= 100)", peak))
	check(manyCPU <= 1, fmt.Sprintf("mean CPU %.2f cores during the 20 plans (target <= 1)", manyCPU))

	var doc strings.Builder
	fmt.Fprintf(&doc, "%s\n\n", scaleSection)
	fmt.Fprintf(&doc, "maintd on a local control plane of %d kwok nodes and %d pods (%d namespaces x %d Deployments x %d\n",
		scaleNodes, scaleNamespaces*scaleDeployments*scaleReplicas, scaleNamespaces, scaleDeployments, scaleReplicas)
	fmt.Fprintf(&doc, "replicas, at most one replica per node (topology spread, maxSkew 1), a PDB with maxUnavailable 1 each),\n")
	fmt.Fprintf(&doc, "run as a process with a TokenRequest token of the shipped ServiceAccount (deploy/), `--max-nodes-in-maintenance %d`.\n\n", scaleSlots)
	fmt.Fprintf(&doc, "| measure | maintd | target |\n|---|---|---|\n")
	fmt.Fprintf(&doc, "| idle, no plan, %s: CPU | %.2f%% of a core | < 2%% |\n", idle, 100*idleCPU)
	fmt.Fprintf(&doc, "| idle, no plan, %s: writes to the API | %d | 0 |\n", idle, idleWrites)
	fmt.Fprintf(&doc, "| busiest node (%v pods), median of %d drains | %s | <= 0.3x kubectl drain's |\n", mPods, pairs, median(mWalls).Round(time.Millisecond))
	fmt.Fprintf(&doc, "| kubectl drain, busiest node (%v pods), median of %d | %s | |\n", kPods, pairs, median(kWalls).Round(time.Millisecond))
	fmt.Fprintf(&doc, "| maintd / kubectl | **%.2fx** | <= 0.3x |\n", ratio)
	fmt.Fprintf(&doc, "| %d plans, %d slots: all Completed in | %s | |\n", scalePlans, scaleSlots, total.Round(100*time.Millisecond))
	fmt.Fprintf(&doc, "| %d plans: eviction requests by code | %s | |\n", scalePlans, codes)
	fmt.Fprintf(&doc, "| %d plans: mean CPU | %.2f cores | <= 1 |\n", scalePlans, manyCPU)
	fmt.Fprintf(&doc, "| peak RSS from start to SIGTERM (VmHWM) | %.0f MiB | <= 100 MiB |\n", peak)
	fmt.Fprintf(&doc, "| (peak RSS once the caches synced; RSS when idle: anonymous + file) | (%.0f MiB; %.0f MiB = %.0f + %.0f) | |\n", syncedRSS, idleRSS, idleAnon, idleFile)
	fmt.Fprintf(&doc, "| (highest RSS sampled every 100 ms, MiB, by phase) | (%s) | |\n\n", m.phases())
	fmt.Fprintf(&doc, "- Idle: after the caches synced and the control plane settled, maintd's CPU time (/proc) over the window, and\n")
	fmt.Fprintf(&doc, "  its writes (create, update, patch, delete) in the API server's audit log.\n")
	fmt.Fprintf(&doc, "- Busiest nodes: the nodes with the most pods, in pairs, one drained by maintd (a plan with\n")
	fmt.Fprintf(&doc, "  `allowAllWorkloads`, default maxConcurrentEvictions 50, timed from its creation to the watch event of\n")
	fmt.Fprintf(&doc, "  phase Drained) and one by `kubectl drain --ignore-daemonsets --delete-emptydir-data` (its wall time),\n")
	fmt.Fprintf(&doc, "  the order alternating, each once the control plane settled; each node uncordoned afterwards.\n")
	fmt.Fprintf(&doc, "- %d plans: created at once for the next %d busiest nodes; each released (`spec.release`) when Drained;\n", scalePlans, scalePlans)
	fmt.Fprintf(&doc, "  timed until every plan is Completed. Peak RSS is the kernel's maxrss of the process.\n\n")
	fmt.Fprintf(&doc, "Memory: of the idle RSS, %.0f MiB are the binary's own pages (file-backed) and %.0f MiB the Go heap and\n", idleFile, idleAnon)
	fmt.Fprintf(&doc, "runtime, which the collector lets grow to about twice the live heap between cycles. What keeps both down\n")
	fmt.Fprintf(&doc, "(docs/maintd.md, \"Memory\"): the caches keep a pod in a compact form (a quarter of the object the API\n")
	fmt.Fprintf(&doc, "serves) whose placement (node selector, affinity, tolerations, spread) the pods of one template share,\n")
	fmt.Fprintf(&doc, "owners without their pod templates and nodes without their status; a reconcile reads only the\n")
	fmt.Fprintf(&doc, "owners and claims of the pods it analyses; the binary links the typed clients of six API groups, not\n")
	fmt.Fprintf(&doc, "client-go's clientset and informer factory. Before these, the same benchmark measured 121 MiB peak and\n")
	fmt.Fprintf(&doc, "90 MiB idle (54 + 36).\n\n")
	b.publish(&doc, miss, "Reproduce: `make bench`, or `BENCH_N=%d bash maintd/bench/run.sh scale`.\n", pairs)
}

// scaleCluster creates nodes kwok nodes and namespaces of scaleDeployments
// Deployments of scaleReplicas pods with their PDBs, and waits until every
// pod is Ready and every PDB allows a disruption.
func scaleCluster(t *testing.T, ctx context.Context, b *bench, nodes, namespaces int) {
	t.Helper()
	names := make([]string, nodes)
	for i := range names {
		names[i] = scaleNode(i + 1)
	}
	if err := cp.CreateNodes(ctx, "scale", names...); err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	for n := range namespaces {
		ns := fmt.Sprintf("scale-%02d", n+1)
		fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
		for d := range scaleDeployments {
			fmt.Fprintf(&m, controlplane.ScaleDeployment, fmt.Sprintf("app-%02d", d+1), ns, scaleReplicas)
		}
	}
	if err := cp.Apply(ctx, []byte(m.String()), map[string]string{}); err != nil {
		t.Fatal(err)
	}
	want := namespaces * scaleDeployments
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 60*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := b.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: "tier=scale"})
		if err != nil {
			return false, nil
		}
		ready := 0
		for i := range pods.Items {
			if controlplane.PodReady(&pods.Items[i]) {
				ready++
			}
		}
		pdbs, err := b.admin.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		allow := 0
		for _, p := range pdbs.Items {
			if p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1 && strings.HasPrefix(p.Namespace, "scale-") {
				allow++
			}
		}
		last = fmt.Sprintf("%d of %d pods Ready, %d of %d PDBs allow 1", ready, want*scaleReplicas, allow, want)
		return ready == want*scaleReplicas && allow == want, nil
	})
	if err != nil {
		t.Fatalf("cluster: %s: %v", last, err)
	}
}

// scaleNode is the name of the i-th node of the scale cluster, from 1.
func scaleNode(i int) string { return fmt.Sprintf("scale-%04d", i) }

// scaleMaintd is the maintd process of the scale benchmark.
type scaleMaintd struct {
	cmd     *exec.Cmd
	done    chan error
	stopped bool
	log     string
	addr    string // where it serves /metrics and Go's profiles

	mu    sync.Mutex
	phase string             // what the benchmark does now
	peaks map[string]float64 // the highest RSS sampled in each phase, MiB
	order []string
}

// during names what the benchmark does from now on, for the RSS samples.
func (m *scaleMaintd) during(phase string) {
	m.mu.Lock()
	m.phase = phase
	m.order = append(m.order, phase)
	m.mu.Unlock()
}

// sample records the process's RSS every 100 ms, per phase, until it exits.
func (m *scaleMaintd) sample() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		rss := m.rss("VmRSS")
		if rss == 0 {
			return
		}
		m.mu.Lock()
		m.peaks[m.phase] = max(m.peaks[m.phase], rss)
		m.mu.Unlock()
	}
}

// phases is "phase: peak MiB" for each phase, in order.
func (m *scaleMaintd) phases() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	for _, p := range m.order {
		parts = append(parts, fmt.Sprintf("%s %.0f", p, m.peaks[p]))
	}
	return strings.Join(parts, ", ")
}

func startScaleMaintd(t *testing.T, ctx context.Context, b *bench, kubeconfig string, slots int) *scaleMaintd {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	m := &scaleMaintd{done: make(chan error, 1), log: filepath.Join(b.logs, "maintd-scale.log"), peaks: map[string]float64{}}
	m.during("start and sync")
	logf, err := os.Create(m.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	m.addr = addr
	m.cmd = exec.Command(filepath.Join(b.bin, "maintd"), "--kubeconfig", kubeconfig, "--selector", runLabel+"=scale",
		"--max-nodes-in-maintenance", strconv.Itoa(slots), "--metrics-address", addr, "--profiling")
	m.cmd.Args = append(m.cmd.Args, strings.Fields(os.Getenv("BENCH_MAINTD_ARGS"))...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.done <- m.cmd.Wait() }()
	go m.sample()
	if err := waitReadyz(ctx, addr, 2*time.Minute, m.done); err != nil {
		t.Fatalf("maintd not ready: %v (log %s)", err, m.log)
	}
	return m
}

func (m *scaleMaintd) cpu() float64 {
	s, _ := controlplane.ProcessCPU(m.cmd.Process.Pid)
	return s
}

// rss is a memory figure of /proc/PID/status (VmRSS, VmHWM) in MiB.
func (m *scaleMaintd) rss(field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == field+":" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// stop sends SIGTERM once and wants exit 0.
func (m *scaleMaintd) stop(t *testing.T) {
	t.Helper()
	if m.stopped {
		return
	}
	m.stopped = true
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.done:
		if err != nil {
			t.Errorf("maintd after SIGTERM: %v (log %s)", err, m.log)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("maintd did not exit within 30 s of SIGTERM (log %s)", m.log)
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

func (b *bench) auditLen() int {
	b.t.Helper()
	events, err := cp.Audit()
	if err != nil {
		b.t.Fatal(err)
	}
	return len(events)
}

// writesBy counts user's writes in the audit log from event from on.
func (b *bench) writesBy(user string, from int) int {
	n, _ := b.writesByResource(user, from)
	return n
}

// evictionCodes are user's eviction POSTs from audit event from on, by
// answer, e.g. "201: 600".
func (b *bench) evictionCodes(user string, from int) string {
	b.t.Helper()
	events, err := cp.Audit()
	if err != nil {
		b.t.Fatal(err)
	}
	codes := map[int]int{}
	for _, ev := range events[from:] {
		if ev.User == user && ev.Verb == "create" && ev.Sub == "eviction" && !ev.DryRun {
			codes[ev.Code]++
		}
	}
	var keys []int
	for c := range codes {
		keys = append(keys, c)
	}
	sort.Ints(keys)
	var parts []string
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%d: %d", c, codes[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type nodePods struct {
	name string
	pods int
}

// busiest are the n nodes with the most pods, each pod under a PDB of its
// own on that node.
func (b *bench) busiest(ctx context.Context, n int) []nodePods {
	t := b.t
	t.Helper()
	pods, err := b.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "tier=scale"})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	apps := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		count[p.Spec.NodeName]++
		key := p.Spec.NodeName + "/" + p.Namespace + "/" + p.Labels["app"]
		if apps[key] {
			t.Fatalf("two pods of %s/%s on %s: the spread failed", p.Namespace, p.Labels["app"], p.Spec.NodeName)
		}
		apps[key] = true
	}
	var out []nodePods
	for name, c := range count {
		out = append(out, nodePods{name, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].pods != out[j].pods {
			return out[i].pods > out[j].pods
		}
		return out[i].name < out[j].name
	})
	if len(out) < n {
		t.Fatalf("%d nodes with pods, want %d", len(out), n)
	}
	return out[:n]
}

// planDrain times a plan for node from creation to Drained, then releases
// it and waits until it is Completed (the node uncordoned).
func (b *bench) planDrain(ctx context.Context, node string) time.Duration {
	t := b.t
	t.Helper()
	name := "scale-" + node
	w, err := b.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	plan := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{runLabel: "scale"}},
		Spec: api.MaintenancePlanSpec{NodeName: node, AllowAllWorkloads: true, Reason: "benchmark"}}
	start := time.Now()
	if _, err := b.plans.Create(ctx, plan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(maxDrain)
	var wall time.Duration
	for wall == 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("plan %s: the watch ended", name)
			}
			if p, isPlan := ev.Object.(*api.MaintenancePlan); isPlan {
				switch p.Status.Phase {
				case api.Drained:
					wall = time.Since(start)
				case api.Blocked, api.Failed:
					t.Fatalf("plan %s: %s/%s: %s", name, p.Status.Phase, p.Status.Reason, p.Status.Message)
				}
			}
		case <-timeout:
			t.Fatalf("plan %s not Drained within %s", name, maxDrain)
		}
	}
	b.release(ctx, name)
	b.waitCompleted(ctx, name)
	return wall
}

// release sets spec.release on plan name.
func (b *bench) release(ctx context.Context, name string) {
	t := b.t
	t.Helper()
	for range 10 {
		p, err := b.plans.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.Release = true
		if _, err = b.plans.Update(ctx, p, metav1.UpdateOptions{}); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("release %s: kept conflicting", name)
}

func (b *bench) waitCompleted(ctx context.Context, names ...string) {
	t := b.t
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			p, err := b.plans.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if p.Status.Phase != api.Completed {
				last = fmt.Sprintf("%s %s/%s", name, p.Status.Phase, p.Status.Reason)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("plans not Completed: %s: %v", last, err)
	}
}

// kubectlDrain times kubectl drain of node, then uncordons it.
func (b *bench) kubectlDrain(ctx context.Context, node string) time.Duration {
	t := b.t
	t.Helper()
	dctx, cancel := context.WithTimeout(ctx, maxDrain)
	defer cancel()
	start := time.Now()
	out, err := b.command(dctx, b.kubectl, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data").CombinedOutput()
	wall := time.Since(start)
	_ = os.WriteFile(filepath.Join(b.logs, "kubectl-drain-"+node+".log"), out, 0o644)
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	if out, err := b.command(ctx, b.kubectl, "uncordon", node).CombinedOutput(); err != nil {
		t.Fatalf("kubectl uncordon %s: %v\n%s", node, err, out)
	}
	return wall
}

// manyPlans creates a plan for each node at once, releases each when it is
// Drained, and waits until all are Completed.
func (b *bench) manyPlans(ctx context.Context, nodes []string) {
	t := b.t
	t.Helper()
	var names []string
	for _, n := range nodes {
		name := "scale-many-" + n
		names = append(names, name)
		plan := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{runLabel: "scale"}},
			Spec: api.MaintenancePlanSpec{NodeName: n, AllowAllWorkloads: true, Reason: "benchmark"}}
		if _, err := b.plans.Create(ctx, plan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	released := map[string]bool{}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := b.plans.List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=scale"})
		if err != nil {
			return false, nil
		}
		done := 0
		for _, p := range list.Items {
			if !slices.Contains(names, p.Name) {
				continue
			}
			switch p.Status.Phase {
			case api.Completed:
				done++
			case api.Drained:
				if !released[p.Name] {
					released[p.Name] = true
					b.release(ctx, p.Name)
				}
			case api.Blocked, api.Failed:
				return false, fmt.Errorf("plan %s: %s/%s: %s", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
			}
		}
		return done == len(names), nil
	})
	if err != nil {
		t.Fatalf("%d plans: %v", len(names), err)
	}
}
