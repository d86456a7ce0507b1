// Package retry decides which nodes of a MaintenanceCampaign a person may
// list in its spec.retry (kubectl maint retry CAMPAIGN NODE...): a node of
// the campaign that did not complete and whose plan is gone. maintd drains
// such a node again, in a later wave, only when it is listed; deleting its
// plan alone never does. Decide is pure: the command reads the campaign
// and the plans, and writes.
package retry

import (
	"fmt"
	"slices"
	"strings"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// Decision is what a retry of some nodes writes.
type Decision struct {
	// Add are the nodes to add to spec.retry, in the order asked; Listed
	// are those in it already.
	Add, Listed []string
	// Retry is spec.retry to write: the list as it is, then Add.
	Retry []string
	// Of is each node's record in status.nodeStatus.
	Of map[string]api.CampaignNode
}

// Decide decides the retry of nodes of campaign c, given the cluster's
// plans. A node that may not be retried makes it an error naming every such
// node and why; nothing is to be written then.
func Decide(c *api.MaintenanceCampaign, plans []api.MaintenancePlan, nodes []string) (Decision, error) {
	d := Decision{Of: map[string]api.CampaignNode{}}
	switch st := &c.Status; {
	case c.DeletionTimestamp != nil:
		return d, fmt.Errorf("campaign %s is being deleted: it makes no more plans", c.Name)
	case campaign.Final(st):
		return d, fmt.Errorf("campaign %s is %s/%s: it makes no more plans, so a node listed in its spec.retry would not be drained again; drain it with a new campaign or plan", c.Name, st.Phase, st.Reason)
	case len(st.Nodes) == 0:
		return d, fmt.Errorf("campaign %s has not started (its status lists no nodes): no node of it has had a plan, there is nothing to retry", c.Name)
	}
	var refused []string
	for _, node := range nodes {
		if slices.Contains(d.Add, node) || slices.Contains(d.Listed, node) {
			continue
		}
		n, err := Node(c, plans, node)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		d.Of[node] = n
		if slices.Contains(c.Spec.Retry, node) {
			d.Listed = append(d.Listed, node)
		} else {
			d.Add = append(d.Add, node)
		}
	}
	if len(refused) > 0 {
		return Decision{}, fmt.Errorf("%s; nothing was written", strings.Join(refused, "; "))
	}
	d.Retry = slices.Concat(c.Spec.Retry, d.Add)
	return d, nil
}

// Node is node's record in campaign c's status, or why node may not be
// retried: it is not the campaign's, it completed or is pending, or a plan
// of it still exists.
func Node(c *api.MaintenanceCampaign, plans []api.MaintenancePlan, node string) (api.CampaignNode, error) {
	if !slices.Contains(c.Status.Nodes, node) {
		return api.CampaignNode{}, fmt.Errorf("node %s is not a node of campaign %s (its %s)", node, c.Name, some(c.Status.Nodes))
	}
	n := api.CampaignNode{Name: node, Outcome: api.NodePending}
	if i := slices.IndexFunc(c.Status.NodeStatus, func(s api.CampaignNode) bool { return s.Name == node }); i >= 0 {
		n = c.Status.NodeStatus[i]
	}
	p := planOf(c, plans, n)
	switch {
	case n.Outcome == api.NodeCompleted, n.Outcome == api.NodeDrained && p == nil:
		// A drained node's plan deleted lifted its cordon: it completed.
		return n, fmt.Errorf("node %s of campaign %s completed (plan %s): there is nothing to retry", node, c.Name, n.Plan)
	case n.Outcome == api.NodePending:
		return n, fmt.Errorf("node %s of campaign %s is pending: the campaign has not made its plan yet, there is nothing to retry", node, c.Name)
	case p != nil:
		what := fmt.Sprintf("node %s of campaign %s still has its plan %s (%s/%s)", node, c.Name, p.Name, orDash(string(p.Status.Phase)), orDash(string(p.Status.Reason)))
		switch {
		case p.DeletionTimestamp != nil:
			return n, fmt.Errorf("%s, being deleted: retry once it is gone", what)
		case p.Status.Phase == api.Completed:
			return n, fmt.Errorf("%s: a node is retried once its plan is gone; delete it first (kubectl delete mp %s)", what, p.Name)
		case drain.Final(&p.Status):
			return n, fmt.Errorf("%s: a node is retried once its plan is gone; delete it first (kubectl maint uncordon %s deletes it and lifts its cordon)", what, node)
		}
		return n, fmt.Errorf("%s, at work: a node is retried only once its plan is gone", what)
	}
	return n, nil
}

// planOf is the plan of campaign c's node n that exists: its latest plan
// by name, or one labelled with the campaign for the node.
func planOf(c *api.MaintenanceCampaign, plans []api.MaintenancePlan, n api.CampaignNode) *api.MaintenancePlan {
	for i := range plans {
		p := &plans[i]
		if (n.Plan != "" && p.Name == n.Plan) || (p.Labels[api.CampaignLabel] == c.Name && p.Spec.NodeName == n.Name) {
			return p
		}
	}
	return nil
}

// some names up to five nodes, and how many more.
func some(nodes []string) string {
	switch {
	case len(nodes) == 1:
		return "node: " + nodes[0]
	case len(nodes) <= 5:
		return fmt.Sprintf("%d nodes: %s", len(nodes), strings.Join(nodes, ", "))
	}
	return fmt.Sprintf("%d nodes: %s and %d more", len(nodes), strings.Join(nodes[:5], ", "), len(nodes)-5)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
