package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

//go:embed doc.go
var doc string

const name = "k8s-cordon"

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "node", Usage: "the node `NAME`"},
		&cli.StringFlag{Name: "owner", Usage: "who holds the cordon: a change, ticket or plan `ID`"},
		&cli.StringFlag{Name: "reason", Usage: "why, recorded on the node with the cordon (`TEXT`)"},
		&cli.StringFlag{Name: "expect-uid", Usage: "refuse unless the node's UID is `UID`"},
		&cli.BoolFlag{Name: "uncordon", Usage: "release --owner's cordon instead of setting one"},
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "bound on the whole run (`DURATION`)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json, yaml or table"},
	}, kubeflags.Flags()...)
	return command.Tool{
		Name:    name,
		Summary: "cordon a node for an owner, or release it, with one guarded write",
		Synopsis: []string{
			"k8s-cordon --node NAME --owner ID [--reason TEXT] [--expect-uid UID] [-o json|yaml|table]",
			"k8s-cordon --uncordon --node NAME --owner ID [--expect-uid UID] [-o json|yaml|table]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "Cordon node-1 for change-4711, recording why on the node", Command: `k8s-cordon --node node-1 --owner change-4711 --reason "kernel update"`},
			{Comment: "The same, answered as a table", Command: "k8s-cordon --node node-1 --owner change-4711 -o table"},
			{Comment: "Cordon only if node-1 is still the node that was analysed", Command: `k8s-cordon --node node-1 --owner change-4711 --expect-uid "$(jq -r '.nodes[0].metadata.uid' snapshot.json)"`},
			{Comment: "Release change-4711's cordon when the work is done", Command: "k8s-cordon --uncordon --node node-1 --owner change-4711"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "cordoned, already-owned, uncordoned or not-cordoned"},
			{Code: exitcode.Error, Meaning: "bad flags, unknown node, API server unreachable or refusing, or a write not read back"},
			{Code: exitcode.Blocked, Meaning: "occupied, uid-mismatch or not-owner: nothing written, a human must act"},
		},
		Files:  []command.File{{Path: "k8s-cordon/deploy/rbac.yaml", What: "the ClusterRole that grants exactly the permissions above"}},
		Flags:  flags,
		Action: run,
	}.App()
}

func run(c *cli.Context) error {
	format, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML, document.Table)
	if err != nil {
		return command.Usage("%v", err)
	}
	req, node, err := request(c)
	if err != nil {
		return err
	}
	if c.Duration("timeout") <= 0 {
		return command.Usage("--timeout must be positive, not %s", c.Duration("timeout"))
	}
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return err
	}
	nodes, err := nodeClient(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	res, err := cordon.Apply(ctx, nodes, node, req, time.Now())
	if err != nil {
		return err
	}
	if err := write(c.App.Writer, format, res); err != nil {
		return err
	}
	code := res.Code()
	if code == exitcode.OK {
		return nil
	}
	return exitcode.With(code, errors.New(res.Message))
}

func request(c *cli.Context) (cordon.Request, string, error) {
	node, owner := c.String("node"), c.String("owner")
	switch {
	case node == "":
		return cordon.Request{}, "", command.Usage("--node is required")
	case owner == "":
		return cordon.Request{}, "", command.Usage("--owner is required")
	case c.Bool("uncordon") && c.IsSet("reason"):
		return cordon.Request{}, "", command.Usage("--reason goes with a cordon, not with --uncordon")
	case c.IsSet("expect-uid") && c.String("expect-uid") == "":
		return cordon.Request{}, "", command.Usage("--expect-uid needs a UID")
	}
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		return cordon.Request{}, "", command.Usage("invalid --node %q: %s", node, strings.Join(errs, "; "))
	}
	if err := text("--owner", owner, 253, false); err != nil {
		return cordon.Request{}, "", err
	}
	if err := text("--reason", c.String("reason"), 1024, true); err != nil {
		return cordon.Request{}, "", err
	}
	if err := text("--expect-uid", c.String("expect-uid"), 128, false); err != nil {
		return cordon.Request{}, "", err
	}
	return cordon.Request{
		Uncordon:  c.Bool("uncordon"),
		Owner:     owner,
		Reason:    c.String("reason"),
		ExpectUID: types.UID(c.String("expect-uid")),
	}, node, nil
}

// text refuses values that would not read back as written on a node:
// control characters, and spaces unless allowed.
func text(flag, s string, maxLen int, spaces bool) error {
	if len(s) > maxLen {
		return command.Usage("%s is longer than %d bytes", flag, maxLen)
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return command.Usage("invalid %s %q: control characters or invalid UTF-8", flag, s)
		case !spaces && unicode.IsSpace(r):
			return command.Usage("invalid %s %q: no spaces allowed", flag, s)
		}
	}
	return nil
}

func write(w io.Writer, f document.Format, r *cordon.Result) error {
	if f != document.Table {
		return document.Encode(w, f, r)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tACTION\tOWNER\tPREVIOUS-OWNER\tUNSCHEDULABLE\tOBSERVED\tMESSAGE")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%t\t%s\n", r.Node, r.Action, r.Owner, dash(r.PreviousOwner), r.Unschedulable, r.Observed, r.Message)
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
