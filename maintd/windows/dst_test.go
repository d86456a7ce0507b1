package windows

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// windowsFrom lists the next n windows after from, in UTC.
func windowsFrom(t *testing.T, w *Windows, from time.Time, n int) []Interval {
	t.Helper()
	var got []Interval
	for len(got) < n {
		next, ok := w.Next(from)
		if !ok {
			t.Fatalf("no window after %v", from)
		}
		got = append(got, iv(next.Start, next.End))
		from = next.Start
	}
	return got
}

// Spring forward: a start in the hour the clocks skip does not happen that
// day (robfig/cron's behaviour); a window across the gap lasts its
// duration of elapsed time, so it ends an hour later on the wall clock.
func TestDSTGap(t *testing.T) {
	for _, tc := range []struct {
		zone string
		day  time.Time // the day the clocks go forward, 02:00 -> 03:00
	}{
		{"Europe/Berlin", time.Date(2025, time.March, 30, 0, 0, 0, 0, time.UTC)},
		{"America/New_York", time.Date(2025, time.March, 9, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			loc := zone(t, tc.zone)
			y, m, d := tc.day.Date()
			w := mustParse(t, Spec{TimeZone: tc.zone, Allow: []Entry{{"30 2 * * *", 2 * time.Hour}}})
			got := windowsFrom(t, w, at(loc, y, m, d-1, 12, 0), 2)
			want := []Interval{
				iv(at(loc, y, m, d+1, 2, 30), at(loc, y, m, d+1, 4, 30)),
				iv(at(loc, y, m, d+2, 2, 30), at(loc, y, m, d+2, 4, 30)),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("02:30 on the day of the gap (-want +got):\n%s", diff)
			}
			if open, _ := w.Open(at(loc, y, m, d, 3, 30)); open {
				t.Error("open at 03:30 on the day of the gap")
			}
			across := mustParse(t, Spec{TimeZone: tc.zone, Allow: []Entry{{"0 1 * * *", 3 * time.Hour}}})
			open, end := across.Open(at(loc, y, m, d, 1, 0))
			if want := at(loc, y, m, d, 5, 0); !open || !end.Equal(want) {
				t.Errorf("01:00 for 3h: Open = %v %v, want until %v (05:00 on the wall clock)", open, end, want)
			}
			if got := end.Sub(at(loc, y, m, d, 1, 0)); got != 3*time.Hour {
				t.Errorf("window across the gap lasts %s, want 3h elapsed", got)
			}
		})
	}
}

// Fall back: a start in the hour the clocks repeat happens once, the first
// time (summer time); its duration is elapsed time, so a 3h window from
// 01:30 ends at 03:30 on the wall clock (wall +2h).
func TestDSTRepeat(t *testing.T) {
	for _, tc := range []struct {
		zone, sched string
		first       time.Time // the start's first occurrence, UTC
		dur         time.Duration
		end, second time.Time // the end; the start's second occurrence, closed
		next        time.Time // the next day's start
	}{
		{"America/New_York", "30 1 * * *", utc("2025-11-02T05:30:00Z"), 3 * time.Hour,
			utc("2025-11-02T08:30:00Z"), utc("2025-11-02T06:30:00Z"), utc("2025-11-03T06:30:00Z")},
		// Berlin goes back at 03:00 CEST (01:00Z) to 02:00 CET.
		{"Europe/Berlin", "30 2 * * *", utc("2025-10-26T00:30:00Z"), time.Hour,
			utc("2025-10-26T01:30:00Z"), utc("2025-10-26T01:30:00Z"), utc("2025-10-27T01:30:00Z")},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			loc := zone(t, tc.zone)
			w := mustParse(t, Spec{TimeZone: tc.zone, Allow: []Entry{{tc.sched, tc.dur}}})
			got := windowsFrom(t, w, tc.first.Add(-12*time.Hour), 2)
			want := []Interval{iv(tc.first, tc.end), iv(tc.next, tc.next.Add(tc.dur))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("windows around the repeat (-want +got):\n%s", diff)
			}
			if f, s := tc.first.In(loc).Format("15:04"), tc.second.In(loc).Format("15:04"); f != s {
				t.Fatalf("test: %s and %s are not one wall-clock time", f, s)
			}
			// 15m after the second occurrence: still in the first window if
			// it lasts (and not made longer by a second start), else closed.
			probe := tc.second.Add(15 * time.Minute)
			if open, end := w.Open(probe); open != tc.end.After(probe) || open && !end.Equal(tc.end) {
				t.Errorf("15m after the second %s: Open = %v %v, want %v until %v", tc.second.In(loc), open, end, tc.end.After(probe), tc.end)
			}
			if open, end := w.Open(tc.first.Add(15 * time.Minute)); !open || !end.Equal(tc.end) {
				t.Errorf("15m after the first start: Open = %v %v, want until %v", open, end, tc.end)
			}
		})
	}
	// Hourly 1h windows through the repeat: 01:00 happens once, so the
	// repeated hour (01:00-02:00 EST) is closed.
	w := mustParse(t, Spec{TimeZone: "America/New_York", Allow: []Entry{{"0 * * * *", time.Hour}}})
	if open, end := w.Open(utc("2025-11-02T05:30:00Z")); !open || !end.Equal(utc("2025-11-02T06:00:00Z")) {
		t.Errorf("01:30 EDT: Open = %v %v, want until 01:00 EST", open, end)
	}
	if open, _ := w.Open(utc("2025-11-02T06:30:00Z")); open {
		t.Error("01:30 EST, the repeated hour: open")
	}
	if next, _ := w.Next(utc("2025-11-02T06:30:00Z")); !next.Start.Equal(utc("2025-11-02T07:00:00Z")) {
		t.Errorf("Next(01:30 EST) = %v, want 02:00 EST", next)
	}
}

// An excluded date on the day the clocks change is that day's 23 or 25
// hours.
func TestExcludeDSTDay(t *testing.T) {
	loc := zone(t, "America/New_York")
	w := mustParse(t, Spec{TimeZone: "America/New_York", Exclude: []string{"2025-11-02"}})
	open, end := w.Open(at(loc, 2025, time.November, 1, 23, 0))
	if !open || !end.Equal(utc("2025-11-02T04:00:00Z")) {
		t.Fatalf("Open(the eve) = %v %v, want until midnight EDT", open, end)
	}
	next, _ := w.Next(end)
	if !next.Start.Equal(utc("2025-11-03T05:00:00Z")) || next.Start.Sub(end) != 25*time.Hour {
		t.Errorf("next = %v, want midnight EST 25h later", next)
	}
}
