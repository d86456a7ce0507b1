package main

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var web = []api.WorkloadRef{{Kind: "Deployment", Name: "web"}}

func workloads(ns string) []api.WorkloadRef {
	out := make([]api.WorkloadRef, len(web))
	for i, w := range web {
		w.Namespace = ns
		out[i] = w
	}
	return out
}

// podsOn lists the pods of ns on node.
func (e env) podsOn(t *testing.T, ctx context.Context, node string) []corev1.Pod {
	t.Helper()
	list, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestDrain walks a plan through every step, 1 to 11: it waits for a slot
// held by another plan, cordons, evicts under the PDB round by round,
// reports Drained, and uncordons on release; deleting it afterwards leaves
// the node alone.
func TestDrain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app=web", 4); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, e.pool, e.node(3)); err != nil {
		t.Fatal(err)
	}
	m := e.startMaintd(t, "", "--max-nodes-in-maintenance", "1")

	// Another plan holds the only slot: a drain of the empty node 3.
	holder := e.plan(t, ctx, "holder", api.MaintenancePlanSpec{NodeName: e.node(3), AllowAllWorkloads: true})
	e.waitPhase(t, ctx, holder.Name, api.Drained, api.ReasonDrained)
	p := e.plan(t, ctx, "drain", api.MaintenancePlanSpec{NodeName: e.node(1), Reason: "kernel 6.12", Workloads: workloads(e.ns)})
	e.waitPhase(t, ctx, p.Name, api.Pending, api.WaitingForSlot)
	e.release(t, ctx, holder.Name)
	e.waitPhase(t, ctx, holder.Name, api.Completed, api.Uncordoned)

	done := e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
	want := []string{"Pending/waiting-for-slot", "Cordoning/cordon-submitted", "Cordoned/cordon-observed",
		"Draining/eviction-requested", "Draining/eviction-accepted", "CoolingDown/pdb-budget-exhausted",
		"Draining/budget-recovered", "Draining/eviction-requested", "Draining/eviction-accepted", "Drained/drained"}
	if !inOrder(steps(done), want) {
		t.Errorf("history %s\nwant in order: %s", history(done), strings.Join(want, " -> "))
	}
	if got := done.Status.Pods; got != (api.PodCounts{Total: 2, Evicted: 2}) {
		t.Errorf("pods %+v, want 2 evicted of 2", got)
	}
	ep := done.Status.EvictionProgress
	if ep == nil || ep.NodeUID == "" || len(ep.WorkloadUIDs) != 1 || ep.Deadline.Sub(ep.StartedAt.Time) != time.Hour {
		t.Errorf("evictionProgress does not bind the targets: %+v", ep)
	}
	node := e.getNode(t, ctx, e.node(1))
	if !node.Spec.Unschedulable || node.Annotations[cordon.OwnerAnnotation] != drain.Owner(done) || node.Annotations[cordon.ReasonAnnotation] != "kernel 6.12" {
		t.Errorf("drained node: unschedulable %t, annotations %v", node.Spec.Unschedulable, node.Annotations)
	}
	if left := e.podsOn(t, ctx, e.node(1)); len(left) != 0 {
		t.Errorf("%d pods left on the drained node", len(left))
	}
	real, _ := e.evictions(t)
	codes := map[int]int{}
	accepted := map[string]int{}
	for _, ev := range real {
		codes[ev.Code]++
		if ev.Code == 201 || ev.Code == 200 {
			accepted[ev.UID]++
		}
		if ev.UID == "" {
			t.Errorf("eviction of %s sent without a UID precondition", ev.Name)
		}
	}
	if diff := cmp.Diff(map[int]int{201: 2}, codes); diff != "" {
		t.Errorf("eviction answers (-want +got):\n%s", diff)
	}
	for pod, n := range accepted {
		if n > 1 {
			t.Errorf("pod uid %s evicted %d times", pod, n)
		}
	}

	e.release(t, ctx, p.Name)
	final := e.waitPhase(t, ctx, p.Name, api.Completed, api.Uncordoned)
	if !inOrder(steps(final), []string{"Drained/drained", "Uncordoning/uncordon-submitted", "Completed/uncordoned"}) {
		t.Errorf("history after release: %s", history(final))
	}
	node = e.getNode(t, ctx, e.node(1))
	if node.Spec.Unschedulable || node.Annotations[cordon.OwnerAnnotation] != "" {
		t.Errorf("released node: unschedulable %t, annotations %v", node.Spec.Unschedulable, node.Annotations)
	}
	if c := cond(final, api.ConditionReady); c != metav1.ConditionTrue {
		t.Errorf("Ready condition %s on a completed plan", c)
	}
	m.stop(t)
}

// TestQueuedPlansMeetTheirDeadlines: with one maintenance slot, three plans
// with a deadline of 30 s each drain one after another, and the wait for the
// slot spends none of a plan's deadline. The first plan holds the slot until
// the two queued plans have waited longer than their deadline (when the
// deadline counted from a plan's first reconcile, they failed
// deadline-exceeded right there); then each plan is released once Drained
// and the next one takes the slot.
//
// It sits right after TestDrain, the other test with a single slot: the
// slots are counted cluster-wide, and a later test of this file may leave
// a node cordoned by a plan whose maintd was killed before it let the
// plan go, which would take the only slot for the rest of the run.
func TestQueuedPlansMeetTheirDeadlines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	var held []string
	free, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := pollUntil(free, func() bool { held = slotsHeld(t, ctx, e); return len(held) == 0 }); err != nil {
		t.Fatalf("maintenance slots held by other tests' plans, counted against --max-nodes-in-maintenance 1: %v", held)
	}
	e.startMaintd(t, "", "--max-nodes-in-maintenance", "1")
	const deadline = 30 * time.Second
	spec := func(i int) api.MaintenancePlanSpec {
		return api.MaintenancePlanSpec{NodeName: e.node(i), Workloads: workloads(e.ns), Deadline: &metav1.Duration{Duration: deadline}}
	}
	first := e.plan(t, ctx, "plan-1", spec(1))
	e.deleteAtEnd(t, first.Name)
	e.wait(t, ctx, first.Name, "the slot", func(p *api.MaintenancePlan) bool {
		return p.Status.EvictionProgress != nil && p.Status.EvictionProgress.StartedAt != nil
	})
	queued := []string{e.plan(t, ctx, "plan-2", spec(2)).Name, e.plan(t, ctx, "plan-3", spec(3)).Name}
	created := time.Now()
	for _, name := range queued {
		e.deleteAtEnd(t, name)
	}
	for _, name := range queued {
		e.waitPhase(t, ctx, name, api.Pending, api.WaitingForSlot)
	}
	e.drainedOrStopped(t, ctx, first.Name)
	// A margin over the deadline: the old start was a plan's first
	// reconcile, a moment after its creation, truncated to the second.
	throughout(t, ctx, created.Add(deadline+3*time.Second), time.Second, func() {
		t.Helper()
		for _, name := range queued {
			p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Status.Phase != api.Pending || p.Status.Reason != api.WaitingForSlot {
				t.Fatalf("plan %s, queued %s ago: %s/%s: %s\nhistory: %s", name, time.Since(created).Round(time.Second), p.Status.Phase, p.Status.Reason, p.Status.Message, history(p))
			}
		}
	})

	done := map[string]*api.MaintenancePlan{}
	cur := first.Name
	for {
		released := time.Now()
		e.release(t, ctx, cur)
		done[cur] = e.waitPhase(t, ctx, cur, api.Completed, api.Uncordoned)
		if len(queued) == 0 {
			break
		}
		// One of the queued plans takes the slot the release freed.
		var next *api.MaintenancePlan
		if err := pollUntil(ctx, func() bool {
			for _, name := range queued {
				p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
				if err == nil && p.Status.EvictionProgress != nil && p.Status.EvictionProgress.StartedAt != nil {
					next = p
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("no queued plan of %v took the slot after %s was released: %v", queued, cur, err)
		}
		ep := next.Status.EvictionProgress
		// startedAt is truncated to the second.
		if ep.StartedAt.Time.Before(released.Truncate(time.Second)) {
			t.Errorf("plan %s started at %s, before plan %s was released at %s", next.Name, ep.StartedAt.UTC().Format(time.RFC3339), cur, released.UTC().Format(time.RFC3339Nano))
		}
		if ep.Deadline == nil || ep.Deadline.Sub(ep.StartedAt.Time) != deadline {
			t.Errorf("plan %s: startedAt %s, deadline %v: want the deadline %s after the start", next.Name, ep.StartedAt, ep.Deadline, deadline)
		}
		e.drainedOrStopped(t, ctx, next.Name)
		queued = slices.DeleteFunc(queued, func(n string) bool { return n == next.Name })
		cur = next.Name
	}
	for name, p := range done {
		if !slices.Contains(steps(p), "Drained/drained") || slices.Contains(steps(p), "Failed/deadline-exceeded") {
			t.Errorf("plan %s: history %s", name, history(p))
		}
		if name != first.Name && !inOrder(steps(p), []string{"Pending/waiting-for-slot", "Cordoning/cordon-submitted", "Drained/drained"}) {
			t.Errorf("plan %s did not wait for the slot, then drain: history %s", name, history(p))
		}
	}
}

func cond(p *api.MaintenancePlan, typ string) metav1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// release sets spec.release.
func (e env) release(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	e.edit(t, ctx, name, func(p *api.MaintenancePlan) { p.Spec.Release = true })
}

// edit changes a plan's spec, re-reading it on conflicts.
func (e env) edit(t *testing.T, ctx context.Context, name string, f func(*api.MaintenancePlan)) {
	t.Helper()
	for range 10 {
		p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(p)
		if _, err = e.plans.Update(ctx, p, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	t.Fatalf("edit plan %s: kept conflicting", name)
}

// TestFinalizer: deleting a plan lifts its own cordon only.
func TestFinalizer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2)
	foreign := e.node(2)
	patch := fmt.Sprintf(`{"spec":{"unschedulable":true},"metadata":{"annotations":{%q:"change-42"}}}`, cordon.OwnerAnnotation)
	if _, err := e.admin.CoreV1().Nodes().Patch(ctx, foreign, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.startMaintd(t, "")
	ours := e.plan(t, ctx, "ours", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true})
	theirs := e.plan(t, ctx, "theirs", api.MaintenancePlanSpec{NodeName: foreign, AllowAllWorkloads: true})
	e.waitPhase(t, ctx, ours.Name, api.Drained, api.ReasonDrained)
	blocked := e.waitPhase(t, ctx, theirs.Name, api.Blocked, api.NodeOccupied)
	if !strings.Contains(blocked.Status.Message, "change-42") {
		t.Errorf("message %q does not name the other owner", blocked.Status.Message)
	}
	for _, name := range []string{ours.Name, theirs.Name} {
		if err := e.plans.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitGone(t, ctx, name)
	}
	if n := e.getNode(t, ctx, e.node(1)); n.Spec.Unschedulable || n.Annotations[cordon.OwnerAnnotation] != "" || n.Annotations[cordon.CordonedAtAnnotation] != "" {
		t.Errorf("our node after the plan's deletion: unschedulable %t, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	if n := e.getNode(t, ctx, foreign); !n.Spec.Unschedulable || n.Annotations[cordon.OwnerAnnotation] != "change-42" {
		t.Errorf("the foreign cordon was touched: unschedulable %t, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	if w := nodeWrites(t, foreign); len(w) != 0 {
		t.Errorf("maintd wrote to the foreign node: %+v", w)
	}
}

// TestBlocked reaches every Blocked reason and Failed on a real cluster and
// checks the message; a plan blocked before the cordon leaves the node
// untouched.
func TestBlocked(t *testing.T) {
	type tcase struct {
		nodes     int
		scenario  string
		spec      func(e env) api.MaintenancePlanSpec
		before    func(t *testing.T, ctx context.Context, e env) // before the plan
		during    func(t *testing.T, ctx context.Context, e env, plan string)
		reason    api.Reason
		phase     api.Phase
		message   string
		untouched bool // the node was never written
	}
	all := func(e env) api.MaintenancePlanSpec {
		return api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true}
	}
	// maintd-stall.yaml's replacement fits on no node, by design: its drain
	// forecast is never (replacement-unschedulable), which a plan accepts
	// to start the drain that stalls (as it would for an autoscaler).
	stall := []string{analyze.ReasonUnschedulable}
	stalling := func(e env) api.MaintenancePlanSpec {
		return api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, AcceptedRisks: stall}
	}
	stalled := func(t *testing.T, ctx context.Context, e env, plan string) {
		t.Helper()
		e.waitPhase(t, ctx, plan, api.CoolingDown, api.BudgetExhausted)
	}
	tests := map[string]tcase{
		"node-not-found": {
			spec: func(e env) api.MaintenancePlanSpec {
				return api.MaintenancePlanSpec{NodeName: e.ns + "-nowhere", AllowAllWorkloads: true}
			},
			reason: api.NodeNotFound, message: "not found",
		},
		"node-occupied by a foreign cordon": {
			nodes: 1, spec: all, untouched: true,
			before: func(t *testing.T, ctx context.Context, e env) {
				patch := fmt.Sprintf(`{"spec":{"unschedulable":true},"metadata":{"annotations":{%q:"change-7"}}}`, cordon.OwnerAnnotation)
				if _, err := e.admin.CoreV1().Nodes().Patch(ctx, e.node(1), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			reason: api.NodeOccupied, message: "cordoned by change-7",
		},
		"node-occupied by another plan": {
			nodes: 1, spec: all,
			before: func(t *testing.T, ctx context.Context, e env) {
				first := e.plan(t, ctx, "first", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true})
				e.waitPhase(t, ctx, first.Name, api.Drained, "")
			},
			reason: api.NodeOccupied, message: "-first",
		},
		"unknown-pods-on-node": {
			nodes: 2, scenario: "maintd-drain.yaml", untouched: true,
			spec: func(e env) api.MaintenancePlanSpec {
				return api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: []api.WorkloadRef{{Kind: "Deployment", Namespace: e.ns, Name: "other"}}}
			},
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 4) },
			reason: api.UnknownPodsOnNode, message: "(Deployment web)",
		},
		"preflight-high-risk": {
			nodes: 1, scenario: "analyze-pvc.yaml", spec: all, untouched: true,
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 1) },
			reason: api.PreflightHighRisk, message: "local-pv-pinned",
		},
		"pdb-misconfigured": {
			nodes: 2, scenario: "maintd-drain.yaml", spec: all, untouched: true,
			before: func(t *testing.T, ctx context.Context, e env) {
				waitReady(t, ctx, e, 4)
				patch := `{"spec":{"maxUnavailable":null,"minAvailable":4}}`
				if _, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				settled(t, ctx, e, "web", 0)
			},
			reason: api.PDBMisconfigured, message: "needs 4 healthy, has 4",
		},
		"pdb-overlap": {
			nodes: 2, scenario: "maintd-drain.yaml", spec: all, untouched: true,
			before: func(t *testing.T, ctx context.Context, e env) {
				waitReady(t, ctx, e, 4)
				e.apply(t, ctx, "maintd-overlap.yaml", nil)
			},
			reason: api.PDBOverlap, message: "web-too",
		},
		"node-uncordoned-externally": {
			nodes: 2, scenario: "maintd-stall.yaml", spec: stalling,
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 4) },
			during: func(t *testing.T, ctx context.Context, e env, plan string) {
				stalled(t, ctx, e, plan)
				if _, err := e.admin.CoreV1().Nodes().Patch(ctx, e.node(1), types.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			reason: api.NodeUncordonedExternally, message: "does not cordon it again",
		},
		"plan-spec-changed": {
			nodes: 2, scenario: "maintd-stall.yaml", spec: stalling,
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 4) },
			during: func(t *testing.T, ctx context.Context, e env, plan string) {
				stalled(t, ctx, e, plan)
				e.edit(t, ctx, plan, func(p *api.MaintenancePlan) { p.Spec.AcceptedRisks = []string{"hostpath"} })
			},
			reason: api.PlanSpecChanged, message: "create a new plan",
		},
		"target-replaced": {
			nodes: 2, scenario: "maintd-stall.yaml",
			spec: func(e env) api.MaintenancePlanSpec {
				return api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns), AcceptedRisks: stall}
			},
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 4) },
			during: func(t *testing.T, ctx context.Context, e env, plan string) {
				stalled(t, ctx, e, plan)
				deps := e.admin.AppsV1().Deployments(e.ns)
				d, err := deps.Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				orphan := metav1.DeletePropagationOrphan
				if err := deps.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
					t.Fatal(err)
				}
				again := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, Labels: d.Labels}, Spec: d.Spec}
				if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					_, err := deps.Create(ctx, again, metav1.CreateOptions{})
					return err == nil, nil
				}); err != nil {
					t.Fatalf("re-create the Deployment: %v", err)
				}
			},
			reason: api.TargetReplaced, message: "was replaced since the drain started",
		},
		"deadline-exceeded": {
			nodes: 2, scenario: "maintd-stall.yaml",
			spec: func(e env) api.MaintenancePlanSpec {
				return api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, AcceptedRisks: stall, Deadline: &metav1.Duration{Duration: 4 * time.Second}}
			},
			before: func(t *testing.T, ctx context.Context, e env) { waitReady(t, ctx, e, 4) },
			phase:  api.Failed, reason: api.DeadlineExceeded, message: "stays cordoned",
		},
	}
	e0 := newEnv(t, context.Background(), 0)
	e0.startMaintd(t, "")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e := newEnv(t, ctx, tc.nodes)
			e.label = e0.label // the shared maintd's plans
			if tc.scenario != "" {
				e.apply(t, ctx, tc.scenario, nil)
			}
			if tc.before != nil {
				tc.before(t, ctx, e)
			}
			p := e.plan(t, ctx, "plan", tc.spec(e))
			if tc.during != nil {
				tc.during(t, ctx, e, p.Name)
			}
			phase := tc.phase
			if phase == "" {
				phase = api.Blocked
			}
			got := e.waitPhase(t, ctx, p.Name, phase, tc.reason)
			if !strings.Contains(got.Status.Message, tc.message) {
				t.Errorf("message %q does not contain %q", got.Status.Message, tc.message)
			}
			if cond(got, api.ConditionBlocked) != metav1.ConditionTrue {
				t.Errorf("condition Blocked is not True: %+v", got.Status.Conditions)
			}
			if tc.untouched && tc.nodes > 0 {
				if w := nodeWrites(t, e.node(1)); len(w) != 0 {
					t.Errorf("the node was written: %+v", w)
				}
				if real, _ := e.evictions(t); len(real) != 0 {
					t.Errorf("evictions sent: %+v", real)
				}
			}
		})
	}
}

func waitReady(t *testing.T, ctx context.Context, e env, n int) {
	t.Helper()
	if err := cp.WaitPodsReady(ctx, e.ns, "app", n); err != nil {
		t.Fatal(err)
	}
}

// settled waits until PDB name observed its spec and allows want.
func settled(t *testing.T, ctx context.Context, e env, name string, want int32) {
	t.Helper()
	e.pdbUntil(t, ctx, name, fmt.Sprintf("%d allowed", want), func(st policyv1.PodDisruptionBudgetStatus) bool { return st.DisruptionsAllowed == want })
}

// pdbUntil polls PDB name until it has observed its spec and ok holds of
// its status, failing the test at ctx's deadline.
func (e env) pdbUntil(t *testing.T, ctx context.Context, name, what string, ok func(policyv1.PodDisruptionBudgetStatus) bool) {
	t.Helper()
	for {
		pdb, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && pdb.Status.ObservedGeneration >= pdb.Generation && ok(pdb.Status) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("PDB %s did not settle at %s: %v", name, what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestEvictionForbidden: a maintd whose role lacks pods/eviction blocks the
// plan with eviction-forbidden and does not retry in a loop.
func TestEvictionForbidden(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	kc := e.limitedRole(t, ctx, "no-evict", func(r *rbacv1.PolicyRule) bool {
		return len(r.Resources) != 1 || r.Resources[0] != "pods/eviction"
	})
	e.startMaintd(t, kc, noPause...)
	p := e.plan(t, ctx, "plan", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, MaxCooldown: &metav1.Duration{Duration: time.Minute}})
	got := e.waitPhase(t, ctx, p.Name, api.Blocked, api.EvictionForbidden)
	if !strings.Contains(got.Status.Message, "cannot create resource") {
		t.Errorf("message %q does not quote the API's refusal", got.Status.Message)
	}
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Sub == "eviction" && ev.Namespace == e.ns {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d eviction requests, want 1 (then wait maxCooldown)", n)
	}
}

// noPause turns off maintd's pause switch, for a ServiceAccount of
// limitedRole: it may not read the shipped switch (a Role in
// maintd-system), and a maintd that cannot read its switch does not start.
var noPause = []string{"--pause-configmap", ""}

// limitedRole binds a ServiceAccount of e's namespace to a ClusterRole with
// the rules of the shipped one that keep selects (keep may also narrow a
// rule it keeps), and returns its kubeconfig.
func (e env) limitedRole(t *testing.T, ctx context.Context, name string, keep func(*rbacv1.PolicyRule) bool) string {
	t.Helper()
	role, err := cp.ApplyClusterRole(ctx, "deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	limited := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "maintd-" + name + "-" + e.ns}}
	for _, r := range role.Rules {
		if keep(&r) {
			limited.Rules = append(limited.Rules, r)
		}
	}
	if _, err := e.admin.RbacV1().ClusterRoles().Create(ctx, limited, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc, err := cp.BindServiceAccount(ctx, e.ns, "maintd", limited.Name)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestStopBeforeSync: SIGTERM while the caches cannot sync (a role that
// may read plans but no pod, node or workload) is a clean stop: exit 0,
// said in the log.
func TestStopBeforeSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	kc := e.limitedRole(t, ctx, "plans-only", func(r *rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, api.SchemeGroupVersion.Group)
	})
	m := e.startMaintd(t, kc)
	m.waitLog(t, ctx, regexp.MustCompile(`msg="waiting for the caches"`))
	m.stop(t)
	m.waitLog(t, ctx, regexp.MustCompile(`msg="stopped before the caches synced"`))
}

// TestDryRun: a dry run writes nothing to nodes or pods and reports the
// per-pod verdicts.
func TestDryRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	settled(t, ctx, e, "web", 1)
	e.startMaintd(t, "")
	p := e.plan(t, ctx, "dry", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns), DryRun: true})
	got := e.wait(t, ctx, p.Name, "dry-run verdicts", func(p *api.MaintenancePlan) bool { return len(p.Status.DryRun) == 2 })
	outcomes := map[string]int{}
	for _, v := range got.Status.DryRun {
		outcomes[v.Outcome]++
	}
	// Each dry run is judged alone: both fit the budget of 1.
	if diff := cmp.Diff(map[string]int{"accepted": 2}, outcomes); diff != "" {
		t.Errorf("dry-run outcomes (-want +got):\n%s", diff)
	}
	real, dry := e.evictions(t)
	if len(real) != 0 || len(dry) != 2 {
		t.Errorf("evictions: %d real, %d dry runs; want 0 and 2", len(real), len(dry))
	}
	if w := nodeWrites(t, e.node(1)); len(w) != 0 {
		t.Errorf("the node was written: %+v", w)
	}
}

// TestEventStorm is the 429-flood regression: while the PDB is exhausted,
// pod and PDB updates arrive at 20/s; no eviction is sent to that PDB until
// its status allows one, and none is refused.
func TestEventStorm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Pods take 5 s to be Ready: after each eviction the budget stays
	// exhausted that long.
	e := newEnv(t, ctx, 2)
	e.apply(t, ctx, "maintd-drain.yaml", map[string]string{"DELAY": "5s"})
	waitReady(t, ctx, e, 4)
	if err := cp.CreateNodes(ctx, e.pool, e.node(3)); err != nil {
		t.Fatal(err)
	}
	e.startMaintd(t, "")
	storm, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	updates := 0
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-storm.Done():
				return
			case <-tick.C:
			}
			body := fmt.Sprintf(`{"metadata":{"annotations":{"storm":"%d"}}}`, i)
			var err error
			if i%2 == 0 {
				_, err = e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Patch(storm, "web", types.MergePatchType, []byte(body), metav1.PatchOptions{})
			} else {
				list, lerr := e.admin.CoreV1().Pods(e.ns).List(storm, metav1.ListOptions{FieldSelector: "spec.nodeName=" + e.node(2)})
				if lerr != nil {
					continue
				}
				for _, pod := range list.Items {
					if controlplane.PodReady(&pod) {
						_, err = e.admin.CoreV1().Pods(e.ns).Patch(storm, pod.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
						break
					}
				}
			}
			if err == nil {
				updates++
			}
		}
	})
	p := e.plan(t, ctx, "storm", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns)})
	got := e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
	stop()
	wg.Wait()
	if updates < 20 {
		t.Errorf("only %d updates in the storm", updates)
	}
	if !inOrder(steps(got), []string{"CoolingDown/pdb-budget-exhausted", "Draining/budget-recovered"}) {
		t.Errorf("the plan never waited for the budget: %s", history(got))
	}
	real, _ := e.evictions(t)
	codes := map[int]int{}
	for _, ev := range real {
		codes[ev.Code]++
	}
	if diff := cmp.Diff(map[int]int{201: 2}, codes); diff != "" {
		t.Errorf("eviction answers during the storm (-want +got):\n%s", diff)
	}
}

// TestRestart kills maintd with SIGKILL at every step the test sees it reach
// and starts it again: the plan completes, no pod gets two accepted
// evictions, the start and the deadline never move. A finalizer holds one
// pod, so the wait for its exit lasts until maintd was killed in it; the
// plan stays Drained until it was killed there too. Which other steps a
// kill lands on depends on how fast maintd passes them.
func TestRestart(t *testing.T) {
	// Some kill points leave the plan cooling down for maxCooldown (60 s)
	// before it resumes, up to twice; under -race that has taken 3 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	if err := cp.CreateNodes(ctx, e.pool, e.node(3)); err != nil {
		t.Fatal(err)
	}
	pods := e.podsOn(t, ctx, e.node(1))
	if len(pods) != 2 {
		t.Fatalf("%d pods on node 1, want 2", len(pods))
	}
	held := pods[0].Name
	hold := `{"metadata":{"finalizers":["sentinel.dev/test-hold"]}}`
	if _, err := e.admin.CoreV1().Pods(e.ns).Patch(ctx, held, types.MergePatchType, []byte(hold), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	m := e.startMaintd(t, "")
	p := e.plan(t, ctx, "restart", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns)})
	seen := map[string]bool{}
	planSteps := &stepWatch{name: p.Name}
	var started *metav1.Time
	var killedAt []string
	released := false
	for {
		cur, step := e.nextStep(t, ctx, planSteps, seen)
		if ep := cur.Status.EvictionProgress; ep != nil {
			if started == nil {
				started = ep.StartedAt.DeepCopy()
			} else if !ep.StartedAt.Equal(started) || !ep.Deadline.Time.Equal(started.Add(time.Hour)) {
				t.Fatalf("startedAt %s deadline %s moved (first %s)", ep.StartedAt, ep.Deadline, started)
			}
		}
		if cur.Status.Phase == api.Completed {
			break
		}
		m.kill()
		killedAt = append(killedAt, step)
		m = e.startMaintd(t, "")
		if step == "Draining/waiting-for-pod-exit" && !released {
			// Let the held pod go once maintd waited for it across a restart.
			if _, err := e.admin.CoreV1().Pods(e.ns).Patch(ctx, held, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err == nil {
				released = true
			}
		}
		if cur.Status.Phase == api.Drained {
			e.release(t, ctx, p.Name)
		}
	}
	t.Logf("killed at %v", killedAt)
	for _, step := range []string{"Draining/waiting-for-pod-exit", "Drained/drained"} {
		if !slices.Contains(killedAt, step) {
			t.Errorf("maintd was not killed at %s: killed at %v", step, killedAt)
		}
	}
	for _, step := range []string{"Cordoning/cordon-submitted", "Draining/eviction-requested", "Drained/drained", "Uncordoning/uncordon-submitted"} {
		if !seen[step] {
			t.Errorf("step %s not seen: %v", step, sortedSteps(seen))
		}
	}
	real, _ := e.evictions(t)
	accepted := map[string]int{}
	for _, ev := range real {
		if ev.Code == 201 || ev.Code == 200 {
			accepted[ev.UID]++
		}
		if ev.UID == "" && !ev.Disconnected {
			t.Errorf("eviction of %s sent without a UID precondition", ev.Name)
		}
		if ev.Code == 429 {
			t.Errorf("eviction of %s refused (429) after a restart", ev.Name)
		}
	}
	for pod, n := range accepted {
		if n > 1 {
			t.Errorf("pod uid %s got %d accepted evictions", pod, n)
		}
	}
	if len(accepted) != 2 {
		t.Errorf("accepted evictions for %v, want the 2 pods of node 1", accepted)
	}
	m.stop(t)
}

// stepWatch watches plan name's writes, each one (a poll may miss a status
// that the next write replaced within milliseconds).
type stepWatch struct {
	name string
	rv   string // of the last write seen; "" to start from the current one
}

// nextStep waits for a phase/reason of the plan not yet seen and marks it
// seen, and fails the test when the plan is Blocked or Failed. Once the
// plan is Drained or Completed, every step of its history is marked seen.
func (e env) nextStep(t *testing.T, ctx context.Context, s *stepWatch, seen map[string]bool) (*api.MaintenancePlan, string) {
	t.Helper()
	var cur *api.MaintenancePlan
	for cur == nil {
		w, err := e.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + s.name, ResourceVersion: s.rv})
		if err != nil {
			t.Fatalf("watch plan %s: %v", s.name, err)
		}
		for ev := range w.ResultChan() {
			q, ok := ev.Object.(*api.MaintenancePlan)
			if !ok {
				s.rv = "" // an error (its version too old): from the current one
				break
			}
			s.rv = q.ResourceVersion
			if q.Status.Phase != "" && !seen[string(q.Status.Phase)+"/"+string(q.Status.Reason)] {
				cur = q
				break
			}
		}
		w.Stop()
		if cur == nil && ctx.Err() != nil {
			t.Fatalf("plan %s: no new step: %v", s.name, ctx.Err())
		}
	}
	step := string(cur.Status.Phase) + "/" + string(cur.Status.Reason)
	seen[step] = true
	switch cur.Status.Phase {
	case api.Drained, api.Completed:
		for _, h := range steps(cur) {
			seen[h] = true
		}
	case api.Blocked, api.Failed:
		t.Fatalf("plan stopped at %s: %s", step, cur.Status.Message)
	}
	return cur, step
}

func sortedSteps(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEvictionRejected: an admission policy that refuses evictions (422)
// blocks the plan with eviction-rejected and the policy's message.
func TestEvictionRejected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	settled(t, ctx, e, "web", 1)
	e.apply(t, ctx, "maintd-reject.yaml", nil)
	// The policy takes effect a moment after it is created: wait until a
	// server-side dry-run eviction is refused.
	pod := e.podsOn(t, ctx, e.node(1))[0]
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: e.ns}, DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}
		err := e.admin.CoreV1().Pods(e.ns).EvictV1(ctx, ev)
		return apierrors.IsInvalid(err), nil
	})
	if err != nil {
		t.Fatalf("the admission policy never refused an eviction: %v", err)
	}
	e.startMaintd(t, "")
	p := e.plan(t, ctx, "rejected", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns)})
	got := e.waitPhase(t, ctx, p.Name, api.Blocked, api.EvictionRejected)
	if !strings.Contains(got.Status.Message, "evictions are frozen") {
		t.Errorf("message %q does not quote the policy", got.Status.Message)
	}
	real, _ := e.evictions(t)
	if len(real) != 1 || real[0].Code != 422 {
		t.Errorf("evictions %+v, want one answered 422", real)
	}
}

// throughout runs check now, every interval until the time until, and once
// at it: a watch over a span of wall time, for a check that fails the test
// at once (t.Fatalf) when something changed.
func throughout(t *testing.T, ctx context.Context, until time.Time, every time.Duration, check func()) {
	t.Helper()
	for {
		check()
		if !time.Now().Before(until) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the test's time ran out %s before the end of the watch", time.Until(until).Round(time.Second))
		case <-time.After(min(every, time.Until(until))):
		}
	}
}

// planEvent is what the test compares of one Event.
type planEvent struct {
	Reason, Action, Note, ResourceVersion string
	Count                                 int32
}

// planEvents are maintd's Events about plan name (regarding it, or related
// to it), by the Event's namespace/name.
func (e env) planEvents(t *testing.T, ctx context.Context, name string) map[string]planEvent {
	t.Helper()
	list, err := e.admin.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "reportingController=maintd"})
	if err != nil {
		t.Fatalf("list maintd's events: %v", err)
	}
	out := map[string]planEvent{}
	for _, ev := range list.Items {
		about := ev.Regarding.Kind == "MaintenancePlan" && ev.Regarding.Name == name
		if r := ev.Related; r != nil && r.Kind == "MaintenancePlan" && r.Name == name {
			about = true
		}
		if !about {
			continue
		}
		pe := planEvent{Reason: ev.Reason, Action: ev.Action, Note: ev.Note, ResourceVersion: ev.ResourceVersion, Count: 1}
		if ev.Series != nil {
			pe.Count = ev.Series.Count
		}
		out[ev.Namespace+"/"+ev.Name] = pe
	}
	return out
}

// TestWaitingPlanIsSilent: a plan waiting for a budget that nothing will
// restore writes nothing and records no Event while it waits. Deployment
// web of maintd-stall.yaml scaled to 5 replicas of 12 CPUs on two 32-CPU
// nodes: 4 run, two on the drained node, and the fifth stays Pending, so
// PDB web (maxUnavailable 1) allows 0 disruptions from the start and
// nothing changes afterwards. maxCooldown is 20 s so that the old timer,
// which lifted the budget's cooldown by itself, would have flipped the plan
// to Draining/budget-recovered and back to CoolingDown/pdb-budget-exhausted
// (a status write and Events each time) several times within the 2
// minutes watched.
func TestWaitingPlanIsSilent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-stall.yaml")
	waitReady(t, ctx, e, 4)
	if _, err := e.admin.AppsV1().Deployments(e.ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	settled(t, ctx, e, "web", 0)
	// The budget can show 0 allowed (from the Deployment's new scale)
	// before the ReplicaSet made the fifth pod: wait for it.
	var count, pending, onNode int
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil
		}
		count, pending, onNode = len(pods.Items), 0, 0
		for _, pod := range pods.Items {
			switch pod.Spec.NodeName {
			case "":
				pending++
			case e.node(1):
				onNode++
			}
		}
		return count == 5 && pending == 1 && onNode == 2, nil
	}); err != nil {
		t.Fatalf("%d pods, %d of them Pending, %d on the drained node; want 5, 1 and 2", count, pending, onNode)
	}

	e.startMaintd(t, "")
	// The fifth pod fits nowhere, nor would a replacement: the plan
	// accepts the never forecast that says so, to wait on the budget.
	p := e.plan(t, ctx, "silent", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns),
		AcceptedRisks: []string{analyze.ReasonUnschedulable}, MaxCooldown: &metav1.Duration{Duration: 20 * time.Second}})
	e.deleteAtEnd(t, p.Name)
	e.waitPhase(t, ctx, p.Name, api.CoolingDown, api.BudgetExhausted)
	// The step's Event may be sent after the status write.
	var events map[string]planEvent
	if err := pollUntil(ctx, func() bool {
		events = e.planEvents(t, ctx, p.Name)
		for _, ev := range events {
			if ev.Reason == string(api.CoolingDown) && ev.Action == string(api.BudgetExhausted) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no Event about the plan's CoolingDown/pdb-budget-exhausted: %v; events %+v", err, events)
	}
	base, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events = e.planEvents(t, ctx, p.Name)
	t.Logf("plan %s at resourceVersion %s, %s, %d events about it", p.Name, base.ResourceVersion, history(base), len(events))

	start := time.Now()
	throughout(t, ctx, start.Add(2*time.Minute), 3*time.Second, func() {
		t.Helper()
		got, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != base.ResourceVersion {
			t.Fatalf("%s after it began to wait, the plan was written (resourceVersion %s, then %s); history %s\nstatus (-before +after):\n%s",
				time.Since(start).Round(time.Second), base.ResourceVersion, got.ResourceVersion, history(got), cmp.Diff(base.Status, got.Status))
		}
		if diff := cmp.Diff(events, e.planEvents(t, ctx, p.Name)); diff != "" {
			t.Fatalf("%s after the plan began to wait, maintd's Events about it changed (-before +after):\n%s", time.Since(start).Round(time.Second), diff)
		}
	})
	if real, _ := e.evictions(t); len(real) != 0 {
		t.Errorf("evictions sent under a budget that allowed none: %+v", real)
	}
}

// drainedOrStopped waits until plan name is Drained, failing at once when
// it is Blocked or Failed.
func (e env) drainedOrStopped(t *testing.T, ctx context.Context, name string) *api.MaintenancePlan {
	t.Helper()
	p := e.wait(t, ctx, name, "Drained", func(p *api.MaintenancePlan) bool {
		return p.Status.Phase == api.Drained || p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed
	})
	if p.Status.Phase != api.Drained {
		t.Fatalf("plan %s: %s/%s: %s\nhistory: %s", name, p.Status.Phase, p.Status.Reason, p.Status.Message, history(p))
	}
	return p
}

// TestDryRunMadeReal: a dry run spends none of the deadline. A plan that
// stays a dry run for longer than its deadline (20 s) drains once dryRun is
// set to false, its deadline counting from then; the dry run runs once for
// its generation.
func TestDryRunMadeReal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2, "maintd-drain.yaml")
	waitReady(t, ctx, e, 4)
	settled(t, ctx, e, "web", 1)
	e.startMaintd(t, "")
	const deadline = 20 * time.Second
	p := e.plan(t, ctx, "dry", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns), DryRun: true,
		Deadline: &metav1.Duration{Duration: deadline}})
	e.deleteAtEnd(t, p.Name)
	created := time.Now()
	e.wait(t, ctx, p.Name, "Pending/dry-run with verdicts", func(p *api.MaintenancePlan) bool {
		return p.Status.Phase == api.Pending && p.Status.Reason == api.DryRunDone && len(p.Status.DryRun) == 2
	})
	// A margin over the deadline: the old start was the plan's first
	// reconcile, a moment after its creation, truncated to the second.
	throughout(t, ctx, created.Add(deadline+3*time.Second), time.Second, func() {
		t.Helper()
		got, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != api.Pending || got.Status.Reason != api.DryRunDone {
			t.Fatalf("dry run, %s after its creation: %s/%s: %s\nhistory: %s", time.Since(created).Round(time.Second), got.Status.Phase, got.Status.Reason, got.Status.Message, history(got))
		}
	})
	if real, dry := e.evictions(t); len(real) != 0 || len(dry) != 2 {
		t.Errorf("evictions in the dry run: %d real, %d dry runs; want 0 and 2 (once per generation)", len(real), len(dry))
	}

	madeReal := time.Now()
	e.edit(t, ctx, p.Name, func(p *api.MaintenancePlan) { p.Spec.DryRun = false })
	done := e.drainedOrStopped(t, ctx, p.Name)
	ep := done.Status.EvictionProgress
	if ep.StartedAt == nil || ep.StartedAt.Time.Before(madeReal.Truncate(time.Second)) || ep.Deadline == nil || ep.Deadline.Sub(ep.StartedAt.Time) != deadline {
		t.Errorf("evictionProgress startedAt %v, deadline %v: want a start at or after dryRun was set to false (%s) and the deadline %s after it",
			ep.StartedAt, ep.Deadline, madeReal.UTC().Format(time.RFC3339Nano), deadline)
	}
	if !inOrder(steps(done), []string{"Pending/dry-run", "Cordoning/cordon-submitted", "Drained/drained"}) {
		t.Errorf("history %s", history(done))
	}
	if got := done.Status.Pods; got != (api.PodCounts{Total: 2, Evicted: 2}) {
		t.Errorf("pods %+v, want 2 evicted of 2", got)
	}
}

// deleteAtEnd deletes plan name when the test ends, before the test's
// maintd (started earlier) is killed, and waits until maintd's finalizer
// lets it go: a plan holding a cordon takes one of every maintd's
// maintenance slots, cluster-wide, for as long as it exists.
func (e env) deleteAtEnd(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.plans.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete plan %s: %v", name, err)
			return
		}
		for {
			p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			select {
			case <-ctx.Done():
				if p != nil {
					t.Errorf("plan %s still exists 30 s after its deletion: %s/%s, finalizers %v", name, p.Status.Phase, p.Status.Reason, p.Finalizers)
				} else {
					t.Errorf("plan %s after its deletion: %v", name, err)
				}
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// slotsHeld are the nodes of the cluster cordoned by a plan that exists:
// the maintenance slots in use, for every maintd.
func slotsHeld(t *testing.T, ctx context.Context, e env) []string {
	t.Helper()
	nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, n := range nodes.Items {
		name, uid, ok := drain.ParseOwner(n.Annotations[cordon.OwnerAnnotation])
		if !ok {
			continue
		}
		if p, err := e.plans.Get(ctx, name, metav1.GetOptions{}); err == nil && p.UID == uid {
			held = append(held, n.Name+" by plan "+name)
		}
	}
	return held
}
