package campaign

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// zoned is a fleet of 9 nodes, z1..z3 of 3 zones, as a cloud labels them.
func zoned() world {
	w := facts(true)
	w.Nodes = nil
	for i := range 9 {
		zone := fmt.Sprintf("eu-west-1%c", 'a'+i%3)
		w.Nodes = append(w.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i+1),
			Labels: map[string]string{"pool": "n", "topology.kubernetes.io/zone": zone}}})
	}
	return w
}

// TestBudget: a wave takes at most the budget's nodes, and per zone at
// most maxPerDomain, or one zone at a time; --max-nodes-in-maintenance
// stays the cap over all.
func TestBudget(t *testing.T) {
	zone := "topology.kubernetes.io/zone"
	for _, tc := range []struct {
		name     string
		budget   *api.CampaignBudget
		maxNodes int
		waves    [][]string
		message  string
	}{
		{name: "no budget: every node, as slots allow", maxNodes: 10,
			waves: [][]string{{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}}},
		{name: "a count", budget: &api.CampaignBudget{Nodes: ptr.To(intstr.FromInt32(4))}, maxNodes: 10,
			waves: [][]string{{"n1", "n2", "n3", "n4"}, {"n5", "n6", "n7", "n8"}, {"n9"}}, message: "at most 4 node(s) at once"},
		{name: "a percentage, rounded down", budget: &api.CampaignBudget{Nodes: ptr.To(intstr.FromString("25%"))}, maxNodes: 10,
			waves: [][]string{{"n1", "n2"}, {"n3", "n4"}, {"n5", "n6"}, {"n7", "n8"}, {"n9"}}},
		{name: "a percentage below one node", budget: &api.CampaignBudget{Nodes: ptr.To(intstr.FromString("5%"))}, maxNodes: 10,
			waves: [][]string{{"n1"}, {"n2"}, {"n3"}, {"n4"}, {"n5"}, {"n6"}, {"n7"}, {"n8"}, {"n9"}}},
		{name: "one per zone", budget: &api.CampaignBudget{TopologyKey: zone}, maxNodes: 10,
			waves: [][]string{{"n1", "n2", "n3"}, {"n4", "n5", "n6"}, {"n7", "n8", "n9"}}, message: "at most 1 node(s) per " + zone},
		{name: "two per zone, slots fewer", budget: &api.CampaignBudget{TopologyKey: zone, MaxPerDomain: 2}, maxNodes: 4,
			waves: [][]string{{"n1", "n2", "n3", "n4"}, {"n5", "n6", "n7", "n8"}, {"n9"}}},
		{name: "one zone at a time", budget: &api.CampaignBudget{TopologyKey: zone, OneDomainAtATime: true}, maxNodes: 10,
			waves: [][]string{{"n1", "n4", "n7"}, {"n2", "n5", "n8"}, {"n3", "n6", "n9"}}, message: "one " + zone + " at a time"},
		{name: "one zone at a time, two of it", budget: &api.CampaignBudget{TopologyKey: zone, OneDomainAtATime: true, MaxPerDomain: 2}, maxNodes: 10,
			// A wave takes up to 2 of its first node's zone: n7, the third
			// of zone a, waits for a later wave, alone in it.
			waves: [][]string{{"n1", "n4"}, {"n2", "n5"}, {"n3", "n6"}, {"n7"}, {"n8"}, {"n9"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCampaign(api.MaintenanceCampaignSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "n"}}, AllowAllWorkloads: true, Budget: tc.budget})
			w := zoned()
			w.MaxNodes = tc.maxNodes
			var got [][]string
			for i := range 12 {
				d := decide(t, c, w, t0.Add(time.Duration(i)*time.Second))
				if len(d.Create) == 0 {
					break
				}
				got = append(got, createdNodes(d))
				if i == 0 && tc.message != "" && !strings.Contains(c.Status.Message, tc.message) {
					t.Errorf("wave 1's message %q does not say %q", c.Status.Message, tc.message)
				}
				w.Plans = append(w.Plans, made(d, api.Completed)...)
			}
			if diff := cmp.Diff(tc.waves, got); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}
