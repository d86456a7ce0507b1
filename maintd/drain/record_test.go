package drain

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func TestRecord(t *testing.T) {
	now := t0.Add(time.Minute)
	web1 := Target{Namespace: "shop", Name: "web-1", UID: "pod-1", PDB: "web", PDBVersion: "10"}
	res := func(o evict.Outcome, reason, msg string, retry int) *evict.Result {
		r := evict.NewResult("shop", "web-1")
		r.Outcome, r.Reason, r.Message, r.RetryAfterSeconds = o, reason, msg, retry
		return r
	}
	type active struct {
		uid     types.UID
		outcome string
	}
	tests := map[string]struct {
		answer       Answer
		phase        api.Phase
		reason       api.Reason
		active       []active
		cooldown     string // key/reason/seconds from now
		skippedDelta int32
	}{
		"accepted: wait for the pod": {
			answer: Answer{Target: web1, Result: res(evict.Accepted, "", "eviction accepted", 0)},
			phase:  api.Draining, reason: api.EvictionAccepted, active: []active{{"pod-1", Accepted}},
		},
		"gone (404): skipped, not evicted": {
			answer: Answer{Target: web1, Result: res(evict.Gone, evict.ReasonNotFound, "not found", 0)},
			phase:  api.Draining, reason: api.EvictionRequested, skippedDelta: 1,
		},
		"gone (replaced, 409 on the UID)": {
			answer: Answer{Target: web1, Result: res(evict.Gone, evict.ReasonReplaced, "uid precondition", 0)},
			phase:  api.Draining, reason: api.EvictionRequested, skippedDelta: 1,
		},
		"budget exhausted: PDB cooldown for maxCooldown": {
			answer: Answer{Target: web1, Result: res(evict.BudgetExhausted, "", "needs 7 healthy pods and has 7", 0)},
			phase:  api.CoolingDown, reason: api.BudgetExhausted, cooldown: "shop/web/pdb-budget-exhausted/60",
		},
		"pdb stale: Retry-After honoured": {
			answer: Answer{Target: web1, Result: res(evict.PDBStale, "", "still being processed", 10)},
			phase:  api.CoolingDown, reason: api.PDBStale, cooldown: "shop/web/pdb-stale/10",
		},
		"withheld by another plan's throttle: never sent, every eviction waits for its end": {
			answer: Answer{Target: web1, Withheld: now.Add(3 * time.Second)},
			phase:  api.CoolingDown, reason: api.EvictionThrottled, cooldown: "*/eviction-throttled/3",
		},
		"throttled: Retry-After, capped by maxCooldown": {
			answer: Answer{Target: web1, Result: res(evict.Throttled, "", "too many requests", 600)},
			phase:  api.CoolingDown, reason: api.EvictionThrottled, cooldown: "*/eviction-throttled/60",
		},
		"contention (504): backoff": {
			answer: Answer{Target: web1, Result: res(evict.Contention, evict.ReasonPDBConflicts, "conflicts", 0)},
			phase:  api.CoolingDown, reason: api.APIContention, cooldown: "shop/web/api-contention/1",
		},
		"overlap (500): blocked": {
			answer: Answer{Target: web1, Result: res(evict.PDBOverlap, "", "more than one PodDisruptionBudget", 0)},
			phase:  api.Blocked, reason: api.PDBOverlap, cooldown: "*/pdb-overlap/60",
		},
		"forbidden (403): blocked, no loop": {
			answer: Answer{Target: web1, Result: res(evict.Forbidden, evict.ReasonRBAC, "cannot create pods/eviction", 0)},
			phase:  api.Blocked, reason: api.EvictionForbidden, cooldown: "*/eviction-forbidden/60",
		},
		"invalid (422): blocked": {
			answer: Answer{Target: web1, Result: res(evict.Invalid, evict.ReasonBadRequest, "bad", 0)},
			phase:  api.Blocked, reason: api.EvictionRejected, cooldown: "*/eviction-rejected/60",
		},
		"unknown: keep the pod, assume nothing": {
			answer: Answer{Target: web1, Result: res(evict.Unknown, evict.ReasonTimeout, "no answer", 0)},
			phase:  api.Draining, reason: api.EvictionRequested, active: []active{{"pod-1", Unknown}},
		},
		"transport error: unknown": {
			answer: Answer{Target: web1, Err: errors.New("connection reset")},
			phase:  api.Draining, reason: api.EvictionRequested, active: []active{{"pod-1", Unknown}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld()
			w.started(api.Draining, api.EvictionRequested)
			w.active("web-1", "pod-1", Requested, "10")
			st := Record(w.plan, w.plan.Status, []Answer{tc.answer}, now)
			if st.Phase != tc.phase || st.Reason != tc.reason {
				t.Errorf("phase %s/%s, want %s/%s (%s)", st.Phase, st.Reason, tc.phase, tc.reason, st.Message)
			}
			var got []active
			for _, a := range st.EvictionProgress.ActivePods {
				got = append(got, active{a.UID, a.Outcome})
			}
			if diff := cmp.Diff(tc.active, got, cmp.AllowUnexported(active{})); diff != "" {
				t.Errorf("active pods (-want +got):\n%s", diff)
			}
			var cool string
			for _, c := range st.EvictionProgress.Cooldowns {
				cool = strings.Join([]string{c.PDB, string(c.Reason), strconv.Itoa(int(c.NextActionAt.Sub(now) / time.Second))}, "/")
			}
			if cool != tc.cooldown {
				t.Errorf("cooldown %q, want %q", cool, tc.cooldown)
			}
			if d := st.Pods.Skipped - w.plan.Status.Pods.Skipped; d != tc.skippedDelta {
				t.Errorf("skipped +%d, want +%d", d, tc.skippedDelta)
			}
			if tc.cooldown != "" && (st.EvictionProgress.NextActionAt == nil || !st.EvictionProgress.NextActionAt.Equal(&st.EvictionProgress.Cooldowns[0].NextActionAt)) {
				t.Errorf("nextActionAt %v does not follow the cooldown", st.EvictionProgress.NextActionAt)
			}
		})
	}
}

// TestRefusalThenEventStorm is the 429-flood regression: after a refusal,
// every reconcile (whatever event caused it) sends nothing to that PDB until
// its status is newer and allows a disruption.
func TestRefusalThenEventStorm(t *testing.T) {
	w := newWorld()
	w.started(api.Draining, api.EvictionRequested)
	w.active("web-1", "pod-1", Requested, "10")
	st := Record(w.plan, w.plan.Status, []Answer{{Target: Target{Namespace: "shop", Name: "web-1", UID: "pod-1", PDB: "web", PDBVersion: "10"},
		Result: &evict.Result{Outcome: evict.BudgetExhausted, Message: "needs 7 healthy pods and has 7"}}}, t0)
	w.plan.Status = st
	// The cache still says the budget allows one (it is what made maintd try).
	for i := range 50 {
		d := Decide(w.facts, w.plan, t0.Add(time.Duration(i)*time.Second/2))
		if d.Action == Evict {
			t.Fatalf("event %d: eviction sent during the cooldown: %s", i, d.Status.Message)
		}
		w.plan.Status = d.Status
	}
	w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion = "11" })
	d := Decide(w.facts, w.plan, t0.Add(30*time.Second))
	if h := d.Status.History; len(h) < 2 || h[len(h)-2].Reason != api.BudgetRecovered {
		t.Fatalf("after a newer status that allows: history %+v, want budget-recovered before the eviction", h)
	}
	if d.Action != Evict || len(d.Targets) != 1 {
		t.Fatalf("after the recovery: action %q, targets %v", d.Action, d.Targets)
	}
}

func TestRecordDryRun(t *testing.T) {
	w := newWorld()
	w.plan.Spec.DryRun = true
	answers := []Answer{
		{Target: Target{Namespace: "shop", Name: "web-1", UID: "pod-1"}, Result: &evict.Result{Outcome: evict.Accepted, HTTPStatus: 201}},
		{Target: Target{Namespace: "shop", Name: "web-2", UID: "pod-2"}, Result: &evict.Result{Outcome: evict.BudgetExhausted, HTTPStatus: 429, Message: "needs 2"}},
	}
	st := RecordDryRun(w.plan, w.plan.Status, answers, t0)
	want := []api.PodVerdict{
		{Namespace: "shop", Name: "web-1", UID: "pod-1", Outcome: "accepted", HTTPStatus: 201},
		{Namespace: "shop", Name: "web-2", UID: "pod-2", Outcome: "budget-exhausted", HTTPStatus: 429, Message: "needs 2"},
	}
	if diff := cmp.Diff(want, st.DryRun); diff != "" {
		t.Errorf("dry-run verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(st.Message, "1 of 2 pods would be evicted now") {
		t.Errorf("message %q", st.Message)
	}
}
