package drain

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// surgeWorld is a draining plan with spec.surge IfNeeded for node n1, where
// pod db-1 of the single-replica Deployment shop/db runs under PDB shop/db
// (minAvailable 1): its budget never allows the eviction without a surge.
func surgeWorld() *world {
	w := newWorld()
	w.plan.Spec.Surge = api.SurgeIfNeeded
	w.removePod("pod-1")
	w.removePod("pod-2")
	w.plan.Spec.Workloads = nil
	w.plan.Spec.AllowAllWorkloads = true
	w.started(api.Draining, api.EvictionRequested)
	w.plan.Status.EvictionProgress.WorkloadUIDs = nil
	v := w.addPod("db-1", "pod-db")
	v.Owners = []analyze.OwnerHop{{Kind: "ReplicaSet", Name: "db-abc", UID: "rs-db", Verified: true}, {Kind: "Deployment", Name: "db", UID: "dep-db", Verified: true}}
	v.PDBs = []analyze.Ref{{Namespace: "shop", Name: "db", UID: "pdb-db"}}
	v.Action, v.Reasons = analyze.Surge, []analyze.Code{analyze.SurgeMovable}
	v.Surge = &analyze.SurgeMove{Kind: "Deployment", Name: "db", UID: "dep-db", Replicas: 1, PDB: "db"}
	v.EvictableNow = analyze.Prediction{Allowed: false, Outcome: analyze.OutcomeBudgetExhausted, HTTPStatus: http.StatusTooManyRequests, PDB: "db", UsesBudget: true,
		Message: "Cannot evict pod as it would violate the pod's disruption budget."}
	w.facts.PDBs["shop/db"] = PDB{ResourceVersion: "20", Generation: 1, ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1}
	w.facts.Owners = map[string]SurgeOwner{OwnerKey("Deployment", "shop", "db"): {UID: "dep-db", Replicas: 1}}
	return w
}

// step decides, checks the action and reason, and makes the decided status
// the plan's, as the controller persists it.
func (w *world) step(t *testing.T, now time.Time, action Action, reason api.Reason) Decision {
	t.Helper()
	dec := Decide(w.facts, w.plan, now)
	if dec.Action != action || dec.Status.Reason != reason {
		t.Fatalf("decided %q, %s/%s (%s); want %q, reason %s", dec.Action, dec.Status.Phase, dec.Status.Reason, dec.Status.Message, action, reason)
	}
	w.plan.Status = dec.Status
	return dec
}

func TestSurgeMovesThenRestoresOnce(t *testing.T) {
	w := surgeWorld()
	now := t0.Add(time.Minute)

	// 1. The intent and the count before it are written, then the scale-up.
	dec := w.step(t, now, Scale, api.SurgeRequested)
	want := []OwnerScale{{Surge: api.Surge{Kind: "Deployment", Namespace: "shop", Name: "db", UID: "dep-db", PDB: "db", From: 1, State: SurgeIntended}}}
	if diff := cmp.Diff(want, dec.Scales); diff != "" {
		t.Fatalf("scales (-want +got):\n%s", diff)
	}
	if got := w.plan.Status.EvictionProgress.Surges; len(got) != 1 || got[0].State != SurgeIntended {
		t.Fatalf("the intent is not in the status written before the scale-up: %+v", got)
	}
	w.plan.Status = RecordScales(w.plan, w.plan.Status, []ScaleAnswer{{Scale: dec.Scales[0], Outcome: Scaled}}, now)
	if s := w.plan.Status.EvictionProgress.Surges[0]; s.State != SurgeScaled || s.ScaledAt == nil {
		t.Fatalf("after the scale-up: %+v", s)
	}

	// 2. The owner shows the surge; the new pod is not Ready: nothing is
	// evicted, the plan says why.
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 2, SurgedBy: Owner(w.plan), Unready: 1}
	v := w.pod("db-1")
	v.Action, v.Reasons, v.Surge = analyze.Evict, nil, nil
	w.step(t, now, None, api.SurgePending)
	if !strings.Contains(w.plan.Status.Message, "1 not Ready") {
		t.Errorf("surge-pending message does not say the new pod is not Ready: %s", w.plan.Status.Message)
	}
	// Decided again on the same facts: nothing new to write.
	if dec := Decide(w.facts, w.plan, now); !cmp.Equal(dec.Status, w.plan.Status) {
		t.Errorf("a waiting surge rewrites the status: %s", cmp.Diff(w.plan.Status, dec.Status))
	}

	// 3. The new pod is Ready: the budget allows the eviction.
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 2, SurgedBy: Owner(w.plan), Ready: 1}
	w.setPDB("shop/db", func(p *PDB) { p.ResourceVersion, p.DisruptionsAllowed, p.CurrentHealthy = "21", 1, 2 })
	v = w.pod("db-1")
	v.EvictableNow = analyze.Prediction{Allowed: true, Outcome: analyze.OutcomeAccepted, HTTPStatus: http.StatusCreated, Rule: analyze.RuleBudgetAvailable, PDB: "db", UsesBudget: true}
	now = now.Add(2 * time.Second)
	dec = w.step(t, now, Evict, api.EvictionRequested) // the surge-pending wait ends, and the eviction goes
	if h := w.plan.Status.History; len(h) < 2 || h[len(h)-2].Reason != api.BudgetRecovered {
		t.Errorf("history %+v: want budget-recovered before the eviction", h)
	}
	if len(dec.Targets) != 1 || dec.Targets[0].Name != "db-1" {
		t.Fatalf("targets %+v, want db-1", dec.Targets)
	}
	w.plan.Status = Record(w.plan, w.plan.Status, []Answer{{Target: dec.Targets[0], Result: &evict.Result{Outcome: evict.Accepted}}}, now)

	// 4. The eviction is accepted: the surge's pods have all gone or are
	// going; the restore is written before it is made.
	dec = w.step(t, now, Scale, api.SurgeRestoring)
	if len(dec.Scales) != 1 || !dec.Scales[0].Restore || w.plan.Status.EvictionProgress.Surges[0].State != SurgeRestoring {
		t.Fatalf("want one restore, persisted: %+v, %+v", dec.Scales, w.plan.Status.EvictionProgress.Surges)
	}
	w.plan.Status = RecordScales(w.plan, w.plan.Status, []ScaleAnswer{{Scale: dec.Scales[0], Outcome: Restored, Message: "replicas restored from 2 to 1"}}, now)

	// 5. Restored once: the pod leaves, the plan drains, and no further
	// scale is asked for.
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 1, Ready: 1}
	w.terminate("pod-db")
	w.step(t, now, None, api.WaitingForPodExit)
	w.removePod("pod-db")
	w.setPDB("shop/db", func(p *PDB) { p.ResourceVersion, p.DisruptionsAllowed, p.CurrentHealthy = "22", 0, 1 })
	now = now.Add(5 * time.Second)
	dec = w.step(t, now, None, api.ReasonDrained)
	if s := w.plan.Status.EvictionProgress.Surges[0]; s.State != SurgeRestored || s.RestoredAt == nil || s.Message == "" {
		t.Errorf("the drained plan's surge: %+v", s)
	}
}

// A plan that stops with a surge not restored restores it, whatever stops
// it; a released plan restores before it uncordons.
func TestSurgeRestoredWhenThePlanStops(t *testing.T) {
	scaled := func() *world {
		w := surgeWorld()
		w.plan.Status.EvictionProgress.Surges = []api.Surge{{Kind: "Deployment", Namespace: "shop", Name: "db", UID: "dep-db", PDB: "db", From: 1, State: SurgeScaled}}
		w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 2, SurgedBy: Owner(w.plan)}
		return w
	}
	cases := []struct {
		name   string
		setup  func(w *world)
		phase  api.Phase
		reason api.Reason
	}{
		{"deadline", func(w *world) {}, api.Failed, api.DeadlineExceeded},
		{"node uncordoned", func(w *world) { w.facts.Node.Spec.Unschedulable = false }, api.Blocked, api.NodeUncordonedExternally},
		{"released", func(w *world) { w.plan.Spec.Release = true }, api.Uncordoning, api.UncordonSubmitted},
		{"already failed", func(w *world) {
			w.plan.Status.Phase, w.plan.Status.Reason = api.Failed, api.DeadlineExceeded
		}, api.Failed, api.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scaled()
			tc.setup(w)
			now := t0.Add(10 * time.Minute)
			if tc.reason == api.DeadlineExceeded {
				now = t0.Add(2 * time.Hour)
			}
			dec := Decide(w.facts, w.plan, now)
			if dec.Status.Phase != tc.phase || dec.Status.Reason != tc.reason {
				t.Fatalf("%s/%s (%s), want %s/%s", dec.Status.Phase, dec.Status.Reason, dec.Status.Message, tc.phase, tc.reason)
			}
			if dec.Action != Scale || len(dec.Scales) != 1 || !dec.Scales[0].Restore {
				t.Fatalf("action %q scales %+v: want the restore first", dec.Action, dec.Scales)
			}
			if !strings.Contains(dec.Status.Message, "restoring the replicas of Deployment shop/db") {
				t.Errorf("message does not say what is restored: %s", dec.Status.Message)
			}
			// Once restored, nothing more is scaled; a released plan now
			// uncordons.
			w.plan.Status = RecordScales(w.plan, dec.Status, []ScaleAnswer{{Scale: dec.Scales[0], Outcome: Restored}}, now)
			again := Decide(w.facts, w.plan, now)
			if again.Action == Scale {
				t.Fatalf("scaled again after the restore: %+v", again.Scales)
			}
			if tc.name == "released" && again.Action != Uncordon {
				t.Errorf("released plan: action %q after the restore, want uncordon", again.Action)
			}
		})
	}
}

func TestSurgeImpossibleBlocksBeforeAnyWrite(t *testing.T) {
	w := newWorld()
	w.plan.Spec.Surge = api.SurgeIfNeeded
	v := w.pod("web-1")
	v.Action, v.Reasons = analyze.Block, []analyze.Code{analyze.PDBZeroSpec}
	v.NoSurge = "owned by StatefulSet shop/web: its pods have fixed identities, so a second copy cannot run"
	dec := Decide(w.facts, w.plan, t0)
	if dec.Status.Reason != api.SurgeImpossible || dec.Action != None {
		t.Fatalf("%s/%s action %q, want Blocked surge-impossible and no write", dec.Status.Phase, dec.Status.Reason, dec.Action)
	}
	for _, part := range []string{"shop/web-1", "StatefulSet shop/web"} {
		if !strings.Contains(dec.Status.Message, part) {
			t.Errorf("message does not name %s: %s", part, dec.Status.Message)
		}
	}
	// Without the surge option, the same pod is a misconfigured budget,
	// and a pod a surge could move says so.
	w.plan.Spec.Surge = ""
	v.NoSurge, v.Surge = "", &analyze.SurgeMove{Kind: "Deployment", Name: "web", UID: "dep-uid", Replicas: 1, PDB: "web"}
	dec = Decide(w.facts, w.plan, t0)
	if dec.Status.Reason != api.PDBMisconfigured || !strings.Contains(dec.Status.Message, "spec.surge: IfNeeded") {
		t.Errorf("without surge: %s (%s)", dec.Status.Reason, dec.Status.Message)
	}
}

func TestSurgeForbiddenBlocks(t *testing.T) {
	w := surgeWorld()
	dec := w.step(t, t0.Add(time.Minute), Scale, api.SurgeRequested)
	w.plan.Status = RecordScales(w.plan, w.plan.Status, []ScaleAnswer{{Scale: dec.Scales[0], Outcome: Forbidden, Message: "maintd may not scale Deployment shop/db"}}, t0.Add(time.Minute))
	if st := w.plan.Status; st.Phase != api.Blocked || st.Reason != api.SurgeImpossible || len(st.EvictionProgress.Surges) != 0 {
		t.Fatalf("after a forbidden scale-up: %s/%s surges %+v", st.Phase, st.Reason, st.EvictionProgress.Surges)
	}
	// It holds for maxCooldown: no new surge in a loop.
	if dec := Decide(w.facts, w.plan, t0.Add(time.Minute+time.Second)); dec.Action != None || dec.Status.Reason != api.SurgeImpossible {
		t.Errorf("decided %q %s after the block", dec.Action, dec.Status.Reason)
	}
}

// TestSurgeBusyWaits: an owner found live carrying another plan's surge
// (the caches did not show it yet) withdraws the surge, with no error and
// no block; once the caches show the other surge, the plan waits for it.
func TestSurgeBusyWaits(t *testing.T) {
	w := surgeWorld()
	dec := w.step(t, t0.Add(time.Minute), Scale, api.SurgeRequested)
	w.plan.Status = RecordScales(w.plan, w.plan.Status, []ScaleAnswer{{Scale: dec.Scales[0], Outcome: Busy, Message: "Deployment shop/db carries the surge of maintenanceplan/other/u"}}, t0.Add(time.Minute))
	if st := w.plan.Status; st.Phase == api.Blocked || len(st.EvictionProgress.Surges) != 0 {
		t.Fatalf("after a busy owner: %s/%s surges %+v", st.Phase, st.Reason, st.EvictionProgress.Surges)
	}
	o := w.facts.Owners[OwnerKey("Deployment", "shop", "db")]
	o.SurgedBy = "maintenanceplan/other/u"
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = o
	if dec := Decide(w.facts, w.plan, t0.Add(time.Minute+time.Second)); dec.Action == Scale {
		t.Errorf("surged an owner that carries another plan's surge: %+v", dec.Scales)
	}
}

// An intent whose scale-up was never made starts from the owner's count as
// the caches show it now; one already made (the owner carries this plan's
// surge) keeps its count.
func TestSurgeIntentFollowsTheOwner(t *testing.T) {
	w := surgeWorld()
	w.plan.Status.EvictionProgress.Surges = []api.Surge{{Kind: "Deployment", Namespace: "shop", Name: "db", UID: "dep-db", PDB: "db", From: 1, State: SurgeIntended}}
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 3}
	dec := Decide(w.facts, w.plan, t0.Add(time.Minute))
	if dec.Action != Scale || dec.Scales[0].Surge.From != 3 {
		t.Fatalf("scales %+v, want a scale-up from 3", dec.Scales)
	}
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 2, SurgedBy: Owner(w.plan)}
	dec = Decide(w.facts, w.plan, t0.Add(time.Minute))
	if dec.Action != Scale || dec.Scales[0].Surge.From != 1 {
		t.Fatalf("scales %+v, want the recorded scale-up from 1", dec.Scales)
	}
	// Another plan's surge on the owner: this plan waits, and says so.
	w = surgeWorld()
	w.facts.Owners[OwnerKey("Deployment", "shop", "db")] = SurgeOwner{UID: "dep-db", Replicas: 2, SurgedBy: "maintenanceplan/other/uid"}
	dec = Decide(w.facts, w.plan, t0.Add(time.Minute))
	if dec.Action != None || !strings.Contains(dec.Status.Message, "maintenanceplan/other/uid") {
		t.Errorf("decided %q (%s), want a wait naming the other plan", dec.Action, dec.Status.Message)
	}
}

func TestRestoreTo(t *testing.T) {
	cases := []struct {
		from, current, to int32
		write             bool
	}{
		{1, 2, 1, true},  // nobody else changed it
		{3, 4, 3, true},  // nobody else changed it
		{1, 5, 4, true},  // someone added 3: theirs stay
		{1, 1, 1, false}, // someone took the surge's replica back: left
		{2, 0, 0, false}, // scaled to zero meanwhile: left
	}
	for _, tc := range cases {
		to, write, msg := RestoreTo(tc.from, tc.current)
		if to != tc.to || write != tc.write || msg == "" {
			t.Errorf("RestoreTo(%d, %d) = %d, %t, %q; want %d, %t", tc.from, tc.current, to, write, msg, tc.to, tc.write)
		}
	}
}
