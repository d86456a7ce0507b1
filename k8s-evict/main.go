package main

import (
	_ "embed"
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

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

//go:embed doc.go
var doc string

const name = "k8s-evict"

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "namespace", Aliases: []string{"n"}, Usage: "the pod's `NAMESPACE`"},
		&cli.StringFlag{Name: "pod", Usage: "the pod `NAME`"},
		&cli.StringFlag{Name: "uid", Usage: "evict only the pod with this `UID`: checked before, sent as the precondition"},
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "bound on each request, the read of the pod and the eviction (`DURATION`)"},
		&cli.DurationFlag{Name: "wait", Usage: "after an accepted eviction, wait up to `D` for the pod to be gone"},
		&cli.BoolFlag{Name: "dry-run", Usage: "server-side dry run (dryRun=All): check, change nothing"},
		&cli.DurationFlag{Name: "max-retry-after", Value: time.Minute, Usage: "cap on the reported retryAfterSeconds (`DURATION`)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json, yaml or table"},
	}, kubeflags.Flags()...)
	return command.Tool{
		Name:    name,
		Summary: "evict one pod through the Eviction API, exactly once, and classify the answer",
		Synopsis: []string{
			"k8s-evict --namespace NS --pod NAME [--uid UID] [--timeout 10s] [--wait D]",
			"          [--dry-run] [--max-retry-after 60s] [-o json|yaml|table]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "Evict one pod, only if it is still the pod with this UID", Command: "k8s-evict --namespace shop --pod web-7d9f-abcde --uid 3f1c2a9e-5b7d-4c1a-9e2f-0a1b2c3d4e5f"},
			{Comment: "Evict and wait up to a minute for the pod to be gone, answered as a table", Command: "k8s-evict -n shop --pod web-7d9f-abcde --wait 60s -o table"},
			{Comment: "Ask whether the eviction would be allowed now, changing nothing", Command: "k8s-evict -n shop --pod web-7d9f-abcde --dry-run; echo $?"},
			{Comment: "Evict every pod k8s-analyze would evict on node-1, one at a time", Command: `k8s-snapshot --node node-1 | k8s-analyze --node node-1 | jq -r '.nodes[].pods[] | select(.action=="evict") | "\(.namespace) \(.name) \(.uid)"' | while read -r ns pod uid; do k8s-evict -n "$ns" --pod "$pod" --uid "$uid" --wait 2m || break; done`},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "accepted, or gone (nothing left to evict)"},
			{Code: exitcode.Error, Meaning: "bad input, unreachable API server, or unknown: the eviction may or may not have happened"},
			{Code: exitcode.NotNow, Meaning: "pdb-stale, budget-exhausted, throttled, contention or accepted-not-gone: retry later"},
			{Code: exitcode.Blocked, Meaning: "pdb-overlap or forbidden: a human must act"},
		},
		Files:  []command.File{{Path: "k8s-evict/deploy/rbac.yaml", What: "the ClusterRole that grants exactly the permissions above"}},
		Flags:  flags,
		Action: run,
	}.App()
}

func run(c *cli.Context) error {
	format, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML, document.Table)
	if err != nil {
		return command.Usage("%v", err)
	}
	req, err := request(c)
	if err != nil {
		return err
	}
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return err
	}
	deps, err := clients(cfg, req.Namespace)
	if err != nil {
		return err
	}
	res, err := evict.Run(c.Context, deps, req, evict.Options{Timeout: c.Duration("timeout"), Wait: c.Duration("wait")})
	if err != nil {
		return err
	}
	if res.Outcome == evict.Invalid {
		return exitcode.Errorf(exitcode.Error, "%s/%s: %s", req.Namespace, req.Name, res.Message)
	}
	if err := write(c.App.Writer, format, res); err != nil {
		return err
	}
	if res.Code() == exitcode.OK {
		return nil
	}
	return exitcode.With(res.Code(), fmt.Errorf("%s/%s: %s: %s", res.Namespace, res.Pod, res.Outcome, res.Message))
}

func request(c *cli.Context) (evict.Request, error) {
	ns, pod, uid := c.String("namespace"), c.String("pod"), c.String("uid")
	switch {
	case ns == "":
		return evict.Request{}, command.Usage("--namespace is required")
	case pod == "":
		return evict.Request{}, command.Usage("--pod is required")
	case c.IsSet("uid") && uid == "":
		return evict.Request{}, command.Usage("--uid needs a UID")
	case c.Duration("timeout") <= 0:
		return evict.Request{}, command.Usage("--timeout must be positive, not %s", c.Duration("timeout"))
	case c.Duration("wait") < 0:
		return evict.Request{}, command.Usage("--wait must not be negative, not %s", c.Duration("wait"))
	case c.Duration("max-retry-after") < time.Second:
		return evict.Request{}, command.Usage("--max-retry-after must be at least 1s, not %s", c.Duration("max-retry-after"))
	case c.Bool("dry-run") && c.IsSet("wait"):
		return evict.Request{}, command.Usage("--wait has nothing to wait for with --dry-run")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return evict.Request{}, command.Usage("invalid --namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(pod); len(errs) > 0 {
		return evict.Request{}, command.Usage("invalid --pod %q: %s", pod, strings.Join(errs, "; "))
	}
	if len(uid) > 128 || strings.IndexFunc(uid, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return evict.Request{}, command.Usage("invalid --uid %q", uid)
	}
	return evict.Request{
		Namespace:     ns,
		Name:          pod,
		UID:           types.UID(uid),
		DryRun:        c.Bool("dry-run"),
		MaxRetryAfter: c.Duration("max-retry-after"),
	}, nil
}

func write(w io.Writer, f document.Format, r *evict.Result) error {
	if f != document.Table {
		return document.Encode(w, f, r)
	}
	pdb := "-"
	if len(r.PDBs) > 0 {
		pdb = strings.Join(r.PDBs, ",")
	}
	if r.PDB != nil {
		pdb = r.PDB.Name
		if r.PDB.Need != nil && r.PDB.Have != nil {
			pdb += fmt.Sprintf(" (need %d, have %d)", *r.PDB.Need, *r.PDB.Have)
		}
	}
	outcome := string(r.Outcome)
	if r.Reason != "" {
		outcome += "/" + r.Reason
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tPOD\tOUTCOME\tHTTP\tRETRY-AFTER\tPDB\tMESSAGE")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%ds\t%s\t%s\n", r.Namespace, r.Pod, outcome, r.HTTPStatus, r.RetryAfterSeconds, pdb, r.Message)
	return tw.Flush()
}
