package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// maxOverride is the longest an override may be in force (the CRD's bound).
const maxOverride = time.Hour

func overrideCommand() *cli.Command {
	return &cli.Command{
		Name:  "override",
		Usage: "approve, as a second person, that maintd deletes PLAN's pods that no PodDisruptionBudget lets it evict (break-glass)",
		UsageText: `kubectl maint override PLAN -n NAMESPACE (--workload KIND/NAME... | -l SELECTOR) --max-pods N --reason TEXT
                         [--max-per-pdb N] [--for 30m] [--act-after deadline|forecast] [--name NAME] [--dry-run none|client|server] [-o json|yaml]`,
		Description: `Override creates a MaintenanceOverride for plan PLAN: a break-glass
approval that lets maintd delete, for at most an hour, the pods of
NAMESPACE that it names (by workload, by label selector, or both: a pod
must then match both) when their PodDisruptionBudget will never allow
their eviction. maintd still tries the eviction first; where the budget
refuses, it writes the pod to the plan's ledger (status.forced: kubectl
maint status PLAN shows it) before it sends a DELETE with the pod's UID
as precondition and the pod's own grace period. It deletes at most
--max-pods pods in all and --max-per-pdb under one budget, and only once
the plan's deadline has passed (--act-after forecast: as soon as the
plan's forecast says a budget never allows the drain).

The override names the plan's UID (a plan deleted and made again under
the same name is not covered) and its approver: you, as the API server
knows you (kubectl auth whoami). The approver must not be the plan's
requester (its annotation maintenance.sentinel.dev/created-by): override
refuses, writing nothing, and so do the cluster's admission policy and
maintd. --dry-run client prints the override without creating it;
server has the API server check it and write nothing.

stdout gets "maintenanceoverride/NAME created", or with -o the override;
stderr what it allows. kubectl maint verify checks afterwards, from the
API server's audit log, that each delete was written to the ledger first
and was approved.`,
		ArgsUsage: "PLAN",
		Flags: withKube(
			&cli.StringFlag{Name: "namespace", Aliases: []string{"n"}, Usage: "the `NAMESPACE` of the pods the override covers (required)"},
			&cli.StringSliceFlag{Name: "workload", Usage: "the pods of workload `KIND/NAME` (the pod's controller, or the Deployment above its ReplicaSet: StatefulSet/db, Deployment/web), repeated"},
			&cli.StringFlag{Name: "selector", Aliases: []string{"l"}, Usage: "the pods matching label `SELECTOR` (app=db,tier in (a,b))"},
			&cli.IntFlag{Name: "max-pods", Usage: "delete at most `N` pods in all, 1 to 1000 (required)"},
			&cli.IntFlag{Name: "max-per-pdb", Value: 1, Usage: "delete at most `N` pods under one PodDisruptionBudget"},
			&cli.DurationFlag{Name: "for", Value: 30 * time.Minute, Usage: "in force for `DURATION` from its creation, at most 1h"},
			&cli.StringFlag{Name: "reason", Usage: "why (`TEXT`: an incident, a ticket); copied to every ledger entry and Event (required)"},
			&cli.StringFlag{Name: "act-after", Value: "deadline", Usage: "act once the plan's deadline has passed (`WHEN`: deadline), or once its forecast says a budget never allows the drain (forecast)"},
			&cli.StringFlag{Name: "name", Usage: "the override's `NAME` (default: PLAN-override-<random>)"},
			&cli.StringFlag{Name: "dry-run", Value: "none", Usage: "`MODE`: none; client prints the override without sending it; server has the API server check it, writing nothing"},
			outputFlag,
		),
		Action:       overrideAction,
		BashComplete: complete(planNames),
	}
}

// workloadPattern is the CRD's pattern of spec.pods[].workload.
var workloadPattern = regexp.MustCompile(`^[A-Za-z]+/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// overrideKinds are the kinds as kubectl spells them, to the Kind.
var overrideKinds = map[string]string{
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
	"replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
	"job": "Job", "jobs": "Job",
}

// overrideSpec reads override's flags into the spec, before anything is
// sent; Plan, PlanUID and ApprovedBy are left to fill.
func overrideSpec(c *cli.Context) (api.MaintenanceOverrideSpec, error) {
	var s api.MaintenanceOverrideSpec
	ns := c.String("namespace")
	switch {
	case ns == "":
		return s, command.Usage("which pods? give --namespace NAMESPACE")
	case len(validation.IsDNS1123Label(ns)) > 0:
		return s, command.Usage("invalid --namespace %q: %s", ns, strings.Join(validation.IsDNS1123Label(ns), "; "))
	case !c.IsSet("max-pods"):
		return s, command.Usage("how many pods at most? give --max-pods N")
	case c.Int("max-pods") < 1 || c.Int("max-pods") > 1000:
		return s, command.Usage("--max-pods must be 1 to 1000, not %d", c.Int("max-pods"))
	case c.Int("max-per-pdb") < 1:
		return s, command.Usage("--max-per-pdb must be at least 1, not %d", c.Int("max-per-pdb"))
	case c.Duration("for") <= 0 || c.Duration("for") > maxOverride:
		return s, command.Usage("--for must be more than 0s and at most 1h, not %s", c.Duration("for"))
	case strings.TrimSpace(c.String("reason")) == "":
		return s, command.Usage("why? give --reason TEXT (an incident, a ticket)")
	case len(c.String("reason")) > 1024:
		return s, command.Usage("--reason is %d bytes, at most 1024", len(c.String("reason")))
	}
	s.MaxPods, s.MaxPerPDB = int32(c.Int("max-pods")), int32(c.Int("max-per-pdb"))
	s.Duration = metav1.Duration{Duration: c.Duration("for")}
	s.Reason = c.String("reason")
	switch strings.ToLower(c.String("act-after")) {
	case "deadline":
		s.ActAfter = api.ActAfterDeadline
	case "forecast":
		s.ActAfter = api.ActAfterForecast
	default:
		return s, command.Usage("invalid --act-after %q: deadline or forecast", c.String("act-after"))
	}
	var sel *metav1.LabelSelector
	if c.IsSet("selector") {
		var err error
		if sel, err = metav1.ParseToLabelSelector(c.String("selector")); err != nil {
			return s, command.Usage("invalid --selector %q: %v", c.String("selector"), err)
		}
		if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
			return s, command.Usage("--selector %q selects every pod of %s: name the pods", c.String("selector"), ns)
		}
	}
	for _, arg := range c.StringSlice("workload") {
		kind, name, ok := strings.Cut(arg, "/")
		if k, known := overrideKinds[strings.ToLower(kind)]; known {
			kind = k
		}
		w := kind + "/" + name
		if !ok || !workloadPattern.MatchString(w) || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return s, command.Usage("invalid --workload %q: want KIND/NAME, e.g. StatefulSet/db", arg)
		}
		s.Pods = append(s.Pods, api.OverridePods{Namespace: ns, Workload: w, Selector: sel})
	}
	if len(s.Pods) > 100 {
		return s, command.Usage("%d --workload: at most 100", len(s.Pods))
	}
	if len(s.Pods) == 0 {
		if sel == nil {
			return s, command.Usage("which pods? give --workload KIND/NAME or --selector SELECTOR")
		}
		s.Pods = []api.OverridePods{{Namespace: ns, Selector: sel}}
	}
	return s, nil
}

func overrideAction(c *cli.Context) error {
	if err := args(c, 1, 1, "PLAN"); err != nil {
		return err
	}
	planName := c.Args().First()
	if err := plan.ValidName("PLAN", planName); err != nil {
		return command.Usage("%v", err)
	}
	spec, err := overrideSpec(c)
	if err != nil {
		return err
	}
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	dryRun := c.String("dry-run")
	if dryRun != "none" && dryRun != "client" && dryRun != "server" {
		return command.Usage("invalid --dry-run %q: none, client or server", dryRun)
	}
	name := c.String("name")
	if c.IsSet("name") {
		if err := plan.ValidName("--name", name); err != nil {
			return command.Usage("%v", err)
		}
	} else {
		const suffix = "-override-xxxxx"
		name = strings.TrimRight(planName[:min(len(planName), validation.DNS1123SubdomainMaxLength-len(suffix))], "-.") + "-override-" + rand.String(5)
	}
	cl, err := newClients(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	p, err := cl.plans.Get(ctx, planName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("no plan named %s (kubectl maint status lists the plans): an override is for one plan", planName)
	case err != nil:
		return fmt.Errorf("read plan %s: %w", planName, err)
	}
	me := cl.whoami(c)
	if me == "" {
		return fmt.Errorf("the API server did not say who you are (SelfSubjectReview): an override names its approver, and the approver must not be the plan's requester")
	}
	if by := createdBy(p); by != "" && (by == me || by == plan.LabelValue(me) && p.Annotations[plan.CreatedByAnnotation] == "") {
		return fmt.Errorf("a break-glass override needs a second person: you requested plan %s (you are %s); ask someone else to approve it", p.Name, me)
	}
	spec.Plan, spec.PlanUID, spec.ApprovedBy = p.Name, p.UID, me
	o := &api.MaintenanceOverride{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenanceOverride"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{plan.ManagedByLabel: plan.ManagedBy}},
		Spec:       spec,
	}
	how := ""
	switch dryRun {
	case "client":
		how = " (dry run)"
	case "server":
		how = " (server dry run)"
		o, err = cl.overrides.Create(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	default:
		o, err = cl.overrides.Create(ctx, o, metav1.CreateOptions{})
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the MaintenanceOverride API is not installed (kubectl apply -f maintd/deploy/crd.yaml): %w", err)
		}
		return fmt.Errorf("create override for plan %s: %w", planName, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s%s\n", describeOverride(o, p), how)
	if format != "" {
		return writeOverride(c, format, o)
	}
	fmt.Fprintf(c.App.Writer, "maintenanceoverride/%s created%s\n", o.Name, how)
	return nil
}

// describeOverride says what o allows, for people.
func describeOverride(o *api.MaintenanceOverride, p *api.MaintenancePlan) string {
	var pods []string
	for _, ps := range o.Spec.Pods {
		what := []string{}
		if ps.Workload != "" {
			what = append(what, ps.Workload)
		}
		if ps.Selector != nil {
			what = append(what, "pods matching "+metav1.FormatLabelSelector(ps.Selector))
		}
		pods = append(pods, ps.Namespace+" "+strings.Join(what, " and "))
	}
	after := "its deadline has passed"
	if o.Spec.ActAfter == api.ActAfterForecast {
		after = "its forecast says a budget never allows the drain"
	}
	return fmt.Sprintf("maintenanceoverride/%s: maintd may delete at most %d pods (%d per PDB) of plan %s (node %s, requested by %s) that no budget lets it evict: %s; approved by %s, in force for %s from its creation, once %s",
		o.Name, o.Spec.MaxPods, max(o.Spec.MaxPerPDB, 1), p.Name, p.Spec.NodeName, orDash(createdBy(p)), strings.Join(pods, "; "), o.Spec.ApprovedBy, o.Spec.Duration.Duration, after)
}

// writeOverride prints o as JSON or YAML, with its apiVersion and kind,
// without managedFields.
func writeOverride(c *cli.Context, f document.Format, o *api.MaintenanceOverride) error {
	o = o.DeepCopy()
	o.APIVersion, o.Kind = api.SchemeGroupVersion.String(), "MaintenanceOverride"
	o.ManagedFields = nil
	return encode(c.App.Writer, f, o)
}
