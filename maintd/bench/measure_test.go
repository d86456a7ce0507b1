//go:build bench

package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// lockFamily is maintd's histogram of the shared lock's hold time;
// schedFamily the Go runtime's of the time goroutines waited to run.
const (
	lockFamily  = "maintd_decision_lock_seconds"
	schedFamily = "go_sched_latencies_seconds"
)

// histograms reads family name from the /metrics at addr, by the value of
// label kind ("" for a histogram without it).
func histograms(ctx context.Context, addr, name string) (map[string]*dto.Histogram, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s/metrics: %w", addr, err)
	}
	out := map[string]*dto.Histogram{}
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			if len(m.Label) == 0 {
				out[""] = m.GetHistogram()
			}
			for _, l := range m.Label {
				if l.GetName() == "kind" {
					out[l.GetValue()] = m.GetHistogram()
				}
			}
		}
	}
	return out, nil
}

// lockHold is what the shared lock's histogram of one kind recorded
// between two reads: the count and its quantile q, interpolated within
// the bucket as Prometheus' histogram_quantile does.
type lockHold struct {
	n   uint64
	q   float64       // the quantile asked for
	at  time.Duration // the interpolated quantile
	le  float64       // the upper bound of its bucket, seconds
	max float64       // the highest bucket bound with an observation, seconds
}

func holdQuantile(before, after *dto.Histogram, q float64) lockHold {
	if after == nil {
		return lockHold{q: q}
	}
	counts := func(h *dto.Histogram) []uint64 {
		var c []uint64
		if h != nil {
			for _, b := range h.Bucket {
				c = append(c, b.GetCumulativeCount())
			}
		}
		return c
	}
	a, b := counts(after), counts(before)
	n := after.GetSampleCount()
	if before != nil {
		n -= before.GetSampleCount()
	}
	h := lockHold{n: n, q: q}
	if n == 0 {
		return h
	}
	rank := q * float64(n)
	lower, prev := 0.0, uint64(0)
	for i, bk := range after.Bucket {
		cum := a[i]
		if i < len(b) {
			cum -= b[i]
		}
		if cum > prev {
			h.max = bk.GetUpperBound()
		}
		if h.le == 0 && float64(cum) >= rank {
			frac := (rank - float64(prev)) / float64(cum-prev)
			h.at = time.Duration((lower + frac*(bk.GetUpperBound()-lower)) * float64(time.Second))
			h.le = bk.GetUpperBound()
		}
		lower, prev = bk.GetUpperBound(), cum
	}
	if h.le == 0 { // above the last bound
		h.le, h.at, h.max = math.Inf(1), time.Duration(lower*float64(time.Second)), math.Inf(1)
	}
	return h
}

func (h lockHold) String() string { return h.of("decisions") }

// of says the quantile, counting the observations as what (decisions,
// waits).
func (h lockHold) of(what string) string {
	if h.n == 0 {
		return "no " + what
	}
	return fmt.Sprintf("%.2f ms (bucket <= %.2f ms; %d %s, the slowest <= %.2f ms)",
		float64(h.at)/float64(time.Millisecond), 1000*h.le, h.n, what, 1000*h.max)
}

// writesByResource counts user's writes in the audit log from event from
// on, by resource (with its subresource, e.g. "maintenanceplans/status").
func (b *bench) writesByResource(user string, from int) (total int, by string) {
	b.t.Helper()
	events, err := cp.Audit()
	if err != nil {
		b.t.Fatal(err)
	}
	count := map[string]int{}
	for _, ev := range events[from:] {
		if ev.User != user || !slices.Contains([]string{"create", "update", "patch", "delete", "deletecollection"}, ev.Verb) {
			continue
		}
		r := ev.Resource
		if ev.Sub != "" {
			r += "/" + ev.Sub
		}
		count[r]++
		total++
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return count[keys[i]] > count[keys[j]] || count[keys[i]] == count[keys[j]] && keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, count[k]))
	}
	return total, strings.Join(parts, ", ")
}

// acceptedEvictions are user's eviction POSTs the API server accepted
// (201, not dry runs) from audit event from on, and how many distinct
// pod instances (UID preconditions) they were for.
func (b *bench) acceptedEvictions(user string, from int) (accepted, pods int) {
	b.t.Helper()
	events, err := cp.Audit()
	if err != nil {
		b.t.Fatal(err)
	}
	uids := map[string]bool{}
	for _, ev := range events[from:] {
		if ev.User == user && ev.Verb == "create" && ev.Sub == "eviction" && !ev.DryRun && ev.Code == http.StatusCreated {
			accepted++
			uids[ev.Namespace+"/"+ev.Name+"/"+ev.UID] = true
		}
	}
	return accepted, len(uids)
}

// budgetRounds is the most pods any one PDB (maxUnavailable 1) has on
// nodes: the rounds of its budget that a drain of them all together needs
// at the least.
func (b *bench) budgetRounds(ctx context.Context, nodes []string) int {
	t := b.t
	t.Helper()
	pods, err := b.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "tier=scale"})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, p := range pods.Items {
		if slices.Contains(nodes, p.Spec.NodeName) {
			per[p.Namespace+"/"+p.Labels["app"]]++
		}
	}
	rounds := 0
	for _, n := range per {
		rounds = max(rounds, n)
	}
	return rounds
}

// budgetRound is one round of a budget on this control plane, measured:
// the time from the eviction of one pod of an app on node to its PDB
// allowing a disruption again (the replacement scheduled, Ready, and
// counted by the disruption controller). The median of n, each a
// different app of the node.
func (b *bench) budgetRound(ctx context.Context, node string, n int) time.Duration {
	t := b.t
	t.Helper()
	pods, err := b.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "tier=scale", FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) < n {
		t.Fatalf("budget round: %d pods on %s, want %d", len(pods.Items), node, n)
	}
	var rounds []time.Duration
	for _, p := range pods.Items[:n] {
		pdbs := b.admin.PolicyV1().PodDisruptionBudgets(p.Namespace)
		app := p.Labels["app"]
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}}
		// A round starts from a budget that allows one: the drains before
		// it may have left the app's last replacement not yet Ready.
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			pdb, err := pdbs.Get(ctx, app, metav1.GetOptions{})
			return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.DisruptionsAllowed >= 1, nil
		}); err != nil {
			t.Fatalf("budget round: %s/%s never allowed a disruption: %v", p.Namespace, app, err)
		}
		start := time.Now()
		if err := b.admin.CoreV1().Pods(p.Namespace).EvictV1(ctx, ev); err != nil {
			t.Fatalf("budget round: evict %s/%s: %v", p.Namespace, p.Name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			pdb, err := pdbs.Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.DisruptionsAllowed < 1 {
				return false, nil
			}
			// The budget counts the evicted pod gone and its replacement Ready.
			list, err := b.admin.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
			if err != nil {
				return false, nil
			}
			ready := 0
			for i := range list.Items {
				if list.Items[i].UID != p.UID && controlplane.PodReady(&list.Items[i]) {
					ready++
				}
			}
			return ready == scaleReplicas, nil
		})
		if err != nil {
			t.Fatalf("budget round: %s/%s never recovered: %v", p.Namespace, app, err)
		}
		rounds = append(rounds, time.Since(start))
	}
	return median(rounds)
}

// cpuProfile asks maintd (started with --profiling) for a CPU profile of
// the next d and writes it to the logs as name; the returned func waits
// for it and returns the file's path ("" on failure, logged).
func (m *scaleMaintd) cpuProfile(ctx context.Context, b *bench, name string, d time.Duration) func() string {
	done := make(chan string, 1)
	go func() {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", m.addr, int(d.Seconds()))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.t.Logf("cpu profile: %v", err)
			done <- ""
			return
		}
		defer resp.Body.Close()
		path := filepath.Join(b.logs, name)
		f, err := os.Create(path)
		if err == nil {
			_, err = io.Copy(f, resp.Body)
			f.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			b.t.Logf("cpu profile: %v %s", err, resp.Status)
			done <- ""
			return
		}
		done <- path
	}()
	return func() string { return <-done }
}

// churnFloor is how fast the control plane itself replaces the pods of
// nodes, with no budget and no drainer in the way: the nodes are cordoned,
// every pod of theirs that a ReplicaSet owns is deleted at once (DELETE
// ignores budgets), and the time runs until each is gone and every
// Deployment of the benchmark is at its replicas, all Ready, again. A
// campaign over as many nodes moves the same pods through the same control
// plane, and is also held to the budgets: this is a floor no drainer beats
// on this machine. The nodes are uncordoned after.
func (b *bench) churnFloor(ctx context.Context, nodes []string) (time.Duration, int) {
	t := b.t
	t.Helper()
	// A client without a rate limit: the thousands of deletes go as fast
	// as the API server takes them, not as the admin client's 200 QPS.
	cfg := rest.CopyConfig(cp.Config(controlplane.Admin))
	cfg.QPS = -1
	unlimited, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	core := unlimited.CoreV1()
	cordon := func(on bool) {
		patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on))
		parallel.Do(len(nodes), func(i int) {
			if _, err := core.Nodes().Patch(ctx, nodes[i], types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("churn floor: cordon %s: %v", nodes[i], err)
			}
		})
	}
	cordon(true)
	defer cordon(false)
	var pods []corev1.Pod
	for _, n := range nodes {
		list, err := core.Pods("").List(ctx, metav1.ListOptions{LabelSelector: "tier=scale", FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, list.Items...)
	}
	// At most 50 requests in flight: the API server's limit on mutating
	// requests at once is 200, beyond which it answers 429.
	sem := make(chan struct{}, 50)
	start := time.Now()
	parallel.Do(len(pods), func(i int) {
		sem <- struct{}{}
		defer func() { <-sem }()
		p := pods[i]
		err := core.Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("churn floor: delete %s/%s: %v", p.Namespace, p.Name, err)
		}
	})
	// Every 250 ms, the Deployments (from the API server's cache); once
	// all are back, each deleted pod, until all are gone: a list of every
	// pod at each look would load the API server the floor measures.
	remaining := pods
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		deps, err := b.admin.AppsV1().Deployments("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		for _, d := range deps.Items {
			if !strings.HasPrefix(d.Namespace, "scale-") {
				continue
			}
			if d.Status.ObservedGeneration < d.Generation || d.Status.ReadyReplicas != *d.Spec.Replicas || d.Status.Replicas != *d.Spec.Replicas {
				return false, nil
			}
		}
		still := make([]bool, len(remaining))
		parallel.Do(len(remaining), func(i int) {
			sem <- struct{}{}
			defer func() { <-sem }()
			p := remaining[i]
			got, err := core.Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			still[i] = !apierrors.IsNotFound(err) && (err != nil || got.UID == p.UID)
		})
		var left []corev1.Pod
		for i, p := range remaining {
			if still[i] {
				left = append(left, p)
			}
		}
		remaining = left
		return len(remaining) == 0, nil
	})
	if err != nil {
		t.Fatalf("churn floor: the %d pods deleted from %d nodes were not all replaced and Ready: %v", len(pods), len(nodes), err)
	}
	return time.Since(start), len(pods)
}
