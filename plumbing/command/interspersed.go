package command

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag is urfave/cli's hidden flag that asks for completions; it
// must stay the last argument.
const completionFlag = "--generate-bash-completion"

// interspersed lets a verb's flags follow its arguments, as kubectl's do
// ("drain node-1 --wait"): urfave/cli v2 stops reading flags at the first
// argument, so the verb's flags (each with its value, when it takes one)
// move before its arguments (but for a verb that reads no flags,
// SkipFlagParsing). The order within the flags and within the
// arguments is kept; after "--" everything is an argument. Arguments of a
// tool without verbs are returned as they are.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// The verb: the first argument that is not an app flag or its value.
	verb := -1
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args
		}
		if isFlag(a) {
			if takesValue(app.Flags, a) {
				i++
			}
			continue
		}
		if slices.ContainsFunc(app.Commands, func(c *cli.Command) bool { return c.HasName(a) }) {
			verb = i
		}
		break
	}
	if verb < 0 {
		return args
	}
	cmd := app.Command(args[verb])
	if cmd.SkipFlagParsing {
		return args
	}
	rest := args[verb+1:]
	tail := []string(nil)
	if n := len(rest); n > 0 && rest[n-1] == completionFlag {
		rest, tail = rest[:n-1], []string{completionFlag}
	}
	var flags, positional, dashes []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			dashes = []string{"--"}
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case isFlag(a):
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) {
				if i+1 == len(rest) {
					// No value: left as it is, for urfave/cli to
					// report, not given the next argument's place.
					return args
				}
				i++
				flags = append(flags, rest[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	return slices.Concat(args[:verb+1], flags, dashes, positional, tail)
}

// isFlag reports whether a is a flag ("-x", "--name", "--name=value").
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

// takesValue reports whether flag a (without "=value") is one of flags
// that takes a value from the next argument.
func takesValue(flags []cli.Flag, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			v, ok := f.(interface{ TakesValue() bool })
			return ok && v.TakesValue()
		}
	}
	return false
}
