package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.Local)

func at(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }

func cooling() *api.MaintenancePlan {
	since := at(40)
	return &api.MaintenancePlan{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1-abcde", CreationTimestamp: at(0), Generation: 1},
		Spec:       api.MaintenancePlanSpec{NodeName: "node-1"},
		Status: api.MaintenancePlanStatus{
			ObservedGeneration: 1, Phase: api.CoolingDown, Reason: api.BudgetExhausted, Since: &since,
			Message: "PDB shop/web needs 3 healthy,\n has 2",
			Pods:    api.PodCounts{Total: 4, Evicted: 1, Remaining: 3, Skipped: 1},
			EvictionProgress: &api.EvictionProgress{Cooldowns: []api.Cooldown{
				{PDB: "shop/web", Reason: api.BudgetExhausted, NextActionAt: at(70)},
			}},
			History: []api.Transition{
				{Phase: api.Pending, Time: at(1), Message: "plan accepted"},
				{Phase: api.Cordoning, Reason: api.CordonSubmitted, Time: at(2), Message: "cordoning node node-1"},
			},
		},
	}
}

func TestFrame(t *testing.T) {
	got := Frame(cooling(), t0.Add(52*time.Second), 100)
	want := []string{
		"plan node-1-abcde  node node-1  CoolingDown/pdb-budget-exhausted  52s ago",
		"[###############---------------------------------------------]  1/4 pods evicted, 1 stay (DaemonSet, mirror, finished)"[:99],
		"now: pdb-budget-exhausted for 12s; waiting for PDB shop/web (pdb-budget-exhausted) until 10:01:10: PDB shop/web needs 3 healthy, has 2"[:98] + "…",
		"ETA: no forecast yet",
	}
	// The bar is 40 cells at 100 columns.
	want[1] = "[##########------------------------------]  1/4 pods evicted, 1 stay (DaemonSet, mirror, finished)"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, l := range Frame(cooling(), t0, 30) {
		if n := len([]rune(l)); n > 29 {
			t.Errorf("line of %d runes at 30 columns: %q", n, l)
		}
	}
}

func TestForecastOf(t *testing.T) {
	p := cooling()
	if f := ForecastOf(p); f != nil {
		t.Errorf("no status.forecast: %+v, want nil", f)
	}
	eta, rem, p50, p90 := at(200), metav1.Duration{Duration: 140 * time.Second}, metav1.Duration{Duration: 2 * time.Minute}, metav1.Duration{Duration: 4 * time.Minute}
	p.Status.Forecast = &api.Forecast{Verdict: "unknown", ETA: &eta, Remaining: &rem, P50: &p50, P90: &p90, CriticalPath: "PDB shop/web", ComputedAt: at(60),
		Causes: []api.ForecastCause{{Verdict: "unknown", Reason: "volume-topology", Object: "Pod/shop/db-0", Message: "zonal volume"}}}
	want := &Forecast{Verdict: "unknown", ETA: eta.Time, Remaining: rem.Duration, P50: p50.Duration, P90: p90.Duration, CriticalPath: "PDB shop/web", ComputedAt: at(60).Time,
		Cause: "Pod/shop/db-0: zonal volume (volume-topology)"}
	if diff := cmp.Diff(want, ForecastOf(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Frame(p, t0.Add(60*time.Second), 200)[3]; got != "ETA: 10:03:20 (in 2m20s, p90 4m); critical path PDB shop/web; unknown: Pod/shop/db-0: zonal volume (volume-topology)" {
		t.Errorf("the frame's ETA line: %q", got)
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int32
		want        string
	}{
		{0, 0, "[----------]"}, {0, 4, "[----------]"}, {1, 4, "[##--------]"}, {4, 4, "[##########]"}, {9, 4, "[##########]"}, {-1, 4, "[----------]"},
	} {
		if got := Bar(tc.done, tc.total, 10); got != tc.want {
			t.Errorf("Bar(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

func TestETA(t *testing.T) {
	now := t0
	for _, tc := range []struct {
		f    *Forecast
		want string
	}{
		{nil, "ETA: no forecast yet"},
		{&Forecast{Verdict: "never", Cause: "PDB shop/db\nnever allows"}, "ETA: never: PDB shop/db never allows"},
		{&Forecast{Verdict: "ok", ETA: t0.Add(150 * time.Second), P90: 4 * time.Minute, CriticalPath: "PDB shop/web: 2 rounds"}, "ETA: 10:02:30 (in 2m30s, p90 4m); critical path PDB shop/web: 2 rounds"},
		{&Forecast{Verdict: "unknown", Cause: "volume topology"}, "ETA: once started; unknown: volume topology"},
		{&Forecast{Verdict: "ok", P50: 90 * time.Second, P90: 3 * time.Minute}, "ETA: once started, p50 1m30s, p90 3m"},
	} {
		if got := ETA(tc.f, now); got != tc.want {
			t.Errorf("ETA(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestPrinterLines: without a terminal, each step once, as a line, and the
// counts when they change between steps; nothing else.
func TestPrinterLines(t *testing.T) {
	var b bytes.Buffer
	pr := NewPrinter(&b, false, func() int { return 80 }, func() time.Time { return t0.Add(time.Minute) })
	p := cooling()
	pr.Update(p)
	pr.Update(p) // nothing new
	p = p.DeepCopy()
	p.Status.Pods.Evicted = 2
	pr.Update(p)
	p = p.DeepCopy()
	p.Status.Phase, p.Status.Reason = api.Drained, api.ReasonDrained
	p.Status.Pods.Evicted = 4
	p.Status.History = append(p.Status.History, api.Transition{Phase: api.Drained, Reason: api.ReasonDrained, Time: at(90), Message: "4 pods evicted"})
	pr.Update(p)
	pr.Tick()
	pr.Close()
	want := `10:00:01  Pending/-  plan accepted
10:00:02  Cordoning/cordon-submitted  [1/4 evicted]  cordoning node node-1
10:01:00  [2/4 evicted]
10:01:30  Drained/drained  [4/4 evicted]  4 pods evicted
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPrinterLive: the frame is drawn below the steps, then redrawn in
// place: the cursor goes back up to the frame's first line, the screen is
// cleared from there, and new steps come before the new frame, in one
// write each.
func TestPrinterLive(t *testing.T) {
	var w writes
	cols := 100
	pr := NewPrinter(&w, true, func() int { return cols }, func() time.Time { return t0.Add(time.Minute) })
	p := cooling()
	pr.Update(p)
	if !strings.HasPrefix(w[0], "\x1b[?25l10:00:01  Pending/-  plan accepted\n10:00:02  Cordoning/") || strings.Count(w[0], "\n") != 2+3 {
		t.Fatalf("first draw %q", w[0])
	}
	pr.Tick()
	if !strings.HasPrefix(w[1], "\r\x1b[3A\x1b[J") || strings.Contains(w[1], "Pending/-") {
		t.Errorf("redraw %q: want the cursor 3 lines up, a clear, the frame only", w[1])
	}
	// A narrower terminal wraps the old frame's lines into more rows.
	cols = 40
	pr.Tick()
	// 70, 99, 99 and 20 runes at 40 columns: 2, 3, 3 and 1 rows.
	if !strings.HasPrefix(w[2], "\r\x1b[8A\x1b[J") {
		t.Errorf("redraw after a resize %q: want 8 rows up", w[2])
	}
	pr.Close()
	if last := w[len(w)-1]; last != "\n\x1b[?25h" {
		t.Errorf("close %q: want a new line and the cursor back", last)
	}
	pr.Tick()
	pr.Update(p)
	if len(w) != 4 {
		t.Errorf("%d writes after Close, want none", len(w)-4)
	}
}

type writes []string

func (w *writes) Write(p []byte) (int, error) { *w = append(*w, string(p)); return len(p), nil }

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 1400 * time.Millisecond: "1s", 192 * time.Second: "3m12s", 180 * time.Second: "3m", 7500 * time.Second: "2h5m", 7200 * time.Second: "2h0m"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestPrinterSeen: a follow from the plan's present shows only later steps.
func TestPrinterSeen(t *testing.T) {
	var b bytes.Buffer
	pr := NewPrinter(&b, false, func() int { return 80 }, func() time.Time { return t0 })
	p := cooling()
	pr.Seen(p)
	pr.Update(p)
	p = p.DeepCopy()
	p.Status.History = append(p.Status.History, api.Transition{Phase: api.Uncordoning, Reason: api.UncordonSubmitted, Time: at(99)})
	pr.Update(p)
	if want := "10:01:39  Uncordoning/uncordon-submitted  [1/4 evicted]\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestDetailSurge: the plan on one screen lists each surge with its owner,
// counts, state and what the restore did.
func TestDetailSurge(t *testing.T) {
	p := cooling()
	p.Status.EvictionProgress.Surges = []api.Surge{
		{Kind: "Deployment", Namespace: "shop", Name: "checkout", From: 2, State: "restored", Message: "replicas restored from 3 to 2"},
		{Kind: "ReplicaSet", Namespace: "shop", Name: "solo-1", From: 1, State: "scaled"},
	}
	var b bytes.Buffer
	p.Spec.Surge = api.SurgeIfNeeded
	if err := Detail(&b, p, func(*api.MaintenancePlan) string { return "" }, nil, nil, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"; surge IfNeeded\n",
		"Deployment shop/checkout 2 to 3 replicas, restored: replicas restored from 3 to 2\n",
		"ReplicaSet shop/solo-1 1 to 2 replicas, scaled\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
}

// TestDetailVolumes: the plan on one screen lists its drain groups in
// order and each volume it waits to see detached, with why.
func TestDetailVolumes(t *testing.T) {
	p := cooling()
	p.Status.EvictionProgress.Groups = []api.DrainGroup{
		{Order: 0, Behavior: "Drain", Why: "default", Pods: 20, Remaining: 0},
		{Order: 1, Behavior: "Drain", Why: "storage provider of driver rook-ceph.rbd.csi.ceph.com for 20 pods", Pods: 2, Remaining: 2},
	}
	p.Status.EvictionProgress.Detaches = []api.Detach{
		{VolumeAttachment: "csi-1", PersistentVolume: "pv-1", Driver: "rook-ceph.rbd.csi.ceph.com", Since: metav1.NewTime(t0), DetachError: "rpc error: busy"},
		{VolumeAttachment: "csi-2", PersistentVolume: "pv-2", Driver: "gone.csi", Since: metav1.NewTime(t0), Leaked: "pv-gone"},
	}
	var b bytes.Buffer
	if err := Detail(&b, p, func(*api.MaintenancePlan) string { return "" }, nil, nil, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"order 0, Drain: default, 0 of 20 pods left\n",
		"order 1, Drain: storage provider of driver rook-ceph.rbd.csi.ceph.com for 20 pods, 2 of 2 pods left\n",
		"VolumeAttachment csi-1, PV pv-1, driver rook-ceph.rbd.csi.ceph.com: detach error: rpc error: busy, waiting 1m\n",
		"VolumeAttachment csi-2, PV pv-2, driver gone.csi: leaked (pv-gone), waiting 1m\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
}
