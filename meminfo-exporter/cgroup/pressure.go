package cgroup

import (
	"bytes"
	"errors"
	"path/filepath"

	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// Pressure is the memory PSI of a cgroup: the time some (Waiting) or all
// (Stalled) of its tasks were stalled on memory, in microseconds.
type Pressure struct {
	Waiting, Stalled       uint64
	HasWaiting, HasStalled bool
}

// PressureReader reads memory.pressure. Not safe for concurrent use.
type PressureReader struct {
	f *kfile.File
}

// NewPressureReader reads memory.pressure in p.Pressure.
func NewPressureReader(p Paths) (*PressureReader, error) {
	if p.Pressure == "" {
		return nil, errors.New("no cgroup v2 directory for memory.pressure")
	}
	return &PressureReader{f: kfile.New(filepath.Join(p.Pressure, "memory.pressure"))}, nil
}

// Close closes the file.
func (r *PressureReader) Close() error { return r.f.Close() }

// Read reads memory.pressure. A kernel without PSI fails the read
// (ENOENT, or EOPNOTSUPP when PSI is compiled in but off).
func (r *PressureReader) Read() (Pressure, error) {
	data, err := r.f.Read()
	if err != nil {
		return Pressure{}, err
	}
	return parsePressure(data)
}

// parsePressure reads "some avg10=0.00 avg60=0.00 avg300=0.00 total=123"
// and the same for "full". Only total is used: the averages can be
// computed by Prometheus from it.
func parsePressure(data []byte) (Pressure, error) {
	var p Pressure
	data = bytes.TrimRight(data, "\x00")
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		kind, rest := word(line)
		if len(kind) == 0 {
			continue
		}
		var total []byte
		for len(rest) > 0 {
			var f []byte
			f, rest = word(rest)
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				total = v
			}
		}
		if total == nil {
			return Pressure{}, &ParseError{File: "memory.pressure", Reason: meminfo.BadValue}
		}
		v, reason, ok := meminfo.ParseUint(total)
		if !ok {
			return Pressure{}, &ParseError{File: "memory.pressure", Reason: reason}
		}
		switch string(kind) {
		case "some":
			p.Waiting, p.HasWaiting = v, true
		case "full":
			p.Stalled, p.HasStalled = v, true
		default:
			return Pressure{}, &ParseError{File: "memory.pressure", Reason: meminfo.BadKey}
		}
	}
	if !p.HasWaiting {
		return Pressure{}, &ParseError{File: "memory.pressure", Reason: meminfo.EmptyLine}
	}
	return p, nil
}

// word splits off the first space-separated word of b.
func word(b []byte) (w, rest []byte) {
	b = bytes.TrimLeft(b, " \t")
	i := bytes.IndexAny(b, " \t")
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i:]
}
