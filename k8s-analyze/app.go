package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func app() *cli.App {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "node", Usage: "analyse node `NAME` (repeatable; default: every node of the snapshot)"},
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: "-", Usage: "read the Snapshot from `FILE` (- is stdin)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json, yaml or table"},
		&cli.StringFlag{Name: "now", Usage: "judge at `TIME` (RFC 3339) instead of the snapshot's capturedAt, and measure its age up to TIME"},
		&cli.DurationFlag{Name: "max-age", Value: analyze.DefaultMaxAge, Usage: "report a snapshot older than `DURATION` (snapshot-stale)"},
		&cli.DurationFlag{Name: "max-grace", Value: analyze.DefaultMaxGrace, Usage: "report pods whose terminationGracePeriodSeconds exceeds `DURATION`"},
		&cli.IntFlag{Name: "max-concurrent-evictions", Value: analyze.DefaultConcurrency, Usage: "forecast: at most `N` evictions in flight (requested, the pod not yet gone), as maintd's maxConcurrentEvictions"},
		&cli.DurationFlag{Name: "default-ready-time", Value: analyze.DefaultReadyTime, Usage: "forecast: a replacement's time from scheduled to Ready when no pod of its workload shows both (`DURATION`)"},
		&cli.StringFlag{Name: "learned", Usage: "forecast: time each workload's exits and times to Ready by what was learned by watching, read from `FILE`: maintd's ConfigMap (kubectl get configmap -n maintd-system sentinel-maintd-learned -o yaml) or its data.learned.json; a workload it does not name takes the prior (exit 2s at p50, the grace at p90)"},
		&cli.BoolFlag{Name: "surge", Usage: "plan a surge for the pods whose PDB never allows their eviction but one more replica of their owner would (a Deployment, or a ReplicaSet no controller owns, that no HPA scales): action surge instead of block, and the grade and forecast of that drain (maintd's spec.surge: IfNeeded)"},
		&cli.StringSliceFlag{Name: "together", Usage: "capacity: judge whether the other nodes can take the pods that draining every node `NAME` at once moves, all of them cordoned (repeatable, or comma-separated): a capacity object in the report, a line in the table; the exit code stays the risk's"},
		&cli.Int64Flag{Name: "max-input", Value: document.DefaultLimit, Usage: "refuse input larger than `BYTES`"},
		&cli.BoolFlag{Name: "list-checks", Usage: "print the catalogue of checks (code, severity, fix) as JSON or, with -o table, a table, and read nothing"},
	}
	return command.Tool{
		Name:    "k8s-analyze",
		Summary: "offline drain-risk grading of nodes from a Snapshot",
		Synopsis: []string{
			"k8s-analyze [-f FILE] [--node NAME]... [-o json|yaml|table] [--now TIME] [--max-age 5m] [--max-grace D] [--max-concurrent-evictions 50] [--default-ready-time 1m] [--learned FILE] [--surge] [--together NAME,...]",
			"k8s-analyze --list-checks [-o json|table]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "May node-1 be drained now? A snapshot of what its drain needs, graded as a table (its forecast says unknown, with no times: they need the whole cluster, next)", Command: "k8s-snapshot --node node-1 | k8s-analyze --node node-1 -o table"},
			{Comment: "The same with node-1's drain forecast: a whole-cluster snapshot judges where its pods' replacements go", Command: "k8s-snapshot | k8s-analyze --node node-1 -o table"},
			{Comment: "Grade every node of a saved snapshot, as YAML", Command: "k8s-analyze -f snapshot.json -o yaml"},
			{Comment: "The pods the Eviction API would refuse right now", Command: `k8s-analyze -f snapshot.json | jq -r '.nodes[].pods[] | select(.evictableNow.allowed == false) | .namespace + "/" + .name'`},
			{Comment: "How long draining each node would take, and why some never end (a whole-cluster snapshot judges where replacements go)", Command: `k8s-snapshot | k8s-analyze | jq -r '.nodes[] | "\(.name) \(.forecast.verdict) p50=\(.forecast.p50) p90=\(.forecast.p90)"'`},
			{Comment: "Which pods a drain with a surge (one more replica first, maintd's spec.surge: IfNeeded) moves, and which owner it scales", Command: `k8s-analyze -f snapshot.json --surge | jq -r '.nodes[].pods[] | select(.action == "surge") | "\(.namespace)/\(.name) \(.surge.kind) \(.surge.name) \(.surge.replicas)->\(.surge.replicas + 1)"'`},
			{Comment: "The pods only a break-glass delete moves (needs-override), and how long each is down after it", Command: `k8s-snapshot | k8s-analyze --node node-1 | jq -r '.nodes[].forecast.needsOverride[]? | "\(.namespace)/\(.name) PDB \(.pdb) down p50=\(.downtime.p50 // "for good") p90=\(.downtime.p90 // "for good")"'`},
			{Comment: "Can the rest of the cluster take the pods of node-1, node-2 and node-3, drained together (all three cordoned first)?", Command: `k8s-snapshot | k8s-analyze --node node-1 --together node-1,node-2,node-3 | jq '.capacity | {verdict, pods, demand, free, causes}'`},
			{Comment: "Every check, its severity and its fix", Command: "k8s-analyze --list-checks -o table"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "every requested node is low risk (or --list-checks)"},
			{Code: exitcode.Error, Meaning: "an error: bad input, an unknown node, bad flags; nothing on stdout"},
			{Code: exitcode.NotNow, Meaning: "the worst node is medium risk"},
			{Code: exitcode.Blocked, Meaning: "the worst node is high risk"},
		},
		Files:  []command.File{{Path: "k8s-analyze/CHECKS.md", What: "every check: what it finds, why it matters, its severity and fix"}},
		Flags:  flags,
		Action: run,
	}.App()
}

func run(c *cli.Context) error {
	if c.Bool("list-checks") {
		format, err := document.ParseFormat(c.String("output"), document.JSON, document.Table)
		if err != nil {
			return command.Usage("--list-checks: %v", err)
		}
		return listChecks(c.App.Writer, format)
	}
	format, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML, document.Table)
	if err != nil {
		return command.Usage("%v", err)
	}
	opts := analyze.Options{Nodes: c.StringSlice("node"), MaxGrace: c.Duration("max-grace"), MaxAge: c.Duration("max-age"), Wall: time.Now(),
		Forecast: &analyze.ForecastOptions{Concurrency: c.Int("max-concurrent-evictions"), DefaultReady: c.Duration("default-ready-time")}, Surge: c.Bool("surge")}
	if opts.MaxGrace <= 0 {
		return command.Usage("--max-grace must be positive")
	}
	if opts.Forecast.Concurrency <= 0 {
		return command.Usage("--max-concurrent-evictions must be positive")
	}
	if opts.Forecast.DefaultReady <= 0 {
		return command.Usage("--default-ready-time must be positive")
	}
	if opts.MaxAge <= 0 {
		return command.Usage("--max-age must be positive")
	}
	if f := c.String("learned"); f != "" {
		if opts.Forecast.Learned, err = readLearned(f, c.Int64("max-input")); err != nil {
			return err
		}
	}
	if s := c.String("now"); s != "" {
		if opts.Now, err = time.Parse(time.RFC3339, s); err != nil {
			return command.Usage("--now: %v", err)
		}
		opts.Wall = opts.Now
	}
	in := c.App.Reader
	if f := c.String("file"); f != "-" {
		file, err := os.Open(f)
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	}
	snap, err := decode.Read(in, c.Int64("max-input"))
	if err != nil {
		return err
	}
	report, err := analyze.Analyze(snap, opts)
	if err != nil {
		return err
	}
	if together := c.StringSlice("together"); len(together) > 0 {
		// Like the forecast, the capacity changes neither the risk nor
		// the exit code.
		if report.Capacity, err = analyze.Capacity(snap, together, opts); err != nil {
			return fmt.Errorf("--together: %w", err)
		}
	}
	switch format {
	case document.Table:
		err = analyze.WriteTable(c.App.Writer, report, colour())
	case document.JSON:
		err = analyze.WriteJSON(c.App.Writer, report)
	default:
		err = document.Encode(c.App.Writer, format, report)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return exitcode.Status(report.Risk.ExitCode())
}

// colour is true when stdout is a terminal and NO_COLOR is unset.
func colour() bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := os.Stdout.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readLearned reads --learned FILE, at most limit bytes.
func readLearned(path string, limit int64) (map[analyze.Workload]analyze.Learned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--learned: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("--learned %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("--learned %s: larger than %d bytes (--max-input)", path, limit)
	}
	learned, err := analyze.ParseLearned(data)
	if err != nil {
		return nil, fmt.Errorf("--learned %s: %w", path, err)
	}
	return learned, nil
}
