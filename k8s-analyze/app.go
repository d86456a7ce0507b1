package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
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
	data, mapped, err := read(in, c.Int64("max-input"))
	if err != nil {
		return err
	}
	// The decoded snapshot and the report are nearly all of the heap and
	// live to the end: a collection finds little garbage. Collect only when
	// the heap nears twice the input (a mapped input is outside the heap),
	// at least 256 MiB, so that peak memory stays under 3x the input.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(max(2*int64(len(data)), 256<<20))
	work := func() error {
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
	if mapped {
		return whileMapped(data, work)
	}
	return work()
}

// whileMapped runs f, which reads data, a mapped file: a file truncated
// meanwhile faults where it is read, on any goroutine. The fault is made a
// panic (parallel.Do passes the setting on to its workers), and the panic
// an error.
func whileMapped(data []byte, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer inputFault(data, &err)
	return f()
}

// inputFault, deferred, turns a panic of a fault on data, the mapped input,
// into an error in *err. Other panics go on.
func inputFault(data []byte, err *error) {
	r := recover()
	if r == nil {
		return
	}
	v := r
	if p, ok := r.(*parallel.Panic); ok {
		v = p.Value
	}
	if f, ok := v.(interface{ Addr() uintptr }); ok {
		if start := uintptr(unsafe.Pointer(unsafe.SliceData(data))); f.Addr() >= start && f.Addr() < start+uintptr(len(data)) {
			*err = errors.New("the input file changed (truncated?) while it was being read")
			return
		}
	}
	panic(r)
}

// read reads the whole input like document.Read. A regular file within the
// limit is mapped rather than read (see mapFile), or read in one go at its
// known size when it cannot be mapped; mapped says which.
func read(r io.Reader, limit int64) (data []byte, mapped bool, err error) {
	f, ok := r.(*os.File)
	if !ok {
		data, err = document.Read(r, limit)
		return data, false, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > limit {
		data, err = document.Read(r, limit)
		return data, false, err
	}
	if data, err := mapFile(f, st.Size()); err == nil {
		return data, true, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, false, fmt.Errorf("read input: %w", err)
	}
	if int64(buf.Len()) > limit {
		return nil, false, fmt.Errorf("input is larger than the limit of %d bytes", limit)
	}
	return buf.Bytes(), false, nil
}

// colour is true when stdout is a terminal and NO_COLOR is unset.
func colour() bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := os.Stdout.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
