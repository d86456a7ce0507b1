package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/verify"
	"github.com/sentinel-go/sentinel/plumbing/auditlog"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "replay the API server's audit log against the plans' ledgers of forced deletes",
		UsageText: "kubectl maint verify --audit-log FILE [--plans FILE] [--maintd-user USER]",
		Description: `Verify reads the API server's audit log (audit.k8s.io/v1 events, one JSON
object per line: --audit-log-path) and the plans, from the cluster or,
with --plans, from a file (a MaintenancePlanList, the List of "kubectl get
maintenanceplans -o yaml", or one plan, YAML or JSON), and checks that
what maintd did under break-glass overrides is what their ledgers
(status.forced) say:

  delete    every pod DELETE by maintd's user that the API server accepted
            (200 or 202, not a dry run) has a ledger entry of that pod with
            the UID of the DELETE's precondition, recorded no later than
            the DELETE was received (1s of clock skew allowed: the entry
            has maintd's time, the log the API server's), under an override
            in force then (approvedAt <= DELETE < expiresAt), approved by
            someone other than the plan's requester, with the grace period
            the DELETE sent;
  entry     every entry with outcome deleted has exactly one such DELETE;
            the others (gone, already-deleting, not-deleted) at most one.
            Entries recorded outside the log's time span are counted, not
            checked;
  approver  when the log has an override's create, its user is the
            approver the entries name;
  node      maintd wrote no node while another user's cordon of it
            stood (their write setting spec.unschedulable true, no
            uncordon since). This needs the bodies of node writes in the
            log (audit level Request for nodes patch and update); without
            them the summary says it could not be checked.

The audit policy must log pod deletes at level Request (the body of a
DELETE holds its UID precondition) and the creates of
maintenanceoverrides at least at Metadata. Plans are deleted after their
uncordon: keep them (kubectl maint uncordon -o yaml prints the plan before
it goes) to verify later.

Each mismatch is a line on stdout naming the check, the plan and entry,
and the audit log line. Exit code: 0 when all match (a summary on
stdout), 1 on any mismatch, or when the log or plans cannot be read
(nothing on stdout).`,
		Flags: withKube(
			&cli.StringFlag{Name: "audit-log", Usage: "the API server's audit log `FILE` (JSON lines; - for stdin) (required)"},
			&cli.StringFlag{Name: "plans", Usage: "read the plans from `FILE` (YAML or JSON) instead of the cluster"},
			&cli.StringFlag{Name: "maintd-user", Value: verify.DefaultMaintdUser, Usage: "the `USER` maintd runs as, as the audit log names it"},
		),
		Action: verifyAction,
	}
}

func verifyAction(c *cli.Context) error {
	if err := args(c, 0, 0, ""); err != nil {
		return err
	}
	switch {
	case c.String("audit-log") == "":
		return command.Usage("which log? give --audit-log FILE")
	case c.String("maintd-user") == "":
		return command.Usage("--maintd-user must not be empty")
	}
	events, err := readAudit(c, c.String("audit-log"))
	if err != nil {
		return err
	}
	var plans []api.MaintenancePlan
	if f := c.String("plans"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("--plans: %w", err)
		}
		if plans, err = verify.ParsePlans(data); err != nil {
			return fmt.Errorf("--plans %s: %w", f, err)
		}
	} else {
		cl, err := newClients(c)
		if err != nil {
			return err
		}
		list, err := cl.plans.List(c.Context, metav1.ListOptions{})
		if err != nil {
			return listError(err)
		}
		plans = list.Items
	}
	r := verify.Replay(events, plans, c.String("maintd-user"))
	w := c.App.Writer
	for _, m := range r.Mismatches {
		fmt.Fprintln(w, m)
	}
	nodes := fmt.Sprintf("%d node writes by maintd checked against the cordons of other users", r.NodeWrites)
	if r.NodesUnchecked > 0 {
		nodes = fmt.Sprintf("node writes could not be checked: %d without their body in the log (audit level Metadata; Request needed)", r.NodesUnchecked)
	}
	outside := ""
	if r.Outside > 0 {
		outside = fmt.Sprintf(" (%d recorded outside the log's time span, not checked)", r.Outside)
	}
	summary := fmt.Sprintf("%d audit events, %d plans: %d ledger entries%s, %d pod DELETEs by %s, override creates found for %d entries; %s",
		len(events), len(plans), r.Entries, outside, r.Deletes, c.String("maintd-user"), r.Creates, nodes)
	if n := len(r.Mismatches); n > 0 {
		return exitcode.Errorf(exitcode.Error, "verify: %d mismatches; %s", n, summary)
	}
	fmt.Fprintf(w, "verify: all match; %s\n", summary)
	return nil
}

// readAudit reads the audit log FILE, or stdin for "-".
func readAudit(c *cli.Context, file string) ([]auditlog.Event, error) {
	if file == "-" {
		events, err := auditlog.Read(c.App.Reader)
		if err != nil {
			return nil, fmt.Errorf("--audit-log -: %w", err)
		}
		return events, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	defer f.Close()
	events, err := auditlog.Read(f)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", file, err)
	}
	return events, nil
}
