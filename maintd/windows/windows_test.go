package windows

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the tests do not depend on the machine's zoneinfo

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, s Spec) *Windows {
	t.Helper()
	w, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", s, err)
	}
	return w
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// at is a wall-clock time in loc; for a time that repeats, use utc.
func at(loc *time.Location, y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, loc)
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// iv is [start, end) in UTC, for comparing and printing.
func iv(start, end time.Time) Interval { return Interval{start.UTC(), end.UTC()} }

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want []string
	}{
		{"bad cron", Spec{Allow: []Entry{{"0 2 * * *", time.Hour}, {"0 25 * * *", time.Hour}}},
			[]string{`windows.allow[1].schedule: "0 25 * * *": end of range (25) above maximum (23): 25`}},
		{"six fields", Spec{Deny: []Entry{{"0 0 2 * * *", time.Hour}}},
			[]string{`windows.deny[0].schedule: "0 0 2 * * *": expected exactly 5 fields, found 6`}},
		{"empty schedule", Spec{Allow: []Entry{{" ", time.Hour}}}, []string{"windows.allow[0].schedule: empty: want 5 fields"}},
		{"zone in the schedule", Spec{Allow: []Entry{{"TZ=", time.Hour}, {"CRON_TZ=Europe/Berlin 0 2 * * *", time.Hour}}},
			[]string{`windows.allow[0].schedule: "TZ=": set the zone in windows.timeZone`, `windows.allow[1].schedule: "CRON_TZ=Europe/Berlin 0 2 * * *": set the zone`}},
		{"every", Spec{Allow: []Entry{{"@every 1h", time.Hour}}}, []string{`windows.allow[0].schedule: "@every 1h": @every is a delay`}},
		{"never fires", Spec{Allow: []Entry{{"0 0 31 4 *", time.Hour}}}, []string{`windows.allow[0].schedule: "0 0 31 4 *": never fires`}},
		{"too long", Spec{Allow: []Entry{{strings.Repeat("1,", 70) + "1 * * * *", time.Hour}}}, []string{"windows.allow[0].schedule: 149 characters, at most 128"}},
		{"zero duration", Spec{Allow: []Entry{{"@daily", 0}}}, []string{"windows.allow[0].duration: 0s: must be more than 0 and at most 168h"}},
		{"long duration", Spec{Deny: []Entry{{"@weekly", 169 * time.Hour}}}, []string{"windows.deny[0].duration: 169h0m0s: must be more than 0 and at most 168h"}},
		{"unknown zone", Spec{TimeZone: "Europe/Atlantis"}, []string{`windows.timeZone: "Europe/Atlantis": not an IANA time zone`}},
		{"local zone", Spec{TimeZone: "Local"}, []string{`windows.timeZone: "Local": name an IANA zone`}},
		{"bad date", Spec{Exclude: []string{"2025-12-25", "2025-2-30", "2025-02-30", "25.12.2025"}},
			[]string{`windows.exclude[1]: "2025-2-30": want a date YYYY-MM-DD`, `windows.exclude[2]: "2025-02-30"`, `windows.exclude[3]: "25.12.2025"`}},
		{"negative", Spec{MaxOverrun: -time.Second, Margin: -time.Minute},
			[]string{"windows.maxOverrun: -1s: must not be negative", "windows.margin: -1m0s: must not be negative"}},
		{"too many", Spec{Allow: make([]Entry, 17)}, []string{"windows.allow: 17 windows, at most 16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Parse(tc.spec)
			if err == nil {
				t.Fatalf("Parse = %v, nil; want an error", w)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n%v\nlacks %q", err, want)
				}
			}
			if n := len(strings.Split(err.Error(), "\n")); n != len(tc.want) {
				t.Errorf("%d errors, want %d:\n%v", n, len(tc.want), err)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	w := mustParse(t, Spec{TimeZone: "Asia/Kolkata", Allow: []Entry{{"0 9 * * mon-fri", 8 * time.Hour}, {"@weekly", MaxDuration}},
		Deny: []Entry{{"0 12 * * *", time.Hour}}, Exclude: []string{"2025-08-15"}, MaxOverrun: time.Minute, Margin: time.Minute})
	if got := w.Location().String(); got != "Asia/Kolkata" {
		t.Errorf("Location = %s", got)
	}
	if got := mustParse(t, Spec{}).Location(); got != time.UTC {
		t.Errorf("empty zone: Location = %s, want UTC", got)
	}
}

// A zone that is not UTC: a 09:00-17:00 weekday window in Kolkata
// (UTC+05:30) with a lunch hour denied.
func TestKolkata(t *testing.T) {
	loc := zone(t, "Asia/Kolkata")
	w := mustParse(t, Spec{TimeZone: "Asia/Kolkata", Allow: []Entry{{"0 9 * * 1-5", 8 * time.Hour}}, Deny: []Entry{{"0 12 * * *", time.Hour}}})
	fri := at(loc, 2025, time.June, 6, 10, 0)
	if open, end := w.Open(fri); !open || !end.Equal(at(loc, 2025, time.June, 6, 12, 0)) {
		t.Errorf("Open(Fri 10:00) = %v %v, want until 12:00 IST", open, end)
	}
	if open, _ := w.Open(utc("2025-06-06T03:00:00Z")); open {
		t.Error("Open(08:30 IST) = true")
	}
	next, ok := w.Next(fri)
	if want := iv(at(loc, 2025, time.June, 6, 13, 0), at(loc, 2025, time.June, 6, 17, 0)); !ok || iv(next.Start, next.End) != want {
		t.Errorf("Next(Fri 10:00) = %v %v, want %v", next, ok, want)
	}
	next, _ = w.Next(at(loc, 2025, time.June, 6, 17, 0))
	if want := iv(at(loc, 2025, time.June, 9, 9, 0), at(loc, 2025, time.June, 9, 12, 0)); iv(next.Start, next.End) != want {
		t.Errorf("Next(Fri 17:00) = %v, want Monday's %v", next, want)
	}
}

// A window from 22:00 to 04:00 spans midnight.
func TestMidnight(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	w := mustParse(t, Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 22 * * *", 6 * time.Hour}}})
	end := at(loc, 2025, time.June, 11, 4, 0)
	for _, tm := range []time.Time{at(loc, 2025, time.June, 10, 22, 0), at(loc, 2025, time.June, 10, 23, 59), at(loc, 2025, time.June, 11, 0, 0), at(loc, 2025, time.June, 11, 3, 59)} {
		if open, e := w.Open(tm); !open || !e.Equal(end) {
			t.Errorf("Open(%v) = %v %v, want until %v", tm, open, e, end)
		}
	}
	for _, tm := range []time.Time{at(loc, 2025, time.June, 10, 21, 59), end, at(loc, 2025, time.June, 11, 12, 0)} {
		if open, _ := w.Open(tm); open {
			t.Errorf("Open(%v) = true", tm)
		}
	}
}

// A deny window inside an allow window cuts it in two.
func TestDenyOverlapsAllow(t *testing.T) {
	loc := zone(t, "America/New_York")
	w := mustParse(t, Spec{TimeZone: "America/New_York", Allow: []Entry{{"0 22 * * *", 6 * time.Hour}}, Deny: []Entry{{"0 1 * * *", time.Hour}, {"30 3 * * *", 2 * time.Hour}}})
	if open, end := w.Open(at(loc, 2025, time.June, 10, 23, 0)); !open || !end.Equal(at(loc, 2025, time.June, 11, 1, 0)) {
		t.Errorf("Open(23:00) = %v %v, want until 01:00", open, end)
	}
	if open, _ := w.Open(at(loc, 2025, time.June, 11, 1, 30)); open {
		t.Error("Open(01:30) = true in the deny window")
	}
	next, _ := w.Next(at(loc, 2025, time.June, 11, 1, 30))
	if want := iv(at(loc, 2025, time.June, 11, 2, 0), at(loc, 2025, time.June, 11, 3, 30)); iv(next.Start, next.End) != want {
		t.Errorf("Next(01:30) = %v, want %v (the deny window at 03:30 ends it early)", next, want)
	}
}

// An excluded date closes its whole local day, whatever the windows say.
func TestExclude(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	w := mustParse(t, Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 22 * * *", 6 * time.Hour}}, Exclude: []string{"2025-12-25"}})
	var got []Interval
	for tm := at(loc, 2025, time.December, 24, 12, 0); len(got) < 3; {
		next, ok := w.Next(tm)
		if !ok {
			t.Fatal("no next window")
		}
		got = append(got, iv(next.Start, next.End))
		tm = next.Start
	}
	want := []Interval{
		iv(at(loc, 2025, time.December, 24, 22, 0), at(loc, 2025, time.December, 25, 0, 0)),
		iv(at(loc, 2025, time.December, 26, 0, 0), at(loc, 2025, time.December, 26, 4, 0)),
		iv(at(loc, 2025, time.December, 26, 22, 0), at(loc, 2025, time.December, 27, 4, 0)),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("windows around the excluded 25th (-want +got):\n%s", diff)
	}
}

func TestFits(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	w := mustParse(t, Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 22 * * *", 6 * time.Hour}}, Margin: 15 * time.Minute})
	for _, tc := range []struct {
		at   time.Time
		p90  time.Duration
		want bool
	}{
		{at(loc, 2025, time.June, 11, 3, 59), time.Second, false},     // the last minute: the margin alone does not fit
		{at(loc, 2025, time.June, 11, 3, 0), 30 * time.Minute, true},  // room
		{at(loc, 2025, time.June, 11, 3, 0), 45 * time.Minute, true},  // 45m + 15m ends at 04:00 exactly
		{at(loc, 2025, time.June, 11, 3, 0), 46 * time.Minute, false}, // a minute over
		{at(loc, 2025, time.June, 11, 12, 0), time.Second, false},     // closed
	} {
		if got := w.Fits(tc.at, tc.p90); got != tc.want {
			t.Errorf("Fits(%v, %s) = %v, want %v", tc.at, tc.p90, got, tc.want)
		}
	}
	var none *Windows
	if !none.Fits(time.Now(), time.Hour) {
		t.Error("no windows: Fits = false")
	}
}

func TestContinue(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	spec := Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 22 * * *", 2 * time.Hour}}}
	end := at(loc, 2025, time.June, 11, 0, 0)
	began := at(loc, 2025, time.June, 10, 23, 30)
	paused := mustParse(t, spec)
	if ok, until := paused.Continue(began.Add(29*time.Minute), began); !ok || !until.Equal(end) {
		t.Errorf("in the window: Continue = %v %v, want until %v", ok, until, end)
	}
	if ok, _ := paused.Continue(end, began); ok {
		t.Error("maxOverrun 0: Continue at the window's end = true")
	}
	if ok, _ := paused.Continue(end.Add(22*time.Hour), began); !ok {
		t.Error("maxOverrun 0: Continue in the next window = false")
	}
	spec.MaxOverrun = 10 * time.Minute
	over := mustParse(t, spec)
	if ok, until := over.Continue(end.Add(5*time.Minute), began); !ok || !until.Equal(end.Add(10*time.Minute)) {
		t.Errorf("5m past the end: Continue = %v %v, want until %v", ok, until, end.Add(10*time.Minute))
	}
	if ok, _ := over.Continue(end.Add(10*time.Minute), began); ok {
		t.Error("10m past the end: Continue = true")
	}
	if ok, _ := over.Continue(end.Add(5*time.Minute), end.Add(time.Minute)); ok {
		t.Error("begun after the window closed: Continue = true")
	}
	// Begun in one window, gone on in the next: the overrun runs from the
	// end of the later one.
	end2 := end.Add(24 * time.Hour)
	if ok, until := over.Continue(end2.Add(time.Minute), began); !ok || !until.Equal(end2.Add(10*time.Minute)) {
		t.Errorf("after the second window: Continue = %v %v, want until %v", ok, until, end2.Add(10*time.Minute))
	}
}

// No allow entry: open except where deny and exclude close it; open time
// without end is seen in stretches of MaxSpan.
func TestDenyOnly(t *testing.T) {
	w := mustParse(t, Spec{Deny: []Entry{{"0 9 * * mon-fri", 8 * time.Hour}}})
	if open, end := w.Open(utc("2025-06-06T18:00:00Z")); !open || !end.Equal(utc("2025-06-09T09:00:00Z")) {
		t.Errorf("Friday evening: Open = %v %v, want until Monday 09:00", open, end)
	}
	always := mustParse(t, Spec{Allow: []Entry{{"0 * * * *", 90 * time.Minute}}})
	from := utc("2025-06-06T18:17:00Z")
	if open, end := always.Open(from); !open || !end.Equal(from.Add(MaxSpan)) {
		t.Errorf("overlapping windows: Open = %v %v, want until %v", open, end, from.Add(MaxSpan))
	}
	next, ok := always.Next(from)
	if want := iv(from.Add(MaxSpan), from.Add(2*MaxSpan)); !ok || iv(next.Start, next.End) != want {
		t.Errorf("overlapping windows: Next = %v %v, want %v", next, ok, want)
	}
}

func TestNoWindows(t *testing.T) {
	var w *Windows
	if open, end := w.Open(time.Now()); !open || !end.IsZero() {
		t.Errorf("nil: Open = %v %v", open, end)
	}
	if _, ok := w.Next(time.Now()); ok {
		t.Error("nil: Next found a window")
	}
	if ok, _ := w.Continue(time.Now(), time.Now()); !ok {
		t.Error("nil: Continue = false")
	}
}

func TestNoFitError(t *testing.T) {
	w := mustParse(t, Spec{Allow: []Entry{{"0 2 * * *", time.Hour}}})
	_, err := w.Plan(utc("2025-06-06T00:00:00Z"), []time.Duration{time.Minute, 2 * time.Hour}, 1)
	var nf *NoFitError
	if !errors.As(err, &nf) || nf.Node != 1 || nf.Need != 2*time.Hour {
		t.Fatalf("Plan = %v, want NoFitError for node 1", err)
	}
	if want := "node 1 needs 2h0m0s: no window to come is that long"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// A spec that is never open, or not within Lookahead, has no next window:
// found in bounded work.
func TestNeverOpen(t *testing.T) {
	at := utc("2025-03-30T00:30:00Z")
	for _, s := range []Spec{
		{Allow: []Entry{{"@daily", time.Minute}}, Deny: []Entry{{"0 * * * *", time.Hour}}},
		{Allow: []Entry{{"0 0 29 2 *", time.Minute}}}, // 2028: past Lookahead
		{Deny: []Entry{{"0 * * * *", MaxDuration}}},
	} {
		w := mustParse(t, s)
		if open, _ := w.Open(at); open {
			t.Errorf("%+v: open", s)
		}
		if next, ok := w.Next(at); ok {
			t.Errorf("%+v: Next = %v", s, next)
		}
		if _, err := w.Plan(at, []time.Duration{time.Second}, 1); err == nil {
			t.Errorf("%+v: Plan found a window", s)
		}
	}
}
