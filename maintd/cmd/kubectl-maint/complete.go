package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/retry"
)

// names lists the names a verb's next argument takes, from the cluster,
// given its arguments before it.
type names func(ctx context.Context, cl *clients, args []string) []string

// complete is a verb's shell completion (urfave/cli's, for bash and zsh):
// its flags after a "-", else the names names lists from the cluster.
func complete(names names) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		// urfave/cli does not pass the partial word: it is the argument
		// before its completion flag.
		if n := len(os.Args); n > 2 && strings.HasPrefix(os.Args[n-2], "-") {
			cli.DefaultCompleteWithFlags(c.Command)(c)
			return
		}
		for _, n := range clusterNames(c, names, c.Args().Slice()) {
			fmt.Fprintln(c.App.Writer, n)
		}
	}
}

// clusterNames asks the cluster for names after args, giving up (none)
// after 2 s.
func clusterNames(c *cli.Context, names names, args []string) []string {
	cl, err := newClients(c)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Context, 2*time.Second)
	defer cancel()
	return names(ctx, cl, args)
}

// nodeNames are the cluster's nodes.
func nodeNames(ctx context.Context, cl *clients, _ []string) []string {
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
func planNodes(ctx context.Context, cl *clients, _ []string) []string {
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

// planNames are the names of the plans that are not Completed.
func planNames(ctx context.Context, cl *clients, _ []string) []string {
	list, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for i := range list.Items {
		if p := &list.Items[i]; plan.Live(p) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// planNodesAndNames are the plans' names and their nodes.
func planNodesAndNames(ctx context.Context, cl *clients, _ []string) []string {
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
// Cobra's format, as kubectl expects: one candidate a line, then ":4" (no
// file completion).
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
			for _, s := range candidates(c, words, cur) {
				if strings.HasPrefix(s, cur) {
					fmt.Fprintln(c.App.Writer, s)
				}
			}
			fmt.Fprintln(c.App.Writer, ":4")
			return nil
		},
	}
}

// candidates completes cur after words: a verb, a verb's flag, the values
// --accept takes after it, or the names the verb takes (not after another
// flag that takes a value).
func candidates(c *cli.Context, words []string, cur string) []string {
	if len(words) == 0 {
		var verbs []string
		for _, cmd := range c.App.VisibleCommands() {
			if cmd.Name != "completion" {
				verbs = append(verbs, cmd.Name)
			}
		}
		return verbs
	}
	cmd := c.App.Command(words[0])
	if cmd == nil {
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		var flags []string
		for _, f := range cmd.VisibleFlags() {
			for _, n := range f.Names() {
				if len(n) == 1 {
					flags = append(flags, "-"+n)
				} else {
					flags = append(flags, "--"+n)
				}
			}
		}
		return flags
	}
	if prev := words[len(words)-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
		for _, f := range cmd.Flags {
			if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && slices.Contains(f.Names(), strings.TrimLeft(prev, "-")) {
				if f.Names()[0] == "accept" {
					findings, never := plan.Acceptable()
					return slices.Compact(slices.Sorted(slices.Values(slices.Concat(findings, never))))
				}
				return nil
			}
		}
	}
	if names := nameSources[cmd.Name]; names != nil {
		return clusterNames(c, names, positional(cmd, words[1:]))
	}
	return nil
}

// positional are the verb's arguments among words: not its flags, nor the
// values of those that take one.
func positional(cmd *cli.Command, words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			out = append(out, w)
			continue
		}
		if strings.Contains(w, "=") {
			continue
		}
		for _, f := range cmd.Flags {
			if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && slices.Contains(f.Names(), strings.TrimLeft(w, "-")) {
				i++ // its value
				break
			}
		}
	}
	return out
}

// retryNames are the campaigns that may still make plans, then, after a
// campaign, its nodes that may be retried (retry.Node) and are not typed
// yet.
func retryNames(ctx context.Context, cl *clients, args []string) []string {
	if len(args) == 0 {
		list, err := cl.campaigns.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		var out []string
		for _, mc := range list.Items {
			if !campaign.Final(&mc.Status) {
				out = append(out, mc.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	mc, err := cl.campaigns.Get(ctx, args[0], metav1.GetOptions{})
	if err != nil {
		return nil
	}
	plans, err := cl.plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range mc.Status.Nodes {
		if _, err := retry.Node(mc, plans.Items, n); err == nil && !slices.Contains(args[1:], n) && !slices.Contains(mc.Spec.Retry, n) {
			out = append(out, n)
		}
	}
	return out
}

// nameSources are the names each verb's argument takes.
var nameSources = map[string]names{
	"drain": nodeNames, "preflight": nodeNames, "uncordon": planNodes, "status": planNodesAndNames, "retry": retryNames,
	"override": planNames,
}
