// Package meminfo parses /proc/meminfo and the flat "key value" files of
// cgroup v2 (memory.stat, memory.events) without allocating.
//
// A Parser keeps the names it has seen, so that after the first parse of a
// file every later parse of the same kernel's output allocates nothing. The
// parser never fails as a whole: a line it cannot read is skipped and counted
// by Reason, and every other line is kept. Numbers are strict base 10
// (no sign, no prefix, no separator) and guarded against overflow both on the
// digits and on the kB -> bytes multiplication.
package meminfo

import (
	"bytes"
	"math"
)

// Format is the shape of the lines of a file.
type Format uint8

const (
	// Colon lines are "Key:   value [kB]", as in /proc/meminfo.
	Colon Format = iota
	// Flat lines are "key value", as in cgroup v2 memory.stat and memory.events.
	Flat
)

// Unit is what a Field's Value counts.
type Unit uint8

const (
	// Count is a unitless number (HugePages_Total, pgfault, ...).
	Count Unit = iota
	// Bytes is a size: the file said kB, and Value has been multiplied by 1024.
	Bytes
)

func (u Unit) String() string {
	if u == Bytes {
		return "bytes"
	}
	return "count"
}

// Reason is why a line was skipped.
type Reason uint8

const (
	EmptyLine Reason = iota // nothing but blanks
	NoColon                 // no "key:" (also old header lines)
	BadKey                  // empty key, or a character outside [A-Za-z0-9_()]
	BadValue                // missing value, or not strict base 10 (sign, 0x, _, letters)
	Overflow                // more than 2^64-1, on the digits or once multiplied by 1024
	BadUnit                 // a unit other than kB, or more than "value unit"
	Duplicate               // a name already seen in this file: the first one wins
	NumReasons
)

var reasonNames = [NumReasons]string{"empty_line", "no_colon", "bad_key", "bad_value", "overflow", "bad_unit", "duplicate"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Field is one line that was read.
type Field struct {
	Name  string // the file's spelling, e.g. "Active(anon)"
	Value uint64 // bytes when Unit is Bytes, else the number as written
	Unit  Unit
}

// Sample is the result of one parse. Fields keeps the file's order.
type Sample struct {
	Fields  []Field
	Skipped [NumReasons]uint64
}

// Lookup returns the field called name.
func (s *Sample) Lookup(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// SkippedLines is the number of lines skipped, whatever the reason.
func (s *Sample) SkippedLines() uint64 {
	var n uint64
	for _, c := range s.Skipped {
		n += c
	}
	return n
}

// Parser parses one kind of file. It is not safe for concurrent use.
type Parser struct {
	format Format
	ids    map[string]int // name -> id
	names  []string       // id -> name
	seen   []uint32       // id -> generation in which it was last seen
	gen    uint32
	hint   []int // id of the field at each position in the previous parse
}

// NewParser is a parser for lines of the given format. known names (and,
// for Colon, the fields of current kernels) are interned up front, so that
// the first parse of a file holding only those does not allocate either.
func NewParser(format Format, known ...string) *Parser {
	p := &Parser{format: format, ids: make(map[string]int, len(knownFields)+len(known))}
	if format == Colon {
		for _, k := range knownFields {
			p.intern([]byte(k))
		}
	}
	for _, k := range known {
		p.intern([]byte(k))
	}
	return p
}

func (p *Parser) intern(key []byte) int {
	if id, ok := p.ids[string(key)]; ok {
		return id
	}
	id := len(p.names)
	name := string(key)
	p.ids[name] = id
	p.names = append(p.names, name)
	p.seen = append(p.seen, 0)
	return id
}

// Parse reads data into s, replacing its content. Trailing NUL bytes (as
// LXCFS leaves them) and a missing final newline are accepted.
func (p *Parser) Parse(data []byte, s *Sample) {
	s.Fields = s.Fields[:0]
	s.Skipped = [NumReasons]uint64{}
	p.gen++
	if p.gen == 0 { // wrapped: forget every generation
		clear(p.seen)
		p.gen = 1
	}
	for len(data) > 0 && data[len(data)-1] == 0 {
		data = data[:len(data)-1]
	}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := p.line(line, s); !ok {
			s.Skipped[r]++
		}
	}
}

func (p *Parser) line(line []byte, s *Sample) (Reason, bool) {
	key, v, u, ok := p.fast(line)
	if !ok {
		var r Reason
		if key, v, u, r, ok = p.slow(line); !ok {
			return r, false
		}
	}
	id := p.id(key, len(s.Fields))
	if p.seen[id] == p.gen {
		return Duplicate, false
	}
	p.seen[id] = p.gen
	if n := len(s.Fields); n < len(p.hint) {
		p.hint[n] = id
	} else {
		p.hint = append(p.hint, id)
	}
	s.Fields = append(s.Fields, Field{Name: p.names[id], Value: v, Unit: u})
	return 0, true
}

// fast reads a well-formed line in one pass. It gives up (ok false) on
// anything unusual, which slow then classifies.
func (p *Parser) fast(line []byte) (key []byte, v uint64, u Unit, ok bool) {
	i, n := 0, len(line)
	for i < n && keyChar(line[i]) {
		i++
	}
	if i == 0 {
		return nil, 0, 0, false
	}
	key = line[:i]
	if p.format == Colon {
		if i == n || line[i] != ':' {
			return nil, 0, 0, false
		}
		i++
	}
	for i < n && blank(line[i]) {
		i++
	}
	d := i
	for i < n && i-d < 19 && '0' <= line[i] && line[i] <= '9' { // 19 digits cannot overflow
		v = v*10 + uint64(line[i]-'0')
		i++
	}
	if i == d || i < n && '0' <= line[i] && line[i] <= '9' {
		return nil, 0, 0, false
	}
	for i < n && blank(line[i]) {
		i++
	}
	if i == n {
		return key, v, Count, true
	}
	if p.format != Colon || n-i < 2 || line[i] != 'k' || line[i+1] != 'B' || v > math.MaxUint64/1024 {
		return nil, 0, 0, false
	}
	for i += 2; i < n; i++ {
		if !blank(line[i]) {
			return nil, 0, 0, false
		}
	}
	return key, v * 1024, Bytes, true
}

// slow reads any line, and says why it cannot when it cannot.
func (p *Parser) slow(line []byte) (key []byte, v uint64, u Unit, r Reason, ok bool) {
	line = trim(line)
	if len(line) == 0 {
		return nil, 0, 0, EmptyLine, false
	}
	var rest []byte
	if p.format == Colon {
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			return nil, 0, 0, NoColon, false
		}
		key, rest = trim(line[:i]), line[i+1:]
	} else {
		i := 0
		for i < len(line) && !blank(line[i]) {
			i++
		}
		key, rest = line[:i], line[i:]
	}
	if !validKey(key) {
		return nil, 0, 0, BadKey, false
	}
	value, rest := token(rest)
	unit, rest := token(rest)
	if len(trim(rest)) > 0 {
		return nil, 0, 0, BadUnit, false
	}
	if v, r, ok = ParseUint(value); !ok {
		return nil, 0, 0, r, false
	}
	switch string(unit) {
	case "":
		return key, v, Count, 0, true
	case "kB":
		if p.format != Colon {
			return nil, 0, 0, BadUnit, false
		}
		if v > math.MaxUint64/1024 {
			return nil, 0, 0, Overflow, false
		}
		return key, v * 1024, Bytes, 0, true
	}
	return nil, 0, 0, BadUnit, false
}

// id finds key's id, first at the position it had in the previous parse
// (kernels print the same fields in the same order), then in the map.
func (p *Parser) id(key []byte, pos int) int {
	if pos < len(p.hint) {
		if id := p.hint[pos]; p.names[id] == string(key) {
			return id
		}
	}
	return p.intern(key)
}

// ParseUint reads a strict base-10 unsigned number: one or more ASCII
// digits and nothing else. It reports BadValue or Overflow when it cannot.
func ParseUint(b []byte) (uint64, Reason, bool) {
	if len(b) == 0 {
		return 0, BadValue, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, BadValue, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, Overflow, false
		}
		v = v*10 + d
	}
	return v, 0, true
}

func validKey(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	for _, c := range key {
		if !keyChar(c) {
			return false
		}
	}
	return true
}

// Bit masks of the bytes allowed in a key: [A-Za-z0-9_()].
const (
	keyLo = 1<<'(' | 1<<')' | (1<<10-1)<<'0'                        // bytes 0-63
	keyHi = (1<<26-1)<<('A'-64) | 1<<('_'-64) | (1<<26-1)<<('a'-64) // bytes 64-127
)

func keyChar(c byte) bool {
	if c < 64 {
		return keyLo>>c&1 != 0
	}
	return c < 128 && keyHi>>(c-64)&1 != 0
}

func blank(c byte) bool { return c == ' ' || c == '\t' }

func trim(b []byte) []byte {
	for len(b) > 0 && blank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && blank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// token splits off the first blank-separated word of b.
func token(b []byte) (word, rest []byte) {
	for len(b) > 0 && blank(b[0]) {
		b = b[1:]
	}
	i := 0
	for i < len(b) && !blank(b[i]) {
		i++
	}
	return b[:i], b[i:]
}

// MetricName is node_exporter's spelling of a field in a metric name:
// "Active(anon)" -> "Active_anon".
func MetricName(field string) string {
	b := make([]byte, 0, len(field))
	for i := 0; i < len(field); i++ {
		switch c := field[i]; c {
		case '(':
			b = append(b, '_')
		case ')':
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// knownFields are the fields of /proc/meminfo printed by current kernels,
// in their order: a Colon parser is seeded with them.
var knownFields = [...]string{
	"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached",
	"Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)",
	"Unevictable", "Mlocked", "HighTotal", "HighFree", "LowTotal", "LowFree", "MmapCopy",
	"SwapTotal", "SwapFree", "Zswap", "Zswapped", "Dirty", "Writeback", "AnonPages", "Mapped",
	"Shmem", "KReclaimable", "Slab", "SReclaimable", "SUnreclaim", "KernelStack", "ShadowCallStack",
	"PageTables", "SecPageTables", "NFS_Unstable", "Bounce", "WritebackTmp", "CommitLimit",
	"Committed_AS", "VmallocTotal", "VmallocUsed", "VmallocChunk", "Percpu", "HardwareCorrupted",
	"AnonHugePages", "ShmemHugePages", "ShmemPmdMapped", "FileHugePages", "FilePmdMapped",
	"CmaTotal", "CmaFree", "Unaccepted", "Balloon", "HugePages_Total", "HugePages_Free",
	"HugePages_Rsvd", "HugePages_Surp", "Hugepagesize", "Hugetlb", "DirectMap4k", "DirectMap2M",
	"DirectMap4M", "DirectMap1G",
}
