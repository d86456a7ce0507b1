package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/command"
)

// complete is a verb's shell completion: its flags after a "-", else the
// names names lists from the cluster (nothing when the cluster does not
// answer within 2 s).
func complete(names func(context.Context, *clients) []string) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		if n := c.NArg(); n > 0 && strings.HasPrefix(c.Args().Get(n-1), "-") {
			cli.DefaultCompleteWithFlags(c.Command)(c)
			return
		}
		if c.NArg() > 0 && c.Command.Name != "status" || c.NArg() > 1 {
			return // the one argument is there already
		}
		cl, err := newClients(c)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(c.Context, 2*time.Second)
		defer cancel()
		for _, n := range names(ctx, cl) {
			fmt.Fprintln(c.App.Writer, n)
		}
	}
}

// nodeNames are the cluster's nodes.
func nodeNames(ctx context.Context, cl *clients) []string {
	list, err := cl.core.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	return out
}

// planNodes are the nodes that have a plan to release.
func planNodes(ctx context.Context, cl *clients) []string {
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for i := range list.Items {
		if p := &list.Items[i]; plan.Live(p) && !slices.Contains(out, p.Spec.NodeName) {
			out = append(out, p.Spec.NodeName)
		}
	}
	slices.Sort(out)
	return out
}

// planNodesAndNames are the plans' names and their nodes.
func planNodesAndNames(ctx context.Context, cl *clients) []string {
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range list.Items {
		for _, s := range []string{p.Name, p.Spec.NodeName} {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// completeCommand is kubectl's plugin completion (kubectl_complete-maint
// runs "kubectl-maint __complete ARGS... WORD"): the words after "kubectl
// maint", the last being the one to complete (maybe empty). It answers in
// Cobra's format, as kubectl expects: one candidate a line, then
// ":4" (no file completion).
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Usage:           "complete the words of kubectl maint (kubectl's plugin completion)",
		Hidden:          true,
		SkipFlagParsing: true,
		ArgsUsage:       "WORD...",
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			cur := ""
			if len(words) > 0 {
				cur, words = words[len(words)-1], words[:len(words)-1]
			}
			args := append([]string{name}, words...)
			if strings.HasPrefix(cur, "-") {
				args = append(args, cur)
			}
			var out strings.Builder
			command.Run(c.Context, app(), append(args, "--generate-bash-completion"), nil, &out, new(strings.Builder))
			for line := range strings.Lines(out.String()) {
				line = strings.TrimSpace(line)
				if line != "" && strings.HasPrefix(line, cur) {
					fmt.Fprintln(c.App.Writer, line)
				}
			}
			fmt.Fprintln(c.App.Writer, ":4")
			return nil
		},
	}
}
