package drain

import (
	"testing"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// TestWaveGateHoldsAnUnansweredFirstEviction: a campaign plan's gate opens
// at its first eviction the API server accepted; a first request that got
// no answer (or an unknown one) is held again while a plan of its wave is
// about to cordon (sim seed 917), and one accepted is not.
func TestWaveGateHoldsAnUnansweredFirstEviction(t *testing.T) {
	for _, tc := range []struct {
		outcome string
		held    bool
	}{
		{Requested, true},
		{Unknown, true},
		{Accepted, false},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			w := newWorld()
			w.started(api.Draining, api.EvictionRequested)
			w.active("web-1", "pod-1", tc.outcome, "10")
			w.facts.Wave = &Wave{Campaign: "fleet", Number: 1, Nodes: 2, Cordoning: []string{"n2"}}
			d := Decide(w.facts, w.plan, t0.Add(time.Minute))
			held := d.Status.Reason == api.WaveCordoning
			if held != tc.held {
				t.Errorf("held by the wave: %v, want %v (status %s/%s: %s; targets %v)", held, tc.held, d.Status.Phase, d.Status.Reason, d.Status.Message, d.Targets)
			}
			if held && len(d.Targets) > 0 {
				t.Errorf("targets %v while the wave holds the plan", d.Targets)
			}
		})
	}
}
