//go:build scale

package controlplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// TestScale is the control plane at fleet size, not part of `make test`:
//
//	cd plumbing && go test -tags scale -run TestScale -timeout 60m -v ./controlplane/
//
// It builds SENTINEL_SCALE_NODES kwok nodes (default 1,000) with 30 pods
// each the way maintd's campaign benchmark does (namespaces of 10
// Deployments of 30 replicas spread at most one per node, each under a PDB
// with maxUnavailable 1; the same polling of every pod every 2 s until all
// are Ready and every PDB allows one disruption), then holds the cluster
// for SENTINEL_SCALE_HOLD (default 5m) and fails if any node or pod was
// seen not Ready in that time. It logs the build time, the oldest node
// lease (against the grace the node lifecycle controller gives it) and
// each process's CPU.
func TestScale(t *testing.T) {
	nodes := scaleEnvInt(t, "SENTINEL_SCALE_NODES", 1000)
	hold := scaleEnvDuration(t, "SENTINEL_SCALE_HOLD", 5*time.Minute)
	if nodes < 10 || nodes%10 != 0 {
		t.Fatalf("SENTINEL_SCALE_NODES=%d: a multiple of 10, at least 10", nodes)
	}
	const deployments, replicas = 10, 30 // per namespace; 30 pods per node
	namespaces := nodes / deployments
	pods := namespaces * deployments * replicas
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	t.Logf("control plane in %s; admin kubeconfig %s", cp.Dir(), cp.Kubeconfig(Admin))

	w := newScaleWatch(t, ctx, "scale")
	cpu := newCPUMeter(cp.PIDs())
	start := time.Now()
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("scale-%04d", i+1)
	}
	if err := cp.CreateNodes(ctx, "scale", names...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nodes Ready in %s", nodes, time.Since(start).Round(time.Second))

	var m strings.Builder
	for n := range namespaces {
		ns := fmt.Sprintf("scale-%02d", n+1)
		fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
		for d := range deployments {
			fmt.Fprintf(&m, ScaleDeployment, fmt.Sprintf("app-%02d", d+1), ns, replicas)
		}
	}
	if err := cp.Apply(ctx, []byte(m.String()), map[string]string{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d namespaces, %d Deployments and PDBs applied after %s", namespaces, namespaces*deployments, time.Since(start).Round(time.Second))

	admin := cp.Clientset(Admin)
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 40*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: "tier=scale"})
		if err != nil {
			return false, nil
		}
		ready, running := 0, 0
		for i := range list.Items {
			if PodReady(&list.Items[i]) {
				ready++
			} else if list.Items[i].Status.Phase == corev1.PodRunning {
				running++ // Running but not Ready: what a lapsed node lease leaves
			}
		}
		pdbs, err := admin.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		allow := 0
		for _, p := range pdbs.Items {
			if p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1 && strings.HasPrefix(p.Namespace, "scale-") {
				allow++
			}
		}
		now := fmt.Sprintf("%d of %d pods Ready (%d Running, not Ready), %d of %d PDBs allow 1", ready, pods, running, allow, namespaces*deployments)
		if now != last {
			last = now
			t.Logf("%s: %s; oldest lease %s", time.Since(start).Round(time.Second), now, w.oldestLease().Round(time.Second))
		}
		return ready == pods && allow == namespaces*deployments, nil
	})
	if err != nil {
		t.Fatalf("cluster: %s: %v", last, err)
	}
	built := time.Since(start)
	t.Logf("cluster of %d nodes and %d pods Ready in %s; CPU while building: %s", nodes, pods, built.Round(time.Second), cpu.since())
	if n := w.notReadyNodes(); len(n) > 0 {
		t.Errorf("while building, %d nodes went not Ready after they were Ready: %v", len(n), firstOf(n, 10))
	}

	// Hold: every pod and node stays Ready.
	w.watchPods()
	cpu = newCPUMeter(cp.PIDs())
	w.reset()
	end := time.Now().Add(hold)
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(min(30*time.Second, time.Until(end))):
		}
		t.Logf("hold %s: %d nodes and %d pods seen not Ready; oldest lease %s; CPU %s",
			time.Until(end).Round(time.Second), len(w.notReadyNodes()), len(w.notReadyPods()), w.oldestLease().Round(time.Second), cpu.since())
	}
	t.Logf("held %s: CPU %s; oldest lease seen %s (grace %s)", hold, cpu.since(), w.maxLease().Round(time.Second), nodeMonitorGracePeriod)
	if n := w.notReadyNodes(); len(n) > 0 {
		t.Errorf("during the hold, %d nodes went not Ready: %v", len(n), firstOf(n, 10))
	}
	if p := w.notReadyPods(); len(p) > 0 {
		t.Errorf("during the hold, %d pods went not Ready: %v", len(p), firstOf(p, 10))
	}
	// The same count with kubectl, as a person would.
	out, err := exec.CommandContext(ctx, cp.bin("kubectl"), "--kubeconfig", cp.Kubeconfig(Admin), "get", "pods", "-A", "-l", "tier=scale",
		"-o", `jsonpath={range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`).Output()
	if err != nil {
		t.Fatalf("kubectl: %v", err)
	}
	counts := map[string]int{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		counts[line]++
	}
	t.Logf("kubectl get pods: phase/Ready %v", counts)
	if counts["Running/True"] != pods {
		t.Errorf("kubectl: %d of %d pods Running and Ready", counts["Running/True"], pods)
	}
}

// scaleWatch follows the pool's nodes, their leases and (once asked) the
// scale pods through informers, and remembers which went not Ready.
type scaleWatch struct {
	t       *testing.T
	ctx     context.Context
	pool    string
	factory informers.SharedInformerFactory
	leases  cache.Store

	mu       sync.Mutex
	ready    map[string]bool // nodes seen Ready
	badNodes map[string]bool // nodes seen not Ready after they were Ready
	badPods  map[string]bool // pods seen not Ready while watched
	maxAge   time.Duration   // the oldest lease seen since reset
}

func newScaleWatch(t *testing.T, ctx context.Context, pool string) *scaleWatch {
	w := &scaleWatch{t: t, ctx: ctx, pool: pool, ready: map[string]bool{}, badNodes: map[string]bool{}, badPods: map[string]bool{}}
	w.factory = informers.NewSharedInformerFactory(cp.Clientset(Admin), 0)
	nodes := w.factory.Core().V1().Nodes().Informer()
	nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.node,
		UpdateFunc: func(_, n any) { w.node(n) },
	})
	leaseFactory := informers.NewSharedInformerFactoryWithOptions(cp.Clientset(Admin), 0, informers.WithNamespace(corev1.NamespaceNodeLease))
	leaseInformer := leaseFactory.Coordination().V1().Leases().Informer()
	w.leases = leaseInformer.GetStore()
	w.factory.Start(ctx.Done())
	leaseFactory.Start(ctx.Done())
	go func() {
		for ctx.Err() == nil {
			age := w.oldestLease()
			w.mu.Lock()
			w.maxAge = max(w.maxAge, age)
			w.mu.Unlock()
			time.Sleep(5 * time.Second)
		}
	}()
	return w
}

func (w *scaleWatch) node(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok || n.Labels[PoolLabel] != w.pool {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if NodeReady(n) {
		w.ready[n.Name] = true
	} else if w.ready[n.Name] {
		w.badNodes[n.Name] = true
	}
}

// watchPods starts following the scale pods: from now on a pod not Ready
// counts.
func (w *scaleWatch) watchPods() {
	f := informers.NewSharedInformerFactoryWithOptions(cp.Clientset(Admin), 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "tier=scale" }))
	pods := f.Core().V1().Pods().Informer()
	pod := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && !PodReady(p) {
			w.mu.Lock()
			w.badPods[p.Namespace+"/"+p.Name] = true
			w.mu.Unlock()
		}
	}
	pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: pod, UpdateFunc: func(_, p any) { pod(p) }})
	f.Start(w.ctx.Done())
	if !cache.WaitForCacheSync(w.ctx.Done(), pods.HasSynced) {
		w.t.Fatal("pod informer did not sync")
	}
}

// oldestLease is the age of the least recently renewed lease of the pool.
func (w *scaleWatch) oldestLease() time.Duration {
	var oldest time.Duration
	now := time.Now()
	for _, obj := range w.leases.List() {
		l := obj.(*coordinationv1.Lease)
		if !strings.HasPrefix(l.Name, w.pool+"-") || l.Spec.RenewTime == nil {
			continue
		}
		oldest = max(oldest, now.Sub(l.Spec.RenewTime.Time))
	}
	return oldest
}

func (w *scaleWatch) maxLease() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxAge
}

func (w *scaleWatch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.badNodes, w.badPods, w.maxAge = map[string]bool{}, map[string]bool{}, 0
}

func (w *scaleWatch) notReadyNodes() []string { return w.keys(&w.badNodes) }
func (w *scaleWatch) notReadyPods() []string  { return w.keys(&w.badPods) }

func (w *scaleWatch) keys(m *map[string]bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k := range *m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func firstOf(s []string, n int) []string { return s[:min(n, len(s))] }

// cpuMeter is the CPU each process used since it was made.
type cpuMeter struct {
	pids   map[string]int
	before map[string]float64
	at     time.Time
}

func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: pids, before: map[string]float64{}, at: time.Now()}
	for name, pid := range pids {
		m.before[name], _ = ProcessCPU(pid)
	}
	return m
}

// since is "name cores" for each process (CPU seconds per second since the
// meter was made), busiest first, and the test binary's own.
func (m *cpuMeter) since() string {
	wall := time.Since(m.at).Seconds()
	type use struct {
		name  string
		cores float64
	}
	var uses []use
	total := 0.0
	for name, pid := range m.pids {
		now, _ := ProcessCPU(pid)
		uses = append(uses, use{name, (now - m.before[name]) / wall})
		total += (now - m.before[name]) / wall
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].cores > uses[j].cores })
	var parts []string
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("%s %.2f", u.name, u.cores))
	}
	return fmt.Sprintf("%s (total %.2f cores over %s)", strings.Join(parts, ", "), total, time.Since(m.at).Round(time.Second))
}

func scaleEnvInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

func scaleEnvDuration(t *testing.T, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return d
}
