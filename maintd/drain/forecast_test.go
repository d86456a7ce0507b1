package drain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// okForecast is a forecast of the drain of n1's two pods.
func okForecast(p50 time.Duration) *analyze.Forecast {
	return &analyze.Forecast{Verdict: analyze.VerdictOK, P50: duration(p50), P90: duration(p50 * 2), Pods: 2, Concurrency: 50,
		CriticalPath: &analyze.CriticalPath{Kind: "PodDisruptionBudget", Namespace: "shop", Name: "web", Pods: 2, Rounds: 2,
			RoundTime: metav1.Duration{Duration: p50 / 2}, Grace: metav1.Duration{Duration: 30 * time.Second}}}
}

func neverForecast() *analyze.Forecast {
	return &analyze.Forecast{Verdict: analyze.VerdictNever, Pods: 2, Concurrency: 50, Causes: []analyze.ForecastCause{
		{Verdict: analyze.VerdictNever, Reason: analyze.ReasonUnschedulable, Subject: analyze.Subject{Kind: "Deployment", Namespace: "shop", Name: "web"},
			Message: "the replacements of web-1, web-2 fit on no other node: node selector disk=ssd matches only n1"},
		{Verdict: analyze.VerdictUnknown, Reason: analyze.ReasonNotModelled, Subject: analyze.Subject{Kind: "Pod", Namespace: "shop", Name: "web-2"},
			Message: "zone spread is not modelled"},
	}}
}

// TestNeverBlocksBeforeAnyWrite: a never forecast blocks the plan before
// its cordon, names the cause, and lets it go once the forecast clears.
func TestNeverBlocksBeforeAnyWrite(t *testing.T) {
	w := newWorld()
	w.facts.Forecast, w.facts.ForecastAt = neverForecast(), t0
	d := Decide(w.facts, w.plan, t0)
	if d.Status.Phase != api.Blocked || d.Status.Reason != api.DrainNeverCompletes || d.Action != None {
		t.Fatalf("never forecast: phase %s reason %s action %q, want Blocked drain-never-completes and no action", d.Status.Phase, d.Status.Reason, d.Action)
	}
	if !strings.Contains(d.Status.Message, "replacement-unschedulable: the replacements of web-1, web-2 fit on no other node") || strings.Contains(d.Status.Message, "zone spread") {
		t.Errorf("message %q: want the never cause, not the unknown one", d.Status.Message)
	}
	if ep := d.Status.EvictionProgress; ep.Scope != "" || ep.StartedAt != nil {
		t.Errorf("the drain started: %+v", ep)
	}
	want := &api.Forecast{Verdict: "never", Pods: 2, ComputedAt: metav1.NewTime(t0), Causes: []api.ForecastCause{
		{Verdict: "never", Reason: analyze.ReasonUnschedulable, Object: "Deployment/shop/web", Message: "the replacements of web-1, web-2 fit on no other node: node selector disk=ssd matches only n1"},
		{Verdict: "unknown", Reason: analyze.ReasonNotModelled, Object: "Pod/shop/web-2", Message: "zone spread is not modelled"},
	}}
	if diff := cmp.Diff(want, d.Status.Forecast); diff != "" {
		t.Errorf("status.forecast (-want +got):\n%s", diff)
	}

	w.plan.Status = d.Status
	w.facts.Forecast, w.facts.ForecastAt = okForecast(time.Minute), t0.Add(time.Minute)
	d = Decide(w.facts, w.plan, t0.Add(time.Minute))
	if d.Status.Phase != api.Cordoning || d.Action != Cordon {
		t.Fatalf("forecast ok again: phase %s action %q, want Cordoning and a cordon", d.Status.Phase, d.Action)
	}
	f := d.Status.Forecast
	if f.Verdict != "ok" || f.Remaining == nil || f.Remaining.Duration != time.Minute || !f.ETA.Equal(&metav1.Time{Time: t0.Add(2 * time.Minute)}) {
		t.Errorf("forecast of a started drain: %+v, want ok with a minute remaining, ETA %s", f, t0.Add(2*time.Minute))
	}
	if !strings.HasPrefix(f.CriticalPath, "PodDisruptionBudget shop/web: 2 pods in 2 rounds of 30s") {
		t.Errorf("critical path %q", f.CriticalPath)
	}
}

// TestNeverAfterTheStartDoesNotBlock: once the node is cordoned, a never
// forecast is reported, and the drain goes on with what it can do.
func TestNeverAfterTheStartDoesNotBlock(t *testing.T) {
	w := newWorld()
	w.started(api.Cordoned, api.CordonObserved)
	w.facts.Forecast, w.facts.ForecastAt = neverForecast(), t0
	d := Decide(w.facts, w.plan, t0)
	if d.Status.Phase == api.Blocked || d.Action != Evict {
		t.Fatalf("phase %s action %q: a started drain goes on", d.Status.Phase, d.Action)
	}
	if d.Status.Forecast == nil || d.Status.Forecast.Verdict != "never" {
		t.Errorf("forecast %+v, want never", d.Status.Forecast)
	}
}

// TestForecastAloneIsWrittenOnlyWhenItMoves: a waiting plan's status does
// not change for a forecast that says nothing new.
func TestForecastAloneIsWrittenOnlyWhenItMoves(t *testing.T) {
	w := newWorld()
	w.facts.Holders = 1 // waiting for a slot
	w.facts.Forecast, w.facts.ForecastAt = okForecast(100*time.Second), t0
	d := Decide(w.facts, w.plan, t0)
	if d.Status.Reason != api.WaitingForSlot || d.Status.Forecast == nil {
		t.Fatalf("reason %s forecast %+v", d.Status.Reason, d.Status.Forecast)
	}
	w.plan.Status = d.Status
	for _, c := range []struct {
		p50   time.Duration
		moved bool
	}{
		{105 * time.Second, false}, // 5%
		{108 * time.Second, false}, // 8%
		{115 * time.Second, true},  // 15%
		{112 * time.Second, false},
	} {
		at := t0.Add(time.Minute)
		w.facts.Forecast, w.facts.ForecastAt = okForecast(c.p50), at
		d := Decide(w.facts, w.plan, at)
		got := d.Status.Forecast.P50.Duration
		if moved := got == c.p50; moved != c.moved || (!moved && got != w.plan.Status.Forecast.P50.Duration) {
			t.Errorf("p50 %s after %s: status says %s, want it written %t", c.p50, w.plan.Status.Forecast.P50.Duration, got, c.moved)
		}
		w.plan.Status = d.Status
	}
	w.facts.Forecast = neverForecast()
	if d := Decide(w.facts, w.plan, t0.Add(2*time.Minute)); d.Status.Forecast.Verdict != "never" {
		t.Errorf("verdict change not written: %+v", d.Status.Forecast)
	}
}

func TestMoved(t *testing.T) {
	at := metav1.NewTime(t0)
	later := metav1.NewTime(t0.Add(time.Minute))
	eta := func(d time.Duration) *metav1.Time { e := metav1.NewTime(t0.Add(d)); return &e }
	base := api.Forecast{Verdict: "ok", P50: duration(time.Minute), Pods: 2, ComputedAt: at}
	with := func(f func(*api.Forecast)) *api.Forecast { c := base.DeepCopy(); f(c); return c }
	for name, c := range map[string]struct {
		a, b  *api.Forecast
		moved bool
	}{
		"none then one":    {nil, &base, true},
		"same":             {&base, &base, false},
		"recomputed later": {&base, with(func(f *api.Forecast) { f.ComputedAt = later }), false},
		"verdict":          {&base, with(func(f *api.Forecast) { f.Verdict = "unknown" }), true},
		"p50 by 4s":        {&base, with(func(f *api.Forecast) { f.P50 = duration(64 * time.Second) }), false},
		"p50 by 20s":       {&base, with(func(f *api.Forecast) { f.P50 = duration(80 * time.Second) }), true},
		"critical path":    {with(func(f *api.Forecast) { f.CriticalPath = "PodDisruptionBudget shop/web: 2" }), with(func(f *api.Forecast) { f.CriticalPath = "PodDisruptionBudget shop/web: 1" }), false},
		"other path":       {with(func(f *api.Forecast) { f.CriticalPath = "PodDisruptionBudget shop/web: 2" }), with(func(f *api.Forecast) { f.CriticalPath = "Deployment shop/db: 1" }), true},
		"eta on time": {with(func(f *api.Forecast) { f.ETA = eta(time.Minute) }), with(func(f *api.Forecast) {
			f.ComputedAt, f.P50, f.ETA = later, duration(3*time.Second), eta(63*time.Second)
		}), false},
		"eta late":        {with(func(f *api.Forecast) { f.ETA = eta(time.Minute) }), with(func(f *api.Forecast) { f.ComputedAt, f.ETA = later, eta(2*time.Minute) }), true},
		"nothing to time": {with(func(f *api.Forecast) { f.Pods, f.ETA = 0, eta(0) }), with(func(f *api.Forecast) { f.Pods, f.ComputedAt, f.ETA = 0, later, eta(time.Minute) }), false},
		"a cause is gone": {with(func(f *api.Forecast) { f.Causes = []api.ForecastCause{{Reason: "first-fit"}} }), &base, true},
	} {
		if got := Moved(c.a, c.b); got != c.moved {
			t.Errorf("%s: Moved = %t, want %t", name, got, c.moved)
		}
	}
}

// TestAcceptedNeverDoesNotBlock: a person who knows the room will come (an
// autoscaler adds nodes for pending pods) accepts the never cause, and the
// drain starts; a never cause not accepted still blocks.
func TestAcceptedNeverDoesNotBlock(t *testing.T) {
	w := newWorld()
	w.plan.Spec.AcceptedRisks = []string{analyze.ReasonUnschedulable}
	w.facts.Forecast, w.facts.ForecastAt = neverForecast(), t0
	if d := Decide(w.facts, w.plan, t0); d.Status.Phase != api.Cordoning || d.Action != Cordon || d.Status.Forecast.Verdict != "never" {
		t.Errorf("accepted never: phase %s action %q forecast %+v, want Cordoning, a cordon and the never forecast shown", d.Status.Phase, d.Action, d.Status.Forecast)
	}
	w.plan.Spec.AcceptedRisks = []string{analyze.ReasonNoCapacity}
	if d := Decide(w.facts, w.plan, t0); d.Status.Reason != api.DrainNeverCompletes {
		t.Errorf("another cause accepted: reason %s, want %s", d.Status.Reason, api.DrainNeverCompletes)
	}
}
