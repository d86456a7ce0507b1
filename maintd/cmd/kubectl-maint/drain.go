package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	watchpkg "k8s.io/apimachinery/pkg/watch"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/follow"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/view"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func drainCommand() *cli.Command {
	return &cli.Command{
		Name:  "drain",
		Usage: "create a MaintenancePlan for NODE (a MaintenanceCampaign for NODE NODE... or -l SELECTOR) and follow it until Drained, Blocked or Failed",
		UsageText: `kubectl maint drain (NODE... | -l SELECTOR) (--workloads KIND/NS/NAME,...|--all-workloads) [--accept RISK]... [--deadline 1h]
                         [--surge] [--reason TEXT] [--name NAME] [--dry-run[=none|client|server]] [--keep] [--wait|--no-wait] [--timeout D] [-o json|yaml]
                         [--window SCHEDULE=DURATION]... [--deny-window SCHEDULE=DURATION]... [--time-zone ZONE] [--exclude-date DATE]...
                         [--max-overrun D] [--window-margin D] [--health-condition TYPE[=STATUS]]... [--health-label KEY=VALUE]... [--health-timeout D] [--release]`,
		Description: `Drain creates a MaintenancePlan for NODE, named NODE-<random> (or --name),
labelled maintenance.sentinel.dev/created-by with the user the API server
knows you as, and app.kubernetes.io/managed-by=kubectl-maint. maintd does
the work: cordon, evictions under the PodDisruptionBudgets, Drained.
Drain refuses, writing nothing, when the node does not exist or already has
a plan that is not Completed.

It then follows the plan (a watch, not polling) and prints each step of
status.history as it happens, on stderr. On a terminal it also shows a live
view below the steps: the phase, a progress bar of pods evicted of total,
the current wait and its cause, and the ETA of the plan's forecast. Piped,
with TERM=dumb, or with -o, only the lines are printed. At the end stdout
gets one line, "maintenanceplan/NAME PHASE", or with -o the plan.

Exit code: 0 Drained; 3 Blocked, Failed or expired (the reason on stderr);
2 still waiting when --timeout ends. Ctrl-C stops watching. A plan that
has started its drain (cordoned) stays and maintd goes on with it: "kubectl
maint status -w PLAN" watches it again. A plan that has not started
(Blocked before its cordon, waiting for a slot) is deleted when drain ends,
so that it does not cordon and drain the node later, when its cause
clears, at a moment nobody chose; stderr says so. The delete is guarded by
the plan's UID and the resourceVersion read, so a plan that started
meanwhile is read again and stays. --keep leaves it: maintd
then starts it if its cause clears before its start-by (spec.startWithin
after its creation, 1h; past it the plan expires, the node untouched).

--dry-run (--dry-run=server) creates the plan with spec.dryRun: maintd
runs the checks and a server-side dry run of each eviction, writing
nothing but the plan's status; drain prints each pod's verdict, deletes
the plan, and exits 0 when every eviction would be accepted now, 2 when a
budget refuses one now, 3 when the plan is blocked or an eviction is
refused for good. --dry-run=client prints the plan (or campaign) it would
create, sending nothing. A mode is given after "=", as kubectl's.

More than one NODE, or -l SELECTOR (the nodes whose labels match, chosen
by maintd once, when the campaign starts), makes a MaintenanceCampaign
instead, named drain-<random> (or --name), with the same settings
(--workloads or --all-workloads, --accept, --reason, --surge,
--volume-detach-timeout; --deadline bounds the whole campaign, 6h by
default). maintd checks that the nodes left schedulable can take the pods,
then makes one plan per node, a wave at a time, and pauses the campaign by
its breaker when the cluster gets sick (docs/maintd.md, "Campaigns"). Drain
refuses, writing nothing, a node that does not exist or already has a plan
that is not Completed, and a selector that matches no node. It then follows
the campaign: a line at each change of its phase or counts and, on a
terminal, a live view of the whole: its nodes by state, a bar of the nodes
drained, the pods moved, the breaker, the plans at work and the ETA (the
wave's by its plans' forecasts, the campaign's at the pace so far). stdout
gets "maintenancecampaign/NAME PHASE", or with -o the campaign. Exit code:
0 Drained (every node drained, each waiting for "kubectl maint uncordon
NODE") or Completed; 3 Blocked or Failed; 2 still waiting when --timeout
ends. A campaign that ends the follow before it made a plan (Blocked
insufficient-capacity, say) is deleted unless --keep. Campaigns have no
dry run by maintd: --dry-run=server has the API server check the
campaign, writing nothing.

Windows (spec.windows, a plan's or a campaign's): --window
"SCHEDULE=DURATION" opens a window each time the cron schedule (5 fields,
or @daily, @weekly) fires, for DURATION; work on a node starts only in a
window, and only when the node's drain forecast (p90) plus --window-margin
(30s) fits in the time left. --deny-window closes the time its windows
cover, --exclude-date a whole day; --time-zone is the IANA zone the
schedules and dates are read in (UTC by default). At a window's end a node
at work stops evicting (or goes on for --max-overrun) and goes on in the
next window; the nodes not begun wait for it. Each is checked before
anything is written, as maintd reads it: a bad schedule, zone or date is
exit 1. The live view and status show whether the window is open and until
when, or when the next opens, how many windows the nodes left need, when
the last ends, the ETA across them, and the nodes waiting for a window.

The health gate (spec.healthGate): after its release, a node stays
cordoned until it is Ready, shows each --health-condition TYPE[=STATUS]
(True if not given, as kubectl wait reads it) and carries each
--health-label KEY=VALUE; one that does not within --health-timeout (10m)
blocks its plan (node-unhealthy) and the campaign's next wave. A node
deleted after its release (replaced) completes its plan. --release
releases each node of a campaign as soon as it is drained (spec.release):
the campaign then goes on to Completed, and drain follows it there.

--accept names what the plan accepts (spec.acceptedRisks): a high-risk
finding of the analysis (kubectl maint preflight shows them), each of
which blocks the plan otherwise, or a cause of a drain forecast of never
that you know will clear (replacement-unschedulable, insufficient-capacity:
the room a cluster autoscaler adds for the replacements), each of which
blocks it as drain-never-completes otherwise, naming the cause.

--surge lets maintd move a pod whose PodDisruptionBudget never allows its
eviction (a single replica under minAvailable: 1): it adds one replica to
the pod's Deployment, waits until the new pod is Ready, evicts the old one
(the budget now allows it) and restores the replica count, once.`,
		ArgsUsage: "NODE",
		Flags: withKube(append([]cli.Flag{
			&cli.StringSliceFlag{Name: "workloads", Usage: "the workloads whose pods may be evicted: `KIND/NAMESPACE/NAME`, comma-separated or repeated (kind: deployment, statefulset, replicaset, job)"},
			&cli.BoolFlag{Name: "all-workloads", Usage: "every pod a controller owns may be evicted (DaemonSet, mirror and finished pods stay)"},
			&cli.StringSliceFlag{Name: "accept", Usage: "accept `RISK`, comma-separated or repeated (spec.acceptedRisks): a high-risk k8s-analyze finding, or a cause of a drain forecast of never that you know will clear; " + plan.AcceptableText()},
			&cli.StringFlag{Name: "selector", Aliases: []string{"l"}, Usage: "drain the nodes whose labels match `SELECTOR` (pool=blue,zone in (a,b)) as a campaign"},
			&cli.StringFlag{Name: "deadline", Usage: "fail the drain if it is not Drained `DURATION` after the cordon (default: 1h; a campaign's: from its start, 6h)"},
			&cli.StringFlag{Name: "volume-detach-timeout", Usage: "Drained waits for the pods' volumes to detach from the node; Blocked (volume-detach-stuck) if one takes longer than `DURATION` (default: 5m)"},
			&cli.BoolFlag{Name: "surge", Usage: "move a pod whose PodDisruptionBudget never allows its eviction (one replica, minAvailable: 1) with no downtime: one more replica of its Deployment first, restored after (spec.surge: IfNeeded)"},
			&cli.StringFlag{Name: "reason", Usage: "why, shown in the plan and on the node (`TEXT`, e.g. a change ticket)"},
			&cli.StringFlag{Name: "name", Usage: "the plan's (or campaign's) `NAME` (default: NODE-<random>, drain-<random>)"},
			newDryRunFlag("`MODE`: none; server (--dry-run alone): maintd checks and dry-runs each eviction, nothing but the plan is written, and it is deleted at the end (a campaign: the API server checks it); client prints what would be created; give it as --dry-run=MODE"),
			&cli.BoolFlag{Name: "keep", Usage: "leave the plan (campaign) when drain ends before the drain started (Blocked, Ctrl-C, --timeout): maintd starts it if its cause clears before its start-by"},
			&cli.BoolFlag{Name: "wait", Value: true, Usage: "follow the plan until its outcome"},
			&cli.BoolFlag{Name: "no-wait", Usage: "create the plan and return (as --wait=false)"},
			timeoutFlag,
			outputFlag,
		}, gateFlags()...)...),
		Action:       drainAction,
		BashComplete: complete(nodeNames),
	}
}

func drainAction(c *cli.Context) error {
	if c.IsSet("selector") || c.NArg() > 1 {
		return drainCampaign(c)
	}
	if err := args(c, 1, 1, "NODE"); err != nil {
		return err
	}
	req, err := drainRequest(c)
	if err != nil {
		return err
	}
	format, wait, err := followFlags(c)
	if err != nil {
		return err
	}
	if !wait && req.DryRun {
		return command.Usage("--dry-run waits for maintd's verdicts: it does not go with --no-wait")
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	if _, err := cl.core.Nodes().Get(ctx, req.Node, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %q not found", req.Node)
		}
		return fmt.Errorf("read node %s: %w", req.Node, err)
	}
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return listError(err)
	}
	for _, p := range plan.OfNode(list.Items, req.Node) {
		if plan.Live(p) {
			return fmt.Errorf("node %s already has plan %s (%s/%s): watch it with \"kubectl maint status -w %s\", or finish it with \"kubectl maint uncordon %s\"",
				req.Node, p.Name, orDash(string(p.Status.Phase)), orDash(string(p.Status.Reason)), p.Name, req.Node)
		}
	}
	if req.mode == dryRunClient {
		return dryRunClientOut(c, format, printable(plan.New(req.Request, cl.whoami(c))))
	}
	created, err := cl.plans.Create(ctx, plan.New(req.Request, cl.whoami(c)), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create plan for node %s: %w", req.Node, err)
	}
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "maintenanceplan/%s created for node %s\n", created.Name, req.Node)
	if !wait {
		return finish(c, format, created, exitcode.OK)
	}
	goal := follow.Drained
	if req.DryRun {
		goal = follow.DryRun
	}
	p, code, err := watch(c, cl, created, goal, format == "", false)
	if err == nil && req.DryRun {
		for _, v := range p.Status.DryRun {
			fmt.Fprintf(stderr, "dry run: pod %s/%s: %s %s\n", v.Namespace, v.Name, v.Outcome, v.Message)
		}
	}
	// Whatever ended the watch (an outcome, --timeout, Ctrl-C), a dry run
	// leaves nothing, and a plan that has not started goes unless --keep:
	// left behind, it would start whenever its cause cleared.
	if req.DryRun || !c.Bool("keep") {
		if why, gone, derr := leaveNothing(context.WithoutCancel(ctx), cl, created, req.DryRun); derr != nil {
			fmt.Fprintf(stderr, "%s: delete plan %s: %v\n", name, created.Name, derr)
		} else if gone && !req.DryRun {
			fmt.Fprintf(stderr, "maintenanceplan/%s deleted: it had not started (%s); --keep leaves it to start if its cause clears before its start-by\n", created.Name, why)
		}
	}
	if err != nil {
		return err
	}
	return finish(c, format, p, code)
}

// leaveNothing deletes plan p, as read live, when it is a dry run or has not
// started its drain (it never cordoned): gone reports a deletion, and why
// is the phase it had. A plan that changed since it was read is read
// again (the delete is conditional on its resourceVersion), so that one
// that just started is never deleted by this.
func leaveNothing(ctx context.Context, cl *clients, p *api.MaintenancePlan, dryRun bool) (why string, gone bool, err error) {
	for range 5 {
		now, err := cl.plans.Get(ctx, p.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return "", false, nil
		case err != nil:
			return "", false, err
		case now.UID != p.UID:
			return "", false, nil // not ours: ours is gone
		case !dryRun && drain.Started(&now.Status):
			return "", false, nil
		}
		err = cl.plans.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &now.UID, ResourceVersion: &now.ResourceVersion}})
		switch {
		case err == nil:
			return phaseOf(now), true, waitGone(ctx, cl, now)
		case apierrors.IsNotFound(err):
			return "", false, nil
		case !apierrors.IsConflict(err):
			return "", false, err
		}
	}
	return "", false, fmt.Errorf("it kept changing while being deleted")
}

// goneWait bounds the wait for a deleted plan to be gone.
const goneWait = 10 * time.Second

// waitGone waits, up to goneWait, until plan p, just deleted, is gone:
// maintd's finalizer holds a deleted plan until maintd has lifted what it
// did (nothing, for a plan that never cordoned), so that drain returns
// with no plan left to block the node's next one. A watch from the
// delete's version, not a poll.
func waitGone(ctx context.Context, cl *clients, p *api.MaintenancePlan) error {
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	w, err := cl.plans.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", p.Name).String(), ResourceVersion: p.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if q, ok := ev.Object.(*api.MaintenancePlan); ev.Type == watchpkg.Deleted || ok && q.UID != p.UID {
			return nil
		}
	}
	return fmt.Errorf("it is still being deleted after %s: maintd's finalizer holds it until maintd has looked at it (is maintd running?)", goneWait)
}

// request is a drain as asked: the plan's request and the --dry-run mode.
type request struct {
	plan.Request
	mode string
}

// drainRequest reads drain's (and preflight's) flags and NODE.
func drainRequest(c *cli.Context) (request, error) {
	req := request{Request: plan.Request{Node: c.Args().First(), Name: c.String("name"), Reason: c.String("reason"), AllWorkloads: c.Bool("all-workloads"), Surge: c.Bool("surge")}}
	if err := plan.ValidName("node", req.Node); err != nil {
		return req, command.Usage("%v", err)
	}
	if err := settings(c, &req); err != nil {
		return req, err
	}
	if req.Release {
		return req, command.Usage("--release is for a campaign (NODE NODE... or -l SELECTOR); one node is released by \"kubectl maint uncordon NODE\" when its work is done")
	}
	req.DryRun = req.mode == dryRunServer
	return req, nil
}

// settings reads the flags a plan and a campaign share.
func settings(c *cli.Context, req *request) error {
	if c.Command.Name == "drain" {
		var err error
		if req.mode, err = dryRun(c); err != nil {
			return err
		}
		if err := gates(c, req); err != nil {
			return err
		}
	}
	if c.IsSet("name") {
		if err := plan.ValidName("--name", req.Name); err != nil {
			return command.Usage("%v", err)
		}
	}
	var err error
	if req.Workloads, err = plan.ParseWorkloads(c.StringSlice("workloads")); err != nil {
		return command.Usage("%v", err)
	}
	if req.Accept, err = plan.ParseAccept(c.StringSlice("accept")); err != nil {
		return command.Usage("%v", err)
	}
	if c.IsSet("deadline") {
		if req.Deadline, err = plan.ParseDeadline(c.String("deadline")); err != nil {
			return command.Usage("%v", err)
		}
	}
	if c.IsSet("volume-detach-timeout") {
		if req.VolumeDetachTimeout, err = plan.ParseDuration("volume-detach-timeout", c.String("volume-detach-timeout")); err != nil {
			return command.Usage("%v", err)
		}
	}
	switch {
	case len(req.Workloads) > 0 && req.AllWorkloads:
		return command.Usage("--workloads and --all-workloads: choose one")
	case len(req.Workloads) == 0 && !req.AllWorkloads && c.Command.Name == "drain":
		return command.Usage("which pods may be evicted? give --workloads KIND/NAMESPACE/NAME,... or --all-workloads")
	}
	return nil
}

// followFlags are drain's -o and --wait (the default) or --no-wait,
// refusing both and a negative --timeout.
func followFlags(c *cli.Context) (document.Format, bool, error) {
	format, err := outputFormat(c)
	switch {
	case err != nil:
		return "", false, err
	case c.IsSet("wait") && c.Bool("wait") && c.Bool("no-wait"):
		return "", false, command.Usage("--wait and --no-wait: choose one")
	case c.Duration("timeout") < 0:
		return "", false, command.Usage("--timeout must not be negative, not %s", c.Duration("timeout"))
	}
	return format, c.Bool("wait") && !c.Bool("no-wait"), nil
}

// watch follows plan p to goal, showing its steps (and on a terminal the
// live view) on stderr, and returns it with the exit code of its outcome;
// from p's present on with fresh, else from the first step of its
// history. --timeout or Ctrl-C end the watch with exit 2, saying how to
// resume.
func watch(c *cli.Context, cl *clients, p *api.MaintenancePlan, goal follow.Goal, mayLive, fresh bool) (*api.MaintenancePlan, exitcode.Code, error) {
	stderr := c.App.ErrWriter
	pr := view.NewPrinter(stderr, mayLive && live(stderr), width(stderr), timeNow)
	if fresh {
		pr.Seen(p)
	}
	var code exitcode.Code
	var last *api.MaintenancePlan
	if err := watchUntil(c, "plan", p.Name, follow.ErrDeleted, pr.Tick, pr.Close, func() string { return phaseOf(last) }, func(ctx context.Context) error {
		var err error
		last, err = follow.Watch(ctx, cl.plans, p.Name, func(p *api.MaintenancePlan) (bool, error) {
			pr.Update(p)
			var done bool
			done, code = follow.Outcome(p, goal)
			return done, nil
		})
		return err
	}); err != nil {
		return nil, 0, err
	}
	return last, code, nil
}

// watchUntil runs follow (a watch of the kind's object name) under
// --timeout with the printer's tick each second, closes the printer, and
// says how the watch ended: nil when it reached its end, else the error
// for the user (deleted is follow's error of a deleted object; phase is
// the last phase seen). Ctrl-C and --timeout are exit 2, saying how to
// resume.
func watchUntil(c *cli.Context, kind, name string, deleted error, tickf, closef func(), phase func() string, follow func(context.Context) error) error {
	stop := make(chan struct{})
	defer close(stop)
	go tick(stop, tickf)
	ctx := c.Context
	if d := c.Duration("timeout"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	err := follow(ctx)
	closef()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, deleted):
		return fmt.Errorf("%s %s was deleted while it was watched", kind, name)
	case c.Context.Err() != nil:
		return exitcode.Errorf(exitcode.NotNow, "stopped watching; %s %s goes on: \"kubectl maint status -w %s\" watches it again", kind, name, name)
	case ctx.Err() != nil:
		return exitcode.Errorf(exitcode.NotNow, "still waiting after --timeout %s (%s); %s %s goes on: \"kubectl maint status -w %s\" watches it again",
			c.Duration("timeout"), phase(), kind, name, name)
	}
	return fmt.Errorf("watch %s %s: %w", kind, name, err)
}

// finish prints the outcome: the plan with -o, else one line on stdout;
// for exit 3 the reason also on stderr.
func finish(c *cli.Context, format document.Format, p *api.MaintenancePlan, code exitcode.Code) error {
	if format != "" {
		if err := writePlan(c.App.Writer, format, p); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.App.Writer, "maintenanceplan/%s %s\n", p.Name, strings.ToLower(orDash(string(p.Status.Phase))))
	}
	return outcomeError(code, "plan", p.Name, phaseOf(p), p.Status.Message)
}

// outcomeError is the exit status of code; exit 3 says why, on stderr:
// the kind's object name is in phase, with its message.
func outcomeError(code exitcode.Code, kind, name, phase, message string) error {
	if code == exitcode.Blocked {
		return exitcode.Errorf(code, "%s %s is %s: %s", kind, name, phase, message)
	}
	return exitcode.Status(code)
}

func phaseOf(p *api.MaintenancePlan) string {
	if p == nil {
		return "not seen"
	}
	return phaseReason(p.Status.Phase, p.Status.Reason)
}

// phaseReason is PHASE/REASON, "-" for either not set.
func phaseReason(phase api.Phase, reason api.Reason) string {
	return orDash(string(phase)) + "/" + orDash(string(reason))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listError explains a failed list of plans: without the CRD, maintd is
// not installed.
func listError(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the MaintenancePlan API is not installed (kubectl apply -f maintd/deploy/crd.yaml, then run maintd): %w", err)
	}
	return fmt.Errorf("list plans: %w", err)
}
