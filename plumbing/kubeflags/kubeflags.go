// Package kubeflags holds the cluster-connection flags of every tool that
// talks to Kubernetes. It is apart from package command so that tools that
// do not talk to a cluster do not link client-go.
package kubeflags

import (
	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// Flags are the cluster connection flags every tool that talks to a
// cluster shares.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, in-cluster)"},
		&cli.StringFlag{Name: "context", Usage: "kubeconfig `CONTEXT` (default: current)"},
		&cli.Float64Flag{Name: "qps", Value: 50, Usage: "client-side request rate limit, in requests per second (`QPS`)"},
		&cli.IntFlag{Name: "burst", Value: 100, Usage: "client-side request burst (`N` requests)"},
	}
}

// Options reads Flags for tool.
func Options(c *cli.Context, tool string) kubeclient.Options {
	return kubeclient.Options{
		Kubeconfig: c.String("kubeconfig"),
		Context:    c.String("context"),
		QPS:        float32(c.Float64("qps")),
		Burst:      c.Int("burst"),
		Tool:       tool,
		Version:    command.Version(),
	}
}
