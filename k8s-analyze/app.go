package main

import (
	"fmt"
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
		&cli.Int64Flag{Name: "max-input", Value: document.DefaultLimit, Usage: "refuse input larger than `BYTES`"},
	}
	return command.New("k8s-analyze", "offline drain-risk grading of nodes from a Snapshot", doc, flags, run)
}

func run(c *cli.Context) error {
	format, err := document.ParseFormat(c.String("output"), document.JSON, document.YAML, document.Table)
	if err != nil {
		return command.Usage("%v", err)
	}
	opts := analyze.Options{Nodes: c.StringSlice("node"), MaxGrace: c.Duration("max-grace"), MaxAge: c.Duration("max-age"), Wall: time.Now()}
	if opts.MaxGrace <= 0 {
		return command.Usage("--max-grace must be positive")
	}
	if opts.MaxAge <= 0 {
		return command.Usage("--max-age must be positive")
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
