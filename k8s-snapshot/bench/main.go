//go:build ignore

// Bench compares k8s-snapshot with kubectl on a local control plane of 200
// kwok nodes and about 6,000 pods (200 Deployments x 30 replicas in 20
// namespaces, a PDB each, some PVCs), in the same run: wall time and peak
// RSS of every process, medians of -runs runs, in alternating order.
//
//	go run bench/main.go -snapshot K8S_SNAPSHOT -kubectl KUBECTL [-runs 5] [-write ../docs/benchmarks.md]
//
// bench/run.sh builds the tool and runs it from the repository root.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/template"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

const (
	nodes       = 200
	namespaces  = 20
	deployments = 10 // per namespace
	replicas    = 30
	claims      = 2 // bound PVCs per namespace
)

func main() {
	snapshot := flag.String("snapshot", "bin/k8s-snapshot", "k8s-snapshot binary")
	kubectl := flag.String("kubectl", ".cache/kube/v1.37.2/kubectl", "kubectl binary")
	runs := flag.Int("runs", 5, "runs of each command")
	write := flag.String("write", "", "replace the ## k8s-snapshot section of this markdown file with the results")
	existing := flag.String("cluster", "", "measure against the cluster a -hold run built, given its admin `KUBECONFIG`, instead of building one")
	hold := flag.Bool("hold", false, "after building the cluster, print its kubeconfig and keep it until SIGINT/SIGTERM (no measurements)")
	launch := flag.Bool("launch", false, "internal: run the command in the arguments and print its wall time and peak RSS on stderr")
	flag.Parse()
	if *launch {
		os.Exit(launched(flag.Args()))
	}
	if err := run(*snapshot, *kubectl, *runs, *write, *hold, *existing); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(snapshot, kubectl string, runs int, write string, hold bool, kc string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	settled := "was built by another run (-cluster)"
	if kc == "" {
		start := time.Now()
		cp, err := controlplane.Start(ctx, controlplane.Options{Log: os.Stderr})
		if err != nil {
			return err
		}
		defer cp.Close()
		if err := build(ctx, cp); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: cluster of %d nodes and %d pods ready in %s\n", nodes, namespaces*deployments*replicas, time.Since(start).Round(time.Second))
		kc = cp.Kubeconfig(controlplane.Admin)
		settled = settle(ctx, cp)
	}
	if hold {
		fmt.Printf("export KUBECONFIG=%s\n", kc)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		return nil
	}
	commands := []struct {
		name string
		args []string
	}{
		{"kubectl get ... -A -o json", []string{kubectl, "--kubeconfig", kc, "get",
			"nodes,pods,replicasets,deployments,statefulsets,daemonsets,jobs,poddisruptionbudgets,persistentvolumeclaims,persistentvolumes",
			"-A", "-o", "json"}},
		{"k8s-snapshot", []string{snapshot, "--kubeconfig", kc}},
		{"k8s-snapshot --node node-100", []string{snapshot, "--kubeconfig", kc, "--node", "node-100"}},
		{"k8s-snapshot --consistent=false", []string{snapshot, "--kubeconfig", kc, "--consistent=false"}},
		{"k8s-snapshot --consistent=false --node", []string{snapshot, "--kubeconfig", kc, "--consistent=false", "--node", "node-100"}},
	}
	results := make([][]sample, len(commands))
	for i := range runs {
		for j := range commands {
			c := commands[(i+j)%len(commands)] // rotate the order every run
			s, err := measure(ctx, c.args)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			k := (i + j) % len(commands)
			results[k] = append(results[k], s)
			fmt.Fprintf(os.Stderr, "bench: run %d %-30s %7.3fs (cpu %6.3fs) %6.1f MiB %6.1f MB out\n", i+1, c.name, s.wall.Seconds(), s.cpu.Seconds(), s.rssMiB, float64(s.bytes)/1e6)
		}
	}
	peer, full, node := median(results[0]), median(results[1]), median(results[2])
	latest, latestNode := median(results[3]), median(results[4])
	here, total, err := nodeStats(ctx, commands[2].args, "node-100")
	if err != nil {
		return err
	}
	data := map[string]any{
		"Runs": runs, "Nodes": nodes, "Pods": namespaces * deployments * replicas,
		"Deployments": namespaces * deployments, "Namespaces": namespaces, "Claims": namespaces * claims,
		"Peer": peer, "Full": full, "Node": node, "Latest": latest, "LatestNode": latestNode,
		"WallRatio": full.Wall.Seconds() / peer.Wall.Seconds(), "RSSRatio": full.RSS / peer.RSS,
		"Date": time.Now().UTC().Format("2006-01-02"), "Load": loadavg(),
		"NodeHere": here, "NodePods": total, "Settled": settled,
	}
	var out bytes.Buffer
	if err := section.Execute(&out, data); err != nil {
		return err
	}
	os.Stdout.Write(out.Bytes())
	if write != "" {
		return replaceSection(write, "## k8s-snapshot", out.String())
	}
	return nil
}

var section = template.Must(template.New("").Funcs(template.FuncMap{
	"s": func(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) },
}).Parse(`## k8s-snapshot

A local control plane (etcd, kube-apiserver, controller-manager, scheduler,
kwok) with {{.Nodes}} kwok nodes and {{.Pods}} Running pods ({{.Deployments}}
Deployments x 30 replicas in {{.Namespaces}} namespaces, a PDB each, {{.Claims}}
bound PVCs), built by the benchmark itself. Both tools run as processes
against the same API server in the same run, in rotating order; medians of
{{.Runs}} runs; wall time and peak RSS (getrusage maxrss) of the process;
stdout counted and discarded. Measured {{.Date}} on 2 cores (load average {{.Load}}), once
the control plane {{.Settled}}.

| command | wall | CPU (user+sys) | peak RSS | output |
|---|---|---|---|---|
| ` + "`kubectl get nodes,pods,replicasets,deployments,statefulsets,daemonsets,jobs,poddisruptionbudgets,persistentvolumeclaims,persistentvolumes -A -o json`" + ` | {{s .Peer.Wall}} | {{s .Peer.CPU}} | {{printf "%.0f" .Peer.RSS}} MiB | {{printf "%.1f" .Peer.MB}} MB |
| ` + "`k8s-snapshot`" + ` (whole cluster, 13 kinds) | {{s .Full.Wall}} | {{s .Full.CPU}} | {{printf "%.0f" .Full.RSS}} MiB | {{printf "%.1f" .Full.MB}} MB |
| ` + "`k8s-snapshot --node node-100`" + ` | {{s .Node.Wall}} | {{s .Node.CPU}} | {{printf "%.0f" .Node.RSS}} MiB | {{printf "%.1f" .Node.MB}} MB |
| ` + "`k8s-snapshot --consistent=false`" + ` (each kind at its latest) | {{s .Latest.Wall}} | {{s .Latest.CPU}} | {{printf "%.0f" .Latest.RSS}} MiB | {{printf "%.1f" .Latest.MB}} MB |
| ` + "`k8s-snapshot --consistent=false --node node-100`" + ` | {{s .LatestNode.Wall}} | {{s .LatestNode.CPU}} | {{printf "%.0f" .LatestNode.RSS}} MiB | {{printf "%.1f" .LatestNode.MB}} MB |

The ` + "`k8s-snapshot`" + ` rows are consistent snapshots (the default): every list, page
and --node query at the one etcd revision the first list fixes
(` + "`resourceVersionMatch=Exact`" + `); the ` + "`--consistent=false`" + ` rows list each kind at its
latest revision, as kubectl does, and show what the consistency costs.

- whole-cluster snapshot / kubectl: **{{printf "%.2f" .WallRatio}}x** the wall time (target <= 0.2x),
  **{{printf "%.2f" .RSSRatio}}x** the peak RSS (target <= 0.25x);
- node-scoped snapshot: **{{s .Node.Wall}}** wall (target <= 0.3 s{{if gt .Node.Wall.Seconds 0.3}}: NOT met in
  this run, load average {{.Load}} on 2 cores; the tool's own CPU time alone is {{s .Node.CPU}}
  (process start, decoding ~1,500 objects, encoding {{.NodePods}} pods), the rest is waiting for the API
  server on the same cores{{end}}); it holds {{.NodePods}} pods:
  the {{.NodeHere}} on node-100 and the other replicas of their Deployments.

What makes it fast: protobuf lists of the kinds in parallel; REST clients of
the six API groups it reads instead of the typed clientset (which registers
every group at start-up); for --node, the other pods asked for in one list
per namespace and label key (` + "`app in (a,b)`" + `), which the API server answers
from its watch cache's snapshot at the revision;
objects never copied twice; lists encoded in chunks on every CPU, indented
by a string-aware pass instead of json.Indent's scanner; a static binary.

Reproduce: ` + "`make kube-bins && k8s-snapshot/bench/run.sh [RUNS]`" + ` (also part of ` + "`make bench`" + `);
it builds k8s-snapshot, runs ` + "`go run bench/main.go`" + ` in k8s-snapshot/ and rewrites this section.
`))

// settle waits until the control plane has finished with the pods it just
// started, so that the tools are measured against a steady cluster, and
// says how that went (on stderr and for the report).
func settle(ctx context.Context, cp *controlplane.ControlPlane) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	took, err := cp.WaitIdle(ctx, 0.25, time.Second)
	what := fmt.Sprintf("had used under 25%% of a CPU for 3 s (after %s)", took.Round(time.Second))
	if err != nil {
		what = fmt.Sprintf("was still busy after %s (measured anyway)", took.Round(time.Second))
	}
	fmt.Fprintf(os.Stderr, "bench: control plane %s\n", what)
	return what
}

// sample is one process run.
type sample struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	rssMiB float64
	bytes  int64
}

// summary is the medians of samples, for the template.
type summary struct {
	Wall time.Duration
	CPU  time.Duration
	RSS  float64 // MiB
	MB   float64 // output
}

func median(samples []sample) summary {
	walls := make([]time.Duration, len(samples))
	cpus := make([]time.Duration, len(samples))
	rss := make([]float64, len(samples))
	var bytes int64
	for i, s := range samples {
		walls[i], cpus[i], rss[i], bytes = s.wall, s.cpu, s.rssMiB, s.bytes
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rss)
	w, r := walls[len(walls)/2], rss[len(rss)/2]
	return summary{Wall: w, CPU: cpus[len(cpus)/2], RSS: r, MB: float64(bytes) / 1e6}
}

// measure runs args with stdout counted and discarded, through a fresh
// launcher process: a child started straight from this (large) process
// would report this process's memory as its own peak RSS, since the
// high-water mark survives exec.
func measure(ctx context.Context, args []string) (sample, error) {
	self, err := os.Executable()
	if err != nil {
		return sample{}, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"-launch", "--"}, args...)...)
	count := &counter{}
	cmd.Stdout = count
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var ns, kb, cpu int64
	if _, err := fmt.Sscanf(lastLine(stderr.String()), "launched %d %d %d", &ns, &kb, &cpu); err != nil {
		return sample{}, fmt.Errorf("launcher: %q: %w", stderr.String(), err)
	}
	return sample{wall: time.Duration(ns), cpu: time.Duration(cpu), rssMiB: float64(kb) / 1024, bytes: count.n}, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// launched runs args with this process's streams and prints "launched
// WALL_NS MAXRSS_KB" on stderr.
func launched(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no rusage")
		return 1
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Fprintf(os.Stderr, "launched %d %d %d\n", wall.Nanoseconds(), ru.Maxrss, cpu.Nanoseconds())
	return 0
}

// nodeStats runs the node-scoped snapshot once and counts its pods, and
// those on node.
func nodeStats(ctx context.Context, args []string, node string) (here, total int, err error) {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).Output()
	if err != nil {
		return 0, 0, err
	}
	var s struct {
		Pods []struct {
			Spec struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return 0, 0, err
	}
	for _, p := range s.Pods {
		if p.Spec.NodeName == node {
			here++
		}
	}
	return here, len(s.Pods), nil
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// build creates the nodes, namespaces, workloads, PDBs and claims, and
// waits until every pod is Ready and every Deployment complete.
func build(ctx context.Context, cp *controlplane.ControlPlane) error {
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i+1)
	}
	if err := cp.CreateNodes(ctx, "bench", names...); err != nil {
		return err
	}
	var m strings.Builder
	for n := range namespaces {
		ns := fmt.Sprintf("bench-%02d", n+1)
		fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
		for d := range deployments {
			fmt.Fprintf(&m, deployment, fmt.Sprintf("app-%02d", d+1), ns, replicas)
		}
		for c := range claims {
			fmt.Fprintf(&m, claim, fmt.Sprintf("%s-data-%d", ns, c+1), ns, fmt.Sprintf("data-%d", c+1))
		}
	}
	fmt.Fprint(&m, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: bench-local}\nprovisioner: kubernetes.io/no-provisioner\n")
	if err := cp.Apply(ctx, []byte(m.String()), map[string]string{}); err != nil {
		return err
	}
	want := namespaces * deployments * replicas
	client := cp.Clientset(controlplane.Admin)
	for {
		list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		ready := 0
		if err == nil {
			for i := range list.Items {
				if controlplane.PodReady(&list.Items[i]) {
					ready++
				}
			}
		}
		if ready >= want {
			break
		}
		fmt.Fprintf(os.Stderr, "bench: %d of %d pods Ready\n", ready, want)
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods: %d of %d Ready: %w", ready, want, ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
	return cp.WaitWorkloadsReady(ctx)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s, tier: bench}}
    spec:
      nodeSelector: {sentinel.dev/pool: bench}
      containers:
      - name: app
        image: registry.example/%[1]s:1
        resources: {requests: {cpu: "1", memory: 1Gi}} # 32 per node at most: the scheduler spreads them
        env: [{name: MODE, value: bench}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: %[1]s}}
---
`

const claim = `apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: bench-local
  claimRef: {namespace: %[2]s, name: %[3]s}
  hostPath: {path: /tmp/%[1]s}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[3]s, namespace: %[2]s}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: bench-local
  volumeName: %[1]s
  resources: {requests: {storage: 1Gi}}
---
`

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// replaceSection replaces the markdown section starting with heading (up
// to the next "## " heading) in file with text, or appends it.
func replaceSection(file, heading, text string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lines := strings.SplitAfter(string(old), "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		switch {
		case start < 0 && strings.TrimRight(l, "\n") == heading:
			start = i
		case start >= 0 && strings.HasPrefix(l, "## "):
			end = i
		}
		if start >= 0 && end < len(lines) {
			break
		}
	}
	var out string
	if start < 0 {
		out = strings.TrimRight(string(old), "\n")
		if out != "" {
			out += "\n\n"
		}
		out += text
	} else {
		out = strings.Join(lines[:start], "") + text
		if end < len(lines) {
			out += "\n" + strings.Join(lines[end:], "")
		}
	}
	return os.WriteFile(file, []byte(out), 0o644)
}
