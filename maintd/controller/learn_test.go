package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/fake"
)

// lpod is a cached pod named name, created at created, Ready or not,
// deleting since deleting (zero: not deleting).
func lpod(name string, created time.Time, isReady bool, deleting time.Time) *cachedPod {
	p := &cachedPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)}}
	if isReady {
		p.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	if !deleting.IsZero() {
		p.DeletionTimestamp = &metav1.Time{Time: deleting}
	}
	return p
}

// TestLearnerObserve: an exit is timed from the deletion seen to the pod
// gone, on a node under maintenance only and only when the deletion was
// seen as it happened; a replacement is timed from its add to its first
// Ready (a flap after is not a sample), only when created after a deletion
// of its workload.
func TestLearnerObserve(t *testing.T) {
	web := analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}
	db := analyze.Workload{Kind: "StatefulSet", Namespace: "ns", Name: "db"}
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	l := newLearner()
	old := lpod("a", at(-100), true, time.Time{})
	// The initial list shows b ready and c already deleting: neither is
	// a sample.
	l.observe(nil, lpod("b", at(-100), true, time.Time{}), web, true, at(0))
	l.observe(nil, lpod("c", at(-100), true, at(-5)), web, true, at(0))
	l.observe(nil, nil, web, true, at(0.5)) // nothing: ignored
	// a is deleted at 1s, gone at 3.5s: one exit of 2.5s.
	l.observe(old, lpod("a", at(-100), true, at(1)), web, true, at(1))
	// Its replacement r, created at 1s, added at 1.2s, Ready at 5.2s: 4s.
	l.observe(nil, lpod("r", at(1), false, time.Time{}), web, true, at(1.2))
	l.observe(lpod("a", at(-100), true, at(1)), nil, web, true, at(3.5))
	l.observe(lpod("r", at(1), false, time.Time{}), lpod("r", at(1), true, time.Time{}), web, true, at(5.2))
	// r flaps: not Ready, Ready again; no new sample.
	l.observe(lpod("r", at(1), true, time.Time{}), lpod("r", at(1), false, time.Time{}), web, true, at(8))
	l.observe(lpod("r", at(1), false, time.Time{}), lpod("r", at(1), true, time.Time{}), web, true, at(9))
	// c, listed deleting, goes: no sample.
	l.observe(lpod("c", at(-100), true, at(-5)), nil, web, true, at(10))
	// db's pod deleted on a node without a plan: no exit, and its new
	// pod is no replacement.
	l.observe(lpod("d", at(-100), true, time.Time{}), lpod("d", at(-100), true, at(11)), db, false, at(11))
	l.observe(lpod("d", at(-100), true, at(11)), nil, db, false, at(12))
	l.observe(nil, lpod("e", at(12), false, time.Time{}), db, false, at(12))
	l.observe(lpod("e", at(12), false, time.Time{}), lpod("e", at(12), true, time.Time{}), db, false, at(14))
	// A pod without a workload teaches nothing.
	l.observe(lpod("f", at(-1), true, time.Time{}), lpod("f", at(-1), true, at(15)), analyze.Workload{}, true, at(15))

	want := map[analyze.Workload]analyze.Learned{web: {ExitP50: 2500 * time.Millisecond, ExitP90: 2500 * time.Millisecond, ExitSamples: 1,
		ReadyP50: 4 * time.Second, ReadyP90: 4 * time.Second, ReadySamples: 1}}
	if diff := cmp.Diff(want, l.learned()); diff != "" {
		t.Errorf("learned (-want +got):\n%s", diff)
	}
	// A pod created before the deletion (an older replica) is no
	// replacement.
	l.observe(lpod("x", at(20), true, time.Time{}), lpod("x", at(20), true, at(30)), web, true, at(30))
	l.observe(nil, lpod("old", at(25), false, time.Time{}), web, true, at(30.1))
	l.observe(lpod("old", at(25), false, time.Time{}), lpod("old", at(25), true, time.Time{}), web, true, at(31))
	if got := l.learned()[web].ReadySamples; got != 1 {
		t.Errorf("%d ready samples after a pod created before the deletion became Ready, want 1", got)
	}
}

// TestLearnerWindow: the last learnedSamples samples are kept, and their
// quantiles are the forecast's (nearest rank).
func TestLearnerWindow(t *testing.T) {
	w := analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}
	l := newLearner()
	now := time.Unix(0, 0)
	for i := 1; i <= learnedSamples+8; i++ {
		l.sample(w, now, time.Duration(i)*time.Second, 0)
	}
	win := l.windows[w]
	if len(win.exit) != learnedSamples || win.exit[0] != 9*time.Second {
		t.Fatalf("window of %d exits from %s, want %d from 9s", len(win.exit), win.exit[0], learnedSamples)
	}
	// 9s..40s: the 16th is 24s, the 29th (ceil(0.9*32)) 37s.
	got := l.learned()[w]
	if got.ExitP50 != 24*time.Second || got.ExitP90 != 37*time.Second || got.ExitSamples != learnedSamples || got.ReadySamples != 0 {
		t.Errorf("learned %+v, want exit p50 24s, p90 37s of %d, no ready", got, learnedSamples)
	}
}

// TestLearnedRoundTrip: what encode writes, decodeLearned reads back; the
// workloads kept are bounded, the most recent kept; bad entries and
// samples are dropped; a bad document is an error naming it.
func TestLearnedRoundTrip(t *testing.T) {
	l := newLearner()
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range learnedWorkloads + 5 {
		w := analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: fmt.Sprintf("w%04d", i)}
		l.sample(w, base.Add(time.Duration(i)*time.Second), time.Duration(i+1)*time.Millisecond, 2*time.Second)
	}
	if len(l.windows) != learnedWorkloads {
		t.Fatalf("%d workloads kept, want %d", len(l.windows), learnedWorkloads)
	}
	if _, ok := l.windows[analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: "w0004"}]; ok {
		t.Errorf("an oldest workload was kept")
	}
	data, _, err := l.encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 1<<19 {
		t.Errorf("encoded %d bytes: over half a ConfigMap", len(data))
	}
	read, err := decodeLearned(data)
	if err != nil {
		t.Fatal(err)
	}
	back := newLearner()
	back.load(read)
	if diff := cmp.Diff(l.learned(), back.learned()); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}

	got, err := decodeLearned(`{"workloads":[{"kind":"","name":"x","exitMillis":[1]},{"kind":"Deployment","namespace":"ns","name":"y","exitMillis":[-1,0,1500],"readyMillis":[99999999999]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[analyze.Workload]*window{{Kind: "Deployment", Namespace: "ns", Name: "y"}: {exit: []time.Duration{1500 * time.Millisecond}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(window{})); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if _, err := decodeLearned("{"); err == nil || !strings.Contains(err.Error(), "learned times") {
		t.Errorf("a bad document: %v, want an error naming the learned times", err)
	}
}

// FuzzDecodeLearned: any ConfigMap data decodes or fails, never panics, and
// what it decodes is within the bounds.
func FuzzDecodeLearned(f *testing.F) {
	f.Add(`{"workloads":[{"kind":"Deployment","namespace":"ns","name":"web","exitMillis":[100,2000],"readyMillis":[3000],"last":"2026-12-05T12:00:00Z"}]}`)
	f.Add(`{"workloads":null}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, data string) {
		got, err := decodeLearned(data)
		if err != nil {
			return
		}
		if len(got) > learnedWorkloads {
			t.Errorf("%d workloads", len(got))
		}
		for w, win := range got {
			if len(win.exit) > learnedSamples || len(win.ready) > learnedSamples || w.Kind == "" || w.Name == "" {
				t.Errorf("%v: %d exits, %d readies", w, len(win.exit), len(win.ready))
			}
			for _, d := range append(append([]time.Duration{}, win.exit...), win.ready...) {
				if d <= 0 {
					t.Errorf("%v: sample %s", w, d)
				}
			}
		}
	})
}

// TestLearnerPrune: once many, deletions and pending replacements older
// than replacementWindow are forgotten; a new deletion stays.
func TestLearnerPrune(t *testing.T) {
	l := newLearner()
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range 4 * learnedWorkloads {
		l.deleted[analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: fmt.Sprint(i)}] = t0
	}
	l.fresh["never-ready"] = pending{since: t0}
	w := analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: "new"}
	later := t0.Add(time.Hour)
	l.observe(lpod("p", t0, true, time.Time{}), lpod("p", t0, true, later), w, true, later)
	if len(l.deleted) != 1 || len(l.fresh) != 0 || len(l.exiting) != 1 {
		t.Errorf("after pruning: %d deletions, %d pending replacements, %d exits; want 1, 0, 1", len(l.deleted), len(l.fresh), len(l.exiting))
	}
}

// TestLearnedAcrossRestarts: what one maintd learned is written to the
// ConfigMap when it stops, and a maintd started after reads it back: the
// same learned times feed its forecasts.
func TestLearnedAcrossRestarts(t *testing.T) {
	core := kfake.NewClientset()
	ref := types.NamespacedName{Namespace: "maintd-system", Name: "sentinel-maintd-learned"}
	newC := func() *Controller {
		return New(Config{Clients: Clients{Core: core.CoreV1(), Apps: core.AppsV1(), Batch: core.BatchV1(), Policy: core.PolicyV1(), Autoscaling: core.AutoscalingV2(), Storage: core.StorageV1()},
			Plans: fake.NewSimpleClientset().MaintenanceV1alpha1().MaintenancePlans(), Learned: ref})
	}
	web := analyze.Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	first := newC()
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Minute)
		name := fmt.Sprintf("p%d", i)
		first.learner.observe(lpod(name, t0.Add(-time.Hour), true, time.Time{}), lpod(name, t0.Add(-time.Hour), true, at), web, true, at)
		first.learner.observe(lpod(name, t0.Add(-time.Hour), true, at), nil, web, true, at.Add(time.Duration(i+1)*time.Second))
	}
	want := first.learner.learned()
	if len(want) == 0 || want[web].ExitSamples != 5 {
		t.Fatalf("the first maintd learned %+v, want 5 exits of %s", want, web)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { first.keepLearned(ctx); close(done) }()
	cancel() // it stops: what it learned is written once more
	<-done
	cm, err := core.CoreV1().ConfigMaps(ref.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil || cm.Data[analyze.LearnedKey] == "" {
		t.Fatalf("the ConfigMap after the stop: %v, %+v", err, cm)
	}
	second := newC()
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { second.keepLearned(ctx2); close(done2) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(second.learner.learned()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // a poll with a deadline: keepLearned reads first, then waits
	}
	cancel2()
	<-done2
	if diff := cmp.Diff(want, second.learner.learned()); diff != "" {
		t.Errorf("the second maintd read back other times (-first +second):\n%s", diff)
	}
}
