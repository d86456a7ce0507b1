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
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "bound on each request: the read of the pod, the eviction"},
		&cli.DurationFlag{Name: "wait", Usage: "after an accepted eviction, wait up to `D` for the pod to be gone"},
		&cli.BoolFlag{Name: "dry-run", Usage: "server-side dry run (dryRun=All): check, change nothing"},
		&cli.DurationFlag{Name: "max-retry-after", Value: time.Minute, Usage: "cap on the reported retryAfterSeconds"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json, yaml or table"},
	}, kubeflags.Flags()...)
	return command.New(name, "evict one pod through the Eviction API, exactly once, and classify the answer", doc, flags, run)
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
