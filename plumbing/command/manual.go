package command

import (
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Tool describes a sentinel tool: its flags and action, and the parts of
// its manual. One help layout serves every tool: the summary, the
// synopsis, the description (the tool's doc.go), examples, exit codes and
// options, then where the manual lives in the repository.
type Tool struct {
	Name    string
	Summary string // one line, lower case, no full stop
	// Synopsis are the usage lines, each starting with the tool's name.
	Synopsis []string
	// Doc is the tool's doc.go source (a package comment over
	// "package main"); its comment text is the description.
	Doc       string
	Examples  []Example
	ExitCodes []ExitCode // nil: the standard table of package exitcode
	Flags     []cli.Flag
	Action    cli.ActionFunc
	ArgsUsage string // positional arguments the action takes; "" for none
	// Files are files of the repository that the manual page links
	// (paths from the repository's root), e.g. the tool's ClusterRole.
	// --help does not name them: a user of the binary does not have them.
	Files []File
	// Commands are the tool's verbs (e.g. kubectl-maint drain), for a tool
	// that has them. Each has its Usage (one line), UsageText (its
	// synopsis lines), Description, Flags and Action; --help lists them,
	// "TOOL VERB --help" is the verb's own help in the same layout, and
	// the manual page has a section for each. Flags may also follow a
	// verb's arguments ("drain node-1 --wait"), as in kubectl.
	Commands []*cli.Command
}

// File is a file of the repository and what it is.
type File struct{ Path, What string }

// Example is one example invocation and what it does.
type Example struct {
	Comment string // what it does, one line
	Command string
}

// ExitCode is what one exit code means for a tool.
type ExitCode struct {
	Code    exitcode.Code
	Meaning string
}

// StandardExitCodes is the exit-code table every tool follows.
var StandardExitCodes = []ExitCode{
	{exitcode.OK, "done, or safe"},
	{exitcode.Error, "an error: nothing reliable was done or decided; nothing on stdout"},
	{exitcode.NotNow, "not now: retry later"},
	{exitcode.Blocked, "blocked: a human must act"},
}

// DocsPath is where a tool's manual lives in the repository.
func DocsPath(tool string) string { return "docs/tools/" + tool + ".md" }

// manualKey is the cli.App metadata key under which App keeps its Tool.
const manualKey = "sentinel.dev/manual"

// App is the tool's urfave/cli app, with the shared help layout and the
// completion command.
func (t Tool) App() *cli.App {
	app := &cli.App{
		Name:                   t.Name,
		Usage:                  t.Summary,
		Description:            Doc(t.Doc),
		ArgsUsage:              t.ArgsUsage,
		Version:                Version(),
		Flags:                  t.Flags,
		Action:                 t.Action,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		EnableBashCompletion:   true,
		Commands:               append(slices.Clone(t.Commands), completionCommand(t.Name), manualCommand()),
		Metadata:               map[string]any{manualKey: t},
	}
	for _, c := range t.Commands {
		if c.HelpName == "" {
			c.HelpName = t.Name + " " + c.Name
		}
		if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "help") }) {
			c.Flags = append(c.Flags, cli.HelpFlag)
		}
		// The template is the help text itself, as a quoted string:
		// urfave/cli renders a command's help from its template alone.
		c.CustomHelpTemplate = "{{" + strconv.Quote(CommandHelp(t, c)) + "}}"
	}
	// urfave/cli renders the template through a tabwriter; the text has
	// no tabs, so it passes through unchanged.
	app.CustomAppHelpTemplate = `{{index ExtraInfo "help"}}`
	app.ExtraInfo = func() map[string]string { return map[string]string{"help": Help(app)} }
	return app
}

func toolOf(app *cli.App) Tool {
	if t, ok := app.Metadata[manualKey].(Tool); ok {
		return t
	}
	return Tool{Name: app.Name, Summary: app.Usage}
}

func (t Tool) exitCodes() []ExitCode {
	if t.ExitCodes == nil {
		return StandardExitCodes
	}
	return t.ExitCodes
}

func (t Tool) synopsis() []string {
	lines := t.Synopsis
	if len(lines) == 0 {
		lines = []string{t.Name + " [options]"}
	}
	return append(append([]string(nil), lines...), t.Name+" completion bash|zsh")
}

// Help is the text of app's --help.
func Help(app *cli.App) string {
	t := toolOf(app)
	var b strings.Builder
	fmt.Fprintf(&b, "%s - %s\n\nUsage:\n", t.Name, t.Summary)
	for _, s := range t.synopsis() {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	if d := docText(t.Doc); d != "" {
		b.WriteString("\n" + d)
	}
	if len(t.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for i, e := range t.Examples {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "  # %s\n  %s\n", e.Comment, e.Command)
		}
	}
	if len(t.Commands) > 0 {
		b.WriteString("\nCommands:\n")
		b.WriteString(commandList(t, "  "))
	}
	b.WriteString("\nExit codes:\n")
	for _, e := range t.exitCodes() {
		fmt.Fprintf(&b, "  %d  %s\n", e.Code, e.Meaning)
	}
	b.WriteString("\nOptions:\n")
	b.WriteString(options(app.VisibleFlags(), "  "))
	if len(t.Commands) > 0 {
		fmt.Fprintf(&b, "\n%s VERB --help shows a verb's own options.\n", t.Name)
	}
	fmt.Fprintf(&b, "\nManual: %s in the sentinel repository.\n", DocsPath(t.Name))
	return b.String()
}

// CommandHelp is the text of "TOOL VERB --help": the verb's summary,
// synopsis, description and options in the tool's layout.
func CommandHelp(t Tool, c *cli.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s - %s\n\nUsage:\n", t.Name, c.Name, c.Usage)
	for line := range strings.Lines(commandSynopsis(t, c)) {
		fmt.Fprintf(&b, "  %s", line)
	}
	if d := strings.TrimSpace(c.Description); d != "" {
		b.WriteString("\n" + commentText(d))
	}
	b.WriteString("\nOptions:\n")
	b.WriteString(options(visible(c.Flags), "  "))
	fmt.Fprintf(&b, "\nManual: %s in the sentinel repository.\n", DocsPath(t.Name))
	return b.String()
}

// commandSynopsis is c's usage lines, each ending in a newline.
func commandSynopsis(t Tool, c *cli.Command) string {
	s := strings.TrimSpace(c.UsageText)
	if s == "" {
		s = t.Name + " " + c.Name + " [options]"
	}
	return s + "\n"
}

// commandList lists the visible commands with their summaries, aligned.
func commandList(t Tool, indent string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, c := range t.Commands {
		if !c.Hidden {
			fmt.Fprintf(tw, "%s%s\t%s\n", indent, c.Name, c.Usage)
		}
	}
	tw.Flush()
	return b.String()
}

func visible(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); !ok || v.IsVisible() {
			out = append(out, f)
		}
	}
	return out
}

// Markdown is app's manual page: the same parts as --help, as Markdown.
func Markdown(app *cli.App) string {
	t := toolOf(app)
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated from %s's help by `make docs`; do not edit. -->\n\n", t.Name)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n## Synopsis\n\n```sh\n", t.Name, t.Summary)
	for _, s := range t.synopsis() {
		b.WriteString(s + "\n")
	}
	b.WriteString("```\n")
	if d := docMarkdown(t.Doc); d != "" {
		b.WriteString("\n## Description\n\n" + d)
	}
	if len(t.Examples) > 0 {
		b.WriteString("\n## Examples\n\n```sh\n")
		for i, e := range t.Examples {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "# %s\n%s\n", e.Comment, e.Command)
		}
		b.WriteString("```\n")
	}
	b.WriteString("\n## Exit codes\n\n| Code | Meaning |\n| --- | --- |\n")
	for _, e := range t.exitCodes() {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, strings.ReplaceAll(e.Meaning, "|", `\|`))
	}
	if len(t.Commands) > 0 {
		b.WriteString("\n## Commands\n\n```\n" + commandList(t, "") + "```\n")
		for _, c := range t.Commands {
			if c.Hidden {
				continue
			}
			fmt.Fprintf(&b, "\n### %s %s\n\n%s\n\n```sh\n%s```\n", t.Name, c.Name, c.Usage, commandSynopsis(t, c))
			if d := strings.TrimSpace(c.Description); d != "" {
				b.WriteString("\n" + commentMarkdown(d))
			}
			b.WriteString("\n```\n" + options(visible(c.Flags), "") + "```\n")
		}
	}
	b.WriteString("\n## Options\n\n```\n" + options(app.VisibleFlags(), "") + "```\n")
	if len(t.Files) > 0 {
		b.WriteString("\n## Files\n\n")
		for _, f := range t.Files {
			fmt.Fprintf(&b, "- [%s](../../%s): %s\n", f.Path, f.Path, f.What)
		}
	}
	return b.String()
}

// options lists flags, one a line, aligned.
func options(flags []cli.Flag, indent string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, f := range flags {
		fmt.Fprintln(tw, indent+cli.FlagStringer(f))
	}
	tw.Flush()
	return b.String()
}

// docComment is the comment text of a doc.go file's package comment.
func docComment(src string) string {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		return ""
	}
	return f.Doc.Text()
}

func docText(src string) string { return commentText(docComment(src)) }

func docMarkdown(src string) string { return commentMarkdown(docComment(src)) }

// commentText is doc comment text (go/doc/comment syntax) as plain text.
func commentText(text string) string {
	if text == "" {
		return ""
	}
	p := comment.Printer{TextWidth: 78, TextCodePrefix: "    "}
	return string(p.Text(new(comment.Parser).Parse(text)))
}

// commentMarkdown is doc comment text as Markdown.
func commentMarkdown(text string) string {
	if text == "" {
		return ""
	}
	p := comment.Printer{HeadingLevel: 3}
	return string(p.Markdown(new(comment.Parser).Parse(text)))
}

// manualCommand prints the manual page; `make docs` writes docs/tools from
// it. Hidden: --help is the manual of a binary's user.
func manualCommand() *cli.Command {
	return &cli.Command{
		Name:   "manual",
		Usage:  "print the manual page as Markdown",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usage("manual: unexpected argument %q", c.Args().First())
			}
			_, err := fmt.Fprint(c.App.Writer, Markdown(c.App))
			return err
		},
	}
}
