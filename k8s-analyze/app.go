package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func app() *cli.App {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "node", Usage: "analyse node `NAME` (repeatable; default: every node of the snapshot)"},
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: "-", Usage: "read the Snapshot from `FILE` (- is stdin)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "json", Usage: "output `FORMAT`: json, yaml or table"},
		&cli.StringFlag{Name: "now", Usage: "judge at `TIME` (RFC 3339) instead of the snapshot's capturedAt"},
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
	opts := analyze.Options{Nodes: c.StringSlice("node"), MaxGrace: c.Duration("max-grace")}
	if opts.MaxGrace <= 0 {
		return command.Usage("--max-grace must be positive")
	}
	if s := c.String("now"); s != "" {
		if opts.Now, err = time.Parse(time.RFC3339, s); err != nil {
			return command.Usage("--now: %v", err)
		}
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
	data, err := read(in, c.Int64("max-input"))
	if err != nil {
		return err
	}
	// The decoded snapshot and the report are nearly all of the heap and
	// live to the end: a collection finds little garbage. Collect only when
	// the heap nears twice the input (a mapped input is outside the heap),
	// at least 256 MiB, so that peak memory stays under 3x the input.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(max(2*int64(len(data)), 256<<20))
	snap, err := view.Decode(data)
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

// read reads the whole input like document.Read. A regular file within the
// limit is mapped rather than read (see mapFile), or read in one go at its
// known size when it cannot be mapped.
func read(r io.Reader, limit int64) ([]byte, error) {
	f, ok := r.(*os.File)
	if !ok {
		return document.Read(r, limit)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > limit {
		return document.Read(r, limit)
	}
	if data, err := mapFile(f, st.Size()); err == nil {
		return data, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("input is larger than the limit of %d bytes", limit)
	}
	return buf.Bytes(), nil
}

// colour is true when stdout is a terminal and NO_COLOR is unset.
func colour() bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := os.Stdout.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
