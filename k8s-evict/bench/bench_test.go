//go:build bench

// Package bench measures one k8s-cordon and one k8s-evict invocation, end
// to end as processes, against the equivalent kubectl commands (kubectl
// cordon; kubectl create --raw .../eviction), in the same run against the
// same local control plane. Run it with bench/run.sh (or make bench).
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { os.Exit(controlplane.Main(m, controlplane.Options{}, &cp)) }

// section is the heading of this benchmark's part of docs/benchmarks.md.
const section = "## k8s-cordon, k8s-evict"

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

type tool struct {
	name string
	cmd  func(i int) []string
}

func TestVersusKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(env("BENCH_N", "30"))
	if err != nil || n < 1 {
		t.Fatalf("BENCH_N=%q", os.Getenv("BENCH_N"))
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	bin := env("BIN", filepath.Join(root, "bin"))
	kubectl := filepath.Join(env(controlplane.BinsEnv, filepath.Join(root, ".cache", "kube", controlplane.KubeVersion)), "kubectl")
	for _, b := range []string{filepath.Join(bin, "k8s-cordon"), filepath.Join(bin, "k8s-evict"), kubectl} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%v (run make build kube-bins)", err)
		}
	}

	ns, err := cp.Namespace(ctx, "bench")
	if err != nil {
		t.Fatal(err)
	}
	node := ns + "-cordon"
	if err := cp.CreateNodes(ctx, ns, node, ns+"-pods"); err != nil {
		t.Fatal(err)
	}
	admin := cp.Clientset(controlplane.Admin)
	pods := admin.CoreV1().Pods(ns)
	total := n + 1 // one warm-up each
	for _, who := range []string{"sentinel", "kubectl"} {
		for i := range total {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", who, i), Namespace: ns, Labels: map[string]string{"app": "bench"}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{controlplane.PoolLabel: ns},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{ns + "-pods"}}}}}}}},
					Containers: []corev1.Container{{Name: "c", Image: "registry.example/bench:1"}},
				},
			}
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cp.WaitPodsReady(ctx, ns, "app=bench", 2*total); err != nil {
		t.Fatal(err)
	}
	// Measure a settled cluster, not one still busy with the pods just made.
	idleCtx, cancelIdle := context.WithTimeout(ctx, 2*time.Minute)
	settled, err := cp.WaitIdle(idleCtx, 0.25, time.Second)
	cancelIdle()
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir() // kubectl's discovery cache, warmed by the warm-up round
	kubeconfig := cp.Kubeconfig(controlplane.Admin)
	evictionFile := func(i int) string {
		f := filepath.Join(home, fmt.Sprintf("eviction-%d.json", i))
		body := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"kubectl-%d","namespace":%q}}`, i, ns)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cordon := []tool{
		{"k8s-cordon", func(int) []string {
			return []string{filepath.Join(bin, "k8s-cordon"), "--node", node, "--owner", "bench"}
		}},
		{"kubectl cordon", func(int) []string { return []string{kubectl, "cordon", node} }},
	}
	evict := []tool{
		{"k8s-evict", func(i int) []string {
			return []string{filepath.Join(bin, "k8s-evict"), "--namespace", ns, "--pod", fmt.Sprintf("sentinel-%d", i)}
		}},
		{"kubectl create --raw .../eviction", func(i int) []string {
			return []string{kubectl, "create", "--raw", fmt.Sprintf("/api/v1/namespaces/%s/pods/kubectl-%d/eviction", ns, i), "-f", evictionFile(i)}
		}},
	}
	nodes := admin.CoreV1().Nodes()
	reset := func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			nd, err := nodes.Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			nd.Spec.Unschedulable = false
			for k := range nd.Annotations {
				if strings.HasPrefix(k, "maintenance.sentinel.dev/") {
					delete(nd.Annotations, k)
				}
			}
			_, err = nodes.Update(ctx, nd, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cpu := map[string][]time.Duration{}
	run := func(args []string) (wall, used time.Duration) {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+home)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall = time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}

	// quiet waits for the control plane to be idle after what it just did.
	quiet := func(after string) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := cp.WaitIdle(ctx, 0.25, 100*time.Millisecond); err != nil {
			t.Fatalf("after %s: %v", after, err)
		}
	}
	gone := func(name string) {
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Fatalf("evicted pod %s: %v", name, err)
		}
		quiet("evicting " + name)
	}
	times := map[string][]time.Duration{}
	for i := range total {
		// Alternate who goes first, so that drift and caches favour no one.
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, j := range order {
			reset()
			quiet(fmt.Sprintf("uncordoning %s", node))
			d, c := run(cordon[j].cmd(i))
			nd, err := nodes.Get(ctx, node, metav1.GetOptions{})
			if err != nil || !nd.Spec.Unschedulable {
				t.Fatalf("%s did not cordon %s", cordon[j].name, node)
			}
			if i > 0 {
				times[cordon[j].name] = append(times[cordon[j].name], d)
				cpu[cordon[j].name] = append(cpu[cordon[j].name], c)
			}
		}
		for _, j := range order {
			d, c := run(evict[j].cmd(i))
			// The next invocation starts once this eviction is over (the
			// pod deleted, the control plane quiet again): otherwise the
			// faster tool's request lands in the previous one's aftermath.
			gone(fmt.Sprintf("%s-%d", []string{"sentinel", "kubectl"}[j], i))
			if i > 0 {
				times[evict[j].name] = append(times[evict[j].name], d)
				cpu[evict[j].name] = append(cpu[evict[j].name], c)
			}
		}
	}
	left, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=bench"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left.Items {
		if p.DeletionTimestamp == nil {
			t.Errorf("pod %s was not evicted", p.Name)
		}
	}

	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", section)
	fmt.Fprintf(&b, "One invocation, end to end as a process (start, kubeconfig, TLS, the API calls, exit), against the\n")
	fmt.Fprintf(&b, "same local control plane in the same run, %d runs each after one warm-up, interleaved (the order\n", n)
	fmt.Fprintf(&b, "alternates every round; an eviction starts once the pod the previous one evicted is gone and the control plane is quiet). kubectl\n")
	fmt.Fprintf(&b, "is v1.37.2 with a warm discovery cache. Target: wall ratio <= 0.5.\n")
	fmt.Fprintf(&b, "CPU is the process's user+system time (less sensitive to other load on the machine). Load average\n")
	fmt.Fprintf(&b, "when measured: %s; the control plane had settled (under 25%% of a CPU for 3 s, %s after the pods were Ready).\n\n", loadavg(), settled.Round(time.Second))
	fmt.Fprintf(&b, "| operation | sentinel wall (median) | kubectl wall (median) | wall ratio | sentinel CPU | kubectl CPU | CPU ratio |\n|---|---|---|---|---|---|---|\n")
	var failed []string
	for _, pair := range [][2]tool{{cordon[0], cordon[1]}, {evict[0], evict[1]}} {
		s, k := median(times[pair[0].name]), median(times[pair[1].name])
		ratio := float64(s) / float64(k)
		sc, kc := median(cpu[pair[0].name]), median(cpu[pair[1].name])
		fmt.Fprintf(&b, "| `%s` vs `%s` | %s | %s | **%.2fx** | %s | %s | %.2fx |\n", pair[0].name, pair[1].name, ms(s), ms(k), ratio, ms(sc), ms(kc), float64(sc)/float64(kc))
		if ratio > 0.5 {
			failed = append(failed, fmt.Sprintf("%s: %.2fx", pair[0].name, ratio))
		}
	}
	fmt.Fprintf(&b, "\nk8s-cordon does GET, PATCH (a merge patch with the read resourceVersion), GET (read back); kubectl cordon does GET\n")
	fmt.Fprintf(&b, "and PATCH. k8s-evict and kubectl each send one POST pods/NAME/eviction.\n")
	fmt.Fprintf(&b, "Start-up dominates one invocation: both tools use one-group REST clients (core/v1; policy/v1 for\n")
	fmt.Fprintf(&b, "k8s-evict; its POST with client-go's retries off) instead of the typed clientset, and `make build` links\n")
	fmt.Fprintf(&b, "them statically (CGO_ENABLED=0) without urfave/cli's man/markdown generators (tag urfave_cli_no_docs,\n")
	fmt.Fprintf(&b, "whose markdown library had the costliest package init). The time left in common with kubectl (wall\n")
	fmt.Fprintf(&b, "minus CPU: the API server's work, TLS, waiting for a CPU) grows with the machine's load, so the\n")
	fmt.Fprintf(&b, "ratio is higher on a busy machine than on a quiet one.\n")
	fmt.Fprintf(&b, "Measured %s on %s/%s, %d CPUs. Reproduce: `make bench` or `bash k8s-evict/bench/run.sh`.\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	t.Log("\n" + b.String())
	if out := os.Getenv("BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(failed) > 0 {
		t.Errorf("over the 0.5x target: %s", strings.Join(failed, ", "))
	}
}
