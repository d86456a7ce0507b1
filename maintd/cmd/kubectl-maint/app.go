package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

func app() *cli.App {
	return command.Tool{
		Name:    name,
		Summary: "drain a node through maintd, and watch it happen (kubectl maint)",
		Synopsis: []string{
			"kubectl maint drain (NODE...|-l SELECTOR) (--workloads KIND/NS/NAME,...|--all-workloads) [--accept RISK]... [--deadline 1h]",
			"                         [--surge] [--reason TEXT] [--name NAME] [--dry-run[=none|client|server]] [--keep] [--wait|--no-wait] [--timeout D] [-o json|yaml]",
			"                         [--window SCHEDULE=DURATION]... [--time-zone ZONE] [--health-condition TYPE[=STATUS]]... [--release] (and more: drain --help)",
			"kubectl maint uncordon NODE [--keep] [--timeout D] [-o json|yaml]",
			"kubectl maint status [NODE|PLAN|CAMPAIGN] [-w|--exit-code] [-o json|yaml]",
			"kubectl maint preflight NODE [--workloads ...|--all-workloads] [--accept RISK]... [--surge] [-o table|json|yaml]",
			"kubectl maint retry CAMPAIGN NODE... [-o json|yaml]",
			"kubectl maint override PLAN -n NAMESPACE (--workload KIND/NAME...|-l SELECTOR) --max-pods N --reason TEXT",
			"                         [--max-per-pdb N] [--for 30m] [--act-after deadline|forecast] [--name NAME] [--dry-run none|client|server] [-o json|yaml]",
			"kubectl maint verify --audit-log FILE [--plans FILE] [--maintd-user USER]",
			"kubectl maint pause --reason TEXT [--pause-configmap NS/NAME] [--dry-run[=none|client|server]]",
			"kubectl maint resume [--pause-configmap NS/NAME] [--dry-run[=none|client|server]]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "Drain node-1, letting every workload's pods go, and watch it live", Command: "kubectl maint drain node-1 --all-workloads --reason 'kernel 6.12 (change-4712)'"},
			{Comment: "Move single-replica apps whose budget never allows an eviction, with no downtime (a surge)", Command: "kubectl maint drain node-1 --all-workloads --surge"},
			{Comment: "Only the web shop's Deployment may move; accept that its volume re-attaches", Command: "kubectl maint drain node-1 --workloads deployment/shop/web --accept rwo-reattach --deadline 30m"},
			{Comment: "What would a drain of node-1 do? The preflight, in-process, and a dry run by maintd", Command: "kubectl maint preflight node-1 && kubectl maint drain node-1 --all-workloads --dry-run"},
			{Comment: "Start the drain and return; follow it later", Command: "kubectl maint drain node-1 --all-workloads --no-wait && kubectl maint status -w node-1"},
			{Comment: "Drain the nodes of pool blue as a campaign, a wave at a time, and watch the whole", Command: "kubectl maint drain -l pool=blue --all-workloads --reason 'kernel 6.12 (change-4713)'"},
			{Comment: "Drain pool blue in the windows of 02:00-05:00 Berlin time on weekdays; each node uncordoned once Ready with its new kernel", Command: "kubectl maint drain -l pool=blue --all-workloads --window '0 2 * * 1-5=3h' --time-zone Europe/Berlin --health-label example.com/kernel=6.12 --release"},
			{Comment: "The work is done: uncordon node-1 and delete its plan", Command: "kubectl maint uncordon node-1"},
			{Comment: "Every plan on one screen, then one in detail", Command: "kubectl maint status && kubectl maint status node-1"},
			{Comment: "Drain node-17 of campaign pool-b-kernel again, its plan having been deleted before it ended", Command: "kubectl maint retry pool-b-kernel node-17"},
			{Comment: "Break glass (a second person): maintd may delete db's pods of plan node-1-x7k2p that its budget never lets it evict, at most 1, for 30m after the deadline", Command: "kubectl maint override node-1-x7k2p -n shop --workload StatefulSet/db --max-pods 1 --reason 'INC-2231: node-1 must go'"},
			{Comment: "Stop all maintenance for an incident (maintd's pause switch), and go on afterwards", Command: "kubectl maint pause --reason 'INC-2240: storage degraded' && kubectl maint resume"},
			{Comment: "Check from the API server's audit log that every pod maintd deleted was in a ledger first, and approved", Command: "kubectl maint verify --audit-log /var/log/kubernetes/audit.log"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "drained (drain, status -w; a campaign: every node drained, with --release completed), completed (uncordon), low risk (preflight), shown (status, whatever the plan's phase), listed (retry), created (override), all match (verify), set or lifted, or already so (pause, resume)"},
			{Code: exitcode.Error, Meaning: "bad flags or arguments, an unknown node, no cluster, the CRD missing, a node retry refuses, an override approved by the plan's requester: nothing written, nothing on stdout; a mismatch (verify, listed on stdout)"},
			{Code: exitcode.NotNow, Meaning: "still waiting when --timeout ended or at Ctrl-C (the plan goes on); on its way (status --exit-code); medium risk (preflight)"},
			{Code: exitcode.Blocked, Meaning: "the plan is Blocked or Failed, the reason on stderr (status --exit-code: on stdout); high risk or a plan that would block (preflight)"},
		},
		Files: []command.File{
			{Path: "docs/maintd.md", What: "maintd in a cluster: install, privileges, metrics, alerts, events"},
			{Path: "maintd/cmd/kubectl-maint/kubectl_complete-maint", What: "kubectl's plugin completion (kubectl maint <TAB>), installed next to kubectl-maint by make build"},
		},
		Commands: []*cli.Command{drainCommand(), uncordonCommand(), statusCommand(), preflightCommand(), retryCommand(), overrideCommand(), verifyCommand(), pauseCommand(), resumeCommand(), completeCommand()},
	}.App()
}

// withKube adds the cluster connection flags to a verb's own.
func withKube(flags ...cli.Flag) []cli.Flag { return append(flags, kubeflags.Flags()...) }

var (
	outputFlag  = &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "print the plan as `FORMAT` on stdout at the end: json or yaml (default: one line)"}
	timeoutFlag = &cli.DurationFlag{Name: "timeout", Usage: "stop watching after `DURATION` with exit 2, the plan going on; 0: at the outcome"}
)

// outputFormat reads -o: "" (a line for people), json or yaml.
func outputFormat(c *cli.Context) (document.Format, error) {
	if !c.IsSet("output") {
		return "", nil
	}
	f, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML)
	if err != nil {
		return "", command.Usage("%v", err)
	}
	return f, nil
}

// writePlan prints p as JSON or YAML, with its apiVersion and kind,
// without managedFields.
func writePlan(w io.Writer, f document.Format, p *api.MaintenancePlan) error {
	return encode(w, f, printable(p))
}

func printable(p *api.MaintenancePlan) *api.MaintenancePlan {
	p = p.DeepCopy()
	p.APIVersion, p.Kind = api.SchemeGroupVersion.String(), "MaintenancePlan"
	p.ManagedFields = nil
	return p
}

// encode writes v as indented JSON or YAML.
func encode(w io.Writer, f document.Format, v any) error {
	var b []byte
	var err error
	if f == document.YAML {
		b, err = yaml.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	}
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// args checks that the verb got between lo and hi arguments, naming them.
func args(c *cli.Context, lo, hi int, what string) error {
	switch n := c.NArg(); {
	case n < lo:
		return command.Usage("%s: missing %s", c.Command.Name, what)
	case n > hi:
		return command.Usage("%s: unexpected argument %q", c.Command.Name, c.Args().Get(hi))
	}
	return nil
}

// live reports whether w is a terminal that can redraw: not TERM=dumb.
func live(w io.Writer) bool {
	f, ok := w.(*os.File)
	t := os.Getenv("TERM")
	return ok && term.IsTerminal(int(f.Fd())) && t != "" && t != "dumb"
}

// width is w's width in columns (80 when it cannot tell).
func width(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(*os.File); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
		}
		return 80
	}
}

// tick calls f every second until stop is closed.
func tick(stop <-chan struct{}, f func()) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f()
		}
	}
}

var timeNow = time.Now
