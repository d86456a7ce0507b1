package drain

import (
	"strings"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// TestPause: while the pause switch is on, a plan makes no write but its
// status (no cordon, eviction or surge), says why with condition Paused,
// and keeps a cordon intent as Cordoning and Drained as Drained; once the
// switch is off it goes on where it stopped.
func TestPause(t *testing.T) {
	pause := &Pause{Object: "maintd-system/maintd-pause", Since: t0, Reason: "incident 4711"}
	cases := []struct {
		name  string
		setup func(w *world)
		phase api.Phase
	}{
		{"before the drain", func(w *world) {}, api.Pending},
		{"draining", func(w *world) { w.started(api.Draining, api.EvictionAccepted) }, api.CoolingDown},
		{"cordon on its way", func(w *world) { w.started(api.Cordoning, api.CordonSubmitted) }, api.Cordoning},
		{"surge to make", func(w *world) { *w = *surgeWorld() }, api.CoolingDown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			tc.setup(w)
			w.facts.Pause = pause
			now := t0.Add(time.Minute)
			dec := Decide(w.facts, w.plan, now)
			if dec.Action != None || dec.Status.Phase != tc.phase || dec.Status.Reason != api.Paused {
				t.Fatalf("decided %q, %s/%s; want no action, %s/paused", dec.Action, dec.Status.Phase, dec.Status.Reason, tc.phase)
			}
			for _, part := range []string{"maintd-system/maintd-pause", "incident 4711"} {
				if !strings.Contains(dec.Status.Message, part) {
					t.Errorf("message does not name %q: %s", part, dec.Status.Message)
				}
			}
			if !meta.IsStatusConditionTrue(dec.Status.Conditions, api.ConditionPaused) {
				t.Errorf("condition Paused not True: %+v", dec.Status.Conditions)
			}
			w.plan.Status = dec.Status
			if again := Decide(w.facts, w.plan, now.Add(time.Second)); !apiequality.Semantic.DeepEqual(again.Status, w.plan.Status) {
				t.Errorf("a paused plan rewrites its status")
			}
			w.facts.Pause = nil
			dec = Decide(w.facts, w.plan, now.Add(2*time.Second))
			if dec.Action == None || dec.Status.Reason == api.Paused {
				t.Errorf("after the pause: %q %s/%s, want it to go on", dec.Action, dec.Status.Phase, dec.Status.Reason)
			}
			if c := meta.FindStatusCondition(dec.Status.Conditions, api.ConditionPaused); c == nil || c.Status != metav1.ConditionFalse {
				t.Errorf("condition Paused after the pause: %+v", c)
			}
		})
	}
	// A plan never paused has no Paused condition; a drained one stays
	// Drained, paused or not.
	w := newWorld()
	if dec := Decide(w.facts, w.plan, t0); meta.FindStatusCondition(dec.Status.Conditions, api.ConditionPaused) != nil {
		t.Error("a plan never paused has a Paused condition")
	}
	w.started(api.Drained, api.ReasonDrained)
	w.facts.Pause = pause
	if dec := Decide(w.facts, w.plan, t0.Add(time.Minute)); dec.Status.Phase != api.Drained {
		t.Errorf("drained plan paused: %s/%s", dec.Status.Phase, dec.Status.Reason)
	}
}
