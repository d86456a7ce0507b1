package command

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func manualApp() *cli.App {
	return Tool{
		Name:     "tool-test",
		Summary:  "test the runner",
		Synopsis: []string{"tool-test --node NAME"},
		Doc:      "// Tool-test does nothing useful.\n//\n//\ttool-test --node n1\npackage main\n",
		Examples: []Example{{Comment: "Nothing, on node n1", Command: "tool-test --node n1 | cat"}},
		ExitCodes: []ExitCode{
			{Code: exitcode.OK, Meaning: "done"},
			{Code: exitcode.Error, Meaning: "an error | a pipe"},
		},
		Files:  []File{{Path: "tool-test/deploy/rbac.yaml", What: "its ClusterRole"}},
		Flags:  []cli.Flag{&cli.StringFlag{Name: "node", Usage: "node `NAME`"}},
		Action: func(*cli.Context) error { return nil },
	}.App()
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), manualApp(), []string{"tool-test", "--help"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exit code = %d, stderr %q", code, stderr.String())
	}
	want := `tool-test - test the runner

Usage:
  tool-test --node NAME
  tool-test completion bash|zsh

Tool-test does nothing useful.

    tool-test --node n1

Examples:
  # Nothing, on node n1
  tool-test --node n1 | cat

Exit codes:
  0  done
  1  an error | a pipe

Options:
  --node NAME    node NAME
  --help, -h     show help
  --version, -v  print the version

Manual: docs/tools/tool-test.md in the sentinel repository.
`
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("--help (-want +got):\n%s", diff)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr = %q, want empty", stderr.String())
	}
}

func TestHelpStandardExitCodes(t *testing.T) {
	help := Help(testApp())
	for _, want := range []string{"Usage:\n  tool-test [options]\n", "  2  not now: retry later\n", "  3  blocked: a human must act\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

func TestManualCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), manualApp(), []string{"tool-test", "manual"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("manual exit code = %d, stderr %q", code, stderr.String())
	}
	want := "<!-- Generated from tool-test's help by `make docs`; do not edit. -->\n\n" +
		"# tool-test\n\ntest the runner\n\n## Synopsis\n\n```sh\ntool-test --node NAME\ntool-test completion bash|zsh\n```\n\n" +
		"## Description\n\nTool-test does nothing useful.\n\n\ttool-test --node n1\n\n" +
		"## Examples\n\n```sh\n# Nothing, on node n1\ntool-test --node n1 | cat\n```\n\n" +
		"## Exit codes\n\n| Code | Meaning |\n| --- | --- |\n| 0 | done |\n| 1 | an error \\| a pipe |\n\n" +
		"## Options\n\n```\n--node NAME    node NAME\n--help, -h     show help\n--version, -v  print the version\n```\n\n" +
		"## Files\n\n- [tool-test/deploy/rbac.yaml](../../tool-test/deploy/rbac.yaml): its ClusterRole\n"
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("manual (-want +got):\n%s", diff)
	}
	if help := Help(manualApp()); strings.Contains(help, "rbac.yaml") {
		t.Errorf("--help names a repository file:\n%s", help)
	}
}

func TestCompletion(t *testing.T) {
	tests := map[string]struct {
		args             []string
		wantCode         int
		wantOut, wantErr string // substrings; "" means empty
	}{
		"bash":    {[]string{"completion", "bash"}, 0, "complete -o bashdefault -o default -o nospace -F _tool_test_bash_autocomplete tool-test\n", ""},
		"zsh":     {[]string{"completion", "zsh"}, 0, "#compdef tool-test\n", ""},
		"fish":    {[]string{"completion", "fish"}, 1, "", `tool-test: completion: unknown shell "fish": want bash or zsh (see --help)`},
		"no args": {[]string{"completion"}, 1, "", "tool-test: completion: want one argument, bash or zsh"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), manualApp(), append([]string{"tool-test"}, tc.args...), nil, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			for _, c := range []struct{ name, got, want string }{{"stdout", stdout.String(), tc.wantOut}, {"stderr", stderr.String(), tc.wantErr}} {
				if (c.want == "" && c.got != "") || !strings.Contains(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestVersionOf(t *testing.T) {
	tests := map[string]struct {
		bi   debug.BuildInfo
		want string
	}{
		"module version": {debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		"vcs revision": {debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "b41f2d7c0ffee0123456789abcdef0123456789a"}, {Key: "vcs.modified", Value: "false"}}}, "b41f2d7c0ffe"},
		"vcs dirty": {debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "b41f2d7c0ffee0123456789abcdef0123456789a"}, {Key: "vcs.modified", Value: "true"}}}, "b41f2d7c0ffe-dirty"},
		"nothing": {debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := versionOf(&tc.bi); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func verbApp(got *[]string) *cli.App {
	return Tool{
		Name:     "verb-test",
		Summary:  "test verbs",
		Synopsis: []string{"verb-test go NAME [--fast] [--speed N]"},
		Commands: []*cli.Command{{
			Name:        "go",
			Usage:       "go somewhere",
			UsageText:   "verb-test go NAME [--fast] [--speed N]",
			Description: "Go goes to NAME.\n\nIt never stops.",
			ArgsUsage:   "NAME",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "fast", Usage: "go fast"},
				&cli.IntFlag{Name: "speed", Usage: "at `N` km/h"},
			},
			Action: func(c *cli.Context) error {
				*got = append([]string{fmt.Sprint(c.Bool("fast")), fmt.Sprint(c.Int("speed"))}, c.Args().Slice()...)
				fmt.Fprintln(c.App.Writer, "went")
				return exitcode.Errorf(exitcode.Blocked, "stopped")
			},
		}},
	}.App()
}

// TestVerbs: a verb's flags may follow its arguments, its output is not held
// back when it fails, and its --help has the tool's layout.
func TestVerbs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"go", "home"}, []string{"false", "0", "home"}},
		{[]string{"go", "home", "--fast", "--speed", "7"}, []string{"true", "7", "home"}},
		{[]string{"go", "--speed=3", "home", "--fast"}, []string{"true", "3", "home"}},
		{[]string{"go", "home", "--", "--fast"}, []string{"false", "0", "home", "--fast"}},
	} {
		var got []string
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), verbApp(&got), append([]string{"verb-test"}, tc.args...), nil, &stdout, &stderr)
		if code != 3 || stdout.String() != "went\n" || stderr.String() != "verb-test: stopped\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 3, went, stopped", tc.args, code, stdout.String(), stderr.String())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v: (-want +got):\n%s", tc.args, diff)
		}
	}
	var got []string
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), verbApp(&got), []string{"verb-test", "go", "--help"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("go --help: exit %d, %s", code, stderr.String())
	}
	want := `verb-test go - go somewhere

Usage:
  verb-test go NAME [--fast] [--speed N]

Go goes to NAME.

It never stops.

Options:
  --fast      go fast (default: false)
  --speed N   at N km/h (default: 0)
  --help, -h  show help

Manual: docs/tools/verb-test.md in the sentinel repository.
`
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("go --help (-want +got):\n%s", diff)
	}
	stdout.Reset()
	Run(context.Background(), verbApp(&got), []string{"verb-test", "--help"}, nil, &stdout, &stderr)
	for _, part := range []string{"\nCommands:\n  go  go somewhere\n", "verb-test VERB --help shows a verb's own options."} {
		if !strings.Contains(stdout.String(), part) {
			t.Errorf("--help lacks %q:\n%s", part, stdout.String())
		}
	}
	stdout.Reset()
	Run(context.Background(), verbApp(&got), []string{"verb-test", "manual"}, nil, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "\n### verb-test go\n\ngo somewhere\n\n```sh\nverb-test go NAME [--fast] [--speed N]\n```\n") {
		t.Errorf("manual lacks the verb's section:\n%s", stdout.String())
	}
}

// FuzzInterspersed: the arguments are only reordered, the verb's
// arguments keep their order, and the completion flag stays last.
func FuzzInterspersed(f *testing.F) {
	f.Add("go\x00home\x00--fast\x00--speed\x007")
	f.Add("go\x00--\x00--fast\x00x")
	f.Add("--help\x00go\x00a\x00--speed")
	f.Add("go\x00a\x00--generate-bash-completion")
	f.Fuzz(func(t *testing.T, joined string) {
		var got []string
		app := verbApp(&got)
		args := append([]string{"verb-test"}, strings.Split(joined, "\x00")...)
		out := interspersed(app, slices.Clone(args))
		a, b := slices.Clone(args), slices.Clone(out)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("%q became %q: not a reordering", args, out)
		}
		if args[len(args)-1] == completionFlag && out[len(out)-1] != completionFlag {
			t.Fatalf("%q became %q: the completion flag moved", args, out)
		}
		// The verb's arguments: neither flags nor the values of flags
		// that take one, and everything after "--".
		positional := func(s []string) []string {
			i := slices.Index(s, "go")
			if i < 0 {
				return nil
			}
			var p []string
			for i++; i < len(s); i++ {
				switch {
				case s[i] == "--":
					return append(p, s[i+1:]...)
				case isFlag(s[i]):
					if takesValue(app.Command("go").Flags, s[i]) {
						i++
					}
				default:
					p = append(p, s[i])
				}
			}
			return p
		}
		if slices.Index(args, "go") == slices.Index(out, "go") && !slices.Equal(positional(args), positional(out)) {
			t.Fatalf("%q became %q: arguments %q, then %q", args, out, positional(args), positional(out))
		}
	})
}
