package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/follow"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/view"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "every campaign and plan on one screen, or one in detail; -w follows it",
		UsageText: "kubectl maint status [NODE|PLAN|CAMPAIGN] [-w [--timeout D]|--exit-code] [-o json|yaml] [--pause-configmap NS/NAME]",
		Description: `Without an argument, status shows first maintd's pause switch, when it is
set (since when, by whom, why), then one line per campaign: its phase and
reason, its nodes by state (Pending, Draining, Drained, Completed,
Blocked, Failed: the phase of each node's plan, or what became of the
node once its plan is gone), pods evicted of those on its nodes at its
start, its breaker, its wave and age; then every plan that no campaign
made: node, phase, reason, pods evicted of total, how long the phase has
lasted, the ETA, age and who created it. A campaign's plans are not
listed one by one: "kubectl maint status CAMPAIGN" shows them.

With a CAMPAIGN, it shows the campaign in detail: what it selects, its
phase with the message, the wave, pods, breaker, capacity check, deadline
and ETA, then its nodes grouped by state, each with its plan, that
plan's phase and pods, and why it is blocked or failed.

With a PLAN, or a NODE (its plan that is not Completed, else its newest),
it shows the plan in detail: phase and reason with the message, the pods,
the deadline and ETA, what it waits for (each PodDisruptionBudget cooldown
and each eviction in flight, with the budget's numbers read now), the
preflight's findings, the last history entries and the plan's Events.

Exit code: 0 when it showed what was asked, whatever the plan's phase (a
script under set -e goes on); 1 when it could not (no such plan, no
cluster). --exit-code exits with the plan's code instead, as it is now,
without watching (as git diff --exit-code): 0 Drained (Completed once
released), 2 on its way, 3 Blocked, Failed or expired; of a campaign: 0
Drained or Completed, 2 on its way, 3 Blocked or Failed.

-w follows the plan as drain does (or as uncordon does, once it is
released), with the same view and exit codes: 0 at its outcome, 3 Blocked,
Failed or expired, 2 still waiting when --timeout ends. It is the way back
after Ctrl-C or drain --no-wait. A campaign is followed as drain -l does,
to Drained (or Completed), Blocked or Failed.`,
		ArgsUsage: "[NODE|PLAN|CAMPAIGN]",
		Flags: withKube(
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "follow the plan until its outcome, exiting with its code"},
			&cli.BoolFlag{Name: "exit-code", Usage: "exit with the plan's code as it is now: 0 Drained or Completed, 2 on its way, 3 Blocked, Failed or expired"},
			timeoutFlag,
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "print the plan(s) or campaign as `FORMAT`: json or yaml (a list of plans without an argument)"},
			pauseSwitchFlag(),
		),
		Action:       statusAction,
		BashComplete: complete(planNodesAndNames),
	}
}

func statusAction(c *cli.Context) error {
	if err := args(c, 0, 1, "NODE, PLAN or CAMPAIGN"); err != nil {
		return err
	}
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	arg := c.Args().First()
	switch {
	case c.Bool("watch") && arg == "":
		return command.Usage("status -w: which plan? give a NODE or PLAN")
	case c.Bool("exit-code") && arg == "":
		return command.Usage("status --exit-code: which plan? give a NODE or PLAN")
	case !c.Bool("watch") && c.IsSet("timeout"):
		return command.Usage("--timeout goes with -w")
	case c.Duration("timeout") < 0:
		return command.Usage("--timeout must not be negative, not %s", c.Duration("timeout"))
	}
	if arg != "" {
		if err := plan.ValidName("NODE, PLAN or CAMPAIGN", arg); err != nil {
			return command.Usage("%v", err)
		}
	}
	sw, err := controller.ParsePauseSwitch(c.String("pause-configmap"))
	if err != nil {
		return command.Usage("%v", err)
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
	slices.SortFunc(list.Items, func(a, b api.MaintenancePlan) int { return strings.Compare(a.Name, b.Name) })
	campaigns, err := cl.campaigns.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list campaigns: %w", err)
	}
	slices.SortFunc(campaigns.Items, func(a, b api.MaintenanceCampaign) int { return strings.Compare(a.Name, b.Name) })
	w := c.App.Writer
	if arg == "" {
		if format != "" {
			return writeList(c, format, list)
		}
		return overview(c, cl, sw, list.Items, campaigns.Items)
	}
	p := find(list.Items, arg)
	if p == nil || p.Name != arg {
		if m := findCampaign(campaigns.Items, arg); m != nil {
			return campaignStatus(c, cl, m, list.Items, format)
		}
	}
	if p == nil {
		return fmt.Errorf("no plan or campaign named %s, and no plan for a node named %s", arg, arg)
	}
	if c.Bool("watch") {
		p, code, err := watch(c, cl, p, follow.GoalOf(p), format == "", false)
		if err != nil {
			return err
		}
		return finish(c, format, p, code)
	}
	// Shown is success; the plan's own code only when asked for.
	code := exitcode.OK
	if c.Bool("exit-code") {
		code = follow.Code(p)
	}
	if format != "" {
		if err := writePlan(w, format, p); err != nil {
			return err
		}
		return exitcode.Status(code)
	}
	pdbs := map[string]*policyv1.PodDisruptionBudget{}
	if ep := p.Status.EvictionProgress; ep != nil {
		keys := []string{}
		for _, cd := range ep.Cooldowns {
			keys = append(keys, cd.PDB)
		}
		for _, a := range ep.ActivePods {
			if a.PDB != "" {
				keys = append(keys, a.Namespace+"/"+a.PDB)
			}
		}
		for _, k := range keys {
			ns, n, ok := strings.Cut(k, "/")
			if !ok || pdbs[k] != nil {
				continue
			}
			// Numbers read now; a budget that cannot be read is shown
			// without them.
			if b, err := cl.policy.PodDisruptionBudgets(ns).Get(ctx, n, metav1.GetOptions{}); err == nil {
				pdbs[k] = b
			}
		}
	}
	sel := fields.Set{"regarding.uid": string(p.UID)}.String()
	events, err := cl.events.Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil && !apierrors.IsForbidden(err) {
		return fmt.Errorf("list the plan's events: %w", err)
	}
	var evs []eventsv1.Event
	if events != nil {
		evs = events.Items
		slices.SortStableFunc(evs, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b).Time) })
	}
	if err := view.Detail(w, p, createdBy, pdbs, evs, timeNow()); err != nil {
		return err
	}
	return exitcode.Status(code)
}

// find is the plan named arg, else the plan of node arg (its live one, else
// its newest).
func find(plans []api.MaintenancePlan, arg string) *api.MaintenancePlan {
	for i := range plans {
		if plans[i].Name == arg {
			return &plans[i]
		}
	}
	if of := plan.OfNode(plans, arg); len(of) > 0 {
		return of[0]
	}
	return nil
}

func eventTime(e eventsv1.Event) metav1.Time {
	if e.Series != nil {
		return metav1.Time(e.Series.LastObservedTime)
	}
	if !e.EventTime.IsZero() {
		return metav1.Time(e.EventTime)
	}
	return e.DeprecatedLastTimestamp
}

func createdBy(p *api.MaintenancePlan) string {
	if by := p.Annotations[plan.CreatedByAnnotation]; by != "" {
		return by
	}
	return p.Labels[plan.CreatedByLabel]
}

// writeList prints the plans as a MaintenancePlanList.
func writeList(c *cli.Context, format document.Format, list *api.MaintenancePlanList) error {
	out := &api.MaintenancePlanList{TypeMeta: metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenancePlanList"}, ListMeta: list.ListMeta}
	for i := range list.Items {
		out.Items = append(out.Items, *printable(&list.Items[i]))
	}
	return encode(c.App.Writer, format, out)
}
