package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

//go:embed doc.go
var doc string

const name = "k8s-snapshot"

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := append([]cli.Flag{
		&cli.StringSliceFlag{Name: "node", Usage: "narrow the snapshot to what a drain of node `NAME` needs (repeatable)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json or yaml"},
		&cli.BoolFlag{Name: "full", Usage: "keep managedFields and the last-applied annotation"},
		&cli.BoolFlag{Name: "consistent", Value: true, Usage: "read every list at the one revision the first list fixes (false: each kind at its latest, for servers that refuse exact lists)"},
		&cli.Int64Flag{Name: "chunk-size", Value: take.DefaultChunkSize, Usage: "`N` objects per list page"},
		&cli.IntFlag{Name: "parallel", Value: take.DefaultParallel, Usage: "`N` lists in flight at once"},
		&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "bound on the whole run (`DURATION`)"},
		&cli.BoolFlag{Name: "progress", Usage: "print per-list counts on stderr (default: when stderr is a terminal)"},
	}, kubeflags.Flags()...)
	return command.Tool{
		Name:     name,
		Summary:  "write a consistent, read-only cluster Snapshot to stdout",
		Synopsis: []string{"k8s-snapshot [--node NAME]... [-o json|yaml] [--full] [--consistent=false] [--chunk-size N] [--timeout D]"},
		Doc:      doc,
		Examples: []command.Example{
			{Comment: "The whole cluster, to a file", Command: "k8s-snapshot > cluster.json"},
			{Comment: "What a drain of node-1 needs, graded at once", Command: "k8s-snapshot --node node-1 | k8s-analyze --node node-1 -o table"},
			{Comment: "Two nodes, as YAML, giving up after 10 seconds", Command: "k8s-snapshot --node node-1 --node node-2 -o yaml --timeout 10s"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "the snapshot is on stdout"},
			{Code: exitcode.Error, Meaning: "an error (a list failed, an unknown node, bad flags): nothing on stdout"},
		},
		Files:  []command.File{{Path: "k8s-snapshot/deploy/rbac.yaml", What: "the ClusterRole that grants exactly the permissions above"}},
		Flags:  flags,
		Action: snap,
	}.App()
}

func snap(c *cli.Context) error {
	format, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML)
	if err != nil {
		return command.Usage("%v", err)
	}
	switch {
	case c.Int64("chunk-size") <= 0:
		return command.Usage("--chunk-size must be positive, not %d", c.Int64("chunk-size"))
	case c.Int("parallel") <= 0:
		return command.Usage("--parallel must be positive, not %d", c.Int("parallel"))
	case c.Duration("timeout") <= 0:
		return command.Usage("--timeout must be positive, not %s", c.Duration("timeout"))
	}
	nodes := c.StringSlice("node")
	for _, n := range nodes {
		if n == "" {
			return command.Usage("--node needs a node name")
		}
	}
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return err
	}
	src, err := take.NewREST(cfg)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	progress := c.Bool("progress")
	if !c.IsSet("progress") {
		progress = isTerminal(stderr)
	}
	timeout := c.Duration("timeout")
	ctx, cancel := context.WithTimeout(c.Context, timeout)
	defer cancel()
	s, err := take.Take(ctx, src, take.Options{
		Nodes:     nodes,
		Full:      c.Bool("full"),
		Latest:    !c.Bool("consistent"),
		ChunkSize: c.Int64("chunk-size"),
		Parallel:  c.Int("parallel"),
		Server:    cfg.Host,
		Notify:    func(e take.Event) { report(stderr, progress, e) },
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && c.Context.Err() == nil {
			return fmt.Errorf("no snapshot within --timeout %s: %w", timeout, err)
		}
		return err
	}
	return snapshot.Encode(c.App.Writer, format, s)
}

// report prints restarted lists always and finished lists with --progress.
func report(w io.Writer, progress bool, e take.Event) {
	what := e.Resource
	if e.Selector != "" {
		what += " (" + e.Selector + ")"
	}
	switch {
	case e.Restart != nil && e.Revision != "":
		fmt.Fprintf(w, "%s: %s: revision %s expired (410 Gone, compacted by the API server), starting the snapshot again at a new revision (restart %d of %d)\n", name, what, e.Revision, e.Restarts, take.MaxRestarts)
	case e.Restart != nil:
		fmt.Fprintf(w, "%s: %s: the continue token expired (410 Gone), restarting the list from its first page\n", name, what)
	case progress:
		pages := "pages"
		if e.Pages == 1 {
			pages = "page"
		}
		fmt.Fprintf(w, "%s: %s: %d in %d %s, %s\n", name, what, e.Count, e.Pages, pages, e.Took.Round(time.Millisecond))
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
