// Package exporter serves /proc/meminfo and the process's memory cgroup as
// Prometheus metrics, plus /healthz, /readyz and a /meminfo JSON view.
//
// Every source is a prometheus.Collector that reads its files when it is
// collected and sends const metrics: there is no timer. A
// prometheus.Registry holds the sources, the parse-error counters, the
// build info and, when asked for, client_golang's Go and process
// collectors; promhttp serves it. The last successful meminfo read and the
// outcome of the last read of every source are kept in a store for
// /meminfo and /readyz.
package exporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sentinel-go/sentinel/meminfo-exporter/cgroup"
	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// The collectors, in the order they are read.
const (
	Meminfo  = "meminfo"  // /proc/meminfo
	Cgroup   = "cgroup"   // the process's memory cgroup
	Pressure = "pressure" // the cgroup's memory.pressure (PSI)
)

// Names is every collector name.
func Names() []string { return []string{Meminfo, Cgroup, Pressure} }

// Config says what to read and how to serve it.
type Config struct {
	ProcFS   string // e.g. /proc
	CgroupFS string // e.g. /sys/fs/cgroup
	// Collectors to enable; empty means every collector that is available.
	// A named collector that is not available is enabled anyway, and
	// reported as failing.
	Collectors []string
	// ExporterMetrics adds client_golang's Go and process collectors and
	// the promhttp handler's own metrics.
	ExporterMetrics bool
	// MaxRequests bounds concurrent /metrics requests (0: no bound).
	MaxRequests int
	// Timeout bounds a /metrics request (0: none).
	Timeout time.Duration
	Version string
	// ErrorLog gets the errors of a /metrics request that was served
	// anyway (a duplicate metric, say); nil: they are not logged.
	ErrorLog promhttp.Logger
	// Now is the clock used for read times (time.Now when nil).
	Now func() time.Time
	// StatFS tells filesystem types (cgroup.Statfs when nil).
	StatFS cgroup.StatFS
}

// Exporter reads the sources and serves them. Safe for concurrent use.
type Exporter struct {
	cfg      Config
	paths    cgroup.Paths
	sources  []*collector
	registry *prometheus.Registry
	store    store
}

// New opens the enabled sources, registers them and reads them once, so
// that /meminfo and /readyz have an answer before the first scrape.
func New(cfg Config) (*Exporter, error) {
	for _, c := range cfg.Collectors {
		if !slices.Contains(Names(), c) {
			return nil, fmt.Errorf("unknown collector %q (known: %s)", c, strings.Join(Names(), ", "))
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	statfs := cfg.StatFS
	if statfs == nil {
		statfs = cgroup.Statfs
	}
	e := &Exporter{cfg: cfg, registry: prometheus.NewRegistry()}

	wanted := func(name string) bool { return len(cfg.Collectors) == 0 || slices.Contains(cfg.Collectors, name) }
	explicit := func(name string) bool { return slices.Contains(cfg.Collectors, name) }

	if wanted(Meminfo) {
		path := filepath.Join(cfg.ProcFS, "meminfo")
		if _, err := os.Stat(path); err == nil || explicit(Meminfo) {
			e.add(&meminfoSource{
				file:   kfile.New(path),
				parser: meminfo.NewParser(meminfo.Colon),
				errs:   newParseErrors("meminfo"),
				fields: descCache{},
				store:  &e.store,
				now:    cfg.Now,
			})
		}
	}
	var cgErr error
	e.paths, cgErr = locate(cfg, statfs)
	if wanted(Cgroup) {
		var r *cgroup.Reader
		err := cgErr
		if err == nil {
			r, err = cgroup.NewReader(e.paths)
		}
		if err == nil || explicit(Cgroup) {
			e.add(newCgroupSource(r, err, e.paths.Mode == cgroup.V2))
		}
	}
	if wanted(Pressure) {
		var r *cgroup.PressureReader
		err := cgErr
		if err == nil {
			r, err = cgroup.NewPressureReader(e.paths)
		}
		if err == nil && !explicit(Pressure) {
			if _, err = r.Read(); err != nil { // PSI off or absent: not available
				r.Close()
			}
		}
		if err == nil || explicit(Pressure) {
			e.add(newPressureSource(r, err))
		}
	}
	e.store.init(e.Collectors())

	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "meminfo_exporter_build_info",
		Help:        "A metric with a constant '1' value labeled by the exporter's version and Go version.",
		ConstLabels: prometheus.Labels{"version": cfg.Version, "goversion": runtime.Version()},
	})
	info.Set(1)
	e.registry.MustRegister(info)
	if cfg.ExporterMetrics {
		e.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, s := range e.sources {
		if err := e.registry.Register(s); err != nil {
			e.Close()
			return nil, fmt.Errorf("register collector %s: %w", s.name, err)
		}
	}
	e.registry.Gather() // the first read, for /meminfo and /readyz; its errors show at every scrape
	return e, nil
}

func (e *Exporter) add(s source) {
	e.sources = append(e.sources, newCollector(s, len(e.sources), &e.store, e.cfg.Now))
}

func locate(cfg Config, statfs cgroup.StatFS) (cgroup.Paths, error) {
	mode, err := cgroup.Detect(cfg.CgroupFS, statfs)
	if err != nil {
		return cgroup.Paths{}, fmt.Errorf("detect cgroup layout: %w", err)
	}
	if mode == cgroup.None {
		return cgroup.Paths{}, fmt.Errorf("no cgroup filesystem at %s", cfg.CgroupFS)
	}
	self, err := os.ReadFile(filepath.Join(cfg.ProcFS, "self", "cgroup"))
	if err != nil {
		return cgroup.Paths{Mode: mode}, err
	}
	p, err := cgroup.Locate(mode, cfg.CgroupFS, self)
	if err != nil {
		return cgroup.Paths{Mode: mode}, fmt.Errorf("locate own cgroup: %w", err)
	}
	return p, nil
}

// Collectors is the names of the enabled collectors.
func (e *Exporter) Collectors() []string {
	var names []string
	for _, s := range e.sources {
		names = append(names, s.name)
	}
	return names
}

// CgroupPaths is what was detected of the cgroup filesystem.
func (e *Exporter) CgroupPaths() cgroup.Paths { return e.paths }

// Registry holds every collector the exporter serves.
func (e *Exporter) Registry() *prometheus.Registry { return e.registry }

// Close closes the sources' files.
func (e *Exporter) Close() error {
	var errs []error
	for _, s := range e.sources {
		errs = append(errs, s.src.close())
	}
	return errors.Join(errs...)
}
