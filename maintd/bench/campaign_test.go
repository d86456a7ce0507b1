//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// campaignSection is this benchmark's part of docs/benchmarks.md.
const campaignSection = "## maintd campaign at scale"

// TestCampaignScale: a MaintenanceCampaign over every tenth node of a
// cluster of BENCH_CAMPAIGN_NODES kwok nodes (default 1,000) with 30 pods
// per node (Deployments of 30 replicas spread one per node, PDB
// maxUnavailable 1), against single plans drained one after the other
// (BENCH_SEQUENTIAL of them, extrapolated to the campaign's node count):
// the makespan, maintd's peak RSS and mean CPU during the campaign, and its
// CPU and writes while idle after it.
func TestCampaignScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Minute)
	defer cancel()
	nodes, err := strconv.Atoi(env("BENCH_CAMPAIGN_NODES", "1000"))
	if err != nil || nodes < 20 || nodes%10 != 0 {
		t.Fatalf("BENCH_CAMPAIGN_NODES=%q: a multiple of 10, at least 20", os.Getenv("BENCH_CAMPAIGN_NODES"))
	}
	seqN, err := strconv.Atoi(env("BENCH_SEQUENTIAL", "10"))
	if err != nil || seqN < 1 {
		t.Fatalf("BENCH_SEQUENTIAL=%q", os.Getenv("BENCH_SEQUENTIAL"))
	}
	idle, err := time.ParseDuration(env("BENCH_IDLE", "60s"))
	if err != nil {
		t.Fatalf("BENCH_IDLE: %v", err)
	}
	namespaces := nodes * scaleReplicas / (scaleDeployments * scaleReplicas) // 30 pods per node
	pods := namespaces * scaleDeployments * scaleReplicas
	set := nodes / 10
	b := newBench(t, ctx, "maintd")
	kc, err := cp.TokenKubeconfig(ctx, "maintd-system", "maintd")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	scaleCluster(t, ctx, b, nodes, namespaces)
	built := time.Since(start)
	t.Logf("cluster of %d nodes and %d pods ready in %s", nodes, pods, built.Round(time.Second))
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	campaigns := mc.MaintenanceCampaigns()

	m := startScaleMaintd(t, ctx, b, kc, set)
	defer m.stop(t)

	// Sequential single plans, each released before the next, on nodes
	// outside the campaign's set (node 10k+5).
	m.during("sequential plans")
	b.settle(ctx)
	var seq time.Duration
	for i := range seqN {
		node := scaleNode(10*i + 5)
		t0 := time.Now()
		b.manyPlans(ctx, []string{node})
		seq += time.Since(t0)
	}
	perNode := seq / time.Duration(seqN)
	// One round of a budget, measured on a node neither drained nor in the
	// campaign: the floor's unit.
	round := b.budgetRound(ctx, scaleNode(3), 3)

	// The campaign: every tenth node, released as each is drained.
	m.during("campaign")
	b.settle(ctx)
	auditFrom := b.auditLen()
	var names []string
	for i := 1; i <= set; i++ {
		names = append(names, scaleNode(10*i))
	}
	rounds := b.budgetRounds(ctx, names)
	floor := time.Duration(rounds) * round
	extrapolated := perNode * time.Duration(set)
	lock0, err := histograms(ctx, m.addr, lockFamily)
	if err != nil {
		t.Fatal(err)
	}
	sched0, err := histograms(ctx, m.addr, schedFamily)
	if err != nil {
		t.Fatal(err)
	}
	profile := m.cpuProfile(ctx, b, "maintd-campaign.cpu.pprof", min(max(extrapolated*35/100, 10*time.Second), time.Minute))
	cpu0 := m.cpu()
	start = time.Now()
	c := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "scale-campaign", Labels: map[string]string{runLabel: "scale"}},
		Spec: api.MaintenanceCampaignSpec{Nodes: names, AllowAllWorkloads: true, Release: true, Reason: "benchmark",
			Breaker: api.Breaker{MaxNotReadyNodes: int32(nodes)}}}
	if _, err := campaigns.Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var done *api.MaintenanceCampaign
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		cur, err := campaigns.Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		switch cur.Status.Phase {
		case api.Blocked, api.Failed:
			return false, fmt.Errorf("campaign %s/%s: %s", cur.Status.Phase, cur.Status.Reason, cur.Status.Message)
		}
		done = cur
		return cur.Status.Phase == api.Completed, nil
	})
	if err != nil {
		t.Fatalf("campaign: %v", err)
	}
	makespan := time.Since(start)
	campaignCPU := (m.cpu() - cpu0) / makespan.Seconds()
	codes := b.evictionCodes(maintdUser, auditFrom)
	writes, writesBy := b.writesByResource(maintdUser, auditFrom)
	accepted, evictedPods := b.acceptedEvictions(maintdUser, auditFrom)
	lock1, err := histograms(ctx, m.addr, lockFamily)
	if err != nil {
		t.Fatal(err)
	}
	planLock, campaignLock := holdQuantile(lock0["plan"], lock1["plan"], 0.99), holdQuantile(lock0["campaign"], lock1["campaign"], 0.99)
	sched1, err := histograms(ctx, m.addr, schedFamily)
	if err != nil {
		t.Fatal(err)
	}
	schedWait := holdQuantile(sched0[""], sched1[""], 0.99)
	profilePath := profile()

	// Idle after the campaign.
	m.during("idle after")
	b.settle(ctx)
	auditFrom = b.auditLen()
	cpu0 = m.cpu()
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	idleCPU := (m.cpu() - cpu0) / idle.Seconds()
	idleWrites := b.writesBy(maintdUser, auditFrom)
	peak := m.rss("VmHWM")
	m.stop(t)

	// The control plane's own floor: as many other nodes' pods replaced
	// at once, with no budget (nodes 10k+7).
	var others []string
	for i := range set {
		others = append(others, scaleNode(10*i+7))
	}
	b.settle(ctx)
	churn, churned := b.churnFloor(ctx, others)

	ratio := makespan.Seconds() / extrapolated.Seconds()
	moved := int(done.Status.Counts.PodsAtStart)
	perPod := float64(writes) / float64(max(moved, 1))
	var miss []string
	check := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	check(peak <= 250, fmt.Sprintf("peak RSS %.0f MiB (target <= 250)", peak))
	check(campaignCPU <= 1, fmt.Sprintf("mean CPU %.2f cores during the campaign (target <= 1)", campaignCPU))
	check(idleCPU < 0.02, fmt.Sprintf("idle CPU %.2f%% of a core (target < 2%%)", 100*idleCPU))
	check(idleWrites == 0, fmt.Sprintf("%d writes while idle (target 0)", idleWrites))
	check(ratio <= 0.35, fmt.Sprintf("campaign %.2fx sequential plans (target <= 0.35x)", ratio))
	check(makespan <= 3*floor, fmt.Sprintf("campaign %.1fx the budget floor (target <= 3x)", makespan.Seconds()/floor.Seconds()))
	check(accepted == moved && evictedPods == moved, fmt.Sprintf("%d evictions accepted for %d pod instances, %d pods at the start (target: each once)", accepted, evictedPods, moved))
	check(!strings.Contains(codes, "429"), "answers of 429: "+codes)
	check(perPod <= 3, fmt.Sprintf("%.2f writes per moved pod (target <= 3)", perPod))
	check(planLock.le <= 0.001, fmt.Sprintf("shared lock p99 %s (target <= 1 ms)", planLock))

	var doc strings.Builder
	fmt.Fprintf(&doc, "%s\n\n", campaignSection)
	fmt.Fprintf(&doc, "A MaintenanceCampaign over %d of %d kwok nodes (every tenth) on a local control plane with %d pods (%d namespaces x %d\n",
		set, nodes, pods, namespaces, scaleDeployments)
	fmt.Fprintf(&doc, "Deployments x %d replicas, at most one replica per node, a PDB with maxUnavailable 1 each; built in %s), maintd run as a\n",
		scaleReplicas, built.Round(time.Second))
	fmt.Fprintf(&doc, "process with a TokenRequest token of the shipped ServiceAccount, `--max-nodes-in-maintenance %d` (one wave).\n\n", set)
	fmt.Fprintf(&doc, "| measure | maintd | target |\n|---|---|---|\n")
	fmt.Fprintf(&doc, "| campaign of %d nodes, created to Completed (each node released as drained) | %s | |\n", set, makespan.Round(100*time.Millisecond))
	fmt.Fprintf(&doc, "| %d single plans one after the other (released, next), mean per node | %s | |\n", seqN, perNode.Round(10*time.Millisecond))
	fmt.Fprintf(&doc, "| %d sequential plans, extrapolated from %d | %s | |\n", set, seqN, extrapolated.Round(time.Second))
	fmt.Fprintf(&doc, "| campaign / sequential | **%.2fx** | <= 0.35x |\n", ratio)
	fmt.Fprintf(&doc, "| budget floor: %d rounds (the most pods of one PDB on the campaign's nodes) x %s (one round measured: an eviction to its PDB allowing the next, median of 3) | %s | |\n",
		rounds, round.Round(10*time.Millisecond), floor.Round(100*time.Millisecond))
	fmt.Fprintf(&doc, "| campaign / budget floor | **%.2fx** | <= 3x |\n", makespan.Seconds()/floor.Seconds())
	fmt.Fprintf(&doc, "| the control plane's floor: %d pods of %d other nodes deleted at once (no budget, no drainer), until all are replaced and Ready | %s | |\n",
		churned, set, churn.Round(100*time.Millisecond))
	fmt.Fprintf(&doc, "| campaign / the control plane's floor (a campaign's pods per pod the floor moved: %.2f) | **%.2fx** | |\n",
		float64(moved)/float64(max(churned, 1)), makespan.Seconds()/churn.Seconds())
	fmt.Fprintf(&doc, "| pods on the campaign's nodes at its start; evictions counted by the campaign | %d; %d | |\n", moved, done.Status.Counts.Evicted)
	fmt.Fprintf(&doc, "| evictions the API server accepted; pod instances they were for (audit) | %d; %d | each pod once |\n", accepted, evictedPods)
	fmt.Fprintf(&doc, "| campaign: eviction requests by code | %s | no 429 |\n", codes)
	fmt.Fprintf(&doc, "| campaign: maintd's writes to the API (%s) | %d | |\n", writesBy, writes)
	fmt.Fprintf(&doc, "| writes per moved pod | **%.2f** | <= 3 |\n", perPod)
	fmt.Fprintf(&doc, "| shared lock's hold per plan decision, p99 (`%s`) | %s | <= 1 ms |\n", lockFamily, planLock)
	fmt.Fprintf(&doc, "| shared lock's hold per campaign decision, p99 | %s | |\n", campaignLock)
	fmt.Fprintf(&doc, "| maintd's goroutines' wait for a CPU, p99 (`%s`; a lock holder waits too) | %s | |\n", schedFamily,
		schedWait.of("waits"))
	fmt.Fprintf(&doc, "| campaign: mean CPU | %.2f cores | <= 1 |\n", campaignCPU)
	fmt.Fprintf(&doc, "| peak RSS from start to SIGTERM (VmHWM) | %.0f MiB | <= 250 MiB |\n", peak)
	fmt.Fprintf(&doc, "| (highest RSS sampled every 100 ms, MiB, by phase) | (%s) | |\n", m.phases())
	fmt.Fprintf(&doc, "| idle after the campaign, %s: CPU | %.2f%% of a core | < 2%% |\n", idle, 100*idleCPU)
	fmt.Fprintf(&doc, "| idle after the campaign, %s: writes to the API | %d | 0 |\n\n", idle, idleWrites)
	if profilePath != "" {
		fmt.Fprintf(&doc, "A CPU profile of maintd over the campaign's first %s is kept in the run's logs (`go tool pprof -top bin/maintd %s`).\n\n",
			min(max(extrapolated*35/100, 10*time.Second), time.Minute), filepath.Base(profilePath))
	}
	extra := ""
	if a := os.Getenv("BENCH_MAINTD_ARGS"); a != "" {
		extra = fmt.Sprintf(" BENCH_MAINTD_ARGS=%q", a)
	}
	b.publish(&doc, miss, "Reproduce: `bash maintd/bench/run.sh campaign` (BENCH_CAMPAIGN_NODES=%d BENCH_SEQUENTIAL=%d%s).\n", nodes, seqN, extra)
}
