package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var (
	campaignReport = flag.String("campaign-report", "", "write TestCampaignMoveOnce's table (Markdown) to this file")
	// The target is 0.5x, measured alone and without -race (make
	// bench-campaign); make test runs every package's tests with -race and
	// side by side, where the bound guards against a regression.
	campaignMaxRatio = flag.Float64("campaign-max-ratio", 0.75, "TestCampaignMoveOnce fails when the one-wave campaign takes more than this times the sequential plans' time")
)

// fleetApps makes n Deployments fleet-1..fleet-n of replicas pods each,
// spread over e's nodes one per node (topology spread on the hostname,
// maxSkew 1, DoNotSchedule), each pod requesting cpu, Ready after ready,
// each with a PDB maxUnavailable 1. It waits until every pod is Ready and
// every budget allows its disruption, and returns each app's floor.
func (e env) fleetApps(t *testing.T, ctx context.Context, n int, replicas int32, ready time.Duration, cpu string) map[string]int {
	t.Helper()
	floor := map[string]int{}
	for i := 1; i <= n; i++ {
		app := fmt.Sprintf("fleet-%d", i)
		tmpl := e.podTemplate(app, ready, time.Second, func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
		})
		tmpl.Labels["tier"] = "fleet"
		e.deployment(t, ctx, app, replicas, tmpl)
		e.pdb(t, ctx, app, app, nil, intOrString(1))
		floor[app] = int(replicas) - 1
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "tier=fleet", n*int(replicas)); err != nil {
		t.Fatal(err)
	}
	for app := range floor {
		e.pdbUntil(t, ctx, app, "one disruption allowed", func(st policyv1.PodDisruptionBudgetStatus) bool {
			return st.DisruptionsAllowed == 1 && st.ExpectedPods == replicas
		})
	}
	return floor
}

// campaign creates campaign name with spec, labelled for e's maintd. When
// the test ends it is deleted (foreground: its plans go first, each lifting
// its cordon), and any plan of it left is cleaned up as deletePlan does.
func (e env) campaign(t *testing.T, ctx context.Context, name string, spec api.MaintenanceCampaignSpec) *api.MaintenanceCampaign {
	t.Helper()
	m := &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name, Labels: map[string]string{"test": e.label}}, Spec: spec}
	out, err := e.campaigns.Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create campaign %s: %v", m.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		fg := metav1.DeletePropagationForeground
		if err := e.campaigns.Delete(ctx, out.Name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: delete campaign %s: %v", out.Name, err)
		}
		plans, err := e.plans.List(ctx, metav1.ListOptions{LabelSelector: api.CampaignLabel + "=" + out.Name})
		if err != nil {
			t.Errorf("cleanup: plans of campaign %s: %v", out.Name, err)
			return
		}
		var wg sync.WaitGroup
		for i := range plans.Items {
			wg.Go(func() { e.deletePlan(t, &plans.Items[i]) })
		}
		wg.Wait()
	})
	return out
}

// waitCampaign polls campaign name until ok, failing the test at ctx's
// deadline with the last status seen.
func (e env) waitCampaign(t *testing.T, ctx context.Context, name, what string, ok func(*api.MaintenanceCampaign) bool) *api.MaintenanceCampaign {
	t.Helper()
	var last *api.MaintenanceCampaign
	for {
		m, err := e.campaigns.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = m
			if ok(m) {
				return m
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				t.Fatalf("campaign %s: %s: not reached; last status %s/%s: %s", name, what, last.Status.Phase, last.Status.Reason, last.Status.Message)
			}
			t.Fatalf("campaign %s: %s: not reached: %v", name, what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func completed(m *api.MaintenanceCampaign) bool { return m.Status.Phase == api.Completed }

// podUIDsOn are the UIDs of the pods of e's namespace on nodes first..last.
func (e env) podUIDsOn(t *testing.T, ctx context.Context, first, last int) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for i := first; i <= last; i++ {
		for _, p := range e.podsOn(t, ctx, e.node(i)) {
			out[string(p.UID)] = true
		}
	}
	return out
}

// accepted counts the accepted evictions of e's namespace by pod UID.
func (e env) accepted(t *testing.T) map[string]int {
	t.Helper()
	real, _ := e.evictions(t)
	out := map[string]int{}
	for _, ev := range real {
		if ev.Code == 200 || ev.Code == 201 {
			out[ev.UID]++
		}
	}
	return out
}

// nothingCordoned checks that no node of e's pool is cordoned or carries a
// cordon owner.
func (e env) nothingCordoned(t *testing.T, ctx context.Context) {
	t.Helper()
	nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: controlplane.PoolLabel + "=" + e.pool})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable || n.Annotations[cordon.OwnerAnnotation] != "" {
			t.Errorf("node %s left cordoned (unschedulable %t, owner %q)", n.Name, n.Spec.Unschedulable, n.Annotations[cordon.OwnerAnnotation])
		}
	}
}

// movedOnceAndClean checks the end of a campaign: no pod UID evicted twice,
// no eviction answered 429, no node of e's pool left cordoned.
func (e env) movedOnceAndClean(t *testing.T, ctx context.Context) {
	t.Helper()
	for uid, n := range e.accepted(t) {
		if n > 1 {
			t.Errorf("pod %s evicted %d times", uid, n)
		}
	}
	e.no429(t)
	e.nothingCordoned(t, ctx)
}

// nodeNames are e's nodes first..last.
func (e env) nodeNames(first, last int) []string {
	var out []string
	for i := first; i <= last; i++ {
		out = append(out, e.node(i))
	}
	return out
}

// notReadyNodes counts the cluster's nodes that are not Ready: other
// tests' nodes count too, so a breaker's threshold is set above them.
func notReadyNodes(t *testing.T, ctx context.Context) int32 {
	t.Helper()
	nodes, err := cp.Clientset(controlplane.Admin).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := int32(0)
	for i := range nodes.Items {
		if !controlplane.NodeReady(&nodes.Items[i]) {
			n++
		}
	}
	return n
}

// TestCampaignMoveOnce: 24 nodes, 20 of them in one campaign, 60
// Deployments of 4 replicas spread one per node under PDBs maxUnavailable
// 1, Ready 2 s after scheduling. The same 20 nodes are drained three ways,
// each in its own namespace and pool: as 20 sequential single plans (each
// released before the next), as a campaign with 20 slots (one wave), and
// as a campaign with 5 slots (4 waves). The one-wave campaign evicts each
// pod that was on the 20 nodes exactly once and no other; no pod is
// evicted twice in any campaign; every app keeps 3 Ready pods at every
// event; no eviction meets a 429; nothing is left cordoned; the one-wave
// campaign takes at most half the sequential plans' time.
func TestCampaignMoveOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	const nodes, inCampaign, apps, replicas = 24, 20, 60, 4
	type result struct {
		name      string
		makespan  time.Duration
		pods      int // on the 20 nodes at the start
		evictions int
		twice     int
	}
	var results []result
	for _, run := range []struct {
		name  string
		slots int // 0: sequential single plans
	}{{"sequential plans", 0}, {"campaign, 20 slots", 20}, {"campaign, 5 slots", 5}} {
		t.Run(run.name, func(t *testing.T) {
			e := newEnv(t, ctx, nodes)
			floor := e.fleetApps(t, ctx, apps, replicas, 2*time.Second, "100m")
			before := e.podUIDsOn(t, ctx, 1, inCampaign)
			watch := e.watchAvailability(t, ctx, floor)
			slots := max(run.slots, 1)
			m := e.startMaintd(t, "", "--max-nodes-in-maintenance", fmt.Sprint(slots))
			cpuOf := func() map[string]float64 {
				out := map[string]float64{}
				for name, pid := range cp.PIDs() {
					out[name], _ = controlplane.ProcessCPU(pid)
				}
				out["maintd"], _ = controlplane.ProcessCPU(m.cmd.Process.Pid)
				return out
			}
			cpu0 := cpuOf()
			start := time.Now()
			if run.slots == 0 {
				for i := 1; i <= inCampaign; i++ {
					p := e.plan(t, ctx, fmt.Sprintf("seq-%d", i), api.MaintenancePlanSpec{NodeName: e.node(i), AllowAllWorkloads: true})
					e.waitPhase(t, ctx, p.Name, api.Drained, "")
					e.release(t, ctx, p.Name)
					e.waitPhase(t, ctx, p.Name, api.Completed, "")
				}
			} else {
				c := e.campaign(t, ctx, "fleet", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, inCampaign), AllowAllWorkloads: true, Release: true,
					Breaker: api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 10}})
				done := e.waitCampaign(t, ctx, c.Name, "completed", func(m *api.MaintenanceCampaign) bool {
					if m.Status.Phase == api.Blocked || m.Status.Phase == api.Failed {
						t.Fatalf("campaign %s/%s: %s", m.Status.Phase, m.Status.Reason, m.Status.Message)
					}
					return completed(m)
				})
				wantWaves := int32((inCampaign + run.slots - 1) / run.slots)
				if done.Status.Wave != wantWaves || done.Status.Counts.PodsAtStart != int32(len(before)) {
					t.Errorf("campaign ended at wave %d (want %d) with %d pods at its start (want %d)", done.Status.Wave, wantWaves, done.Status.Counts.PodsAtStart, len(before))
				}
			}
			r := result{name: run.name, makespan: time.Since(start), pods: len(before)}
			if run.slots == 0 {
				// Deleted while maintd runs, after the timing: their
				// finalizers go at once.
				if err := e.plans.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "test=" + e.label}); err != nil {
					t.Fatal(err)
				}
			}
			var used []string
			for k, v := range cpuOf() {
				used = append(used, fmt.Sprintf("%s %.1f s", k, v-cpu0[k]))
			}
			slices.Sort(used)
			t.Logf("CPU used meanwhile: %s", strings.Join(used, ", "))
			low, _, _ := watch.result()
			for _, l := range low {
				t.Errorf("below a budget's floor: %s", l)
			}
			acc := e.accepted(t)
			for uid, n := range acc {
				r.evictions += n
				if n > 1 {
					r.twice++
					t.Errorf("pod %s evicted %d times", uid, n)
				}
			}
			if run.slots == inCampaign {
				for uid := range before {
					if acc[uid] != 1 {
						t.Errorf("pod %s, on the campaign's nodes at its start, evicted %d times, want once", uid, acc[uid])
					}
				}
				if r.evictions != len(before) {
					t.Errorf("%d evictions for the %d pods on the campaign's nodes: some pod was moved twice", r.evictions, len(before))
				}
			}
			e.no429(t)
			e.nothingCordoned(t, ctx)
			m.stop(t)
			results = append(results, r)
			t.Logf("%s: %s, %d evictions for %d pods (%.2f per pod)", r.name, r.makespan.Round(10*time.Millisecond), r.evictions, r.pods, float64(r.evictions)/float64(r.pods))
		})
	}
	if len(results) != 3 {
		return
	}
	seq, one := results[0], results[1]
	ratio := one.makespan.Seconds() / seq.makespan.Seconds()
	if ratio > *campaignMaxRatio {
		t.Errorf("the one-wave campaign took %s, %.2fx the sequential plans' %s: want at most %.2fx", one.makespan, ratio, seq.makespan, *campaignMaxRatio)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| drain of 20 of 24 nodes, 60 Deployments x 4 | makespan | vs sequential | evictions | pods on the 20 nodes | moves per pod |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %.1f s | %.2fx | %d | %d | %.2f |\n", r.name, r.makespan.Seconds(), r.makespan.Seconds()/seq.makespan.Seconds(), r.evictions, r.pods, float64(r.evictions)/float64(r.pods))
	}
	t.Logf("\n%s", b.String())
	if *campaignReport != "" {
		var doc strings.Builder
		fmt.Fprintf(&doc, "## maintd campaign move-once\n\n")
		fmt.Fprintf(&doc, "24 kwok nodes, 60 Deployments x 4 replicas spread one per node (topology spread on the hostname, maxSkew 1,\n")
		fmt.Fprintf(&doc, "DoNotSchedule), a PDB maxUnavailable 1 each, Ready 2 s after scheduling; the same 20 nodes drained three ways in\n")
		fmt.Fprintf(&doc, "one run, each in a fresh namespace and pool: 20 single plans one after the other (each released before the next),\n")
		fmt.Fprintf(&doc, "a MaintenanceCampaign with `--max-nodes-in-maintenance 20` (one wave), and with 5 (4 waves). Makespan: from the\n")
		fmt.Fprintf(&doc, "first plan's (or the campaign's) creation to the last Completed. Evictions: accepted, from the audit log.\n\n")
		doc.WriteString(b.String())
		fmt.Fprintf(&doc, "\nTarget: the one-wave campaign at most 0.5x the sequential plans; every pod moved once; 0 answers of 429 (checked).\n")
		fmt.Fprintf(&doc, "Load average when measured: %s. Measured %s, %d CPUs.\n", loadavg(), time.Now().UTC().Format("2006-01-02"), runtime.NumCPU())
		fmt.Fprintf(&doc, "Reproduce: `bash maintd/bench/run.sh moveonce` (the e2e test alone, without -race, bound 0.5x).\n")
		if err := os.WriteFile(*campaignReport, []byte(doc.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestCampaignCapacity: a campaign whose pods cannot fit on the nodes left
// schedulable is Blocked insufficient-capacity, naming the numbers, and
// makes no plan and no node write.
func TestCampaignCapacity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3)
	// Four pods of 10 cpu on nodes 1 and 2 (node 3 cordoned meanwhile),
	// and 20 cpu taken on node 3 (32 cpu): 40 cpu to move, 12 free.
	cpu := func(n string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
		}
	}
	e.cordonNode(t, ctx, e.node(3), true)
	e.deployment(t, ctx, "big", 4, e.podTemplate("big", time.Second, time.Second, cpu("10")))
	if err := cp.WaitPodsReady(ctx, e.ns, "app=big", 4); err != nil {
		t.Fatal(err)
	}
	e.cordonNode(t, ctx, e.node(3), false)
	e.deployment(t, ctx, "filler", 1, e.podTemplate("filler", time.Second, time.Second, func(s *corev1.PodSpec) {
		cpu("20")(s)
		s.NodeSelector = map[string]string{corev1.LabelHostname: e.node(3)}
	}))
	if err := cp.WaitPodsReady(ctx, e.ns, "app=filler", 1); err != nil {
		t.Fatal(err)
	}
	audited := len(nodeWrites(t, e.node(1))) + len(nodeWrites(t, e.node(2))) + len(nodeWrites(t, e.node(3)))
	m := e.startMaintd(t, "")
	c := e.campaign(t, ctx, "full", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, 2), AllowAllWorkloads: true})
	got := e.waitCampaign(t, ctx, c.Name, "blocked", func(m *api.MaintenanceCampaign) bool { return m.Status.Phase == api.Blocked })
	if got.Status.Reason != api.InsufficientCapacity || !strings.Contains(got.Status.Message, "40000m cpu") || !strings.Contains(got.Status.Message, "12000m") {
		t.Errorf("campaign %s: %s, want insufficient-capacity naming 40000m cpu requested and 12000m free", got.Status.Reason, got.Status.Message)
	}
	t.Logf("blocked: %s", got.Status.Message)
	if cap := got.Status.Capacity; cap == nil || cap.Verdict != "never" || cap.Pods != 4 {
		t.Errorf("status.capacity %+v", cap)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, api.ConditionBlocked) {
		t.Errorf("condition Blocked not True: %+v", got.Status.Conditions)
	}
	plans, err := e.plans.List(ctx, metav1.ListOptions{LabelSelector: api.CampaignLabel + "=" + c.Name})
	if err != nil || len(plans.Items) != 0 {
		t.Errorf("plans made: %d (%v)", len(plans.Items), err)
	}
	if n := len(nodeWrites(t, e.node(1))) + len(nodeWrites(t, e.node(2))) + len(nodeWrites(t, e.node(3))); n != audited {
		t.Errorf("%d writes to the nodes after the campaign's creation", n-audited)
	}
	m.stop(t)
}

// TestCampaignBreaker: a 10-node campaign is paused at its midpoint, once
// per cause, and resumes by itself: 3 nodes outside it go NotReady; the
// pods it moved cannot run (every node outside it tainted); the
// cluster-wide pause switch is set. Each time: no eviction request later
// than 1 s after the pause, the Paused condition with its reason within
// 5 s, a resume within 5 s of the recovery plus the hold-down, and in the
// end the campaign completes.
func TestCampaignBreaker(t *testing.T) {
	const holdDown, readyTimeout = 3 * time.Second, 10 * time.Second
	for _, tc := range []struct {
		name   string
		reason string
		// sicken makes the cluster sick and returns what makes it well.
		sicken func(t *testing.T, ctx context.Context, e env) (heal func())
		// late is how long after sicken the pause may come (the cause's
		// own delay) before the 5 s.
		late time.Duration
	}{
		{"nodes not ready", "nodes-not-ready", func(t *testing.T, ctx context.Context, e env) func() {
			for i := 15; i <= 17; i++ {
				e.setNodeReady(t, ctx, e.node(i), false)
			}
			return func() {
				for i := 15; i <= 17; i++ {
					e.setNodeReady(t, ctx, e.node(i), true)
				}
			}
		}, 0},
		{"moved pods not ready", "pods-not-ready", func(t *testing.T, ctx context.Context, e env) func() {
			for i := 11; i <= 17; i++ {
				e.taint(t, ctx, e.node(i), true)
			}
			return func() {
				for i := 11; i <= 17; i++ {
					e.taint(t, ctx, e.node(i), false)
				}
			}
		}, readyTimeout},
		{"pause switch", "paused", func(t *testing.T, ctx context.Context, e env) func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "pause"}, Data: map[string]string{"reason": "incident 4711"}}
			if _, err := e.admin.CoreV1().ConfigMaps(e.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := e.admin.CoreV1().ConfigMaps(e.ns).Delete(ctx, "pause", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// Nodes 1-10 in the campaign, 11-14 for its pods, 15-17
			// bystanders; 12 apps of 4, one pod per node, Ready after
			// 4 s: rounds of evictions several seconds apart.
			e := newEnv(t, ctx, 17)
			e.fleetApps(t, ctx, 12, 4, 4*time.Second, "100m")
			before := e.podUIDsOn(t, ctx, 1, 10)
			m := e.startMaintd(t, "", "--pause-configmap", e.ns+"/pause")
			c := e.campaign(t, ctx, "breaker", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, 10), AllowAllWorkloads: true,
				Breaker: api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 2, PodReadyTimeout: &metav1.Duration{Duration: readyTimeout},
					HoldDown: &metav1.Duration{Duration: holdDown}}})
			// The midpoint: half the pods evicted, as the plans say (the
			// audit log of a whole test run is too long to read this often).
			evicted := func() int {
				plans, err := e.plans.List(ctx, metav1.ListOptions{LabelSelector: api.CampaignLabel + "=" + c.Name})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, p := range plans.Items {
					n += int(p.Status.Pods.Evicted)
				}
				return n
			}
			for evicted() < len(before)/2 {
				select {
				case <-ctx.Done():
					t.Fatalf("%d of %d pods evicted", evicted(), len(before))
				case <-time.After(100 * time.Millisecond):
				}
			}
			heal := tc.sicken(t, ctx, e)
			sick := time.Now()
			paused := e.waitCampaign(t, ctx, c.Name, "paused", func(m *api.MaintenanceCampaign) bool {
				return meta.IsStatusConditionTrue(m.Status.Conditions, api.ConditionPaused)
			})
			seen := time.Now()
			within := 5 * time.Second
			if tc.reason == "paused" {
				within = time.Second // the switch pauses every plan and campaign within 1 s
			}
			if took := seen.Sub(sick) - tc.late; took > within {
				t.Errorf("Paused %s after the cluster got sick (less the cause's own %s), want within %s", took.Round(time.Millisecond), tc.late, within)
			}
			got := meta.FindStatusCondition(paused.Status.Conditions, api.ConditionPaused)
			why := tc.reason
			if b := paused.Status.Breaker; tc.reason != "paused" && (b == nil || b.Reason != tc.reason) {
				t.Errorf("breaker %+v, want reason %s", b, tc.reason)
			} else if b != nil && b.Open {
				why = b.Message
			}
			if !strings.Contains(got.Message, why) {
				t.Errorf("condition Paused says %q, want the cause %q", got.Message, why)
			}
			// No eviction request from the second after the pause until
			// the recovery.
			posts := func() int { real, _ := e.evictions(t); return len(real) }
			var held int
			throughout(t, ctx, seen.Add(time.Second), 100*time.Millisecond, func() { held = posts() })
			throughout(t, ctx, time.Now().Add(3*time.Second), 300*time.Millisecond, func() {
				if n := posts(); n != held {
					t.Fatalf("%d eviction requests while paused (%d when it took hold)", n, held)
				}
			})
			heal()
			healed := time.Now()
			e.waitCampaign(t, ctx, c.Name, "resumed", func(m *api.MaintenanceCampaign) bool {
				return !meta.IsStatusConditionTrue(m.Status.Conditions, api.ConditionPaused)
			})
			limit := holdDown + 5*time.Second
			if tc.reason == "pods-not-ready" {
				limit += 4 * time.Second // the pending pods' own time to Ready once they can run
			}
			if took := time.Since(healed); took > limit {
				t.Errorf("resumed %s after the recovery, want within %s", took.Round(time.Millisecond), limit)
			}
			// The end: release every node as it is drained.
			if _, err := e.campaigns.Patch(ctx, c.Name, types.MergePatchType, []byte(`{"spec":{"release":true}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			done := e.waitCampaign(t, ctx, c.Name, "completed", completed)
			if b := done.Status.Breaker; tc.reason != "paused" && (b == nil || b.Trips != 1) {
				t.Errorf("breaker %+v, want 1 trip", b)
			}
			e.movedOnceAndClean(t, ctx)
			m.stop(t)
		})
	}
}

// cordonNode cordons or uncordons a node by hand, as a person.
func (e env) cordonNode(t *testing.T, ctx context.Context, name string, on bool) {
	t.Helper()
	if _, err := e.admin.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setNodeReady stops (ready false) or restarts the heartbeats of a kwok
// node: kwok stops managing it and its Ready condition is False, as the
// node lifecycle controller sets it once a kubelet is silent; or kwok
// manages it again and it is Ready.
func (e env) setNodeReady(t *testing.T, ctx context.Context, name string, ready bool) {
	t.Helper()
	nodes := e.admin.CoreV1().Nodes()
	manage := `{"metadata":{"annotations":{"kwok.x-k8s.io/node":null}}}`
	if ready {
		manage = `{"metadata":{"annotations":{"kwok.x-k8s.io/node":"fake"}}}`
	}
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, []byte(manage), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	e.updateNode(t, ctx, name, true, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
				c.Status, c.Reason, c.LastTransitionTime, c.LastHeartbeatTime = status, "SentinelTest", metav1.Now(), metav1.Now()
			}
		}
	})
}

// updateNode reads node name, changes it with change and writes it (its
// status when status is set), again on a conflict.
func (e env) updateNode(t *testing.T, ctx context.Context, name string, status bool, change func(*corev1.Node)) {
	t.Helper()
	nodes := e.admin.CoreV1().Nodes()
	for {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(n)
		if status {
			_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		} else {
			_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		}
		if err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}

// taint adds or removes a NoSchedule taint no pod tolerates.
func (e env) taint(t *testing.T, ctx context.Context, name string, on bool) {
	t.Helper()
	sick := corev1.Taint{Key: "sentinel.dev/sick", Effect: corev1.TaintEffectNoSchedule}
	e.updateNode(t, ctx, name, false, func(n *corev1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == sick.Key })
		if on {
			n.Spec.Taints = append(n.Spec.Taints, sick)
		}
	})
}

// TestCampaignRestart: maintd is killed (SIGKILL) at random points of a
// campaign of two waves, at least 5 times; the campaign completes, no pod
// UID is evicted twice, and nothing is left cordoned.
func TestCampaignRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 9)
	e.fleetApps(t, ctx, 8, 3, 2*time.Second, "100m")
	flags := []string{"--max-nodes-in-maintenance", "3"}
	m := e.startMaintd(t, "", flags...)
	c := e.campaign(t, ctx, "restart", api.MaintenanceCampaignSpec{Nodes: e.nodeNames(1, 6), AllowAllWorkloads: true, Release: true,
		Breaker: api.Breaker{MaxNotReadyNodes: notReadyNodes(t, ctx) + 10}})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 23))
	kills := 0
	for {
		cur, err := e.campaigns.Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if completed(cur) {
			break
		}
		if cur.Status.Phase == api.Blocked || cur.Status.Phase == api.Failed {
			t.Fatalf("campaign %s/%s: %s", cur.Status.Phase, cur.Status.Reason, cur.Status.Message)
		}
		// Run 0.3-2 s, then kill, until 5 kills; then let it finish.
		wait := time.Duration(300+rng.IntN(1700)) * time.Millisecond
		if kills >= 5 {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			t.Fatalf("campaign not completed after %d kills: %s/%s: %s", kills, cur.Status.Phase, cur.Status.Reason, cur.Status.Message)
		case <-time.After(wait):
		}
		if kills < 5 {
			m.kill()
			kills++
			t.Logf("kill %d: campaign %s/%s wave %d, %d of %d nodes done", kills, cur.Status.Phase, cur.Status.Reason, cur.Status.Wave, cur.Status.Counts.Completed, cur.Status.Counts.Nodes)
			m = e.startMaintd(t, "", flags...)
		}
	}
	if kills < 5 {
		t.Errorf("the campaign completed after %d kills, want at least 5", kills)
	}
	e.movedOnceAndClean(t, ctx)
	m.stop(t)
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
