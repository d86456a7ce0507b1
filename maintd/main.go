package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/k8s-evict/evict/evictrest"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

//go:embed doc.go
var doc string

const name = "maintd"

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "selector", Aliases: []string{"l"}, Usage: "run only the plans with these `LABELS` (e.g. team=infra)"},
		&cli.IntFlag{Name: "max-nodes-in-maintenance", Value: 1, Usage: "how many plans may hold a cordon at once, cluster-wide"},
		&cli.IntFlag{Name: "workers", Value: 4, Usage: "plans reconciled in parallel"},
		&cli.StringFlag{Name: "health-address", Usage: "serve /healthz and /readyz on `ADDR` (e.g. :8081; default: off)"},
	}, kubeflags.Flags()...)
	return command.New(name, "run MaintenancePlans: cordon, drain under PodDisruptionBudgets, release", doc, flags, run)
}

func run(c *cli.Context) error {
	sel, err := labels.Parse(c.String("selector"))
	if err != nil {
		return command.Usage("invalid --selector %q: %v", c.String("selector"), err)
	}
	if c.Int("max-nodes-in-maintenance") < 1 {
		return command.Usage("--max-nodes-in-maintenance must be at least 1, not %d", c.Int("max-nodes-in-maintenance"))
	}
	if c.Int("workers") < 1 {
		return command.Usage("--workers must be at least 1, not %d", c.Int("workers"))
	}
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	plans, err := controller.NewPlans(cfg)
	if err != nil {
		return err
	}
	poster, err := newPoster(cfg)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))

	ctx := c.Context
	sch := runtime.NewScheme()
	if err := scheme.AddToScheme(sch); err != nil {
		return err
	}
	if err := api.AddToScheme(sch); err != nil {
		return err
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(sch, name)

	ctrl := controller.New(controller.Config{
		Client: client, Plans: plans, Poster: poster, Selector: sel,
		MaxNodes: c.Int("max-nodes-in-maintenance"), Log: log, Events: recorder,
	})
	if addr := c.String("health-address"); addr != "" {
		stop, err := serveHealth(ctx, addr, ctrl.HasSynced, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	log.Info("maintd starting", "version", command.Version(), "selector", sel.String(), "maxNodesInMaintenance", c.Int("max-nodes-in-maintenance"))
	if err := ctrl.Run(ctx, c.Int("workers")); err != nil {
		return err
	}
	log.Info("maintd stopped")
	return nil
}

// newPoster sends evictions through client-go's REST client, one request
// per call (no hidden retries).
func newPoster(cfg *rest.Config) (evict.Poster, error) {
	c, _, err := kubeclient.CoreV1(cfg)
	if err != nil {
		return nil, err
	}
	return evictrest.New(c), nil
}

// serveHealth serves /healthz (the process runs) and /readyz (the caches
// synced) until stop.
func serveHealth(ctx context.Context, addr string, ready func() bool, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health-address: %w", err)
	}
	log.Info("serving health", "address", l.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health server", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
