package exporter

import (
	"bytes"
	"os"
	"sync"
	"syscall"

	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// process makes the process_* metrics of client_golang's process
// collector, with the same names and meanings, at a fraction of the cost:
// that collector reads and parses all of /proc/stat (for the boot time),
// /proc/self/limits and /proc/self/net/netstat and lists /proc/self/fd
// into strings on every scrape, which makes it most of a scrape's CPU time.
// Here the start time is computed once, the limits come from getrlimit, and
// the files are pread on kept descriptors and parsed without allocating.
// It always reads the real /proc of this process, not --procfs.
type process struct {
	mu       sync.Mutex
	stat     *kfile.File // /proc/self/stat
	netstat  *kfile.File // /proc/self/net/netstat
	fdDir    int         // /proc/self/fd, open; -1 when it could not be
	dirents  []byte
	start    float64 // process start time, seconds since the epoch
	hasStart bool
	pageSize float64

	cpu, openFDs, maxFDs, vsize, maxVsize, rss, startTime, rx, tx family
}

// userHZ is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture; client_golang's procfs assumes the same).
const userHZ = 100

func newProcess(n *names) *process {
	p := &process{
		stat:     kfile.New("/proc/self/stat"),
		netstat:  kfile.New("/proc/self/net/netstat"),
		fdDir:    -1,
		dirents:  make([]byte, 8192),
		pageSize: float64(os.Getpagesize()),
	}
	if fd, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err == nil {
		p.fdDir = fd
	}
	g, c := &n.gauge, &n.counter
	p.cpu = family{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", c, false}
	p.openFDs = family{"process_open_fds", "Number of open file descriptors.", g, false}
	p.maxFDs = family{"process_max_fds", "Maximum number of open file descriptors.", g, false}
	p.vsize = family{"process_virtual_memory_bytes", "Virtual memory size in bytes.", g, false}
	p.maxVsize = family{"process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", g, false}
	p.rss = family{"process_resident_memory_bytes", "Resident memory size in bytes.", g, false}
	p.startTime = family{"process_start_time_seconds", "Start time of the process since unix epoch in seconds.", g, false}
	p.rx = family{"process_network_receive_bytes_total", "Number of bytes received by the process over the network.", c, false}
	p.tx = family{"process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", c, false}

	// The start time does not change: boot time + start ticks, once.
	if st, err := os.ReadFile("/proc/stat"); err == nil {
		if btime, ok := bootTime(st); ok {
			if data, err := p.stat.Read(); err == nil {
				if f, ok := statFields(data); ok {
					p.start, p.hasStart = float64(btime)+float64(f.startTicks)/userHZ, true
				}
			}
		}
	}
	return p
}

func (p *process) close() error {
	if p.fdDir >= 0 {
		syscall.Close(p.fdDir)
		p.fdDir = -1
	}
	p.netstat.Close()
	return p.stat.Close()
}

// collect adds the process metrics to f. What cannot be read is left out,
// as client_golang does without ReportErrors.
func (p *process) collect(f *frame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	add := func(fam *family, v float64) { f.sample(f.family(&fam.name, &fam.help, fam.typ), v) }
	if data, err := p.stat.Read(); err == nil {
		if s, ok := statFields(data); ok {
			add(&p.cpu, float64(s.utime+s.stime)/userHZ)
			add(&p.vsize, float64(s.vsize))
			add(&p.rss, float64(s.rssPages)*p.pageSize)
		}
	}
	if p.hasStart {
		add(&p.startTime, p.start)
	}
	if n, ok := p.countFDs(); ok {
		add(&p.openFDs, float64(n))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		add(&p.maxFDs, float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		add(&p.maxVsize, float64(lim.Cur))
	}
	if data, err := p.netstat.Read(); err == nil {
		if in, out, ok := ipExtOctets(data); ok {
			add(&p.rx, float64(in))
			add(&p.tx, float64(out))
		}
	}
}

// countFDs counts the entries of /proc/self/fd.
func (p *process) countFDs() (int, bool) {
	if p.fdDir < 0 {
		return 0, false
	}
	if _, err := syscall.Seek(p.fdDir, 0, 0); err != nil {
		return 0, false
	}
	count := 0
	for {
		n, err := syscall.Getdents(p.fdDir, p.dirents)
		if err != nil {
			return 0, false
		}
		if n == 0 {
			return count, true
		}
		for b := p.dirents[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return 0, false
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) != "." && string(name) != ".." {
				count++
			}
			b = b[reclen:]
		}
	}
}

type procStat struct {
	utime, stime, startTicks, vsize, rssPages uint64
}

// statFields reads /proc/<pid>/stat: the fields after the command name
// (which may hold spaces and parentheses, so the last ')' ends it).
func statFields(data []byte) (procStat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	var s procStat
	rest := data[i+1:]
	for field := 2; len(rest) > 0 && field <= 24; {
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		tok := bytes.TrimRight(rest[:j], "\n")
		rest = rest[j:]
		field++
		var dst *uint64
		switch field { // proc(5) numbering: 14 utime, 15 stime, 22 starttime, 23 vsize, 24 rss
		case 14:
			dst = &s.utime
		case 15:
			dst = &s.stime
		case 22:
			dst = &s.startTicks
		case 23:
			dst = &s.vsize
		case 24:
			dst = &s.rssPages
		default:
			continue
		}
		v, _, ok := meminfo.ParseUint(tok)
		if !ok {
			return procStat{}, false
		}
		*dst = v
		if field == 24 {
			return s, true
		}
	}
	return procStat{}, false
}

// bootTime reads "btime N" from /proc/stat.
func bootTime(data []byte) (uint64, bool) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, _, ok := meminfo.ParseUint(bytes.TrimSpace(v))
			return n, ok
		}
	}
	return 0, false
}

// ipExtOctets reads InOctets and OutOctets of the "IpExt:" header and
// value lines of /proc/<pid>/net/netstat.
func ipExtOctets(data []byte) (in, out uint64, ok bool) {
	var header []byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		rest, isIP := bytes.CutPrefix(line, []byte("IpExt:"))
		if !isIP {
			continue
		}
		if header == nil {
			header = rest
			continue
		}
		var gotIn, gotOut bool
		for len(header) > 0 && len(rest) > 0 {
			var name, value []byte
			name, header = nextWord(header)
			value, rest = nextWord(rest)
			switch string(name) {
			case "InOctets":
				in, _, gotIn = meminfo.ParseUint(value)
			case "OutOctets":
				out, _, gotOut = meminfo.ParseUint(value)
			}
		}
		if !gotIn || !gotOut {
			return 0, 0, false
		}
		return in, out, true
	}
	return 0, 0, false
}

func nextWord(b []byte) (word, rest []byte) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i:]
}
