package command

import (
	"bytes"
	"context"
	"runtime/debug"
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
