package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

//go:embed doc.go
var doc string

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := []cli.Flag{
		&cli.IntFlag{Name: "nodes", Value: 4, Usage: "`N` kwok nodes"},
		&cli.StringFlag{Name: "pool", Value: "demo", Usage: "node pool label value (sentinel.dev/pool=`POOL`)"},
		&cli.StringSliceFlag{Name: "apply", Usage: "manifest `FILE` to apply once the nodes are Ready (repeatable)"},
		&cli.StringSliceFlag{Name: "var", Usage: "`NAME=VALUE` for ${NAME} in manifests (repeatable)"},
		&cli.StringFlag{Name: "kubeconfig-out", Usage: "also copy the admin kubeconfig to `FILE`"},
		&cli.StringFlag{Name: "ready-file", Usage: "create `FILE` once ready (for scripts)"},
		&cli.DurationFlag{Name: "timeout", Value: 3 * time.Minute, Usage: "give up starting after this long (`DURATION`)"},
	}
	return command.Tool{
		Name:     "sentinel-cluster",
		Summary:  "run the local control plane in the foreground",
		Synopsis: []string{"sentinel-cluster [--nodes 4] [--pool demo] [--apply FILE]... [--var NAME=VALUE]... [--kubeconfig-out FILE] [--ready-file FILE]"},
		Doc:      doc,
		Examples: []command.Example{
			{Comment: "Four simulated nodes, until Ctrl-C (make cluster runs this)", Command: "sentinel-cluster --nodes 4"},
			{Comment: "In the background for a script: wait for the ready file, then use the cluster", Command: "sentinel-cluster --kubeconfig-out /tmp/kc --ready-file /tmp/ready & until [ -e /tmp/ready ]; do sleep 1; done; KUBECONFIG=/tmp/kc kubectl get nodes"},
			{Comment: "The demo scenario in namespace shop, once the nodes are Ready", Command: "sentinel-cluster --nodes 4 --apply testdata/scenarios/demo.yaml --var NAMESPACE=shop"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "stopped by SIGINT or SIGTERM after a clean start"},
			{Code: exitcode.Error, Meaning: "bad flags, or the control plane did not start"},
		},
		Flags:  flags,
		Action: run,
	}.App()
}

func run(c *cli.Context) error {
	if c.Int("nodes") < 0 {
		return command.Usage("--nodes must not be negative")
	}
	vars := map[string]string{"POOL": c.String("pool")}
	for _, kv := range c.StringSlice("var") {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return command.Usage("--var %q: want NAME=VALUE", kv)
		}
		vars[name] = value
	}
	var manifests [][]byte
	for _, path := range c.StringSlice("apply") {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := controlplane.Expand(data, vars); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		manifests = append(manifests, data)
	}

	began := time.Now()
	startCtx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	cp, err := controlplane.Start(startCtx, controlplane.Options{Log: c.App.ErrWriter})
	if err != nil {
		return err
	}
	defer cp.Close()
	names := make([]string, c.Int("nodes"))
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i+1)
	}
	if err := cp.CreateNodes(startCtx, c.String("pool"), names...); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "sentinel-cluster: control plane and %d Ready nodes in %.1fs\n", len(names), time.Since(began).Seconds())
	for i, m := range manifests {
		if err := cp.Apply(startCtx, m, vars); err != nil {
			return fmt.Errorf("%s: %w", c.StringSlice("apply")[i], err)
		}
	}
	if len(manifests) > 0 {
		if err := cp.WaitWorkloadsReady(startCtx); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "sentinel-cluster: workloads Ready after %.1fs\n", time.Since(began).Seconds())
	}
	kubeconfig := cp.Kubeconfig(controlplane.Admin)
	if out := c.String("kubeconfig-out"); out != "" {
		data, err := os.ReadFile(kubeconfig)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, data, 0o600); err != nil {
			return err
		}
		kubeconfig = out
	}
	fmt.Fprintf(c.App.Writer, "export KUBECONFIG=%s\n", kubeconfig)
	if f := c.String("ready-file"); f != "" {
		if err := os.WriteFile(f, []byte(kubeconfig+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintln(c.App.ErrWriter, "sentinel-cluster: running; Ctrl-C stops every process")
	<-c.Context.Done()
	fmt.Fprintln(c.App.ErrWriter, "sentinel-cluster: stopping")
	return nil
}
