package view

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/windows"
)

// zoneOf is where a campaign's or plan's window times are shown: the zone
// of its spec.windows, else the machine's.
func zoneOf(w *api.MaintenanceWindows) *time.Location {
	if w == nil {
		return time.Local
	}
	if loc, err := windows.LoadZone(w.TimeZone); err == nil {
		return loc
	}
	return time.Local
}

// At is t on the wall clock of loc, as short as now allows: 15:04 MST
// today, Mon 15:04 MST within a week, else Jan 2 15:04 MST.
func At(t, now time.Time, loc *time.Location) string {
	t, now = t.In(loc), now.In(loc)
	y, m, d := t.Date()
	ny, nm, nd := now.Date()
	switch {
	case y == ny && m == nm && d == nd:
		return t.Format("15:04 MST")
	case t.After(now) && t.Sub(now) < 6*24*time.Hour:
		return t.Format("Mon 15:04 MST")
	}
	return t.Format("Jan 2 15:04 MST")
}

// inTime is " (in 1h2m)" for a time to come, "" else.
func inTime(t, now time.Time) string {
	if !t.After(now) {
		return ""
	}
	return " (in " + Duration(t.Sub(now)) + ")"
}

// WindowLine is the campaign's window in a line: open until when, or
// closed and when the next opens; how many windows the nodes left need,
// when the last ends (CampaignETA gives the ETA across them); "" without
// spec.windows.
func WindowLine(c *api.MaintenanceCampaign, now time.Time) string {
	w := c.Status.Windows
	switch {
	case c.Spec.Windows == nil:
		return ""
	case w == nil && (c.Status.Phase == api.Completed || c.Status.Phase == api.Failed):
		return "" // maintd forecasts no more
	case w == nil:
		return "window: not forecast yet"
	}
	loc := zoneOf(c.Spec.Windows)
	var parts []string
	switch {
	case w.Open && w.End != nil:
		parts = append(parts, "open until "+At(w.End.Time, now, loc)+inTime(w.End.Time, now))
	case w.Open:
		parts = append(parts, "open")
	case w.Next != nil:
		parts = append(parts, "closed, next opens "+At(w.Next.Time, now, loc)+inTime(w.Next.Time, now))
	default:
		parts = append(parts, "closed")
	}
	if w.Needed > 0 {
		s := fmt.Sprintf("%d needed", w.Needed)
		if w.LastEnd != nil {
			s += ", the last ends " + At(w.LastEnd.Time, now, loc)
		}
		parts = append(parts, s)
	}
	if w.Message != "" {
		parts = append(parts, oneLine(w.Message))
	}
	return "window: " + strings.Join(parts, "; ")
}

type gateWait struct {
	reason api.Reason
	what   string
}

// The waits of the window and the health gate, as a campaign's view
// counts its nodes in them, in this order.
var gateWaits = []gateWait{
	{api.OutsideWindow, "for a window"},
	{api.WindowClosed, "paused at a window's end"},
	{api.WaitingForHealth, "for health"},
	{api.NodeUnhealthy, "unhealthy"},
	{api.WindowsInvalid, "windows invalid"},
}

// GateWaits counts the campaign's nodes whose plans wait for a window or
// for the node's health, or were found unhealthy, naming up to 3 of each:
// "2 for a window (a, b); 1 unhealthy (c)"; "" for none.
func GateWaits(nodes []CampaignNode) string {
	by := map[api.Reason][]string{}
	for _, n := range nodes {
		if n.Plan != nil {
			by[n.Plan.Status.Reason] = append(by[n.Plan.Status.Reason], n.Name)
		}
	}
	var parts []string
	for _, g := range gateWaits {
		if names := by[g.reason]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(names), g.what, list3(names)))
		}
	}
	return strings.Join(parts, "; ")
}

// list3 names at most 3 of names, and how many more.
func list3(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// WindowsSpec is spec.windows in short: "0 2 * * 1-5 for 3h, not 0 12 * *
// * for 1h, not 2026-12-24; Europe/Berlin; margin 30s, overrun 0".
func WindowsSpec(w *api.MaintenanceWindows) string {
	if w == nil {
		return ""
	}
	var ws []string
	for _, e := range w.Allow {
		ws = append(ws, e.Schedule+" for "+specDuration(e.Duration.Duration))
	}
	if len(ws) == 0 {
		ws = append(ws, "any time")
	}
	for _, e := range w.Deny {
		ws = append(ws, "not "+e.Schedule+" for "+specDuration(e.Duration.Duration))
	}
	for _, d := range w.Exclude {
		ws = append(ws, "not "+d)
	}
	s := strings.Join(ws, ", ") + "; " + zoneOf(w).String()
	var opts []string
	if w.Margin != nil {
		opts = append(opts, "margin "+specDuration(w.Margin.Duration))
	}
	if w.MaxOverrun != nil {
		opts = append(opts, "overrun "+specDuration(w.MaxOverrun.Duration))
	}
	if len(opts) > 0 {
		s += "; " + strings.Join(opts, ", ")
	}
	return s
}

// HealthSpec is spec.healthGate in short: "Ready, KernelUpgraded=True,
// label kernel=6.12; within 10m".
func HealthSpec(g *api.HealthGate) string {
	if g == nil {
		return ""
	}
	parts := []string{"Ready"}
	for _, c := range g.Conditions {
		parts = append(parts, string(c.Type)+"="+string(c.Status))
	}
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		parts = append(parts, "label "+k+"="+g.Labels[k])
	}
	s := strings.Join(parts, ", ")
	if g.Timeout != nil {
		s += "; within " + Duration(g.Timeout.Duration)
	}
	return s
}

// PlanWindowLine is a plan's status.window in a line: open until when,
// or closed and when the next opens, and what the node needs of a window;
// "" without it.
func PlanWindowLine(p *api.MaintenancePlan, now time.Time) string {
	w := p.Status.Window
	if w == nil {
		return ""
	}
	loc := zoneOf(p.Spec.Windows)
	s := "window: closed"
	switch {
	case w.Open && w.End != nil:
		s = "window: open until " + At(w.End.Time, now, loc) + inTime(w.End.Time, now)
	case w.Open:
		s = "window: open"
	case w.Next != nil:
		s += ", next opens " + At(w.Next.Time, now, loc) + inTime(w.Next.Time, now)
	}
	if w.Need != nil {
		s += "; the node needs " + Duration(w.Need.Duration) + " of it"
	}
	return s
}

// specDuration is a duration as a spec gives it: 3h, not 3h0m.
func specDuration(d time.Duration) string {
	if s := Duration(d); strings.HasSuffix(s, "h0m") {
		return strings.TrimSuffix(s, "0m")
	} else {
		return s
	}
}

// WindowsETA is maintd's ETA of campaign c across its windows, "" when it
// has none: "all nodes by Tue 04:12 CET across 2 windows".
func WindowsETA(c *api.MaintenanceCampaign, now time.Time) string {
	w := c.Status.Windows
	if c.Spec.Windows == nil || w == nil || w.ETA == nil {
		return ""
	}
	s := "all nodes by " + At(w.ETA.Time, now, zoneOf(c.Spec.Windows))
	switch {
	case w.Needed == 1:
		s += " in one window"
	case w.Needed > 1:
		s += fmt.Sprintf(" across %d windows", w.Needed)
	}
	return s
}
