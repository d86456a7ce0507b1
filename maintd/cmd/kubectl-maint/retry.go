package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/retry"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func retryCommand() *cli.Command {
	return &cli.Command{
		Name:      "retry",
		Usage:     "drain nodes of a MaintenanceCampaign again: list them in its spec.retry",
		UsageText: "kubectl maint retry CAMPAIGN NODE... [-o json|yaml]",
		Description: `Retry lists NODEs in the spec.retry of MaintenanceCampaign CAMPAIGN, so
that maintd drains each of them again, with a new plan in a later wave. A
campaign keeps what became of each of its nodes (status.nodeStatus), and
deleting a node's plan never makes it drain the node again: a node whose
plan was deleted before it ended (deleted), or failed or expired and was
deleted, is drained again only once a person lists it.

Retry reads the campaign and the plans, then writes spec.retry with one
guarded write: a merge patch carrying the resourceVersion read (a conflict
reads them again and decides again). It refuses, writing nothing (exit 1,
the reason on stderr naming each node), a node that is not the campaign's,
that completed, that is pending (the campaign has not made its plan yet),
or whose plan still exists ("kubectl maint uncordon NODE" deletes a Failed
plan and lifts its cordon), and a campaign that is Completed or Failed (it
makes no more plans). A node listed already is said so and not written.

stderr says what became of each node and that it is listed; stdout gets one
line, "maintenancecampaign/NAME retry NODE...", or with -o the campaign.

Exit code: 0 listed (or listed already); 1 refused, bad arguments, no
such campaign.`,
		ArgsUsage: "CAMPAIGN NODE...",
		Flags: withKube(
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "print the campaign as `FORMAT` on stdout at the end: json or yaml (default: one line)"},
		),
		Action:       retryAction,
		BashComplete: complete(retryNames),
	}
}

func retryAction(c *cli.Context) error {
	switch c.NArg() {
	case 0:
		return command.Usage("retry: missing CAMPAIGN and NODE")
	case 1:
		return command.Usage("retry: missing NODE")
	}
	name, nodes := c.Args().First(), c.Args().Tail()
	if err := plan.ValidName("campaign", name); err != nil {
		return command.Usage("%v", err)
	}
	for _, n := range nodes {
		if err := plan.ValidName("node", n); err != nil {
			return command.Usage("%v", err)
		}
	}
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	mc, d, err := addRetry(c.Context, cl, name, nodes)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	for _, n := range nodes {
		switch rec := d.Of[n]; {
		case slices.Contains(d.Listed, n):
			fmt.Fprintf(stderr, "node %s is listed in spec.retry already (%s)\n", n, rec.Outcome)
		case slices.Contains(d.Add, n):
			fmt.Fprintf(stderr, "node %s (%s, plan %s): listed in spec.retry\n", n, rec.Outcome, orDash(rec.Plan))
		}
	}
	if len(d.Add) > 0 {
		fmt.Fprintf(stderr, "maintenancecampaign/%s drains them again, each with a new plan, in a later wave\n", name)
	}
	if format != "" {
		return writeCampaign(c, format, mc)
	}
	fmt.Fprintf(c.App.Writer, "maintenancecampaign/%s retry %s\n", name, strings.Join(nodes, " "))
	return nil
}

// addRetry reads campaign name and the plans, decides, and writes
// spec.retry with a merge patch guarded by the resourceVersion read; a
// conflict (someone changed the campaign) reads again and decides again,
// at most 5 times. It returns the campaign as written (or as read, when
// nothing was to be written).
func addRetry(ctx context.Context, cl *clients, name string, nodes []string) (*api.MaintenanceCampaign, retry.Decision, error) {
	for range 5 {
		list, err := cl.plans.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, retry.Decision{}, listError(err)
		}
		mc, err := cl.campaigns.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, retry.Decision{}, fmt.Errorf("campaign %s not found (kubectl get mc lists them)", name)
		} else if err != nil {
			return nil, retry.Decision{}, fmt.Errorf("read campaign %s: %w", name, err)
		}
		d, err := retry.Decide(mc, list.Items, nodes)
		if err != nil || len(d.Add) == 0 {
			return mc, d, err
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": mc.ResourceVersion},
			"spec":     map[string]any{"retry": d.Retry},
		})
		if err != nil {
			return nil, d, err
		}
		out, err := cl.campaigns.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil:
			return out, d, nil
		case !apierrors.IsConflict(err):
			return nil, d, fmt.Errorf("write spec.retry of campaign %s: %w", name, err)
		}
	}
	return nil, retry.Decision{}, fmt.Errorf("write spec.retry of campaign %s: it kept changing (5 conflicts)", name)
}

// writeCampaign prints mc as JSON or YAML, with its apiVersion and kind,
// without managedFields.
func writeCampaign(c *cli.Context, f document.Format, mc *api.MaintenanceCampaign) error {
	mc = mc.DeepCopy()
	mc.APIVersion, mc.Kind = api.SchemeGroupVersion.String(), "MaintenanceCampaign"
	mc.ManagedFields = nil
	return encode(c.App.Writer, f, mc)
}
