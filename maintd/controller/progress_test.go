package controller

import (
	"testing"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// TestProgressOnly: a campaign's status whose changes are the counts of
// evictions alone may wait to be written; any other change may not.
func TestProgressOnly(t *testing.T) {
	base := func() api.MaintenanceCampaignStatus {
		return api.MaintenanceCampaignStatus{Phase: api.Draining, Reason: api.WaveStarted, Wave: 1,
			Counts:     api.CampaignCounts{Nodes: 2, Planned: 2, Evicted: 3},
			NodeStatus: []api.CampaignNode{{Name: "a", Outcome: api.NodePlanned, Plan: "p-a", Evicted: 2}, {Name: "b", Outcome: api.NodePlanned, Plan: "p-b", Evicted: 1}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*api.MaintenanceCampaignStatus)
		want bool
	}{
		{"nothing", func(*api.MaintenanceCampaignStatus) {}, true},
		{"evictions counted", func(st *api.MaintenanceCampaignStatus) { st.Counts.Evicted, st.NodeStatus[0].Evicted = 5, 4 }, true},
		{"a node drained", func(st *api.MaintenanceCampaignStatus) {
			st.NodeStatus[0].Outcome, st.Counts.Drained = api.NodeDrained, 1
		}, false},
		{"the phase", func(st *api.MaintenanceCampaignStatus) { st.Phase = api.Drained }, false},
		{"the message", func(st *api.MaintenanceCampaignStatus) { st.Message = "wave 1: 2 nodes" }, false},
	} {
		b := base()
		tc.edit(&b)
		if got := progressOnly(base(), b); got != tc.want {
			t.Errorf("%s: progressOnly %t, want %t", tc.name, got, tc.want)
		}
	}
}
