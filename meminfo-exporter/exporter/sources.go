package exporter

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sentinel-go/sentinel/meminfo-exporter/cgroup"
	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// source is what one collector reads.
type source interface {
	name() string
	// descs is every descriptor the source sends, or nil when its families
	// are only known once its files are read: then it is an unchecked
	// collector.
	descs() []*prometheus.Desc
	// collect reads the source and sends its metrics.
	collect(ch chan<- prometheus.Metric) error
	close() error
}

// collector makes a source a prometheus.Collector: it adds the source's
// meminfo_scrape_collector_success and _duration_seconds series, and
// records the outcome of every read for /readyz.
type collector struct {
	name              string
	src               source
	index             int // in the store
	store             *store
	now               func() time.Time
	success, duration *prometheus.Desc
	// succeeded and failed are meminfo_scrape_collector_success's two
	// possible series, made once.
	succeeded, failed prometheus.Metric
}

func newCollector(src source, index int, st *store, now func() time.Time) *collector {
	labels := prometheus.Labels{"collector": src.name()}
	c := &collector{
		name: src.name(), src: src, index: index, store: st, now: now,
		success: prometheus.NewDesc("meminfo_scrape_collector_success",
			"Whether the collector's last read succeeded (1) or not (0).", nil, labels),
		duration: prometheus.NewDesc("meminfo_scrape_collector_duration_seconds",
			"Time the collector's read took during this scrape.", nil, labels),
	}
	c.succeeded = prometheus.MustNewConstMetric(c.success, prometheus.GaugeValue, 1)
	c.failed = prometheus.MustNewConstMetric(c.success, prometheus.GaugeValue, 0)
	return c
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	descs := c.src.descs()
	if descs == nil {
		return // unchecked
	}
	ch <- c.success
	ch <- c.duration
	for _, d := range descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	start := time.Now()
	err := c.src.collect(ch)
	took := time.Since(start).Seconds()
	if err == nil {
		ch <- c.succeeded
	} else {
		ch <- c.failed
	}
	ch <- prometheus.MustNewConstMetric(c.duration, prometheus.GaugeValue, took)
	c.store.setStatus(c.index, err, c.now())
}

// parseErrors counts, since the start, the lines and files of one
// collector's sources that could not be parsed, and sends them as
// meminfo_parse_errors_total with the collector's other metrics, so that
// a scrape includes what its own read skipped. The files given to
// newParseErrors always have series. Guarded by the source's mutex.
type parseErrors struct {
	desc   *prometheus.Desc
	files  []string
	counts [][meminfo.NumReasons]uint64
	// sent is the const metric last sent for each count: a count that
	// has not moved since (nearly always, and nearly always 0) is sent
	// again as it was.
	sent [][meminfo.NumReasons]constValue
}

func newParseErrors(files ...string) *parseErrors {
	return &parseErrors{
		desc: prometheus.NewDesc("meminfo_parse_errors_total",
			"Lines or files skipped because they could not be parsed, by source file and reason.",
			[]string{"source", "reason"}, nil),
		files:  files,
		counts: make([][meminfo.NumReasons]uint64, len(files)),
		sent:   make([][meminfo.NumReasons]constValue, len(files)),
	}
}

func (p *parseErrors) of(file string) *[meminfo.NumReasons]uint64 {
	i := slices.Index(p.files, file)
	if i < 0 {
		p.files = append(p.files, file)
		p.counts = append(p.counts, [meminfo.NumReasons]uint64{})
		p.sent = append(p.sent, [meminfo.NumReasons]constValue{})
		i = len(p.files) - 1
	}
	return &p.counts[i]
}

// add counts the lines a parse of file skipped.
func (p *parseErrors) add(file string, skipped *[meminfo.NumReasons]uint64) {
	c := p.of(file)
	for r, n := range skipped {
		c[r] += n
	}
}

// fail counts a file that could not be parsed (err a *cgroup.ParseError).
func (p *parseErrors) fail(err error) {
	if pe, ok := errors.AsType[*cgroup.ParseError](err); ok {
		p.of(pe.File)[pe.Reason]++
	}
}

func (p *parseErrors) collect(ch chan<- prometheus.Metric) {
	for i, file := range p.files {
		for r, n := range p.counts[i] {
			ch <- p.sent[i][r].metric(p.desc, prometheus.CounterValue, float64(n), file, meminfo.Reason(r).String())
		}
	}
}

// constValue is the const metric last made for one series, and its
// value. A const metric cannot change, so one whose value has not moved
// since the last scrape is sent again rather than made anew: the value,
// the type and the labels are the same, only the allocations are saved.
type constValue struct {
	m prometheus.Metric
	v float64
}

// metric returns the series' const metric for value v, made only when v
// differs from the last one's. The caller holds the source's mutex.
func (c *constValue) metric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	if c.m == nil || c.v != v {
		c.m, c.v = prometheus.MustNewConstMetric(d, t, v, labels...), v
	}
	return c.m
}

// descCache is the series of the fields of one file: the descriptor,
// made when a field is first seen, and the const metric last sent. Keys
// are the parser's interned names, so a lookup does not allocate.
type descCache map[string]*series

type series struct {
	desc *prometheus.Desc
	last constValue
}

func (c descCache) get(key string, make func() *prometheus.Desc) *series {
	s, ok := c[key]
	if !ok {
		s = &series{desc: make()}
		c[key] = s
	}
	return s
}

// metric is the series' const metric for v.
func (s *series) metric(t prometheus.ValueType, v float64) prometheus.Metric {
	return s.last.metric(s.desc, t, v)
}

// meminfoSource reads /proc/meminfo. Its fields differ by kernel: it is
// an unchecked collector. Two fields whose metric names collide
// (Active(anon) and Active_anon) are both sent; the registry keeps the
// first and reports the second as an error of the scrape.
type meminfoSource struct {
	mu     sync.Mutex
	file   *kfile.File
	parser *meminfo.Parser
	sample meminfo.Sample
	fields descCache
	errs   *parseErrors
	store  *store
	now    func() time.Time
}

func (s *meminfoSource) name() string              { return Meminfo }
func (s *meminfoSource) descs() []*prometheus.Desc { return nil }
func (s *meminfoSource) close() error              { return s.file.Close() }

func (s *meminfoSource) collect(ch chan<- prometheus.Metric) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.errs.collect(ch)
	data, err := s.file.Read()
	if err != nil {
		return err
	}
	s.parser.Parse(data, &s.sample)
	s.errs.add("meminfo", &s.sample.Skipped)
	if total, ok := s.sample.Lookup("MemTotal"); !ok || total.Value == 0 {
		return fmt.Errorf("%s: MemTotal missing or 0 (%d fields, %d lines skipped)", s.file.Path(), len(s.sample.Fields), s.sample.SkippedLines())
	}
	for _, f := range s.sample.Fields {
		ch <- s.fields.get(f.Name, func() *prometheus.Desc { return meminfoDesc(f) }).metric(prometheus.GaugeValue, float64(f.Value))
	}
	s.store.setMeminfo(s.sample.Fields, s.now())
	return nil
}

// meminfoDesc is node_exporter's name for a field, with meminfo_ for
// node_memory_.
func meminfoDesc(f meminfo.Field) *prometheus.Desc {
	if f.Unit == meminfo.Bytes {
		return prometheus.NewDesc("meminfo_"+meminfo.MetricName(f.Name)+"_bytes",
			"Field "+f.Name+" of /proc/meminfo, in bytes.", nil, nil)
	}
	return prometheus.NewDesc("meminfo_"+meminfo.MetricName(f.Name),
		"Field "+f.Name+" of /proc/meminfo (a count).", nil, nil)
}

// cgroupSource reads the memory controller files of the process's cgroup.
// memory.stat and memory.events differ by kernel: it is an unchecked
// collector.
type cgroupSource struct {
	mu                         sync.Mutex
	reader                     *cgroup.Reader
	setupErr                   error
	mem                        cgroup.Memory
	usage, limit, peak, ws, sw *prometheus.Desc
	gauges                     [5]constValue // usage, limit, peak, ws, sw
	stat, events               descCache
	v2                         bool // memory.events is read
	errs                       *parseErrors
}

func newCgroupSource(r *cgroup.Reader, setupErr error, v2 bool) *cgroupSource {
	errs := newParseErrors("memory.stat")
	if v2 {
		errs = newParseErrors("memory.stat", "memory.events")
	}
	gauge := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &cgroupSource{
		reader: r, setupErr: setupErr, v2: v2, errs: errs,
		usage: gauge("meminfo_cgroup_memory_usage_bytes", "Memory used by the cgroup (memory.current, v1 memory.usage_in_bytes)."),
		limit: gauge("meminfo_cgroup_memory_limit_bytes", "Memory limit of the cgroup (memory.max, v1 memory.limit_in_bytes); absent when unlimited."),
		peak:  gauge("meminfo_cgroup_memory_peak_bytes", "Highest memory use of the cgroup (memory.peak, Linux 5.19+; v1 memory.max_usage_in_bytes)."),
		ws:    gauge("meminfo_cgroup_memory_working_set_bytes", "Usage minus inactive file pages, floored at 0 (as cAdvisor)."),
		sw:    gauge("meminfo_cgroup_memory_swap_usage_bytes", "Swap used by the cgroup (memory.swap.current; v1 memsw minus usage)."),
		stat:  descCache{}, events: descCache{},
	}
}

func (s *cgroupSource) name() string              { return Cgroup }
func (s *cgroupSource) descs() []*prometheus.Desc { return nil }

func (s *cgroupSource) close() error {
	if s.reader == nil {
		return nil
	}
	return s.reader.Close()
}

func (s *cgroupSource) collect(ch chan<- prometheus.Metric) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.errs.collect(ch)
	if s.setupErr != nil {
		return s.setupErr
	}
	m := &s.mem
	if err := s.reader.Read(m); err != nil {
		s.errs.fail(err)
		return err
	}
	s.errs.add("memory.stat", &m.Stat.Skipped)
	if s.v2 {
		s.errs.add("memory.events", &m.Events.Skipped)
	}
	gauge := func(i int, d *prometheus.Desc, v uint64, ok bool) {
		if ok {
			ch <- s.gauges[i].metric(d, prometheus.GaugeValue, float64(v))
		}
	}
	gauge(0, s.usage, m.Usage, m.HasUsage)
	gauge(1, s.limit, m.Limit, m.HasLimit)
	gauge(2, s.peak, m.Peak, m.HasPeak)
	gauge(3, s.ws, m.WorkingSet, m.HasUsage)
	gauge(4, s.sw, m.Swap, m.HasSwap)
	for _, f := range m.Stat.Fields {
		typ := prometheus.GaugeValue
		if cgroup.StatIsCount(f.Name) {
			typ = prometheus.CounterValue
		}
		ch <- s.stat.get(f.Name, func() *prometheus.Desc { return statDesc(f.Name) }).metric(typ, float64(f.Value))
	}
	for _, f := range m.Events.Fields {
		ch <- s.events.get(f.Name, func() *prometheus.Desc {
			return prometheus.NewDesc("meminfo_cgroup_memory_events_"+f.Name+"_total",
				"Count of "+f.Name+" events in the cgroup's memory.events.", nil, nil)
		}).metric(prometheus.CounterValue, float64(f.Value))
	}
	return nil
}

func statDesc(key string) *prometheus.Desc {
	name := meminfo.MetricName(key)
	if name == "sec_pagetables" {
		// "sec" reads as an abbreviated unit (promtool, Prometheus naming).
		name = "secondary_pagetables"
	}
	if cgroup.StatIsCount(key) {
		return prometheus.NewDesc("meminfo_cgroup_memory_stat_"+name+"_total",
			"Count "+key+" of the cgroup's memory.stat.", nil, nil)
	}
	return prometheus.NewDesc("meminfo_cgroup_memory_stat_"+name+"_bytes",
		"Size "+key+" of the cgroup's memory.stat, in bytes.", nil, nil)
}

// pressureSource reads the cgroup's memory.pressure: a checked collector.
type pressureSource struct {
	mu               sync.Mutex
	reader           *cgroup.PressureReader
	setupErr         error
	waiting, stalled *prometheus.Desc
	lastW, lastS     constValue
	errs             *parseErrors
}

func newPressureSource(r *cgroup.PressureReader, setupErr error) *pressureSource {
	return &pressureSource{
		reader: r, setupErr: setupErr, errs: newParseErrors("memory.pressure"),
		waiting: prometheus.NewDesc("meminfo_cgroup_pressure_memory_waiting_seconds_total",
			"Time some tasks of the cgroup were stalled on memory (PSI some total).", nil, nil),
		stalled: prometheus.NewDesc("meminfo_cgroup_pressure_memory_stalled_seconds_total",
			"Time all tasks of the cgroup were stalled on memory (PSI full total).", nil, nil),
	}
}

func (s *pressureSource) name() string { return Pressure }

func (s *pressureSource) descs() []*prometheus.Desc {
	return []*prometheus.Desc{s.waiting, s.stalled, s.errs.desc}
}

func (s *pressureSource) close() error {
	if s.reader == nil {
		return nil
	}
	return s.reader.Close()
}

func (s *pressureSource) collect(ch chan<- prometheus.Metric) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.errs.collect(ch)
	if s.setupErr != nil {
		return s.setupErr
	}
	p, err := s.reader.Read()
	if err != nil {
		s.errs.fail(err)
		return err
	}
	ch <- s.lastW.metric(s.waiting, prometheus.CounterValue, float64(p.Waiting)/1e6)
	if p.HasStalled {
		ch <- s.lastS.metric(s.stalled, prometheus.CounterValue, float64(p.Stalled)/1e6)
	}
	return nil
}
