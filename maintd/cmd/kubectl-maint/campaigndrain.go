package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// drainCampaign is drain of more than one NODE, or of -l SELECTOR: it
// makes a MaintenanceCampaign and follows it.
func drainCampaign(c *cli.Context) error {
	req := request{Request: plan.Request{Name: c.String("name"), Reason: c.String("reason"), AllWorkloads: c.Bool("all-workloads"), Surge: c.Bool("surge")}}
	nodes := c.Args().Slice()
	var sel *metav1.LabelSelector
	if c.IsSet("selector") {
		if len(nodes) > 0 {
			return command.Usage("give NODE... or --selector SELECTOR, not both")
		}
		var err error
		if sel, err = plan.ParseNodeSelector(c.String("selector")); err != nil {
			return command.Usage("%v", err)
		}
	}
	for _, n := range nodes {
		if err := plan.ValidName("node", n); err != nil {
			return command.Usage("%v", err)
		}
	}
	if err := settings(c, &req); err != nil {
		return err
	}
	format, wait, err := followFlags(c)
	if err != nil {
		return err
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	chosen, err := campaignNodes(ctx, cl, nodes, sel)
	if err != nil {
		return err
	}
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return listError(err)
	}
	var busy []string
	for _, n := range chosen {
		for _, p := range plan.OfNode(list.Items, n) {
			if plan.Live(p) {
				busy = append(busy, fmt.Sprintf("%s (plan %s, %s)", n, p.Name, phaseOf(p)))
				break
			}
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("%d of the %d nodes already have a plan that is not Completed: %s; finish them first (kubectl maint status, kubectl maint uncordon NODE)", len(busy), len(chosen), strings.Join(busy, ", "))
	}
	m := plan.NewCampaign(req.Request, nodes, sel, cl.whoami(c))
	stderr := c.App.ErrWriter
	what := fmt.Sprintf("%d nodes (%s)", len(chosen), list3(chosen))
	if sel != nil {
		what = fmt.Sprintf("the nodes matching %s (%d now: %s)", metav1.FormatLabelSelector(sel), len(chosen), list3(chosen))
	}
	if req.mode == dryRunClient {
		fmt.Fprintf(stderr, "maintenancecampaign would drain %s (dry run)\n", what)
		return dryRunClientOut(c, format, m)
	}
	how, opts := dryRunText(req.mode)
	created, err := cl.campaigns.Create(ctx, m, metav1.CreateOptions{DryRun: opts})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the MaintenanceCampaign API is not installed (kubectl apply -f maintd/deploy/crd.yaml, then run maintd): %w", err)
		}
		return fmt.Errorf("create campaign: %w", err)
	}
	name := created.Name
	if name == "" {
		name = created.GenerateName + "<random>"
	}
	fmt.Fprintf(stderr, "maintenancecampaign/%s created to drain %s%s\n", name, what, how)
	if req.mode == dryRunServer {
		if format != "" {
			return writeCampaign(c, format, created)
		}
		fmt.Fprintf(c.App.Writer, "maintenancecampaign/%s created%s\n", name, how)
		return nil
	}
	if !wait {
		return finishCampaign(c, format, created, exitcode.OK)
	}
	last, code, werr := watchCampaign(c, cl, created, format == "")
	if !c.Bool("keep") && (werr != nil || code != exitcode.OK) {
		if gone, derr := dropUnstarted(context.WithoutCancel(ctx), cl, created); derr != nil {
			fmt.Fprintf(stderr, "%s: delete campaign %s: %v\n", name, created.Name, derr)
		} else if gone {
			fmt.Fprintf(stderr, "maintenancecampaign/%s deleted: it had made no plan (%s); --keep leaves it to start when its cause clears\n", created.Name, campaignPhase(last))
		}
	}
	if werr != nil {
		return werr
	}
	return finishCampaign(c, format, last, code)
}

// campaignNodes are the nodes a campaign of nodes (each must exist) or
// of sel (some must match) takes now, by name.
func campaignNodes(ctx context.Context, cl *clients, nodes []string, sel *metav1.LabelSelector) ([]string, error) {
	if sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, command.Usage("invalid --selector: %v", err)
		}
		list, err := cl.core.Nodes().List(ctx, metav1.ListOptions{LabelSelector: s.String()})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		var out []string
		for _, n := range list.Items {
			out = append(out, n.Name)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no node matches --selector %s", s)
		}
		slices.Sort(out)
		return out, nil
	}
	out := slices.Compact(slices.Sorted(slices.Values(nodes)))
	var missing []string
	for _, n := range out {
		if _, err := cl.core.Nodes().Get(ctx, n, metav1.GetOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("read node %s: %w", n, err)
			}
			missing = append(missing, n)
		}
	}
	switch len(missing) {
	case 0:
		return out, nil
	case 1:
		return nil, fmt.Errorf("node %q not found", missing[0])
	}
	return nil, fmt.Errorf("nodes not found: %s", strings.Join(missing, ", "))
}

// dropUnstarted deletes campaign m when it has made no plan (guarded by
// its UID and the resourceVersion read), so that it does not start later,
// when its cause clears, at a moment nobody chose.
func dropUnstarted(ctx context.Context, cl *clients, m *api.MaintenanceCampaign) (bool, error) {
	sel := labels.SelectorFromSet(labels.Set{api.CampaignLabel: m.Name}).String()
	for range 5 {
		now, err := cl.campaigns.Get(ctx, m.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		case now.UID != m.UID:
			return false, nil
		}
		for _, n := range now.Status.NodeStatus {
			if n.Plan != "" || n.Outcome != api.NodePending && n.Outcome != "" {
				return false, nil
			}
		}
		plans, err := cl.plans.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		if len(plans.Items) > 0 {
			return false, nil
		}
		err = cl.campaigns.Delete(ctx, m.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &now.UID, ResourceVersion: &now.ResourceVersion}})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !apierrors.IsConflict(err):
			return false, err
		}
	}
	return false, fmt.Errorf("it kept changing while being deleted")
}

// dryRunClientOut prints what --dry-run=client would create: the object
// with -o (YAML by default), else its kind and name.
func dryRunClientOut(c *cli.Context, format document.Format, obj any) error {
	if format == "" {
		format = document.YAML
	}
	return encode(c.App.Writer, format, obj)
}

// list3 names at most 3 of names, and how many more.
func list3(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
