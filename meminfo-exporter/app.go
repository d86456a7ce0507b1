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
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
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
		&cli.IntFlag{Name: "max-requests", Value: 40, Usage: "`N` concurrent /metrics requests served at most (0: no bound)", EnvVars: env("max-requests")},
		&cli.IntFlag{Name: "gomaxprocs", Value: 1, Usage: "`N` CPUs the Go runtime runs on at once (0: Go's default, the CPUs or the cgroup's quota)", EnvVars: append(env("gomaxprocs"), "GOMAXPROCS")},
		&cli.DurationFlag{Name: "timeout", Usage: "`DURATION` after which a /metrics request fails with 503 (default 0: none; Prometheus has its own scrape_timeout)", EnvVars: env("timeout")},
	}
	return command.Tool{
		Name:    "meminfo-exporter",
		Summary: "Prometheus exporter of /proc/meminfo and the memory cgroup",
		Synopsis: []string{
			"meminfo-exporter [--listen :9101] [--procfs /proc] [--cgroupfs /sys/fs/cgroup]",
			"                 [--collectors meminfo,cgroup,pressure] [--disable-exporter-metrics]",
			"                 [--max-requests 40] [--timeout 0s] [--gomaxprocs 1]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "Serve on the loopback interface only", Command: "meminfo-exporter --listen 127.0.0.1:9101"},
			{Comment: "The container's available memory, as the exporter last read it", Command: "curl -s 'http://127.0.0.1:9101/meminfo?field=MemAvailable'"},
			{Comment: "Only the cgroup collectors, configured from the environment", Command: "MEMINFO_EXPORTER_COLLECTORS=cgroup,pressure meminfo-exporter"},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "stopped cleanly on SIGINT or SIGTERM"},
			{Code: exitcode.Error, Meaning: "bad flags, or it cannot listen"},
		},
		Files: []command.File{
			{Path: "meminfo-exporter/deploy/sidecar.yaml", What: "the exporter as a sidecar container, with its probes"},
			{Path: "meminfo-exporter/deploy/alerts.yaml", What: "Prometheus alerting rules on its metrics"},
			{Path: "meminfo-exporter/README.md", What: "the metrics, how they are read, and the figures measured"},
		},
		Flags:  flags,
		Action: run,
	}.App()
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
