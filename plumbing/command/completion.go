package command

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// The completion scripts are urfave/cli's (autocomplete/bash_autocomplete
// and autocomplete/zsh_autocomplete of github.com/urfave/cli/v2), with the
// function names made the tool's own so that several tools can be loaded
// in one shell. They ask the tool itself, through urfave/cli's hidden
// --generate-bash-completion flag, which flags and commands come next.

const bashCompletion = `# bash completion for PROG (urfave/cli's bash_autocomplete)
# Load it with: source <(PROG completion bash)
_FUNC_init_completion() {
  COMPREPLY=()
  _get_comp_words_by_ref "$@" cur prev words cword
}

_FUNC_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts base words
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    else
      _FUNC_init_completion -n "=:" || return
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}

complete -o bashdefault -o default -o nospace -F _FUNC_bash_autocomplete PROG
`

const zshCompletion = `#compdef PROG
# zsh completion for PROG (urfave/cli's zsh_autocomplete)
# Load it with: source <(PROG completion zsh)  (after compinit)
_FUNC_zsh_autocomplete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

compdef _FUNC_zsh_autocomplete PROG
`

// Completion is the completion script of tool for shell (bash or zsh).
func Completion(tool, shell string) (string, error) {
	var script string
	switch shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	default:
		return "", Usage("completion: unknown shell %q: want bash or zsh", shell)
	}
	fn := "_" + strings.NewReplacer("-", "_", ".", "_").Replace(tool)
	return strings.NewReplacer("PROG", tool, "_FUNC", fn).Replace(script), nil
}

func completionCommand(tool string) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the bash or zsh completion script",
		ArgsUsage: "bash|zsh",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return Usage("completion: want one argument, bash or zsh")
			}
			script, err := Completion(tool, c.Args().First())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}
