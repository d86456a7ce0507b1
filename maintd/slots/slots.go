// Package slots says which nodes hold a maintenance slot
// (--max-nodes-in-maintenance). It is the one definition that a plan's
// decision, a campaign's next wave, the live check before a cordon and the
// simulation's invariants all use.
//
// A node holds a slot when its cordon-owner annotation names a plan that
// exists (same name and UID: the annotation is the truth about who holds a
// cordon), or when a plan decided to cordon it and has not yet been seen to
// (status phase Cordoning: the intent is persisted before the write), or
// failed its deadline while cordoning, its cordon not refused
// (drain.CordonMayLand: it may have landed unseen).
package slots

import (
	"slices"
	"strings"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// Holder is one node in maintenance and the plan that holds it.
type Holder struct {
	Node string
	Plan *api.MaintenancePlan
	// Landed: the node's cordon-owner annotation names Plan. Otherwise
	// Plan is Cordoning, or failed while cordoning: its cordon is on its
	// way, or may have landed unseen.
	Landed bool
}

// Held is the nodes in maintenance, each once, in node order. plans are
// every plan of the cluster (the newest version known, deleted ones left
// out); owners are the cordon-owner annotations of the nodes, by node name
// (nodes without one may be left out).
func Held(plans []*api.MaintenancePlan, owners map[string]string) []Holder {
	byName := make(map[string]*api.MaintenancePlan, len(plans))
	for _, p := range plans {
		byName[p.Name] = p
	}
	held := map[string]Holder{}
	for node, owner := range owners {
		name, uid, ok := drain.ParseOwner(owner)
		if p := byName[name]; ok && p != nil && p.UID == uid {
			held[node] = Holder{Node: node, Plan: p, Landed: true}
		}
	}
	for _, p := range plans {
		if _, ok := held[p.Spec.NodeName]; !ok && drain.CordonMayLand(&p.Status) {
			held[p.Spec.NodeName] = Holder{Node: p.Spec.NodeName, Plan: p}
		}
	}
	out := make([]Holder, 0, len(held))
	for _, h := range held {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Holder) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// Others is held without the node that plan self holds: the slots the
// other plans take.
func Others(held []Holder, self *api.MaintenancePlan) []Holder {
	return slices.DeleteFunc(slices.Clone(held), func(h Holder) bool { return h.Plan.UID == self.UID })
}

// Nodes are the nodes of held.
func Nodes(held []Holder) []string {
	out := make([]string, len(held))
	for i, h := range held {
		out[i] = h.Node
	}
	return out
}

// Changed reports whether a plan's update (old to p; old nil for a plan
// created, p nil for one deleted) can change Held: a plan that comes or
// goes makes the annotations naming it count or not, and a plan's intent
// to cordon (Cordoning, or failed while cordoning) holds a slot until its
// annotation shows.
func Changed(old, p *api.MaintenancePlan) bool {
	if old == nil || p == nil {
		return true
	}
	return old.UID != p.UID || drain.CordonMayLand(&old.Status) != drain.CordonMayLand(&p.Status)
}
