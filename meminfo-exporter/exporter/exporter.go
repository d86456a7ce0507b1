// Package exporter serves /proc/meminfo and the process's memory cgroup as
// Prometheus metrics, plus /healthz, /readyz and a /meminfo JSON view.
//
// Every value is read when it is scraped: there is no timer. The metric
// families of a scrape are built in place in a reused frame (a
// prometheus.TransactionalGatherer), so a scrape allocates close to
// nothing besides what the optional Go and process collectors of the own
// registry cost. The last successful meminfo read and the outcome of the
// last read of every source are kept in a store for /meminfo and /readyz.
package exporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

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
	// ExporterMetrics adds the Go collector, the process_* metrics and the
	// promhttp handler's own metrics.
	ExporterMetrics bool
	// MaxRequests bounds concurrent /metrics requests (0: no bound).
	MaxRequests int
	// Timeout bounds a /metrics request (0: none).
	Timeout time.Duration
	Version string
	// Now is the clock used for read times (time.Now when nil).
	Now func() time.Time
	// StatFS tells filesystem types (cgroup.Statfs when nil).
	StatFS cgroup.StatFS
}

// Exporter reads the sources and serves them. Safe for concurrent use.
type Exporter struct {
	cfg      Config
	now      func() time.Time
	paths    cgroup.Paths
	sources  []source
	registry *prometheus.Registry // the Go collector, nil when off
	process  *process             // process_* metrics, nil when off
	frames   framePool
	bodies   bodies
	labels   []string // collector label of each source, stable for pointers
	store    store
	errs     parseErrors
	names    names
}

// source is one collector.
type source interface {
	name() string
	// collect reads the source and adds its families to f.
	collect(e *Exporter, f *frame) error
	close() error
}

// New opens the enabled sources and reads them once, so that /meminfo and
// /readyz have an answer before the first scrape.
func New(cfg Config) (*Exporter, error) {
	for _, c := range cfg.Collectors {
		if !slices.Contains(Names(), c) {
			return nil, fmt.Errorf("unknown collector %q (known: %s)", c, strings.Join(Names(), ", "))
		}
	}
	e := &Exporter{cfg: cfg, now: cfg.Now}
	if e.now == nil {
		e.now = time.Now
	}
	statfs := cfg.StatFS
	if statfs == nil {
		statfs = cgroup.Statfs
	}
	e.names.init(cfg.Version)

	wanted := func(name string) bool { return len(cfg.Collectors) == 0 || slices.Contains(cfg.Collectors, name) }
	explicit := func(name string) bool { return slices.Contains(cfg.Collectors, name) }

	if wanted(Meminfo) {
		path := filepath.Join(cfg.ProcFS, "meminfo")
		if _, err := os.Stat(path); err == nil || explicit(Meminfo) {
			e.sources = append(e.sources, &meminfoSource{file: kfile.New(path), parser: meminfo.NewParser(meminfo.Colon)})
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
			e.sources = append(e.sources, &cgroupSource{reader: r, setupErr: err, v2: e.paths.Mode == cgroup.V2})
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
			e.sources = append(e.sources, &pressureSource{reader: r, setupErr: err})
		}
	}
	e.labels = e.Collectors()
	e.store.init(e.labels)
	e.errs.init(e.parseSources())

	if cfg.ExporterMetrics {
		e.registry = prometheus.NewRegistry()
		e.registry.MustRegister(collectors.NewGoCollector())
		e.process = newProcess(&e.names)
	}
	f := e.frames.get()
	e.collect(f)
	e.frames.put(f)
	return e, nil
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
		names = append(names, s.name())
	}
	return names
}

// CgroupPaths is what was detected of the cgroup filesystem.
func (e *Exporter) CgroupPaths() cgroup.Paths { return e.paths }

// Close closes the sources' files.
func (e *Exporter) Close() error {
	var errs []error
	for _, s := range e.sources {
		errs = append(errs, s.close())
	}
	if e.process != nil {
		errs = append(errs, e.process.close())
	}
	return errors.Join(errs...)
}

// parseSources are the values of the source label of
// meminfo_parse_errors_total that always have series.
func (e *Exporter) parseSources() []string {
	var out []string
	for _, s := range e.sources {
		switch s := s.(type) {
		case *meminfoSource:
			out = append(out, "meminfo")
		case *cgroupSource:
			out = append(out, "memory.stat")
			if s.v2 {
				out = append(out, "memory.events")
			}
		case *pressureSource:
			out = append(out, "memory.pressure")
		}
	}
	return out
}

// Gather implements prometheus.TransactionalGatherer: it reads every
// source now and returns the families; done gives the frame back.
func (e *Exporter) Gather() ([]*dto.MetricFamily, func(), error) {
	f := e.frames.get()
	if f.done == nil {
		f.done = func() { e.frames.put(f) }
	}
	e.collect(f)
	var err error
	if e.registry != nil {
		var mfs []*dto.MetricFamily
		mfs, err = e.registry.Gather()
		f.out = append(f.out, mfs...)
	}
	slices.SortFunc(f.out, func(a, b *dto.MetricFamily) int { return strings.Compare(*a.Name, *b.Name) }) // names are unique
	return f.out, f.done, err
}

// Registry is the own registry of the Go collector, nil when the exporter
// metrics are off. The /metrics handler registers its own metrics there.
func (e *Exporter) Registry() *prometheus.Registry { return e.registry }

// collect reads every source into f (reset first) and records the
// outcomes in the store.
func (e *Exporter) collect(f *frame) {
	f.reset()
	n := &e.names
	success := f.family(&n.success, &n.successHelp, &n.gauge)
	duration := f.family(&n.duration, &n.durationHelp, &n.gauge)
	for i, s := range e.sources {
		start := time.Now()
		err := s.collect(e, f)
		took := time.Since(start).Seconds()
		ok := 0.0
		if err == nil {
			ok = 1
		}
		label := &e.labels[i]
		f.sample(success, ok, &n.collector, label)
		f.sample(duration, took, &n.collector, label)
		e.store.setStatus(i, err, e.now())
		if err != nil {
			e.countParseError(err)
		}
	}
	e.errs.emit(f, n)
	if e.process != nil {
		e.process.collect(f)
	}
	info := f.family(&n.buildInfo, &n.buildInfoHelp, &n.gauge)
	f.sample(info, 1, &n.version, &n.versionValue, &n.goversion, &n.goversionValue)
}

func (e *Exporter) countParseError(err error) {
	if pe, ok := errors.AsType[*cgroup.ParseError](err); ok {
		e.errs.add(pe.File, pe.Reason, 1)
	}
}

// names holds every string a frame points to, so that building a family
// allocates nothing.
type names struct {
	gauge, counter dto.MetricType

	success, successHelp      string
	duration, durationHelp    string
	parseErrs, parseErrsHelp  string
	buildInfo, buildInfoHelp  string
	collector                 string
	source, reason            string
	reasons                   [meminfo.NumReasons]string
	version, versionValue     string
	goversion, goversionValue string

	usage, limit, peak, workingSet, swap family
	waiting, stalled                     family

	mu    sync.Mutex
	taken map[string]bool // metric names given out
}

// family is the name and help of a metric family.
type family struct {
	name, help string
	typ        *dto.MetricType
	skip       bool // its name is taken by another key: counted as a duplicate
}

func (n *names) init(version string) {
	n.gauge, n.counter = dto.MetricType_GAUGE, dto.MetricType_COUNTER
	n.success, n.successHelp = "meminfo_scrape_collector_success", "Whether the collector's last read succeeded (1) or not (0)."
	n.duration, n.durationHelp = "meminfo_scrape_collector_duration_seconds", "Time the collector's read took during this scrape."
	n.parseErrs, n.parseErrsHelp = "meminfo_parse_errors_total", "Lines or files skipped because they could not be parsed, by source file and reason."
	n.buildInfo, n.buildInfoHelp = "meminfo_exporter_build_info", "A metric with a constant '1' value labeled by the exporter's version and Go version."
	n.collector, n.source, n.reason = "collector", "source", "reason"
	for r := range meminfo.NumReasons {
		n.reasons[r] = r.String()
	}
	n.version, n.versionValue = "version", version
	n.goversion, n.goversionValue = "goversion", runtime.Version()
	g := &n.gauge
	n.usage = family{"meminfo_cgroup_memory_usage_bytes", "Memory used by the cgroup (memory.current, v1 memory.usage_in_bytes).", g, false}
	n.limit = family{"meminfo_cgroup_memory_limit_bytes", "Memory limit of the cgroup (memory.max, v1 memory.limit_in_bytes); absent when unlimited.", g, false}
	n.peak = family{"meminfo_cgroup_memory_peak_bytes", "Highest memory use of the cgroup (memory.peak, Linux 5.19+; v1 memory.max_usage_in_bytes).", g, false}
	n.workingSet = family{"meminfo_cgroup_memory_working_set_bytes", "Usage minus inactive file pages, floored at 0 (as cAdvisor).", g, false}
	n.swap = family{"meminfo_cgroup_memory_swap_usage_bytes", "Swap used by the cgroup (memory.swap.current; v1 memsw minus usage).", g, false}
	c := &n.counter
	n.waiting = family{"meminfo_cgroup_pressure_memory_waiting_seconds_total", "Time some tasks of the cgroup were stalled on memory (PSI some total).", c, false}
	n.stalled = family{"meminfo_cgroup_pressure_memory_stalled_seconds_total", "Time all tasks of the cgroup were stalled on memory (PSI full total).", c, false}
	n.taken = map[string]bool{}
}

// claim gives out a metric name for a new key: false when another key
// already has it (Active(anon) and Active_anon would both be
// meminfo_Active_anon_bytes), in which case the later key is skipped.
func (n *names) claim(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.taken[name] {
		return false
	}
	n.taken[name] = true
	return true
}
