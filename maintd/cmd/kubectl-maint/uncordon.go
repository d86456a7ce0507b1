package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/follow"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func uncordonCommand() *cli.Command {
	return &cli.Command{
		Name:      "uncordon",
		Usage:     "release NODE's plan: maintd uncordons the node, the plan completes and is deleted",
		UsageText: "kubectl maint uncordon NODE [--keep] [--timeout D] [-o json|yaml]",
		Description: `Uncordon sets spec.release on the plan of NODE that is not Completed (one
guarded write: a merge patch carrying the resourceVersion read; a conflict
reads the plan again), follows it to Completed, printing its steps on
stderr, then deletes it (the delete guarded by its UID) and waits until it
is gone; --keep keeps it.
maintd lifts only its own cordon: a node cordoned by someone else stays as
it is. A plan released before it cordoned the node completes at once.

A plan that maintd never releases, because its status is final (Failed,
such as deadline-exceeded; Blocked for good: plan-spec-changed,
target-replaced), keeps its node cordoned until it is deleted, when
maintd's finalizer lifts the cordon. Uncordon deletes such a plan (the
delete guarded by its UID), says so on stderr, waits until it is gone and
the node no longer carries its cordon, and exits 0; stdout gets
"maintenanceplan/NAME deleted", or with -o the plan as it was before it
went (keep that as its record). --keep cannot keep it: refused, exit 1,
nothing written. A campaign's node whose plan is deleted so is drained
again only when listed in the campaign's spec.retry: "kubectl maint retry
CAMPAIGN NODE".

A node of a campaign is released the same way (spec.release on its plan:
the node is uncordoned and its plan completes), but its plan is kept,
whatever --keep says: the campaign made it, and counts the node done from
it; the campaign's next wave starts when every plan of the wave has
completed.

Exit code: 0 Completed (and deleted, but a campaign's), or a final plan deleted and its
cordon lifted; 3 Blocked or Failed while it was followed; 2 still waiting
when --timeout ends; 1 when NODE has no plan to release.`,
		ArgsUsage: "NODE",
		Flags: withKube(
			&cli.BoolFlag{Name: "keep", Usage: "keep the Completed plan instead of deleting it (refused for a plan maintd never releases: Failed, Blocked for good)"},
			timeoutFlag,
			outputFlag,
		),
		Action:       uncordonAction,
		BashComplete: complete(planNodes),
	}
}

func uncordonAction(c *cli.Context) error {
	if err := args(c, 1, 1, "NODE"); err != nil {
		return err
	}
	node := c.Args().First()
	if err := plan.ValidName("node", node); err != nil {
		return command.Usage("%v", err)
	}
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	if c.Duration("timeout") < 0 {
		return command.Usage("--timeout must not be negative, not %s", c.Duration("timeout"))
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return listError(err)
	}
	var p *api.MaintenancePlan
	for _, o := range plan.OfNode(list.Items, node) {
		if plan.Live(o) {
			p = o
			break
		}
	}
	if p == nil {
		return fmt.Errorf("node %s has no plan to release (kubectl maint status lists the plans; a cordon made without a plan is lifted with kubectl uncordon)", node)
	}
	if !plan.Releasable(p) {
		return deleteFinal(c, cl, p, format)
	}
	if !p.Spec.Release {
		if p, err = release(ctx, cl, p); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "maintenanceplan/%s released\n", p.Name)
	}
	p, code, err := watch(c, cl, p, follow.Completed, format == "", true)
	if err != nil {
		return err
	}
	if code != exitcode.OK && !plan.Releasable(p) {
		// It failed (its deadline) before maintd saw the release.
		return deleteFinal(c, cl, p, format)
	}
	if m := campaignOf(p); m != "" && code == exitcode.OK {
		// The campaign counts its nodes from its plans: its plan stays.
		fmt.Fprintf(c.App.ErrWriter, "maintenanceplan/%s kept: campaign %s made it (kubectl maint status %s)\n", p.Name, m, m)
	} else if code == exitcode.OK && !c.Bool("keep") {
		if err := cl.plans.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete plan %s: %w", p.Name, err)
		}
		if err := follow.Gone(ctx, cl.plans, p.Name); err != nil {
			return fmt.Errorf("plan %s: deleted, not yet gone: %w", p.Name, err)
		}
		fmt.Fprintf(c.App.ErrWriter, "maintenanceplan/%s deleted\n", p.Name)
	}
	return finish(c, format, p, code)
}

// deleteFinal ends plan p, which maintd never releases (plan.Releasable),
// the one way there is: it deletes it (guarded by its UID), and waits until
// it is gone and its node no longer carries its cordon (maintd's finalizer
// lifts it), within --timeout. With --keep it refuses, writing nothing.
func deleteFinal(c *cli.Context, cl *clients, p *api.MaintenancePlan, format document.Format) error {
	if c.Bool("keep") {
		return fmt.Errorf("plan %s is %s: maintd never releases it, and lifts its cordon of node %s only when the plan is deleted, so --keep cannot keep it: run uncordon without --keep (with -o yaml it prints the plan before it goes)",
			p.Name, phaseOf(p), p.Spec.NodeName)
	}
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "maintenanceplan/%s is %s: maintd never releases it; deleting it lifts its cordon\n", p.Name, phaseOf(p))
	ctx := c.Context
	if err := cl.plans.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete plan %s: %w", p.Name, err)
	}
	wait := ctx
	if d := c.Duration("timeout"); d > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	err := follow.Gone(wait, cl.plans, p.Name)
	if err == nil {
		err = follow.Uncordoned(wait, cl.core.Nodes(), p.Spec.NodeName, drain.Owner(p))
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return exitcode.Errorf(exitcode.NotNow, "stopped waiting; plan %s is deleted, and maintd lifts its cordon of node %s before it lets it go", p.Name, p.Spec.NodeName)
	case wait.Err() != nil:
		return exitcode.Errorf(exitcode.NotNow, "still waiting after --timeout %s: plan %s is deleted, and maintd lifts its cordon of node %s before it lets it go (is maintd running?)", c.Duration("timeout"), p.Name, p.Spec.NodeName)
	default:
		return fmt.Errorf("plan %s: deleted, not yet gone or its cordon not yet lifted: %w", p.Name, err)
	}
	fmt.Fprintf(stderr, "maintenanceplan/%s deleted; node %s uncordoned\n", p.Name, p.Spec.NodeName)
	if campaign := p.Labels[api.CampaignLabel]; campaign != "" {
		fmt.Fprintf(stderr, "node %s of campaign %s is drained again only when listed in its spec.retry: kubectl maint retry %s %s\n", p.Spec.NodeName, campaign, campaign, p.Spec.NodeName)
	}
	if format != "" {
		return writePlan(c.App.Writer, format, p)
	}
	fmt.Fprintf(c.App.Writer, "maintenanceplan/%s deleted\n", p.Name)
	return nil
}

// release sets spec.release with a merge patch guarded by the
// resourceVersion read; a conflict (someone changed the plan) re-reads it
// and tries again, at most 5 times.
func release(ctx context.Context, cl *clients, p *api.MaintenancePlan) (*api.MaintenancePlan, error) {
	name, uid := p.Name, p.UID
	for range 5 {
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"release":true}}`, p.ResourceVersion)
		out, err := cl.plans.Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				return nil, fmt.Errorf("release plan %s: %w", name, err)
			}
			return out, nil
		}
		if p, err = cl.plans.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("release plan %s: %w", name, err)
		}
		if p.UID != uid {
			return nil, fmt.Errorf("plan %s was deleted and re-created meanwhile: run uncordon again", name)
		}
	}
	return nil, fmt.Errorf("release plan %s: it kept changing (5 conflicts)", name)
}
