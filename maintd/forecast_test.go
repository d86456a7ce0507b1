package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var (
	forecastSeeds  = flag.Int("forecast-seeds", 10, "seeded scenarios TestForecastAccuracy drains (make forecast-accuracy SEEDS=N runs more)")
	forecastReport = flag.String("forecast-report", "", "write TestForecastAccuracy's table (Markdown) to this file")
	forecastLearn  = flag.Bool("forecast-learn", true, "TestForecastAccuracy lets maintd drain nodes 2 and 3 first and learn; false measures the prior alone (and does not assert)")
)

// podTemplate is a pod template of app, kept on e's nodes, Ready after
// ready and gone grace after its deletion (it takes its whole grace).
func (e env) podTemplate(app string, ready, grace time.Duration, mutate func(*corev1.PodSpec)) corev1.PodTemplateSpec {
	g := int64(grace / time.Second)
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app},
			Annotations: map[string]string{controlplane.PodReadyDelayAnnotation: ready.String(), controlplane.PodDeleteDelayAnnotation: grace.String()}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &g, NodeSelector: map[string]string{controlplane.PoolLabel: e.pool},
			Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	if mutate != nil {
		mutate(&tmpl.Spec)
	}
	return tmpl
}

func (e env) deployment(t *testing.T, ctx context.Context, name string, replicas int32, tmpl corev1.PodTemplateSpec) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl}}
	if _, err := e.admin.AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e env) statefulSet(t *testing.T, ctx context.Context, name string, replicas int32, tmpl corev1.PodTemplateSpec) {
	t.Helper()
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl,
			PodManagementPolicy: appsv1.ParallelPodManagement}}
	if _, err := e.admin.AppsV1().StatefulSets(e.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e env) pdb(t *testing.T, ctx context.Context, name, app string, minAvailable, maxUnavailable *intstr.IntOrString) {
	t.Helper()
	p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, MinAvailable: minAvailable, MaxUnavailable: maxUnavailable}}
	if _, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func intOrString(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }

// onNode1 runs create with node 2 cordoned, so that the n app pods it makes
// land on node 1, waits for them, and uncordons node 2.
func (e env) onNode1(t *testing.T, ctx context.Context, create func(), n int) {
	t.Helper()
	patch := func(v bool) {
		if _, err := e.admin.CoreV1().Nodes().Patch(ctx, e.node(2), types.MergePatchType, fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, v), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(true)
	create()
	if err := cp.WaitPodsReady(ctx, e.ns, "app=app", n); err != nil {
		t.Fatal(err)
	}
	patch(false)
}

// TestForecastNever: drains that can never complete, one per cause of a
// never forecast, are Blocked within 5 s of the plan's creation, with the
// cause in status.forecast, and nothing is written to the node.
func TestForecastNever(t *testing.T) {
	pinned := func(e env) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelHostname: e.node(1)} }
	}
	cpu := func(n string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
		}
	}
	for name, tc := range map[string]struct {
		setup  func(t *testing.T, ctx context.Context, e env)
		accept []string
		reason api.Reason
		cause  string // the first cause's reason (default: the case's name)
		why    string // in its message
	}{
		"pdb-never-allows": {reason: api.PDBMisconfigured, setup: func(t *testing.T, ctx context.Context, e env) {
			e.onNode1(t, ctx, func() { e.deployment(t, ctx, "app", 2, e.podTemplate("app", time.Second, time.Second, nil)) }, 2)
			e.pdb(t, ctx, "app", "app", intOrString(2), nil)
			settled(t, ctx, e, "app", 0)
		}},
		"pdb-overlap": {reason: api.PDBOverlap, setup: func(t *testing.T, ctx context.Context, e env) {
			e.onNode1(t, ctx, func() { e.deployment(t, ctx, "app", 2, e.podTemplate("app", time.Second, time.Second, nil)) }, 2)
			e.pdb(t, ctx, "app", "app", nil, intOrString(1))
			e.pdb(t, ctx, "app-too", "app", nil, intOrString(1))
			settled(t, ctx, e, "app", 1)
			settled(t, ctx, e, "app-too", 1)
		}},
		"replacement-unschedulable": {reason: api.DrainNeverCompletes, accept: []string{"all-replicas-on-node"}, setup: func(t *testing.T, ctx context.Context, e env) {
			e.deployment(t, ctx, "app", 2, e.podTemplate("app", time.Second, time.Second, pinned(e)))
			if err := cp.WaitPodsReady(ctx, e.ns, "app=app", 2); err != nil {
				t.Fatal(err)
			}
		}},
		"unschedulable for its requests": {reason: api.DrainNeverCompletes, cause: "replacement-unschedulable", why: "insufficient cpu", setup: func(t *testing.T, ctx context.Context, e env) {
			// node-2 keeps 12 of its 32 CPUs free; app's pod needs 20.
			e.deployment(t, ctx, "filler", 1, e.podTemplate("filler", time.Second, time.Second, func(s *corev1.PodSpec) {
				cpu("20")(s)
				s.NodeSelector = map[string]string{corev1.LabelHostname: e.node(2)}
			}))
			if err := cp.WaitPodsReady(ctx, e.ns, "app=filler", 1); err != nil {
				t.Fatal(err)
			}
			e.onNode1(t, ctx, func() { e.deployment(t, ctx, "app", 1, e.podTemplate("app", time.Second, time.Second, cpu("20"))) }, 1)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e := newEnv(t, ctx, 2)
			tc.setup(t, ctx, e)
			e.startMaintd(t, "")
			start := time.Now()
			p := e.plan(t, ctx, "plan", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, AcceptedRisks: tc.accept})
			got := e.wait(t, ctx, p.Name, "Blocked with a never forecast", func(p *api.MaintenancePlan) bool {
				return p.Status.Phase == api.Blocked && p.Status.Forecast != nil
			})
			took := time.Since(start)
			t.Logf("%s: Blocked %s (%s) in %s: %s", name, got.Status.Reason, got.Status.Forecast.Verdict, took.Round(time.Millisecond), got.Status.Message)
			if took > 5*time.Second {
				t.Errorf("Blocked %s after the plan's creation, want within 5s", took)
			}
			if got.Status.Reason != tc.reason {
				t.Errorf("reason %s, want %s: %s", got.Status.Reason, tc.reason, got.Status.Message)
			}
			f, cause := got.Status.Forecast, cmp.Or(tc.cause, name)
			if f.Verdict != "never" || len(f.Causes) == 0 || f.Causes[0].Reason != cause || !strings.Contains(f.Causes[0].Message, tc.why) {
				t.Errorf("forecast %+v, want never with the first cause %s (%q)", f, cause, tc.why)
			}
			forecastEvent(t, ctx, e, p.Name, "never")
			if w := nodeWrites(t, e.node(1)); len(w) != 0 {
				t.Errorf("the node was written: %+v", w)
			}
			if real, _ := e.evictions(t); len(real) != 0 {
				t.Errorf("evictions sent: %+v", real)
			}
		})
	}
}

// scenario is a seeded drain for TestForecastAccuracy.
type scenario struct {
	seed      int64
	nodes     int
	workloads []workload
}

// Exit profiles of a workload's pods, as clusters show them: most exit as
// soon as they are asked, some take their whole grace (a process that
// ignores SIGTERM), some a part of it (a server draining its connections).
const (
	exitAtOnce = iota
	exitFullGrace
	exitBetween
)

type workload struct {
	name          string
	statefulSet   bool
	replicas      int
	ready, grace  time.Duration
	minAvailable  *intstr.IntOrString
	maxUnavaiable *intstr.IntOrString
	// exit is the profile of its pods' exits; part the share of the grace
	// its pods take under exitBetween.
	exit int
	part float64
}

// generate draws a feasible scenario from seed: 4-12 nodes, 10-150 pods in
// Deployments and StatefulSets, each with its time to Ready (2-8 s, each
// pod's up to 30% more, drawn by kwok) and its grace (1-8 s), its pods
// exiting at once (2 in 5 workloads; exitOf), after the whole grace (1 in
// 5), or after 20-80% of it (2 in 5), under PDBs with maxUnavailable 1-3 or
// minAvailable (replicas less 1-3).
func generate(seed int64) scenario {
	r := rand.New(rand.NewPCG(uint64(seed), 0xf0ca57))
	sc := scenario{seed: seed, nodes: 4 + r.IntN(9)}
	pods := 10 + r.IntN(141)
	for i := 0; pods > 0; i++ {
		w := workload{name: fmt.Sprintf("w%d", i), statefulSet: r.IntN(4) == 0, replicas: min(pods, 2+r.IntN(14)),
			ready: time.Duration(2+r.IntN(7)) * time.Second, grace: time.Duration(1+r.IntN(8)) * time.Second}
		pods -= w.replicas
		if w.replicas < 2 {
			w.replicas = 2 // a budget needs a spare
		}
		k := 1 + r.IntN(3)
		if r.IntN(3) == 0 {
			w.minAvailable = intOrString(max(w.replicas-k, 1))
		} else {
			w.maxUnavaiable = intOrString(k)
		}
		switch x := r.IntN(5); {
		case x < 2:
			w.exit = exitAtOnce
		case x < 3:
			w.exit = exitFullGrace
		default:
			w.exit, w.part = exitBetween, 0.2+0.6*r.Float64()
		}
		sc.workloads = append(sc.workloads, w)
	}
	return sc
}

// exitOf draws one pod's exit under w's profile: at once, 0.5-1.5 s (a
// kubelet's own round trip: stop the containers, report, delete; kwok can
// do it in no time, which a real node never does, and then a
// StatefulSet's pod is re-created under its name before the disruption
// controller has seen it go, and stays in its budget's disruptedPods
// until they expire, 2 minutes later); the whole grace; or w.part of the
// grace, give or take 20%, at most the grace.
func (w workload) exitOf(r *rand.Rand) time.Duration {
	switch w.exit {
	case exitAtOnce:
		return min(time.Duration(500+r.IntN(1000))*time.Millisecond, w.grace)
	case exitFullGrace:
		return w.grace
	}
	return min(time.Duration(float64(w.grace)*w.part*(0.8+0.4*r.Float64())).Round(time.Millisecond), w.grace)
}

func (s scenario) pods() int {
	n := 0
	for _, w := range s.workloads {
		n += w.replicas
	}
	return n
}

// accuracy is one seed's forecast and drain.
type accuracy struct {
	seed            int64
	nodes, pods     int // in the scenario
	drained         int // pods the drain evicted
	p50, p90, took  time.Duration
	verdict, causes string
}

// TestForecastAccuracy drains node 1 of seeded scenarios with maintd and
// compares the forecast its plan carried when the drain started with how
// long the drain took (from the cordon to Drained, as the plan's watcher
// saw it): |took - p50| within 25% of took, and took at most p90, each in
// at least 90% of the seeds, and no never. The pods' exits are drawn
// (generate), so the forecast is right only as far as maintd learned them:
// before the drain timed, maintd drains nodes 2 and 3 of the same
// workloads and watches their pods exit and their replacements start. The
// seeds run three at a time.
func TestForecastAccuracy(t *testing.T) {
	var (
		mu      sync.Mutex
		results []accuracy
	)
	e0 := newEnv(t, context.Background(), 0)
	m := e0.startMaintd(t, "", "--metrics-address", "127.0.0.1:0", "--learned-configmap", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	addr := m.address(t, ctx)
	cancel()
	t.Run("seeds", func(t *testing.T) {
		sem := make(chan struct{}, 3)
		for seed := int64(1); seed <= int64(*forecastSeeds); seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				a := drainSeed(t, e0, m, addr, seed)
				mu.Lock()
				results = append(results, a)
				mu.Unlock()
			})
		}
	})
	slices.SortFunc(results, func(a, b accuracy) int { return int(a.seed - b.seed) })
	var table strings.Builder
	within, under, never := 0, 0, 0
	fmt.Fprintf(&table, "| seed | nodes | pods | drained | verdict | p50 | p90 | actual | (actual-p50)/actual |\n|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, a := range results {
		dev := float64(a.took-a.p50) / float64(a.took)
		if dev <= 0.25 && dev >= -0.25 {
			within++
		}
		if a.took <= a.p90 {
			under++
		}
		if a.verdict == "never" {
			never++
		}
		fmt.Fprintf(&table, "| %d | %d | %d | %d | %s | %s | %s | %s | %+.0f%% |\n", a.seed, a.nodes, a.pods, a.drained, a.verdict,
			a.p50.Round(100*time.Millisecond), a.p90.Round(100*time.Millisecond), a.took.Round(100*time.Millisecond), 100*dev)
	}
	n := len(results)
	if n == 0 {
		t.Fatal("no seed ran")
	}
	fmt.Fprintf(&table, "\n|p50 - actual| <= 25%% of actual: %d of %d seeds (%.0f%%); actual <= p90: %d of %d (%.0f%%); never on a feasible seed: %d.\n",
		within, n, 100*float64(within)/float64(n), under, n, 100*float64(under)/float64(n), never)
	t.Log("\n" + table.String())
	if *forecastReport != "" {
		if err := os.WriteFile(*forecastReport, []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !*forecastLearn {
		return // a measurement of the prior alone, not the forecast maintd gives
	}
	if within*10 < n*9 {
		t.Errorf("p50 within 25%% of the drain's time in %d of %d seeds, want at least 90%%", within, n)
	}
	if under*10 < n*9 {
		t.Errorf("the drain took at most p90 in %d of %d seeds, want at least 90%%", under, n)
	}
	if never > 0 {
		t.Errorf("%d feasible seeds were forecast never", never)
	}
}

// exits gives each pod of sc's namespace that has none its drawn exit
// (PodDeleteDelayAnnotation), in the order of their names, from r: the
// pods a drain may evict next. drawn keeps what each pod (by UID: a
// StatefulSet's replacement has its pod's name) was given.
func (e env) exits(t *testing.T, ctx context.Context, sc scenario, r *rand.Rand, drawn map[types.UID]time.Duration) {
	t.Helper()
	list, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]workload{}
	for _, w := range sc.workloads {
		byName[w.name] = w
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range list.Items {
		w, ok := byName[p.Labels["app"]]
		if _, done := drawn[p.UID]; !ok || done || p.DeletionTimestamp != nil {
			continue
		}
		d := w.exitOf(r)
		drawn[p.UID] = d
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, controlplane.PodDeleteDelayAnnotation, d.String())
		if _, err := e.admin.CoreV1().Pods(e.ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// settle waits until every workload of sc has its replicas Ready and its
// budget counts every expected pod healthy.
func (e env) settle(t *testing.T, ctx context.Context, sc scenario) {
	t.Helper()
	for _, w := range sc.workloads {
		if err := cp.WaitPodsReady(ctx, e.ns, "app="+w.name, w.replicas); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range sc.workloads {
		e.pdbUntil(t, ctx, w.name, "every expected pod healthy", func(st policyv1.PodDisruptionBudgetStatus) bool {
			return st.ExpectedPods > 0 && st.CurrentHealthy == st.ExpectedPods
		})
	}
}

// drainSeed sets up seed's scenario in its own namespace and nodes, lets
// e0's maintd drain nodes 2 and 3 and watch (warm-up), drains node 1 and
// reports how the forecast held.
func drainSeed(t *testing.T, e0 env, m *maintd, addr string, seed int64) accuracy {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sc := generate(seed)
	e := newEnv(t, ctx, sc.nodes)
	e.label = e0.label
	for _, w := range sc.workloads {
		tmpl := e.podTemplate(w.name, w.ready, w.grace, nil)
		tmpl.Annotations[controlplane.PodReadyJitterAnnotation] = (w.ready * 13 / 10).String()
		tmpl.Annotations[controlplane.PodDeleteDelayAnnotation] = "0s" // each pod's is drawn (exits)
		if w.statefulSet {
			e.statefulSet(t, ctx, w.name, int32(w.replicas), tmpl)
		} else {
			e.deployment(t, ctx, w.name, int32(w.replicas), tmpl)
		}
		e.pdb(t, ctx, w.name, w.name, w.minAvailable, w.maxUnavaiable)
	}
	e.settle(t, ctx, sc)
	r := rand.New(rand.NewPCG(uint64(seed), 0xe817))
	drawn := map[types.UID]time.Duration{}
	e.exits(t, ctx, sc, r, drawn)
	// Warm-up: maintd drains nodes 2 and 3 and watches their pods go and
	// their replacements come; then both come back.
	var warm []string
	for _, n := range []int{2, 3} {
		if !*forecastLearn {
			break
		}
		p := e.plan(t, ctx, fmt.Sprintf("warm-%d", n), api.MaintenancePlanSpec{NodeName: e.node(n), AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 10 * time.Minute}})
		warm = append(warm, p.Name)
	}
	for _, name := range warm {
		e.wait(t, ctx, name, "Drained (warm-up)", func(p *api.MaintenancePlan) bool {
			if p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed {
				t.Fatalf("seed %d: warm-up %s: %s/%s: %s", seed, p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
			}
			return p.Status.Phase == api.Drained
		})
	}
	for _, name := range warm {
		e.release(t, ctx, name)
	}
	for _, name := range warm {
		e.waitPhase(t, ctx, name, api.Completed, api.Uncordoned)
	}
	e.settle(t, ctx, sc)
	e.exits(t, ctx, sc, r, drawn)

	p := e.plan(t, ctx, "plan", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 10 * time.Minute}})
	// The forecast is in maintd_plan_forecast_seconds, and in an Event.
	pending := e.wait(t, ctx, p.Name, "a forecast", func(p *api.MaintenancePlan) bool { return p.Status.Forecast != nil })
	for q, want := range map[string]*metav1.Duration{"0.5": pending.Status.Forecast.P50, "0.9": pending.Status.Forecast.P90} {
		if got := m.forecastSeconds(ctx, addr, p.Name, q); want != nil && got < 0 {
			t.Errorf("maintd_plan_forecast_seconds{plan=%q,quantile=%q} is missing (status says %s)", p.Name, q, want.Duration)
		}
	}
	forecastEvent(t, ctx, e, p.Name, pending.Status.Forecast.Verdict)
	var cordoned time.Time
	var atStart *api.Forecast
	got := e.wait(t, ctx, p.Name, "Drained", func(p *api.MaintenancePlan) bool {
		if cordoned.IsZero() && p.Status.EvictionProgress != nil && p.Status.EvictionProgress.Scope != "" {
			cordoned, atStart = time.Now(), p.Status.Forecast
		}
		if p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed {
			t.Fatalf("seed %d: %s/%s: %s", seed, p.Status.Phase, p.Status.Reason, p.Status.Message)
		}
		return p.Status.Phase == api.Drained
	})
	a := accuracy{seed: seed, nodes: sc.nodes, pods: sc.pods(), drained: int(got.Status.Pods.Evicted), took: time.Since(cordoned)}
	if atStart == nil {
		t.Fatalf("seed %d: the plan started its drain without a forecast", seed)
	}
	a.verdict = atStart.Verdict
	for _, c := range atStart.Causes {
		a.causes += c.Reason + " "
	}
	if atStart.P50 != nil {
		a.p50, a.p90 = atStart.P50.Duration, atStart.P90.Duration
	}
	t.Logf("seed %d: %d nodes, %d pods, %d drained: forecast %s p50 %s p90 %s (%s; path %s), took %s", seed, a.nodes, a.pods, a.drained, a.verdict, a.p50, a.p90, a.causes, atStart.CriticalPath, a.took.Round(100*time.Millisecond))
	return a
}

// forecastEvent waits for the plan's Forecast Event with action verdict.
func forecastEvent(t *testing.T, ctx context.Context, e env, plan, verdict string) {
	t.Helper()
	for {
		for _, ev := range e.planEvents(t, ctx, plan) {
			if ev.Reason == "Forecast" && ev.Action == verdict {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("plan %s: no Forecast event for %s: %+v", plan, verdict, e.planEvents(t, ctx, plan))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// forecastSeconds reads maintd_plan_forecast_seconds of plan at quantile q
// from m's /metrics, polling a few seconds for the scrape to show it; -1
// when it does not.
func (m *maintd) forecastSeconds(ctx context.Context, addr, plan, q string) float64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		for _, s := range m.series(ctx, addr, "maintd_plan_forecast_seconds") {
			if s.labels["plan"] == plan && s.labels["quantile"] == q {
				return s.value
			}
		}
		select {
		case <-ctx.Done():
			return -1
		case <-time.After(100 * time.Millisecond):
		}
	}
}
