package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// ParseError is a file whose content could not be read as a number.
type ParseError struct {
	File   string // base name, e.g. "memory.max"
	Reason meminfo.Reason
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// Memory is one read of a cgroup's memory files. A value whose Has flag is
// false was not there: the root cgroup has no memory.current, memory.peak
// needs Linux 5.19, a limit of "max" is no limit.
type Memory struct {
	Usage      uint64
	WorkingSet uint64 // usage - inactive_file, floored at 0 (as cAdvisor)
	Limit      uint64
	Peak       uint64
	Swap       uint64
	HasUsage   bool
	HasLimit   bool
	HasPeak    bool
	HasSwap    bool
	// Stat is memory.stat: every value is as written (Unit Count); StatIsCount
	// tells event counts from sizes in bytes.
	Stat meminfo.Sample
	// Events is memory.events (v2 only): counts of low, high, max, oom, oom_kill, ...
	Events meminfo.Sample
}

// Reader reads the memory files of one cgroup directory. Files that do
// not exist when the Reader is made are never read. Not safe for
// concurrent use.
type Reader struct {
	v1                       bool
	usage, limit, peak, swap *kfile.File
	stat, events             *kfile.File
	statParser, eventsParser *meminfo.Parser
	inactiveFile             string
}

// NewReader reads the memory controller files in p.Memory. It fails when
// the directory has none of them.
func NewReader(p Paths) (*Reader, error) {
	dir := p.Memory
	open := func(name string) *kfile.File {
		path := filepath.Join(dir, name)
		if !exists(path) {
			return nil
		}
		return kfile.New(path)
	}
	r := &Reader{
		v1:           p.Mode != V2,
		statParser:   meminfo.NewParser(meminfo.Flat),
		eventsParser: meminfo.NewParser(meminfo.Flat, "low", "high", "max", "oom", "oom_kill", "oom_group_kill"),
	}
	if r.v1 {
		r.usage = open("memory.usage_in_bytes")
		r.limit = open("memory.limit_in_bytes")
		r.peak = open("memory.max_usage_in_bytes")
		r.swap = open("memory.memsw.usage_in_bytes")
		r.stat = open("memory.stat")
		r.inactiveFile = "total_inactive_file"
	} else {
		r.usage = open("memory.current")
		r.limit = open("memory.max")
		r.peak = open("memory.peak")
		r.swap = open("memory.swap.current")
		r.stat = open("memory.stat")
		r.events = open("memory.events")
		r.inactiveFile = "inactive_file"
	}
	if r.usage == nil && r.stat == nil {
		return nil, fmt.Errorf("no memory controller files in %s", dir)
	}
	return r, nil
}

// Close closes the files.
func (r *Reader) Close() error {
	var errs []error
	for _, f := range []*kfile.File{r.usage, r.limit, r.peak, r.swap, r.stat, r.events} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// Read reads every file into m. Bad lines of memory.stat and memory.events
// are skipped and counted in m.Stat.Skipped and m.Events.Skipped; a file
// that cannot be read, or a single-value file that is not a number, is an
// error (a *ParseError for the latter).
func (r *Reader) Read(m *Memory) error {
	var err error
	read := func(f *kfile.File, v *uint64, unlimited *bool) bool {
		if f == nil || err != nil {
			return false
		}
		data, rerr := f.Read()
		if rerr != nil {
			err = rerr
			return false
		}
		n, isMax, reason, ok := parseSingle(data)
		if !ok {
			err = &ParseError{File: filepath.Base(f.Path()), Reason: reason}
			return false
		}
		if unlimited != nil {
			*unlimited = isMax || r.v1 && n >= v1Unlimited
		} else if isMax {
			err = &ParseError{File: filepath.Base(f.Path()), Reason: meminfo.BadValue}
			return false
		}
		*v = n
		return true
	}
	var noLimit bool
	m.HasUsage = read(r.usage, &m.Usage, nil)
	m.HasLimit = read(r.limit, &m.Limit, &noLimit) && !noLimit
	if !m.HasLimit {
		m.Limit = 0
	}
	m.HasPeak = read(r.peak, &m.Peak, nil)
	m.HasSwap = read(r.swap, &m.Swap, nil)
	if err != nil {
		return err
	}
	if r.v1 && m.HasSwap { // memsw is memory + swap
		m.Swap = sub(m.Swap, m.Usage)
	}
	m.Stat.Fields, m.Events.Fields = m.Stat.Fields[:0], m.Events.Fields[:0]
	m.Stat.Skipped, m.Events.Skipped = [meminfo.NumReasons]uint64{}, [meminfo.NumReasons]uint64{}
	for _, kv := range []struct {
		f *kfile.File
		p *meminfo.Parser
		s *meminfo.Sample
	}{{r.stat, r.statParser, &m.Stat}, {r.events, r.eventsParser, &m.Events}} {
		if kv.f == nil {
			continue
		}
		data, err := kv.f.Read()
		if err != nil {
			return err
		}
		kv.p.Parse(data, kv.s)
	}
	m.WorkingSet = m.Usage
	if f, ok := m.Stat.Lookup(r.inactiveFile); ok {
		m.WorkingSet = sub(m.Usage, f.Value)
	}
	return nil
}

// v1Unlimited: a v1 limit this large is "no limit" (the kernel prints
// PAGE_COUNTER_MAX pages, 0x7FFFFFFFFFFFF000 with 4 KiB pages).
const v1Unlimited = 1 << 62

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// parseSingle reads a one-number file: "123\n", or "max\n" (isMax).
func parseSingle(data []byte) (v uint64, isMax bool, r meminfo.Reason, ok bool) {
	data = bytes.TrimRight(data, "\x00")
	data = bytes.TrimSuffix(data, []byte("\n"))
	if string(data) == "max" {
		return math.MaxUint64, true, 0, true
	}
	v, r, ok = meminfo.ParseUint(data)
	return v, false, r, ok
}

// StatIsCount says whether a memory.stat key counts events (pgfault,
// workingset_refault_file, thp_fault_alloc, ...) rather than bytes.
func StatIsCount(key string) bool {
	key = strings.TrimPrefix(key, "total_") // v1's hierarchical copies
	for _, p := range []string{"pg", "thp_", "workingset_", "numa_", "zswpin", "zswpout", "zswpwb"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
