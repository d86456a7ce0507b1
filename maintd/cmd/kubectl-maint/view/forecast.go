package view

import (
	"fmt"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Forecast is what the live view shows of a plan's drain forecast
// (status.forecast): the verdict, the ETA and time remaining at
// computedAt, and what dominates or blocks.
type Forecast struct {
	Verdict      string // ok, never or unknown
	ETA          time.Time
	Remaining    time.Duration
	P50, P90     time.Duration
	CriticalPath string
	Cause        string // the first cause of a never or unknown verdict
	ComputedAt   time.Time
}

// ForecastOf is p's forecast (status.forecast), nil when it has none.
func ForecastOf(p *api.MaintenancePlan) *Forecast {
	f := p.Status.Forecast
	if f == nil {
		return nil
	}
	out := &Forecast{Verdict: f.Verdict, CriticalPath: f.CriticalPath, ComputedAt: f.ComputedAt.Time}
	if f.ETA != nil {
		out.ETA = f.ETA.Time
	}
	if f.Remaining != nil {
		out.Remaining = f.Remaining.Duration
	}
	if f.P50 != nil {
		out.P50 = f.P50.Duration
	}
	if f.P90 != nil {
		out.P90 = f.P90.Duration
	}
	if len(f.Causes) > 0 {
		c := f.Causes[0]
		out.Cause = c.Object + ": " + c.Message + " (" + c.Reason + ")"
	}
	return out
}

// ETA is the forecast's line of the live view.
func ETA(f *Forecast, now time.Time) string {
	switch {
	case f == nil:
		return "ETA: no forecast yet"
	case f.Verdict == "never":
		return "ETA: never: " + oneLine(f.Cause)
	}
	s := "ETA: "
	if f.ETA.IsZero() {
		s += "once started"
		if f.P50 > 0 {
			s += fmt.Sprintf(", p50 %s, p90 %s", Duration(f.P50), Duration(f.P90))
		}
	} else {
		s += fmt.Sprintf("%s (in %s", f.ETA.Local().Format(time.TimeOnly), Duration(f.ETA.Sub(now)))
		if f.P90 > 0 {
			s += ", p90 " + Duration(f.P90)
		}
		s += ")"
	}
	if f.CriticalPath != "" {
		s += "; critical path " + oneLine(f.CriticalPath)
	}
	if f.Verdict == "unknown" {
		s += "; unknown: " + oneLine(f.Cause)
	}
	return s
}
