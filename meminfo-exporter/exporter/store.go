package exporter

import (
	"sync"
	"time"

	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// store keeps the last successful meminfo read and the outcome of the
// last read of every source. Safe for concurrent use.
type store struct {
	mu       sync.RWMutex
	fields   []meminfo.Field
	readAt   time.Time
	has      bool
	statuses []status
}

type status struct {
	collector string
	read      bool // at least one read happened
	err       error
	at        time.Time
}

func (s *store) init(collectors []string) {
	s.statuses = make([]status, len(collectors))
	for i, c := range collectors {
		s.statuses[i].collector = c
	}
}

func (s *store) setStatus(i int, err error, now time.Time) {
	s.mu.Lock()
	s.statuses[i].read, s.statuses[i].err, s.statuses[i].at = true, err, now
	s.mu.Unlock()
}

// setMeminfo keeps a copy of fields (their names are interned strings).
func (s *store) setMeminfo(fields []meminfo.Field, now time.Time) {
	s.mu.Lock()
	s.fields = append(s.fields[:0], fields...)
	s.readAt, s.has = now, true
	s.mu.Unlock()
}

// meminfo returns a copy of the last successful read.
func (s *store) meminfo() (fields []meminfo.Field, readAt time.Time, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]meminfo.Field(nil), s.fields...), s.readAt, s.has
}

// failing returns the sources whose last read failed, or was never made.
func (s *store) failing() []status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []status
	for _, st := range s.statuses {
		if !st.read || st.err != nil {
			out = append(out, st)
		}
	}
	return out
}
