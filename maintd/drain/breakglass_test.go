package drain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// refusing is the world with a budget that refuses every eviction (one
// healthy pod needed of one), the plan requested by alice, its drain
// started at t0 with a deadline of 1h.
func refusing() *world {
	w := newWorld()
	w.plan.Annotations = map[string]string{api.CreatedByAnnotation: "alice"}
	w.started(api.CoolingDown, api.BudgetExhausted)
	w.setPDB("shop/web", func(p *PDB) { p.DisruptionsAllowed, p.CurrentHealthy, p.DesiredHealthy, p.ExpectedPods = 0, 2, 2, 2 })
	for i := range w.facts.Analysis.Pods {
		w.facts.Analysis.Pods[i].EvictableNow = analyze.Prediction{Outcome: analyze.OutcomeBudgetExhausted, HTTPStatus: 429, PDB: "web",
			Rule: analyze.RuleBudgetExhausted, Message: "The disruption budget web needs 2 healthy pods and has 2 currently"}
	}
	for uid, p := range w.facts.Pods {
		p.Labels, p.GracePeriodSeconds = map[string]string{"app": "web"}, 45
		w.facts.Pods[uid] = p
	}
	w.facts.MayDelete = map[string]bool{"shop": true}
	return w
}

// override is bob's approval for the plan, made at t0 for 1h+10m, of the
// Deployment's pods, at most max in all and perPDB per budget.
func override(name, approver string, max, perPDB int32) api.MaintenanceOverride {
	return api.MaintenanceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(50 * time.Minute))},
		Spec: api.MaintenanceOverrideSpec{Plan: "p1", ApprovedBy: approver, Reason: "INC-7", Duration: metav1.Duration{Duration: time.Hour},
			Pods: []api.OverridePods{{Namespace: "shop", Workload: "Deployment/web"}}, MaxPods: max, MaxPerPDB: perPDB},
	}
}

func forcedTargets(d Decision) []string {
	var out []string
	for _, t := range d.Targets {
		if t.Force != nil {
			out = append(out, t.Namespace+"/"+t.Name+" "+t.Force.Override+" "+t.Force.ApprovedBy)
		}
	}
	return out
}

var pastDeadline = t0.Add(time.Hour + time.Second)

// TestBreakGlass: an override acts only after the deadline, only on the
// pods a budget refuses, within its bounds, and never when its approver
// is the requester, it has expired or maintd may not delete pods.
func TestBreakGlass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(*world)
		now     time.Time
		forced  []string
		phase   api.Phase
		reason  api.Reason
		message string
	}{
		{name: "before the deadline: the budget's wait", now: t0.Add(55 * time.Minute),
			setup: func(w *world) { w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)} },
			phase: api.CoolingDown, reason: api.BudgetExhausted},
		{name: "past the deadline, no override: failed", now: pastDeadline, setup: func(*world) {},
			phase: api.Failed, reason: api.DeadlineExceeded},
		{name: "past the deadline: one pod per budget", now: pastDeadline,
			setup:  func(w *world) { w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 1)} },
			forced: []string{"shop/web-1 o1 bob"}, phase: api.Draining, reason: api.ForcingDeletes, message: "under override o1 approved by bob"},
		{name: "two per budget", now: pastDeadline,
			setup:  func(w *world) { w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)} },
			forced: []string{"shop/web-1 o1 bob", "shop/web-2 o1 bob"}, phase: api.Draining, reason: api.ForcingDeletes},
		{name: "approved by the requester", now: pastDeadline,
			setup: func(w *world) { w.facts.Overrides = []api.MaintenanceOverride{override("o1", "alice", 2, 2)} },
			phase: api.Blocked, reason: api.OverrideSpent, message: "approved by alice, who requested the plan"},
		{name: "expired", now: t0.Add(2 * time.Hour),
			setup: func(w *world) { w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)} },
			phase: api.Blocked, reason: api.OverrideSpent, message: "override o1 expired at"},
		{name: "break-glass off", now: pastDeadline,
			setup: func(w *world) {
				w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)}
				w.facts.MayDelete["shop"] = false
			},
			phase: api.Blocked, reason: api.BreakGlassDisabled, message: "maintd may not delete pods in namespace shop"},
		{name: "another namespace's pods", now: pastDeadline,
			setup: func(w *world) {
				o := override("o1", "bob", 2, 2)
				o.Spec.Pods[0].Namespace = "bank"
				w.facts.Overrides = []api.MaintenanceOverride{o}
			},
			phase: api.Blocked, reason: api.OverrideSpent, message: "no override in force covers them"},
		{name: "by selector", now: pastDeadline,
			setup: func(w *world) {
				o := override("o1", "bob", 1, 1)
				o.Spec.Pods[0].Workload, o.Spec.Pods[0].Selector = "", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
				w.facts.Overrides = []api.MaintenanceOverride{o}
			},
			forced: []string{"shop/web-1 o1 bob"}, phase: api.Draining, reason: api.ForcingDeletes},
		{name: "spent", now: pastDeadline,
			setup: func(w *world) {
				w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 1, 1)}
				w.plan.Status.Forced = []api.ForcedDelete{{Namespace: "shop", Pod: "web-0", UID: "pod-0", PDB: "web", Override: "o1", Outcome: api.ForcedDeleted}}
			},
			phase: api.Blocked, reason: api.OverrideSpent, message: "override o1 is spent: 1 of 1 pods"},
		{name: "past the deadline, paused: failed as without overrides", now: pastDeadline,
			setup: func(w *world) {
				w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)}
				w.facts.Pause = &Pause{Object: "maintd-system/maintd-pause", Since: t0}
			},
			phase: api.Failed, reason: api.DeadlineExceeded, message: "while it could not evict (CoolingDown: paused)"},
		{name: "past the deadline, a dry run: failed", now: pastDeadline,
			setup: func(w *world) {
				w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 2, 2)}
				w.plan.Spec.DryRun = true
			},
			phase: api.Failed, reason: api.DeadlineExceeded},
		{name: "on the forecast, before the deadline", now: t0.Add(55 * time.Minute),
			setup: func(w *world) {
				o := override("o1", "bob", 1, 1)
				o.Spec.ActAfter = api.ActAfterForecast
				w.facts.Overrides = []api.MaintenanceOverride{o}
				w.facts.Forecast = &analyze.Forecast{Verdict: analyze.VerdictNever, Causes: []analyze.ForecastCause{{Verdict: analyze.VerdictNever, Reason: analyze.ReasonPDBNeverAllows}}}
			},
			forced: []string{"shop/web-1 o1 bob"}, phase: api.Draining, reason: api.ForcingDeletes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := refusing()
			tc.setup(w)
			d := Decide(w.facts, w.plan, tc.now)
			if diff := cmp.Diff(tc.forced, forcedTargets(d)); diff != "" {
				t.Errorf("forced targets (-want +got):\n%s", diff)
			}
			if d.Status.Phase != tc.phase || d.Status.Reason != tc.reason || !strings.Contains(d.Status.Message, tc.message) {
				t.Errorf("status %s/%s %q, want %s/%s containing %q", d.Status.Phase, d.Status.Reason, d.Status.Message, tc.phase, tc.reason, tc.message)
			}
			for _, tg := range d.Targets {
				if tg.Force == nil {
					t.Errorf("target %s/%s is an eviction: the budget refuses it", tg.Namespace, tg.Name)
					continue
				}
				e := tg.Force
				if e.UID != tg.UID || e.PDB != "web" || e.GracePeriodSeconds != 45 || !e.ExpiresAt.Time.Equal(t0.Add(110*time.Minute)) || tg.Ledgered {
					t.Errorf("entry %+v for target %s: want its UID, PDB web, grace 45, expiry t0+110m, not ledgered", e, tg.UID)
				}
				if !hasActive(d.Status, tg.UID) {
					t.Errorf("forced target %s has no active eviction entry", tg.UID)
				}
			}
			if d.Requeue > 0 && d.Requeue < time.Millisecond {
				t.Errorf("requeue in %s: a plan past its deadline waits on events, not on its deadline again", d.Requeue)
			}
			if len(d.Status.Forced) != len(w.plan.Status.Forced) {
				t.Errorf("the decision wrote %d ledger entries: the controller writes them, after the eviction is refused", len(d.Status.Forced)-len(w.plan.Status.Forced))
			}
		})
	}
}

func hasActive(st api.MaintenancePlanStatus, uid types.UID) bool {
	for _, a := range st.EvictionProgress.ActivePods {
		if a.UID == uid {
			return true
		}
	}
	return false
}

// TestLedgerAfterRestart: an entry whose DELETE was never answered is
// settled from the pod as the caches show it: gone, already deleting, or
// (present) sent again, live, under the approval it recorded, but never
// after that approval expired.
func TestLedgerAfterRestart(t *testing.T) {
	entry := api.ForcedDelete{Namespace: "shop", Pod: "web-1", UID: "pod-1", PDB: "web", Override: "o1", ApprovedBy: "bob",
		ApprovedAt: metav1.NewTime(t0.Add(50 * time.Minute)), ExpiresAt: metav1.NewTime(t0.Add(110 * time.Minute)), RecordedAt: metav1.NewTime(t0.Add(time.Hour))}
	for _, tc := range []struct {
		name     string
		pod      func(*world)
		now      time.Time
		outcome  string
		resent   bool
		ledgered int
	}{
		{name: "gone", pod: func(w *world) { w.removePod("pod-1") }, now: pastDeadline.Add(20 * time.Second), outcome: api.ForcedGone},
		{name: "terminating", pod: func(w *world) { w.terminate("pod-1") }, now: pastDeadline.Add(20 * time.Second), outcome: api.ForcedAlreadyDeleting},
		{name: "present: sent again", pod: func(*world) {}, now: pastDeadline.Add(20 * time.Second), outcome: "", resent: true},
		{name: "present, expired", pod: func(*world) {}, now: t0.Add(111 * time.Minute), outcome: api.ForcedNotDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := refusing()
			w.facts.Overrides = []api.MaintenanceOverride{override("o1", "bob", 1, 1)}
			w.plan.Status.Forced = []api.ForcedDelete{entry}
			w.active("web-1", "pod-1", Requested, "10")
			tc.pod(w)
			d := Decide(w.facts, w.plan, tc.now)
			if got := d.Status.Forced[0].Outcome; got != tc.outcome {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
			var resent *Target
			for i := range d.Targets {
				if d.Targets[i].UID == "pod-1" {
					resent = &d.Targets[i]
				}
			}
			if (resent != nil) != tc.resent {
				t.Fatalf("sent again: %v, want %v (targets %+v)", resent != nil, tc.resent, d.Targets)
			}
			if resent != nil && (!resent.Ledgered || !resent.Live || resent.Force == nil || resent.Force.Override != "o1") {
				t.Errorf("resent target %+v: want ledgered, read live, under o1", resent)
			}
			if len(d.Status.Forced) != 1 {
				t.Errorf("%d ledger entries, want the one", len(d.Status.Forced))
			}
			for _, tg := range d.Targets {
				if tg.UID == "pod-2" {
					t.Errorf("web-2 forced: o1 allows 1 pod and its entry for web-1 counts")
				}
			}
		})
	}
}

// TestLedger: entries are added once per pod, and settled once.
func TestLedger(t *testing.T) {
	e := api.ForcedDelete{Namespace: "shop", Pod: "web-1", UID: "pod-1", Override: "o1"}
	st := Ledger(api.MaintenancePlanStatus{}, []api.ForcedDelete{e})
	st = Ledger(st, []api.ForcedDelete{e})
	if len(st.Forced) != 1 {
		t.Fatalf("%d entries after adding one twice", len(st.Forced))
	}
	st = Settled(st, "pod-1", api.ForcedDeleted, t0)
	st = Settled(st, "pod-1", api.ForcedGone, t0.Add(time.Minute))
	if got := st.Forced[0]; got.Outcome != api.ForcedDeleted || !got.Deleted.Time.Equal(t0) {
		t.Errorf("entry %+v: want deleted at t0 (settled once)", got)
	}
}

// TestRetryTakesItsOwnSlot: a request that got no answer in time is sent
// again in its own place: with maxConcurrentEvictions 1 it is not held
// behind itself (found by TestBreakGlassKill: a maintd killed before its
// forced DELETE left the plan waiting forever).
func TestRetryTakesItsOwnSlot(t *testing.T) {
	w := newWorld()
	w.plan.Spec.MaxConcurrentEvictions = 1
	w.started(api.Draining, api.EvictionRequested)
	w.active("web-1", "pod-1", Requested, "10")
	d := Decide(w.facts, w.plan, t0.Add(time.Minute))
	var got []string
	for _, tg := range d.Targets {
		got = append(got, tg.Name)
		if !tg.Live {
			t.Errorf("target %s is not read live before it is sent again", tg.Name)
		}
	}
	if diff := cmp.Diff([]string{"web-1"}, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s\nstatus %s/%s: %s", diff, d.Status.Phase, d.Status.Reason, d.Status.Message)
	}
}
