package windows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	cron "github.com/robfig/cron/v3"
)

// Limits of a Spec; the CRD's markers say the same.
const (
	// MaxDuration is the longest window, allow or deny: a week.
	MaxDuration = 7 * 24 * time.Hour
	// MaxEntries bounds allow and deny each.
	MaxEntries = 16
	// MaxExclude bounds the excluded dates.
	MaxExclude = 366
	// MaxScheduleLength bounds a schedule's text.
	MaxScheduleLength = 128
	// MaxSpan is the longest stretch of open time this package sees as one
	// window: windows that overlap or touch without end (an allow entry
	// whose windows last longer than its schedule's period, or no allow
	// entry at all) are cut every MaxSpan into windows back to back.
	MaxSpan = 8 * 24 * time.Hour
	// Lookahead is how far Next and Plan look for the next window.
	Lookahead = 400 * 24 * time.Hour
)

// Spec is spec.windows of a MaintenanceCampaign or MaintenancePlan in plain
// Go: the API's type converts to it, and Parse checks and compiles it.
type Spec struct {
	// TimeZone is an IANA zone name (Europe/Berlin); empty is UTC. Every
	// schedule and every excluded date is read in it.
	TimeZone string
	// Allow are the windows in which work on a node may start. None: the
	// time is open except where deny and exclude close it.
	Allow []Entry
	// Deny are windows in which no work starts, whatever allow says.
	Deny []Entry
	// Exclude are dates, YYYY-MM-DD, closed from their midnight to the next
	// in TimeZone.
	Exclude []string
	// MaxOverrun is how long past a window's end a node begun in it may go
	// on; 0: it pauses at the end.
	MaxOverrun time.Duration
	// Margin is added to a node's forecast (p90) to get the time it needs.
	Margin time.Duration
}

// Entry is one recurring window: it opens when Schedule fires, on the wall
// clock of the Spec's zone, and stays open for Duration of elapsed time.
type Entry struct {
	// Schedule is a cron expression of 5 fields (minute hour day-of-month
	// month day-of-week) or a descriptor (@daily, @weekly, ...).
	Schedule string
	// Duration is how long each window lasts, elapsed time.
	Duration time.Duration
}

// Windows is a parsed Spec. A nil *Windows is no windows at all: always
// open, nothing to wait for.
type Windows struct {
	loc        *time.Location
	allow      []entry
	deny       []entry
	exclude    []Interval
	maxOverrun time.Duration
	margin     time.Duration
}

// Interval is [Start, End): open from Start, closed again at End.
type Interval struct {
	Start, End time.Time
}

type entry struct {
	sched *cron.SpecSchedule
	d     time.Duration
}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// neverRef is where Parse starts to look for a schedule's first firing; a
// schedule with none in the 5 years after it (robfig/cron's own limit)
// never fires (0 0 31 4 *).
var neverRef = time.Date(2001, time.January, 1, 0, 0, 0, 0, time.UTC)

// Parse checks s and compiles it. Its errors name the field in the API
// (windows.allow[1].schedule: ...), all of them joined.
func Parse(s Spec) (*Windows, error) {
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("windows.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	w := &Windows{maxOverrun: s.MaxOverrun, margin: s.Margin}
	loc, err := LoadZone(s.TimeZone)
	if err != nil {
		fail("timeZone", "%v", err)
		loc = time.UTC
	}
	w.loc = loc
	for _, list := range []struct {
		name    string
		entries []Entry
		into    *[]entry
	}{{"allow", s.Allow, &w.allow}, {"deny", s.Deny, &w.deny}} {
		if len(list.entries) > MaxEntries {
			fail(list.name, "%d windows, at most %d", len(list.entries), MaxEntries)
			continue
		}
		for i, e := range list.entries {
			field := fmt.Sprintf("%s[%d]", list.name, i)
			sched, err := ParseSchedule(e.Schedule)
			if err != nil {
				fail(field+".schedule", "%v", err)
			}
			if e.Duration <= 0 || e.Duration > MaxDuration {
				fail(field+".duration", "%s: must be more than 0 and at most %s", e.Duration, fmtDuration(MaxDuration))
			}
			if sched != nil {
				sched.Location = loc
				*list.into = append(*list.into, entry{sched: sched, d: e.Duration})
			}
		}
	}
	if len(s.Exclude) > MaxExclude {
		fail("exclude", "%d dates, at most %d", len(s.Exclude), MaxExclude)
	} else {
		for i, d := range s.Exclude {
			day, err := parseDate(d, loc)
			if err != nil {
				fail(fmt.Sprintf("exclude[%d]", i), "%v", err)
				continue
			}
			w.exclude = append(w.exclude, day)
		}
	}
	if s.MaxOverrun < 0 {
		fail("maxOverrun", "%s: must not be negative", s.MaxOverrun)
	}
	if s.Margin < 0 {
		fail("margin", "%s: must not be negative", s.Margin)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(w.exclude, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	return w, nil
}

// LoadZone loads an IANA zone; empty is UTC. Local is refused: it is the
// machine's, not the cluster's.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("%q: name an IANA zone (Europe/Berlin), not the machine's", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q: not an IANA time zone", name)
	}
	return loc, nil
}

// ParseSchedule parses a cron expression of 5 fields or a descriptor, with
// robfig/cron's standard parser. Refused: a zone in the expression (TZ=,
// CRON_TZ=: the Spec has its own), @every (a delay, not a time of day), a
// schedule that never fires (0 0 31 4 *).
func ParseSchedule(s string) (*cron.SpecSchedule, error) {
	switch {
	case strings.TrimSpace(s) == "":
		return nil, errors.New("empty: want 5 fields, minute hour day-of-month month day-of-week")
	case len(s) > MaxScheduleLength:
		return nil, fmt.Errorf("%d characters, at most %d", len(s), MaxScheduleLength)
	case strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ="):
		// robfig/cron v3.0.1 panics on "TZ=" without a space after it.
		return nil, fmt.Errorf("%q: set the zone in windows.timeZone, not in the schedule", s)
	}
	sched, err := parser.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", s, err)
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q: @every is a delay, not a time of day: use 5 fields", s)
	}
	if spec.Next(neverRef).IsZero() {
		return nil, fmt.Errorf("%q: never fires", s)
	}
	return spec, nil
}

// parseDate reads YYYY-MM-DD as the local day in loc: its midnight to the
// next (23 or 25 hours on a day the clocks change).
func parseDate(s string, loc *time.Location) (Interval, error) {
	d, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil || d.Format(time.DateOnly) != s {
		return Interval{}, fmt.Errorf("%q: want a date YYYY-MM-DD", s)
	}
	y, m, day := d.Date()
	return Interval{Start: time.Date(y, m, day, 0, 0, 0, 0, loc), End: time.Date(y, m, day+1, 0, 0, 0, 0, loc)}, nil
}

// fmtDuration prints whole hours as 168h rather than 168h0m0s.
func fmtDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// Location is the zone the windows are read in.
func (w *Windows) Location() *time.Location {
	if w == nil {
		return time.UTC
	}
	return w.loc
}

// Need is what a node whose forecast p90 is p90 needs of a window: p90
// plus the margin.
func (w *Windows) Need(p90 time.Duration) time.Duration {
	if w == nil {
		return p90
	}
	return p90 + w.margin
}
