package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func preflightCommand() *cli.Command {
	return &cli.Command{
		Name:      "preflight",
		Usage:     "what a plan for NODE would do, judged now: the snapshot and the analysis in-process, then maintd's decision",
		UsageText: "kubectl maint preflight NODE [--workloads KIND/NS/NAME,...|--all-workloads] [--accept RISK]... [--surge] [-o table|json|yaml]",
		Description: `Preflight takes the snapshot a drain of NODE needs and analyses it, as
"k8s-snapshot --node NODE | k8s-analyze --node NODE" would, in-process, and
then asks maintd's own decision code what a plan with these flags would do
first: cordon the node and evict its pods, or stop (Blocked) and why. It
writes nothing. Without --workloads it judges an --all-workloads plan.

-o table (the default) prints k8s-analyze's table, the pods a plan would
evict, and the plan's first step; -o json or yaml prints k8s-analyze's
Report, with the plan's first step on stderr.

Exit code, as k8s-analyze's: 0 low risk, 2 medium, 3 high, and 3 also when
the plan would be Blocked.`,
		ArgsUsage: "NODE",
		Flags: withKube(
			&cli.StringSliceFlag{Name: "workloads", Usage: "the workloads whose pods the plan may evict: `KIND/NAMESPACE/NAME`, comma-separated or repeated"},
			&cli.BoolFlag{Name: "all-workloads", Usage: "the plan may evict every pod a controller owns (also without --workloads)"},
			&cli.StringSliceFlag{Name: "accept", Usage: "the plan accepts `RISK`, as drain --accept: a high-risk finding or a cause of a drain forecast of never; repeatable"},
			&cli.BoolFlag{Name: "surge", Usage: "the plan moves a pod whose budget never allows its eviction with one more replica of its owner (drain --surge)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "output `FORMAT`: table, json or yaml"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "bound on the snapshot (`DURATION`)"},
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
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	src, err := take.NewREST(cl.cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	s, err := take.Take(ctx, src, take.Options{Nodes: []string{req.Node}, Server: cl.cfg.Host})
	if err != nil {
		return fmt.Errorf("snapshot of node %s: %w", req.Node, err)
	}
	now := timeNow()
	report, err := analyze.AnalyzeObjects(s, analyze.Options{Nodes: []string{req.Node}, Wall: now, Surge: req.Surge,
		Forecast: &analyze.ForecastOptions{Concurrency: analyze.DefaultConcurrency, DefaultReady: analyze.DefaultReadyTime}})
	if err != nil {
		return err
	}
	// Other plans for the node come first: the CRD may be missing
	// (maintd not installed yet), then there are none.
	var rivals []string
	if list, err := cl.plans.List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range plan.OfNode(list.Items, req.Node) {
			if plan.Live(p) && p.Status.Phase != api.Blocked {
				rivals = append(rivals, p.Name)
			}
		}
	}
	d := decide(s, &report.Nodes[0], req, rivals, now)
	code := report.Risk.ExitCode()
	if d.Status.Phase == api.Blocked {
		code = exitcode.Blocked
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

// decide is maintd's first decision for a new plan of req on the node of
// snapshot s (analysed as n), with no maintenance slot taken.
func decide(s *snapshot.Snapshot, n *analyze.Node, req plan.Request, rivals []string, now time.Time) drain.Decision {
	p := plan.New(req, "")
	p.Name, p.UID, p.Generation = "preflight", "preflight", 1
	f := drain.Facts{Analysis: n, Pods: map[types.UID]drain.Pod{}, PDBs: map[string]drain.PDB{}, Workloads: map[api.WorkloadRef]types.UID{}, Rivals: rivals, MaxNodes: 1}
	for i := range s.Nodes {
		if s.Nodes[i].Name == req.Node {
			f.Node = &s.Nodes[i]
		}
	}
	for _, pod := range s.Pods {
		if pod.Spec.NodeName == req.Node {
			f.Pods[pod.UID] = drain.Pod{Namespace: pod.Namespace, Name: pod.Name, Terminating: pod.DeletionTimestamp != nil}
		}
	}
	for _, b := range s.PodDisruptionBudgets {
		f.PDBs[b.Namespace+"/"+b.Name] = drain.PDB{ResourceVersion: b.ResourceVersion, Generation: b.Generation, ObservedGeneration: b.Status.ObservedGeneration,
			DisruptionsAllowed: b.Status.DisruptionsAllowed, CurrentHealthy: b.Status.CurrentHealthy, DesiredHealthy: b.Status.DesiredHealthy}
	}
	for _, w := range req.Workloads {
		var uid types.UID
		switch w.Kind {
		case "Deployment":
			uid = uidOf(s.Deployments, w)
		case "StatefulSet":
			uid = uidOf(s.StatefulSets, w)
		case "ReplicaSet":
			uid = uidOf(s.ReplicaSets, w)
		case "Job":
			uid = uidOf(s.Jobs, w)
		}
		if uid != "" {
			f.Workloads[w] = uid
		}
	}
	return drain.Decide(f, p, now)
}

// uidOf is the UID of workload w among objs, "" when it is not there.
func uidOf[T any, PT interface {
	*T
	metav1.Object
}](objs []T, w api.WorkloadRef) types.UID {
	for i := range objs {
		if o := PT(&objs[i]); o.GetNamespace() == w.Namespace && o.GetName() == w.Name {
			return o.GetUID()
		}
	}
	return ""
}

// writeDecision prints the plan's first step: the pods it would evict and
// the cordon, or why it would stop.
func writeDecision(w io.Writer, n *analyze.Node, d drain.Decision) {
	st := d.Status
	if st.Phase == api.Blocked {
		fmt.Fprintf(w, "plan: would be Blocked (%s): %s\n", st.Reason, st.Message)
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
