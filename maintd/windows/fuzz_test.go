package windows

import (
	"testing"
	"time"
)

// FuzzParse parses spec.windows as a user writes it: a zone, an allow and a
// deny window, an excluded date. Parse must not panic (robfig/cron does on
// "TZ="), and what it accepts must answer Open, Next and Fits coherently.
func FuzzParse(f *testing.F) {
	f.Add("Europe/Berlin", "30 2 * * *", int64(120), "0 3 * * 0", int64(30), "2025-03-30")
	f.Add("America/New_York", "30 1 * * *", int64(180), "", int64(0), "2025-11-02")
	f.Add("", "@daily", int64(60), "*/5 * * * *", int64(1), "")
	f.Add("Local", "TZ=", int64(0), "CRON_TZ=UTC", int64(-1), "2025-2-30")
	f.Add("Asia/Kolkata", "0 9 * * mon-fri", int64(480), "0 12 * * *", int64(60), "2025-08-15")
	f.Add("UTC", "@every 1h", int64(10080), "0 0 31 4 *", int64(10081), "x")
	f.Add("Australia/Lord_Howe", "*/3 * * * *", int64(2), "", int64(0), "")
	at := time.Date(2025, time.March, 30, 0, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, tz, allow string, allowMin int64, deny string, denyMin int64, exclude string) {
		s := Spec{TimeZone: tz}
		if allow != "" {
			s.Allow = []Entry{{allow, time.Duration(allowMin) * time.Minute}}
		}
		if deny != "" {
			s.Deny = []Entry{{deny, time.Duration(denyMin) * time.Minute}}
		}
		if exclude != "" {
			s.Exclude = []string{exclude}
		}
		w, err := Parse(s)
		if err != nil {
			if w != nil {
				t.Fatalf("Parse returned %v and %v", w, err)
			}
			return
		}
		open, end := w.Open(at)
		if open && (!end.After(at) || end.After(at.Add(MaxSpan))) {
			t.Fatalf("Open(%v) = true until %v", at, end)
		}
		if fits := w.Fits(at, time.Minute); fits && (!open || end.Sub(at) < time.Minute) {
			t.Fatalf("Fits a minute, open %v until %v", open, end)
		}
		next, ok := w.Next(at)
		if !ok {
			return
		}
		if !next.Start.After(at) || !next.End.After(next.Start) || open && next.Start.Before(end) {
			t.Fatalf("Next(%v) = %v; Open = %v until %v", at, next, open, end)
		}
		if o, e := w.Open(next.Start); !o || e.Before(next.End) {
			t.Fatalf("Next = %v, but Open(its start) = %v until %v", next, o, e)
		}
	})
}
