// Package view shows a MaintenancePlan to a person: the steps of its
// history as lines, and on a terminal a live view below them (phase,
// progress bar of pods evicted of total, the current wait and its cause,
// the forecast's ETA) redrawn in place. Everything is rendered by pure
// functions of the plan and the time; Printer only writes.
package view

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Step is one transition of the plan's history as a line:
// "15:04:05  Phase/reason  [evicted/total]  message".
func Step(t api.Transition, counts string) string {
	line := t.Time.Local().Format(time.TimeOnly) + "  " + string(t.Phase) + "/" + cmp.Or(string(t.Reason), "-")
	if counts != "" {
		line += "  " + counts
	}
	if t.Message != "" {
		line += "  " + oneLine(t.Message)
	}
	return line
}

// Counts is "evicted/total evicted", "" before the plan counted its pods.
func Counts(st *api.MaintenancePlanStatus) string {
	if st.Pods.Total == 0 && st.Pods.Evicted == 0 {
		return ""
	}
	return fmt.Sprintf("[%d/%d evicted]", st.Pods.Evicted, st.Pods.Total)
}

// Frame is the live view of p at now, width columns wide: the lines to
// redraw, each at most width-1 runes.
func Frame(p *api.MaintenancePlan, now time.Time, width int) []string {
	st := &p.Status
	phase := cmp.Or(string(st.Phase), "(not reconciled yet)")
	if st.Reason != "" {
		phase += "/" + string(st.Reason)
	}
	lines := []string{fmt.Sprintf("plan %s  node %s  %s  %s", p.Name, p.Spec.NodeName, phase, Age(p.CreationTimestamp.Time, now))}
	bar := max(10, min(40, width-40))
	lines = append(lines, Bar(st.Pods.Evicted, st.Pods.Total, bar)+"  "+podText(st))
	if w := Wait(st, now); w != "" {
		lines = append(lines, w)
	}
	if w := PlanWindowLine(p, now); w != "" && !done(st) {
		lines = append(lines, w)
	}
	if !done(st) {
		lines = append(lines, ETA(ForecastOf(p), now))
	}
	for i, l := range lines {
		lines[i] = Truncate(l, width-1)
	}
	return lines
}

func podText(st *api.MaintenancePlanStatus) string {
	s := fmt.Sprintf("%d/%d pods evicted", st.Pods.Evicted, st.Pods.Total)
	if st.Pods.Skipped > 0 {
		s += fmt.Sprintf(", %d stay (DaemonSet, mirror, finished)", st.Pods.Skipped)
	}
	return s
}

// done reports whether the drain is over: an ETA no longer applies.
func done(st *api.MaintenancePlanStatus) bool {
	return st.Phase == api.Drained || st.Phase == api.Completed || st.Phase == api.Uncordoning
}

// Bar is a progress bar of done of total, width cells inside brackets.
func Bar(done, total int32, width int) string {
	filled := 0
	if total > 0 {
		filled = int(int64(min(max(done, 0), total)) * int64(width) / int64(total))
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat("-", width-filled) + "]"
}

// Wait is the current wait and its cause: the reason and message, for how
// long, and a PDB's cooldown with its end; "" when the plan waits for
// nothing (done).
func Wait(st *api.MaintenancePlanStatus, now time.Time) string {
	switch st.Phase {
	case "", api.Drained, api.Completed:
		return ""
	}
	s := "now: " + cmp.Or(string(st.Reason), string(st.Phase))
	if st.Since != nil {
		s += " for " + Duration(now.Sub(st.Since.Time))
	}
	if ep := st.EvictionProgress; ep != nil && len(ep.Cooldowns) > 0 {
		c := ep.Cooldowns[0]
		what := "PDB " + c.PDB
		if c.PDB == "*" {
			what = "the API server"
		}
		s += fmt.Sprintf("; waiting for %s (%s) until %s", what, c.Reason, c.NextActionAt.Local().Format(time.TimeOnly))
		if len(ep.Cooldowns) > 1 {
			s += fmt.Sprintf(" and %d more", len(ep.Cooldowns)-1)
		}
	}
	if st.Message != "" {
		s += ": " + oneLine(st.Message)
	}
	return s
}

// Age is how long ago t was, as "5m3s ago".
func Age(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return Duration(now.Sub(t)) + " ago"
}

// Duration is d rounded for people: 45s, 3m12s, 2h5m.
func Duration(d time.Duration) string {
	d = max(d, 0)
	if d >= time.Hour {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(time.Second)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// Truncate cuts s to n runes, marking the cut with "…".
func Truncate(s string, n int) string {
	r := []rune(s)
	if n <= 0 {
		return ""
	}
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
