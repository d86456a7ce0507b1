package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// availability follows, from a watch started before the plan, every pod and
// Deployment of a namespace: the Ready pods of each app (not being deleted)
// at every event, the pods each app created, and each Deployment's
// spec.replicas at every change.
type availability struct {
	mu       sync.Mutex
	floor    map[string]int // app -> the fewest Ready pods it may have
	ready    map[string]map[string]bool
	created  map[string]int
	replicas map[string][]int32
	low      []string // the moments an app had fewer Ready pods than its floor
	stop     func()
	done     chan struct{}
}

// watchAvailability starts the watches; floor is the fewest Ready pods of
// each app, which it has now.
func (e env) watchAvailability(t *testing.T, ctx context.Context, floor map[string]int) *availability {
	t.Helper()
	a := &availability{floor: floor, ready: map[string]map[string]bool{}, created: map[string]int{}, replicas: map[string][]int32{}, done: make(chan struct{})}
	pods, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		a.pod(&pods.Items[i], false, false)
	}
	deps, err := e.admin.AppsV1().Deployments(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		a.replicas[d.Name] = []int32{*d.Spec.Replicas}
	}
	for app, n := range floor {
		if got := len(a.ready[app]); got < n {
			t.Fatalf("app %s has %d Ready pods before the plan, want %d", app, got, n)
		}
	}
	pw, err := e.admin.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: pods.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := e.admin.AppsV1().Deployments(e.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: deps.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	a.stop = func() { pw.Stop(); dw.Stop() }
	go func() {
		defer close(a.done)
		pc, dc := pw.ResultChan(), dw.ResultChan()
		for pc != nil || dc != nil {
			select {
			case ev, ok := <-pc:
				if !ok {
					pc = nil
					continue
				}
				if pod, ok := ev.Object.(*corev1.Pod); ok {
					a.pod(pod, ev.Type == watch.Added, true)
					if ev.Type == watch.Deleted {
						a.gone(pod)
					}
				}
			case ev, ok := <-dc:
				if !ok {
					dc = nil
					continue
				}
				if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type == watch.Modified {
					a.mu.Lock()
					if h := a.replicas[d.Name]; len(h) == 0 || h[len(h)-1] != *d.Spec.Replicas {
						a.replicas[d.Name] = append(h, *d.Spec.Replicas)
					}
					a.mu.Unlock()
				}
			}
		}
	}()
	t.Cleanup(a.stop)
	return a
}

// pod notes a pod's state: added by a watch event, checked against the
// floor (not while the list before the watch is read).
func (a *availability) pod(pod *corev1.Pod, added, check bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	app := pod.Labels["app"]
	if a.ready[app] == nil {
		a.ready[app] = map[string]bool{}
	}
	if added {
		a.created[app]++
	}
	if controlplane.PodReady(pod) && pod.DeletionTimestamp == nil {
		a.ready[app][pod.Name] = true
	} else {
		delete(a.ready[app], pod.Name)
	}
	if check {
		a.check(app, pod)
	}
}

func (a *availability) gone(pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	app := pod.Labels["app"]
	delete(a.ready[app], pod.Name)
	a.check(app, pod)
}

// check records a moment app has fewer Ready pods than its floor; a.mu is
// held.
func (a *availability) check(app string, pod *corev1.Pod) {
	if n, ok := a.floor[app]; ok && len(a.ready[app]) < n {
		a.low = append(a.low, fmt.Sprintf("%s had %d Ready pods (floor %d: %v) after an event of pod %s (node %q, %s, deleting %t)",
			app, len(a.ready[app]), n, slices.Sorted(maps.Keys(a.ready[app])), pod.Name, pod.Spec.NodeName, pod.Status.Phase, pod.DeletionTimestamp != nil))
	}
}

// result stops the watches and returns what they saw.
func (a *availability) result() (low []string, created map[string]int, replicas map[string][]int32) {
	a.stop()
	<-a.done
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.low, a.created, a.replicas
}

// surgeApps makes n Deployments surge-1..surge-n of replicas pods each on
// node 1, Ready after ready, each with a PDB minAvailable replicas: no pod
// of them can be evicted without a surge. It returns each app's floor.
func (e env) surgeApps(t *testing.T, ctx context.Context, n int, replicas int32, ready time.Duration) map[string]int {
	t.Helper()
	floor := map[string]int{}
	e.cordonOthers(t, ctx, true)
	for i := 1; i <= n; i++ {
		app := fmt.Sprintf("surge-%d", i)
		tmpl := e.podTemplate(app, ready, time.Second, nil)
		tmpl.Labels["tier"] = "surge"
		e.deployment(t, ctx, app, replicas, tmpl)
		e.pdb(t, ctx, app, app, intOrString(int(replicas)), nil)
		floor[app] = int(replicas)
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "tier=surge", n*int(replicas)); err != nil {
		t.Fatal(err)
	}
	e.cordonOthers(t, ctx, false)
	for app := range floor {
		e.pdbUntil(t, ctx, app, "its budget computed", func(st policyv1.PodDisruptionBudgetStatus) bool { return st.ExpectedPods == int32(floor[app]) })
	}
	return floor
}

// cordonOthers cordons (by hand, as a person) or uncordons every node of e
// but node 1.
func (e env) cordonOthers(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: controlplane.PoolLabel + "=" + e.pool})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Name == e.node(1) {
			continue
		}
		if _, err := e.admin.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// restored checks that every Deployment of e has its replicas back and no
// surge annotation, and that its replica history is one surge per entry
// of want (from, from+1, from, ...).
func (e env) restored(t *testing.T, ctx context.Context, history map[string][]int32, want map[string][]int32) {
	t.Helper()
	for app, w := range want {
		d, err := e.admin.AppsV1().Deployments(e.ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := *d.Spec.Replicas; got != w[0] {
			t.Errorf("Deployment %s has %d replicas after the plan, want %d", app, got, w[0])
		}
		for _, k := range []string{drain.SurgeAnnotation, drain.SurgeFromAnnotation} {
			if v, ok := d.Annotations[k]; ok {
				t.Errorf("Deployment %s still carries %s=%q", app, k, v)
			}
		}
		if !slices.Equal(history[app], w) {
			t.Errorf("Deployment %s's replicas went %v, want %v", app, history[app], w)
		}
	}
}

// preflight is k8s-analyze's report, with a surge, on a snapshot of node
// 1 taken now (as kubectl maint preflight --surge takes it): its verdict on
// each pod of the node, by pod name.
func (e env) preflight(t *testing.T, ctx context.Context) map[string]analyze.PodVerdict {
	t.Helper()
	src, err := take.NewREST(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	s, err := take.Take(ctx, src, take.Options{Nodes: []string{e.node(1)}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyze.AnalyzeObjects(s, analyze.Options{Nodes: []string{e.node(1)}, Surge: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]analyze.PodVerdict{}
	for _, v := range r.Nodes[0].Pods {
		if v.Namespace == e.ns {
			out[v.Name] = v
		}
	}
	return out
}

// agree checks that the plan surged exactly the owners the preflight's
// surge verdicts named, from the counts they named.
func agree(t *testing.T, verdicts map[string]analyze.PodVerdict, done *api.MaintenancePlan) {
	t.Helper()
	want := map[string]int32{}
	for name, v := range verdicts {
		if v.Action != analyze.Surge || v.Surge == nil {
			t.Errorf("preflight: pod %s: action %s (%v), want surge", name, v.Action, v.Reasons)
			continue
		}
		want[v.Surge.Kind+"/"+v.Surge.Name] = v.Surge.Replicas
	}
	got := map[string]int32{}
	for _, s := range done.Status.EvictionProgress.Surges {
		got[s.Kind+"/"+s.Name] = s.From
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owners surged (-k8s-analyze --surge's verdicts +maintd's surges):\n%s", diff)
	}
}

// no429 checks the audit log for refused evictions.
func (e env) no429(t *testing.T) int {
	t.Helper()
	real, _ := e.evictions(t)
	for _, ev := range real {
		if ev.Code == 429 {
			t.Errorf("eviction of %s answered 429", ev.Name)
		}
	}
	return len(real)
}

// TestSurge drains node 1, where every app's budget allows no eviction
// without a surge, with spec.surge IfNeeded: ten single-replica apps, and
// one app of 3 with minAvailable 3. No app ever has fewer Ready pods than
// its budget's floor, at most 2 pods are created per pod moved, no
// eviction meets a 429, and each Deployment goes up by one and back once.
func TestSurge(t *testing.T) {
	cases := []struct {
		name     string
		apps     int
		replicas int32
	}{
		{"ten single replicas", 10, 1},
		{"three of minAvailable 3", 1, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			e := newEnv(t, ctx, 3)
			ready := 2 * time.Second
			floor := e.surgeApps(t, ctx, tc.apps, tc.replicas, ready)
			verdicts := e.preflight(t, ctx)
			watched := e.watchAvailability(t, ctx, floor)
			m := e.startMaintd(t, "")
			start := time.Now()
			p := e.plan(t, ctx, "surge", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Surge: api.SurgeIfNeeded})
			done := e.drainedOrStopped(t, ctx, p.Name)
			took := time.Since(start)
			low, created, history := watched.result()
			for _, l := range low {
				t.Error(l)
			}
			moved := tc.apps * int(tc.replicas)
			total := 0
			for _, n := range created {
				total += n
			}
			if total > 2*moved {
				t.Errorf("%d pods created for %d pods moved, more than 2 each: %v", total, moved, created)
			}
			if int(done.Status.Pods.Evicted) != moved {
				t.Errorf("evicted %d, want %d", done.Status.Pods.Evicted, moved)
			}
			want := map[string][]int32{}
			for app := range floor {
				want[app] = []int32{tc.replicas, tc.replicas + 1, tc.replicas}
			}
			e.restored(t, ctx, history, want)
			agree(t, verdicts, done)
			evictions := e.no429(t)
			for _, s := range done.Status.EvictionProgress.Surges {
				if s.State != drain.SurgeRestored || s.Message == "" {
					t.Errorf("surge of %s: %s (%s)", s.Name, s.State, s.Message)
				}
			}
			t.Logf("%d pods moved with a surge in %s (readiness %s): %d pods created (%.2f per pod moved), %d eviction requests, 0 answered 429",
				moved, took.Round(10*time.Millisecond), ready, total, float64(total)/float64(moved), evictions)
			m.stop(t)
		})
	}
}

// TestSurgeRestart kills maintd (SIGKILL) at every new step of a surge: the
// plan completes, and each Deployment is scaled up once and restored once.
func TestSurgeRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3)
	floor := e.surgeApps(t, ctx, 2, 1, 3*time.Second)
	watched := e.watchAvailability(t, ctx, floor)
	m := e.startMaintd(t, "")
	p := e.plan(t, ctx, "surge-restart", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Surge: api.SurgeIfNeeded})
	seen := map[string]bool{}
	planSteps := &stepWatch{name: p.Name}
	var killedAt []string
	for {
		cur, step := e.nextStep(t, ctx, planSteps, seen)
		if cur.Status.Phase == api.Drained {
			break
		}
		m.kill()
		killedAt = append(killedAt, step)
		m = e.startMaintd(t, "")
	}
	t.Logf("killed at %v", killedAt)
	for _, step := range []string{"Draining/surge-requested", "Draining/surge-pending", "Draining/surge-restoring"} {
		if !slices.Contains(killedAt, step) {
			t.Errorf("maintd was not killed at %s: killed at %v", step, killedAt)
		}
	}
	if !slices.ContainsFunc(killedAt, func(s string) bool { return strings.HasPrefix(s, "Draining/eviction-") }) {
		t.Errorf("maintd was not killed after an eviction: killed at %v", killedAt)
	}
	low, _, history := watched.result()
	for _, l := range low {
		t.Error(l)
	}
	want := map[string][]int32{}
	for app := range floor {
		want[app] = []int32{1, 2, 1}
	}
	e.restored(t, ctx, history, want)
	e.no429(t)
	m.stop(t)
}

// TestSurgeStops: a plan that stops mid-surge (past its deadline while the
// surge's pod fits nowhere, or deleted) restores the replicas and evicts
// nothing; a surge maintd may not make (an autoscaler scales the owner, a
// StatefulSet) blocks the plan before any write.
func TestSurgeStops(t *testing.T) {
	// pending is a single-replica app on node 1 whose surge pod fits
	// nowhere (the other node is cordoned by hand), and a plan that
	// accepts that and waits for it.
	pending := func(t *testing.T, ctx context.Context, deadline time.Duration) (env, *availability, *api.MaintenancePlan) {
		e := newEnv(t, ctx, 2)
		floor := e.surgeApps(t, ctx, 1, 1, time.Second)
		e.cordonOthers(t, ctx, true)
		t.Cleanup(func() { e.cordonOthers(t, context.Background(), false) })
		watched := e.watchAvailability(t, ctx, floor)
		e.startMaintd(t, "")
		p := e.plan(t, ctx, "surge-stops", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Surge: api.SurgeIfNeeded,
			AcceptedRisks: []string{"replacement-unschedulable"}, Deadline: &metav1.Duration{Duration: deadline}})
		// The plan says why it waits once its cache has the new pod.
		e.wait(t, ctx, p.Name, "surge-pending, its pod not scheduled", func(q *api.MaintenancePlan) bool {
			return q.Status.Reason == api.SurgePending && strings.Contains(q.Status.Message, "1 not scheduled")
		})
		return e, watched, p
	}
	check := func(t *testing.T, ctx context.Context, e env, watched *availability) {
		low, _, history := watched.result()
		for _, l := range low {
			t.Error(l)
		}
		e.restored(t, ctx, history, map[string][]int32{"surge-1": {1, 2, 1}})
		if real, _ := e.evictions(t); len(real) > 0 {
			t.Errorf("%d evictions sent while the surge's pod was not Ready", len(real))
		}
	}
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e, watched, p := pending(t, ctx, 15*time.Second)
		done := e.waitPhase(t, ctx, p.Name, api.Failed, api.DeadlineExceeded)
		e.wait(t, ctx, p.Name, "its surge restored", func(q *api.MaintenancePlan) bool {
			ss := q.Status.EvictionProgress.Surges
			return len(ss) == 1 && ss[0].State == drain.SurgeRestored
		})
		_ = done
		check(t, ctx, e, watched)
	})
	t.Run("deleted", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e, watched, p := pending(t, ctx, time.Hour)
		if err := e.plans.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitGone(t, ctx, p.Name)
		check(t, ctx, e, watched)
	})
	blocked := func(t *testing.T, ctx context.Context, e env, mention string) {
		t.Helper()
		verdicts := e.preflight(t, ctx)
		e.startMaintd(t, "")
		p := e.plan(t, ctx, "no-surge", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Surge: api.SurgeIfNeeded})
		b := e.waitPhase(t, ctx, p.Name, api.Blocked, api.SurgeImpossible)
		if !strings.Contains(b.Status.Message, mention) {
			t.Errorf("message does not name %q: %s", mention, b.Status.Message)
		}
		// The preflight says the same, pod by pod.
		for name, v := range verdicts {
			if v.Action != analyze.Block || v.NoSurge == "" || !strings.Contains(b.Status.Message, v.NoSurge) {
				t.Errorf("preflight: pod %s: action %s, noSurge %q; the plan says: %s", name, v.Action, v.NoSurge, b.Status.Message)
			}
		}
		if w := nodeWrites(t, e.node(1)); len(w) > 0 {
			t.Errorf("node written: %+v", w)
		}
	}
	t.Run("autoscaler", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e := newEnv(t, ctx, 2)
		e.surgeApps(t, ctx, 1, 1, time.Second)
		one := int32(1)
		hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "surge-1"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "surge-1"},
				MinReplicas: &one, MaxReplicas: 3}}
		if _, err := e.admin.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		blocked(t, ctx, e, "HorizontalPodAutoscaler")
		d, err := e.admin.AppsV1().Deployments(e.ns).Get(ctx, "surge-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Generation != 1 || d.Annotations[drain.SurgeAnnotation] != "" {
			t.Errorf("the autoscaled Deployment was written: generation %d, annotations %v", d.Generation, d.Annotations)
		}
	})
	t.Run("owner maintd may not write", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e := newEnv(t, ctx, 2)
		e.surgeApps(t, ctx, 1, 1, time.Second)
		kc := e.limitedRole(t, ctx, "no-scale", func(r *rbacv1.PolicyRule) bool {
			if slices.Contains(r.Resources, "deployments") {
				r.Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == "patch" })
			}
			return true
		})
		e.startMaintd(t, kc, noPause...)
		p := e.plan(t, ctx, "no-scale", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Surge: api.SurgeIfNeeded})
		b := e.waitPhase(t, ctx, p.Name, api.Blocked, api.SurgeImpossible)
		for _, part := range []string{"maintd may not scale Deployment " + e.ns + "/surge-1", "forbidden"} {
			if !strings.Contains(b.Status.Message, part) {
				t.Errorf("message does not say %q: %s", part, b.Status.Message)
			}
		}
		if real, _ := e.evictions(t); len(real) > 0 {
			t.Errorf("%d evictions sent without a surge", len(real))
		}
	})
	t.Run("statefulset", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e := newEnv(t, ctx, 2)
		e.cordonOthers(t, ctx, true)
		tmpl := e.podTemplate("db", time.Second, time.Second, nil)
		e.statefulSet(t, ctx, "db", 1, tmpl)
		e.pdb(t, ctx, "db", "db", intOrString(1), nil)
		if err := cp.WaitPodsReady(ctx, e.ns, "app=db", 1); err != nil {
			t.Fatal(err)
		}
		e.cordonOthers(t, ctx, false)
		e.pdbUntil(t, ctx, "db", "its budget computed", func(st policyv1.PodDisruptionBudgetStatus) bool { return st.ExpectedPods == 1 })
		blocked(t, ctx, e, "StatefulSet")
	})
}
