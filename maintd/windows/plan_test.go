package windows

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func repeat(d time.Duration, n int) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }

func TestPlan(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	daily := mustParse(t, Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 2 * * *", 2 * time.Hour}}})
	day := func(d, h, m int) time.Time { return at(loc, 2025, time.June, d, h, m) }
	for _, tc := range []struct {
		name     string
		w        *Windows
		t        time.Time
		p90s     []time.Duration
		parallel int
		want     Estimate
	}{
		// 2 nodes of 50m fit in a 2h window, the third (04:30) does not.
		{"one at a time", daily, day(10, 0, 0), repeat(50*time.Minute, 5), 1,
			Estimate{Windows: 3, LastEnd: day(12, 4, 0), Done: day(12, 2, 50)}},
		{"two at a time", daily, day(10, 0, 0), repeat(50*time.Minute, 5), 2,
			Estimate{Windows: 2, LastEnd: day(11, 4, 0), Done: day(11, 2, 50)}},
		// In the window at 03:30 a node of 50m no longer fits: not counted.
		{"late in a window", daily, day(10, 3, 30), repeat(50*time.Minute, 5), 1,
			Estimate{Windows: 3, LastEnd: day(13, 4, 0), Done: day(13, 2, 50)}},
		// ... but one of 20m does, from now.
		{"room now", daily, day(10, 3, 30), repeat(20*time.Minute, 7), 1,
			Estimate{Windows: 2, LastEnd: day(11, 4, 0), Done: day(11, 4, 0)}},
		// The order is kept: the long third node waits for the next window
		// although the short fourth would fit.
		{"in order", daily, day(10, 0, 0), []time.Duration{time.Hour, 30 * time.Minute, time.Hour, 10 * time.Minute}, 1,
			Estimate{Windows: 2, LastEnd: day(11, 4, 0), Done: day(11, 3, 10)}},
		{"margin", mustParse(t, Spec{TimeZone: "Europe/Berlin", Allow: []Entry{{"0 2 * * *", 2 * time.Hour}}, Margin: 20 * time.Minute}),
			day(10, 0, 0), repeat(40*time.Minute, 4), 1,
			Estimate{Windows: 2, LastEnd: day(11, 4, 0), Done: day(11, 4, 0)}},
		{"nothing left", daily, day(10, 0, 0), nil, 1, Estimate{}},
		{"no windows", nil, day(10, 0, 0), repeat(time.Minute, 5), 2,
			Estimate{Done: day(10, 0, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.w.Plan(tc.t, tc.p90s, tc.parallel)
			if err != nil {
				t.Fatal(err)
			}
			got.LastEnd, got.Done = got.LastEnd.UTC(), got.Done.UTC()
			tc.want.LastEnd, tc.want.Done = tc.want.LastEnd.UTC(), tc.want.Done.UTC()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}

// The scenario: 30 nodes, windows of 90 s every 180 s in a zone
// that is not UTC, nodes of 25 s: 3 a window, 10 windows, the ETA in the
// tenth.
func TestPlanShortWindows(t *testing.T) {
	loc := zone(t, "Asia/Tokyo")
	w := mustParse(t, Spec{TimeZone: "Asia/Tokyo", Allow: []Entry{{"*/3 * * * *", 90 * time.Second}}})
	start := at(loc, 2025, time.June, 10, 9, 2) // closed: the window of 09:00 ended at 09:01:30
	got, err := w.Plan(start, repeat(25*time.Second, 30), 1)
	if err != nil {
		t.Fatal(err)
	}
	first := at(loc, 2025, time.June, 10, 9, 3)
	want := Estimate{Windows: 10, LastEnd: first.Add(27*time.Minute + 90*time.Second), Done: first.Add(27*time.Minute + 75*time.Second)}
	if !got.LastEnd.Equal(want.LastEnd) || !got.Done.Equal(want.Done) || got.Windows != want.Windows {
		t.Errorf("Plan = %+v, want %+v", got, want)
	}
	// Each node Plan placed also Fits where Plan put it.
	if !w.Fits(first.Add(50*time.Second), 25*time.Second) || w.Fits(first.Add(66*time.Second), 25*time.Second) {
		t.Error("Fits disagrees with the packing: 25s fits from 50s into a 90s window, not from 66s")
	}
}

// A window across the clocks going back is 3h of elapsed time: the ETA
// counts it so.
func TestPlanAcrossRepeat(t *testing.T) {
	w := mustParse(t, Spec{TimeZone: "America/New_York", Allow: []Entry{{"30 1 * * *", 3 * time.Hour}}})
	got, err := w.Plan(utc("2025-11-02T00:00:00Z"), repeat(time.Hour, 4), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := Estimate{Windows: 2, LastEnd: utc("2025-11-03T09:30:00Z"), Done: utc("2025-11-03T07:30:00Z")}
	got.LastEnd, got.Done = got.LastEnd.UTC(), got.Done.UTC()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan (-want +got):\n%s", diff)
	}
}
