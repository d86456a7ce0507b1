package exporter

import (
	"fmt"
	"sync"

	"github.com/sentinel-go/sentinel/meminfo-exporter/cgroup"
	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// families caches the family of each key of a file. Keys are the
// parser's interned strings, so a lookup does not allocate.
type families map[string]*family

func (fs families) get(e *Exporter, key string, make func() family) *family {
	if f, ok := fs[key]; ok {
		return f
	}
	f := make()
	f.skip = !e.names.claim(f.name)
	fs[key] = &f
	return &f
}

type meminfoSource struct {
	mu     sync.Mutex
	file   *kfile.File
	parser *meminfo.Parser
	sample meminfo.Sample
	fams   families
}

func (s *meminfoSource) name() string { return Meminfo }
func (s *meminfoSource) close() error { return s.file.Close() }

func (s *meminfoSource) collect(e *Exporter, f *frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := s.file.Read()
	if err != nil {
		return err
	}
	s.parser.Parse(data, &s.sample)
	e.errs.addAll("meminfo", &s.sample.Skipped)
	if total, ok := s.sample.Lookup("MemTotal"); !ok || total.Value == 0 {
		return fmt.Errorf("%s: MemTotal missing or 0 (%d fields, %d lines skipped)", s.file.Path(), len(s.sample.Fields), s.sample.SkippedLines())
	}
	if s.fams == nil {
		s.fams = families{}
	}
	for _, fld := range s.sample.Fields {
		fam := s.fams.get(e, fld.Name, func() family { return meminfoFamily(e, fld) })
		if fam.skip {
			e.errs.add("meminfo", meminfo.Duplicate, 1)
			continue
		}
		f.sample(f.family(&fam.name, &fam.help, fam.typ), float64(fld.Value))
	}
	e.store.setMeminfo(s.sample.Fields, e.now())
	return nil
}

func meminfoFamily(e *Exporter, fld meminfo.Field) family {
	if fld.Unit == meminfo.Bytes {
		return family{
			name: "meminfo_" + meminfo.MetricName(fld.Name) + "_bytes",
			help: "Field " + fld.Name + " of /proc/meminfo, in bytes.",
			typ:  &e.names.gauge,
		}
	}
	return family{
		name: "meminfo_" + meminfo.MetricName(fld.Name),
		help: "Field " + fld.Name + " of /proc/meminfo (a count).",
		typ:  &e.names.gauge,
	}
}

type cgroupSource struct {
	mu       sync.Mutex
	reader   *cgroup.Reader
	setupErr error
	v2       bool
	mem      cgroup.Memory
	stat     families
	events   families
}

func (s *cgroupSource) name() string { return Cgroup }

func (s *cgroupSource) close() error {
	if s.reader == nil {
		return nil
	}
	return s.reader.Close()
}

func (s *cgroupSource) collect(e *Exporter, f *frame) error {
	if s.setupErr != nil {
		return s.setupErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.mem
	if err := s.reader.Read(m); err != nil {
		return err
	}
	e.errs.addAll("memory.stat", &m.Stat.Skipped)
	e.errs.addAll("memory.events", &m.Events.Skipped)
	n := &e.names
	gauge := func(fam *family, v uint64, ok bool) {
		if ok {
			f.sample(f.family(&fam.name, &fam.help, fam.typ), float64(v))
		}
	}
	gauge(&n.usage, m.Usage, m.HasUsage)
	gauge(&n.limit, m.Limit, m.HasLimit)
	gauge(&n.peak, m.Peak, m.HasPeak)
	gauge(&n.workingSet, m.WorkingSet, m.HasUsage)
	gauge(&n.swap, m.Swap, m.HasSwap)
	if s.stat == nil {
		s.stat, s.events = families{}, families{}
	}
	for _, kv := range []struct {
		source string
		fams   families
		fields []meminfo.Field
		make   func(meminfo.Field) family
	}{
		{"memory.stat", s.stat, m.Stat.Fields, func(fld meminfo.Field) family { return statFamily(e, fld.Name) }},
		{"memory.events", s.events, m.Events.Fields, func(fld meminfo.Field) family {
			return family{
				name: "meminfo_cgroup_memory_events_" + fld.Name + "_total",
				help: "Count of " + fld.Name + " events in the cgroup's memory.events.",
				typ:  &e.names.counter,
			}
		}},
	} {
		for _, fld := range kv.fields {
			fam := kv.fams.get(e, fld.Name, func() family { return kv.make(fld) })
			if fam.skip {
				e.errs.add(kv.source, meminfo.Duplicate, 1)
				continue
			}
			f.sample(f.family(&fam.name, &fam.help, fam.typ), float64(fld.Value))
		}
	}
	return nil
}

func statFamily(e *Exporter, key string) family {
	name := meminfo.MetricName(key)
	if name == "sec_pagetables" {
		// "sec" reads as an abbreviated unit (promtool, Prometheus naming).
		name = "secondary_pagetables"
	}
	if cgroup.StatIsCount(key) {
		return family{
			name: "meminfo_cgroup_memory_stat_" + name + "_total",
			help: "Count " + key + " of the cgroup's memory.stat.",
			typ:  &e.names.counter,
		}
	}
	return family{
		name: "meminfo_cgroup_memory_stat_" + name + "_bytes",
		help: "Size " + key + " of the cgroup's memory.stat, in bytes.",
		typ:  &e.names.gauge,
	}
}

type pressureSource struct {
	mu       sync.Mutex
	reader   *cgroup.PressureReader
	setupErr error
}

func (s *pressureSource) name() string { return Pressure }

func (s *pressureSource) close() error {
	if s.reader == nil {
		return nil
	}
	return s.reader.Close()
}

func (s *pressureSource) collect(e *Exporter, f *frame) error {
	if s.setupErr != nil {
		return s.setupErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.reader.Read()
	if err != nil {
		return err
	}
	n := &e.names
	f.sample(f.family(&n.waiting.name, &n.waiting.help, n.waiting.typ), float64(p.Waiting)/1e6)
	if p.HasStalled {
		f.sample(f.family(&n.stalled.name, &n.stalled.help, n.stalled.typ), float64(p.Stalled)/1e6)
	}
	return nil
}

// parseErrors counts skipped lines and files by source and reason, since
// the start. Sources given to init always have series.
type parseErrors struct {
	mu      sync.Mutex
	sources []string
	counts  [][meminfo.NumReasons]uint64
}

func (p *parseErrors) init(sources []string) {
	p.sources = sources
	p.counts = make([][meminfo.NumReasons]uint64, len(sources))
}

func (p *parseErrors) index(source string) int {
	for i, s := range p.sources {
		if s == source {
			return i
		}
	}
	p.sources = append(p.sources, source)
	p.counts = append(p.counts, [meminfo.NumReasons]uint64{})
	return len(p.sources) - 1
}

func (p *parseErrors) add(source string, r meminfo.Reason, n uint64) {
	p.mu.Lock()
	p.counts[p.index(source)][r] += n
	p.mu.Unlock()
}

func (p *parseErrors) addAll(source string, counts *[meminfo.NumReasons]uint64) {
	var any uint64
	for _, c := range counts {
		any |= c
	}
	if any == 0 {
		return
	}
	p.mu.Lock()
	i := p.index(source)
	for r, c := range counts {
		p.counts[i][r] += c
	}
	p.mu.Unlock()
}

// emit adds meminfo_parse_errors_total to f.
func (p *parseErrors) emit(f *frame, n *names) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sources) == 0 {
		return
	}
	fam := f.family(&n.parseErrs, &n.parseErrsHelp, &n.counter)
	for i := range p.sources {
		for r := range meminfo.NumReasons {
			f.sample(fam, float64(p.counts[i][r]), &n.source, &p.sources[i], &n.reason, &n.reasons[r])
		}
	}
}
