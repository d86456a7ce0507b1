package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/meminfo-exporter/exporter"
	"github.com/sentinel-go/sentinel/plumbing/command"
)

func env(flag string) []string {
	return []string{"MEMINFO_EXPORTER_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))}
}

func app() *cli.App {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: ":9101", Usage: "`ADDRESS` to serve on", EnvVars: env("listen")},
		&cli.StringFlag{Name: "procfs", Value: "/proc", Usage: "procfs mount `DIR`", EnvVars: env("procfs")},
		&cli.StringFlag{Name: "cgroupfs", Value: "/sys/fs/cgroup", Usage: "cgroup filesystem `DIR`", EnvVars: env("cgroupfs")},
		&cli.StringFlag{Name: "collectors", Usage: "comma-separated `LIST` of " + strings.Join(exporter.Names(), ", ") + " (default: those available)", EnvVars: env("collectors")},
		&cli.BoolFlag{Name: "disable-exporter-metrics", Usage: "leave out the go_*, process_* and promhttp_* metrics", EnvVars: env("disable-exporter-metrics")},
		&cli.IntFlag{Name: "max-requests", Value: 40, Usage: "concurrent /metrics requests served at most (0: no bound)", EnvVars: env("max-requests")},
		&cli.IntFlag{Name: "gomaxprocs", Value: 1, Usage: "CPUs the Go runtime runs on at once (0: Go's default, the CPUs or the cgroup's quota)", EnvVars: append(env("gomaxprocs"), "GOMAXPROCS")},
		&cli.DurationFlag{Name: "timeout", Usage: "`DURATION` after which a /metrics request fails with 503 (default 0: none; Prometheus has its own scrape_timeout)", EnvVars: env("timeout")},
	}
	return command.New("meminfo-exporter", "Prometheus exporter of /proc/meminfo and the memory cgroup", doc, flags, run)
}

func run(c *cli.Context) error {
	cfg := exporter.Config{
		ProcFS:          c.String("procfs"),
		CgroupFS:        c.String("cgroupfs"),
		ExporterMetrics: !c.Bool("disable-exporter-metrics"),
		MaxRequests:     c.Int("max-requests"),
		Timeout:         c.Duration("timeout"),
		Version:         command.Version(),
		ErrorLog:        log.New(c.App.ErrWriter, "meminfo-exporter: ", 0),
	}
	if s := strings.TrimSpace(c.String("collectors")); s != "" {
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			known := false
			for _, k := range exporter.Names() {
				known = known || k == name
			}
			if !known {
				return command.Usage("--collectors: unknown collector %q (known: %s)", name, strings.Join(exporter.Names(), ", "))
			}
			cfg.Collectors = append(cfg.Collectors, name)
		}
	}
	if cfg.MaxRequests < 0 {
		return command.Usage("--max-requests must be 0 or more, not %d", cfg.MaxRequests)
	}
	if n := c.Int("gomaxprocs"); n < 0 {
		return command.Usage("--gomaxprocs must be 0 or more, not %d", n)
	} else if n > 0 {
		// One scrape's work stays on one thread: see "gomaxprocs" in doc.go.
		runtime.GOMAXPROCS(n)
	}
	if cfg.Timeout < 0 {
		return command.Usage("--timeout must be 0 or more, not %v", cfg.Timeout)
	}
	if c.String("listen") == "" {
		return command.Usage("--listen must not be empty")
	}
	e, err := exporter.New(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return err
	}
	p := e.CgroupPaths()
	fmt.Fprintf(c.App.ErrWriter, "meminfo-exporter: listening on %s; collectors: %s; cgroup: %s memory=%q pressure=%q\n",
		ln.Addr(), strings.Join(e.Collectors(), ","), p.Mode, p.Memory, p.Pressure)
	return serve(c.Context, ln, e.Handler())
}

// serve serves h on ln until ctx is cancelled, then shuts down gracefully.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
