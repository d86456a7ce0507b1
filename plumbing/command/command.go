// Package command is the runner every sentinel tool's main uses: a
// urfave/cli/v2 app with injected streams, no os.Exit inside Run, usage
// errors on stderr with exit 1, SIGINT/SIGTERM cancelling the context, and
// one mapping from the returned error to the exit code (package exitcode).
//
// Tool builds the app with one help layout for every tool (summary,
// synopsis, description, examples, exit codes, options, the manual's path
// in the repository), the `completion bash|zsh` command, and the hidden
// `manual` command that prints the same manual as Markdown for docs/tools.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// version is set at link time by the Makefile (make build):
// -X github.com/sentinel-go/sentinel/plumbing/command.version=$(git describe --always --dirty)
var version string

// Version is the build's version: the link-time value (git describe), else
// what the Go toolchain recorded in the binary (the main module's version,
// else its VCS revision, "-dirty" when modified), else "dev".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return rev[:min(12, len(rev))] + dirty
}

// New is a tool's app from its name, one-line summary and doc.go text,
// with the shared help layout but no synopsis or examples; Tool.App is the
// full form.
func New(name, usage, doc string, flags []cli.Flag, action cli.ActionFunc) *cli.App {
	return Tool{Name: name, Summary: usage, Doc: doc, Flags: flags, Action: action}.App()
}

// Main runs app on the process's arguments and streams, cancelling its
// context on SIGINT or SIGTERM, and returns the exit code for os.Exit.
func Main(app *cli.App) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, app, os.Args, os.Stdin, os.Stdout, os.Stderr)
}

// Run runs app with args and the given streams and returns the exit code.
// Errors are printed once, as "<tool>: <message>", on stderr.
func Run(ctx context.Context, app *cli.App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Until the action runs, stdout holds only what urfave/cli prints itself
	// (help, version): keep it back, and drop it when the run fails, so that
	// a usage error never puts help text on a pipe.
	out := &gate{w: stdout}
	if slices.Contains(args, "--generate-bash-completion") {
		// Completing a partial flag ("--no"): with short-option handling
		// urfave/cli v2.27 returns no flag set for it and then panics.
		app.UseShortOptionHandling = false
	}
	app.Reader, app.Writer, app.ErrWriter = stdin, out, stderr
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return Usage("%v", err)
	}
	// The actions of the app and of its verbs: usage errors for stray
	// arguments, a panic as exit 1, and stdout opened once they run.
	guard := func(action cli.ActionFunc, checkArgs bool) cli.ActionFunc {
		return func(c *cli.Context) (err error) {
			// A bug is an error, exit 1: a panic's own exit status, 2,
			// would read as "not now, retry later".
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("internal error, a bug (please report it): %v\n%s", r, debug.Stack())
				}
			}()
			if checkArgs && c.NArg() > 0 {
				return Usage("unexpected argument %q", c.Args().First())
			}
			if err := out.open(); err != nil {
				return err
			}
			return action(c)
		}
	}
	if app.Action != nil {
		app.Action = guard(app.Action, app.ArgsUsage == "")
	}
	for _, c := range app.Commands {
		if c.Action != nil {
			c.Action = guard(c.Action, c.ArgsUsage == "")
		}
	}
	args = interspersed(app, args)
	err := app.RunContext(ctx, args)
	if err == nil {
		err = out.open()
	}
	if err != nil && isRequiredFlagError(err) {
		err = Usage("%v", err)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = fmt.Errorf("interrupted: %w", err)
	}
	if msg := exitcode.Message(err); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", app.Name, msg)
	}
	return int(exitcode.Of(err))
}

// UsageError is a mistake in the invocation.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg + " (see --help)" }

// Usage is a usage error, exit 1.
func Usage(format string, args ...any) error {
	return exitcode.With(exitcode.Error, &UsageError{msg: fmt.Sprintf(format, args...)})
}

func isRequiredFlagError(err error) bool {
	return strings.HasPrefix(err.Error(), "Required flag") || strings.HasPrefix(err.Error(), "Required flags")
}

// Doc turns a doc.go file (a package comment over "package main") into the
// plain text of --help: comment markers and the package clause removed.
func Doc(src string) string {
	var out []string
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "package "), strings.HasPrefix(line, "//go:"), line == "/*", line == "*/":
			continue
		case strings.HasPrefix(line, "// "):
			line = line[3:]
		case strings.HasPrefix(line, "//"):
			line = line[2:]
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// gate holds writes back until opened; open flushes them and passes later
// writes straight through.
type gate struct {
	w      io.Writer
	held   []byte
	opened bool
}

func (g *gate) Write(p []byte) (int, error) {
	if g.opened {
		return g.w.Write(p)
	}
	g.held = append(g.held, p...)
	return len(p), nil
}

func (g *gate) open() error {
	if g.opened {
		return nil
	}
	g.opened = true
	_, err := g.w.Write(g.held)
	g.held = nil
	return err
}
