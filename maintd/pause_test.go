package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// TestPause: the pause switch, set in the middle of a drain, makes the plan
// say paused within 1 s, and no eviction goes out after that second while
// it stays set; deleting it resumes the drain to Drained.
func TestPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3)
	// Three replicas on node 1, one disruption at a time, each replacement
	// Ready 3 s after scheduling: three rounds, time to pause in between.
	e.onNode1(t, ctx, func() {
		e.deployment(t, ctx, "app", 3, e.podTemplate("app", 3*time.Second, time.Second, nil))
		e.pdb(t, ctx, "app", "app", nil, intOrString(1))
	}, 3)
	e.pdbUntil(t, ctx, "app", "one disruption allowed", func(st policyv1.PodDisruptionBudgetStatus) bool { return st.DisruptionsAllowed == 1 })
	m := e.startMaintd(t, "", "--pause-configmap", e.ns+"/pause")
	p := e.plan(t, ctx, "pause", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true})
	e.wait(t, ctx, p.Name, "its first eviction", func(q *api.MaintenancePlan) bool {
		return q.Status.Pods.Evicted >= 1 || q.Status.Reason == api.EvictionAccepted
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "pause"}, Data: map[string]string{"reason": "incident 4711"}}
	if _, err := e.admin.CoreV1().ConfigMaps(e.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := time.Now()
	paused := e.wait(t, ctx, p.Name, "paused", func(q *api.MaintenancePlan) bool { return q.Status.Reason == api.Paused })
	if took := time.Since(set); took > time.Second {
		t.Errorf("the plan said paused %s after the switch was set, want within 1 s", took.Round(time.Millisecond))
	}
	if !meta.IsStatusConditionTrue(paused.Status.Conditions, api.ConditionPaused) {
		t.Errorf("condition Paused not True: %+v", paused.Status.Conditions)
	}
	// The second the switch has to take hold, then two replacements' time
	// to Ready (the budget would have allowed the next round meanwhile):
	// no eviction request after that second.
	var held []controlplane.AuditEvent
	throughout(t, ctx, set.Add(time.Second), 100*time.Millisecond, func() { held, _ = e.evictions(t) })
	throughout(t, ctx, time.Now().Add(7*time.Second), 500*time.Millisecond, func() {
		if during, _ := e.evictions(t); len(during) != len(held) {
			t.Fatalf("%d eviction requests while paused (%d when it took hold)", len(during), len(held))
		}
	})
	if err := e.admin.CoreV1().ConfigMaps(e.ns).Delete(ctx, "pause", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := e.drainedOrStopped(t, ctx, p.Name)
	if c := meta.FindStatusCondition(done.Status.Conditions, api.ConditionPaused); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("condition Paused after the resume: %+v", c)
	}
	if !inOrder(steps(done), []string{"CoolingDown/paused", "Drained/drained"}) {
		t.Errorf("history %v: want paused, then drained", steps(done))
	}
	e.no429(t)
	m.stop(t)
}
