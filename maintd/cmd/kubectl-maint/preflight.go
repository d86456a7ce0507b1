package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	autoscalingv2client "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func preflightCommand() *cli.Command {
	return &cli.Command{
		Name:      "preflight",
		Usage:     "what a plan for NODE would do, judged now: maintd's own decision on a snapshot of the cluster",
		UsageText: "kubectl maint preflight NODE [--workloads KIND/NS/NAME,...|--all-workloads] [--accept RISK]... [--surge] [--max-nodes-in-maintenance N] [-o table|json|yaml]",
		Description: `Preflight takes a snapshot of the whole cluster (as k8s-snapshot does,
one consistent cut) and reads the plans, the campaigns and maintd's pause
switch; then maintd's own controller, its caches filled from them, decides
what a plan for NODE with these flags would do first, exactly as maintd
decides: the same snapshot of the node, analysis, drain forecast (where the
replacements can go, judged on the whole cluster), maintenance slots
(--max-nodes-in-maintenance, as maintd runs with it), pause switch,
campaign breaker and rival plans. It cordons the node and evicts its pods,
or waits (for a slot, the pause switch), or stops (Blocked) and why. It
writes nothing. Without --workloads it judges an --all-workloads plan.

-o table (the default) prints k8s-analyze's table of the node (its forecast
is the one maintd decided on), the pods a plan would evict, and the plan's
first step; -o json or yaml prints k8s-analyze's Report, with the plan's
first step on stderr.

Exit code, as k8s-analyze's: 0 low risk, 2 medium, 3 high; 3 also when
the plan would be Blocked, and 2 when it would wait.`,
		ArgsUsage: "NODE",
		Flags: withKube(
			&cli.StringSliceFlag{Name: "workloads", Usage: "the workloads whose pods the plan may evict: `KIND/NAMESPACE/NAME`, comma-separated or repeated"},
			&cli.BoolFlag{Name: "all-workloads", Usage: "the plan may evict every pod a controller owns (also without --workloads)"},
			&cli.StringSliceFlag{Name: "accept", Usage: "the plan accepts `RISK`, as drain --accept: a high-risk finding or a cause of a drain forecast of never; repeatable"},
			&cli.BoolFlag{Name: "surge", Usage: "the plan moves a pod whose budget never allows its eviction with one more replica of its owner (drain --surge)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "output `FORMAT`: table, json or yaml"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "bound on the snapshot (`DURATION`)"},
			&cli.IntFlag{Name: "max-nodes-in-maintenance", Value: 1, Usage: "the `N` maintd runs with (its --max-nodes-in-maintenance): a plan waits while N nodes are in maintenance"},
			&cli.StringFlag{Name: "pause-configmap", Value: controller.DefaultPauseSwitch, Usage: "maintd's pause switch, `NAMESPACE/NAME` (its --pause-configmap); \"\" for none"},
		),
		Action:       preflightAction,
		BashComplete: complete(nodeNames),
	}
}

func preflightAction(c *cli.Context) error {
	if err := args(c, 1, 1, "NODE"); err != nil {
		return err
	}
	req, err := drainRequest(c)
	if err != nil {
		return err
	}
	req.AllWorkloads = len(req.Workloads) == 0
	format, err := document.ParseFormat(c.String("output"), document.Table, document.JSON, document.YAML)
	if err != nil {
		return command.Usage("%v", err)
	}
	if c.Duration("timeout") <= 0 {
		return command.Usage("--timeout must be positive, not %s", c.Duration("timeout"))
	}
	if c.Int("max-nodes-in-maintenance") < 1 {
		return command.Usage("--max-nodes-in-maintenance must be at least 1, not %d", c.Int("max-nodes-in-maintenance"))
	}
	pause, err := controller.ParsePauseSwitch(c.String("pause-configmap"))
	if err != nil {
		return command.Usage("%v", err)
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	cluster, err := readCluster(ctx, cl, pause)
	if err != nil {
		return err
	}
	now := timeNow()
	p := plan.New(req.Request, "")
	p.Name, p.UID, p.Generation, p.CreationTimestamp = "preflight", "preflight", 1, metav1.NewTime(now)
	f, d, err := preview(cl, cluster, p, c.Int("max-nodes-in-maintenance"), pause, now)
	if err != nil {
		return err
	}
	report, err := analyze.AnalyzeObjects(cluster.snapshot, analyze.Options{Nodes: []string{req.Node}, Wall: now, Surge: req.Surge})
	if err != nil {
		return err
	}
	report.Nodes[0].Forecast = f.Forecast // the one maintd decided on
	code := report.Risk.ExitCode()
	switch {
	case d.Status.Phase == api.Blocked:
		code = exitcode.Blocked
	case d.Action != drain.Cordon && code == exitcode.OK:
		code = exitcode.NotNow
	}
	w := c.App.Writer
	switch format {
	case document.Table:
		if err := analyze.WriteTable(w, report, live(w) && os.Getenv("NO_COLOR") == ""); err != nil {
			return err
		}
		writeDecision(w, &report.Nodes[0], d)
	case document.JSON:
		if err := analyze.WriteJSON(w, report); err != nil {
			return err
		}
		writeDecision(c.App.ErrWriter, &report.Nodes[0], d)
	default:
		if err := document.Encode(w, format, report); err != nil {
			return err
		}
		writeDecision(c.App.ErrWriter, &report.Nodes[0], d)
	}
	return exitcode.Status(code)
}

// cluster is what maintd's decision reads: a snapshot of the whole
// cluster, the plans and campaigns, and the pause switch (nil: off).
type cluster struct {
	snapshot  *snapshot.Snapshot
	plans     []api.MaintenancePlan
	campaigns []api.MaintenanceCampaign
	pause     *corev1.ConfigMap
}

// readCluster reads the cluster: a whole-cluster snapshot, one consistent
// cut, then the plans, campaigns and switch (none when maintd's CRD is not
// installed yet, or there is no switch).
func readCluster(ctx context.Context, cl *clients, pause types.NamespacedName) (cluster, error) {
	var out cluster
	src, err := take.NewREST(cl.cfg)
	if err != nil {
		return out, err
	}
	if out.snapshot, err = take.Take(ctx, src, take.Options{Server: cl.cfg.Host}); err != nil {
		return out, fmt.Errorf("snapshot of the cluster: %w", err)
	}
	plans, err := cl.plans.List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return out, fmt.Errorf("list maintenance plans: %w", err)
	default:
		out.plans = plans.Items
		camps, err := cl.campaigns.List(ctx, metav1.ListOptions{})
		if err != nil {
			return out, fmt.Errorf("list maintenance campaigns: %w", err)
		}
		out.campaigns = camps.Items
	}
	if pause.Name != "" {
		cm, err := cl.core.ConfigMaps(pause.Namespace).Get(ctx, pause.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return out, fmt.Errorf("read the pause switch %s: %w", pause, err)
		default:
			out.pause = cm
		}
	}
	return out, nil
}

// preview is maintd's decision for plan p on the cluster: a controller of
// maintd's, its caches filled with the cluster (its informers do not run),
// decides as maintd does (controller.Preview), and writes nothing.
func preview(cl *clients, cs cluster, p *api.MaintenancePlan, maxNodes int, pause types.NamespacedName, now time.Time) (drain.Facts, drain.Decision, error) {
	var clients controller.Clients
	var errs [4]error
	clients.Core, clients.Policy = cl.core, cl.policy
	clients.Apps, errs[0] = appsv1client.NewForConfig(cl.cfg)
	clients.Batch, errs[1] = batchv1client.NewForConfig(cl.cfg)
	clients.Autoscaling, errs[2] = autoscalingv2client.NewForConfig(cl.cfg)
	clients.Storage, errs[3] = storagev1client.NewForConfig(cl.cfg)
	if err := errors.Join(errs[:]...); err != nil {
		return drain.Facts{}, drain.Decision{}, fmt.Errorf("kubernetes client: %w", err)
	}
	c := controller.New(controller.Config{Clients: clients, Plans: cl.plans, Campaigns: cl.campaigns, MaxNodes: maxNodes, Pause: pause,
		Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)})
	s := cs.snapshot
	var objs []runtime.Object
	add := func(n int, at func(int) runtime.Object) {
		for i := range n {
			objs = append(objs, at(i))
		}
	}
	add(len(s.Nodes), func(i int) runtime.Object { return &s.Nodes[i] })
	add(len(s.Pods), func(i int) runtime.Object { return &s.Pods[i] })
	add(len(s.PodDisruptionBudgets), func(i int) runtime.Object { return &s.PodDisruptionBudgets[i] })
	add(len(s.ReplicaSets), func(i int) runtime.Object { return &s.ReplicaSets[i] })
	add(len(s.Deployments), func(i int) runtime.Object { return &s.Deployments[i] })
	add(len(s.StatefulSets), func(i int) runtime.Object { return &s.StatefulSets[i] })
	add(len(s.DaemonSets), func(i int) runtime.Object { return &s.DaemonSets[i] })
	add(len(s.Jobs), func(i int) runtime.Object { return &s.Jobs[i] })
	add(len(s.CronJobs), func(i int) runtime.Object { return &s.CronJobs[i] })
	add(len(s.PersistentVolumeClaims), func(i int) runtime.Object { return &s.PersistentVolumeClaims[i] })
	add(len(s.PersistentVolumes), func(i int) runtime.Object { return &s.PersistentVolumes[i] })
	add(len(s.HorizontalPodAutoscalers), func(i int) runtime.Object { return &s.HorizontalPodAutoscalers[i] })
	add(len(s.VolumeAttachments), func(i int) runtime.Object { return &s.VolumeAttachments[i] })
	add(len(s.Namespaces), func(i int) runtime.Object { return &s.Namespaces[i] })
	add(len(cs.plans), func(i int) runtime.Object { return &cs.plans[i] })
	add(len(cs.campaigns), func(i int) runtime.Object { return &cs.campaigns[i] })
	if cs.pause != nil {
		objs = append(objs, cs.pause)
	}
	if err := c.Load(objs...); err != nil {
		return drain.Facts{}, drain.Decision{}, err
	}
	return c.Preview(p)
}

// writeDecision prints the plan's first step: the pods it would evict and
// the cordon, or why it would stop.
func writeDecision(w io.Writer, n *analyze.Node, d drain.Decision) {
	st := d.Status
	switch {
	case st.Phase == api.Blocked:
		fmt.Fprintf(w, "plan: would be Blocked (%s): %s\n", st.Reason, st.Message)
		return
	case d.Action != drain.Cordon:
		fmt.Fprintf(w, "plan: would wait (%s/%s): %s\n", st.Phase, st.Reason, st.Message)
		return
	}
	var pods []string
	for _, v := range n.Pods {
		if v.Action != analyze.Skip {
			pods = append(pods, v.Namespace+"/"+v.Name)
		}
	}
	fmt.Fprintf(w, "plan: would cordon node %s, then evict %d pods under their PodDisruptionBudgets (%d stay)", n.Name, len(pods), st.Pods.Skipped)
	if len(pods) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(pods, ", "))
	}
	fmt.Fprintln(w)
}
