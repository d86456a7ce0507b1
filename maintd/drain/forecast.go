package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// forecastCauses is how many causes status.forecast keeps.
const forecastCauses = 5

// ForecastOf is status.forecast for the facts' forecast f made at at; once
// the drain has started, with the time remaining and the ETA.
func ForecastOf(f *analyze.Forecast, at time.Time, started bool) *api.Forecast {
	if f == nil {
		return nil
	}
	at = at.UTC().Truncate(time.Second)
	// Whole seconds: p50 the nearest, p90 the next (an upper bound stays
	// one).
	out := &api.Forecast{Verdict: string(f.Verdict), P50: seconds(f.P50, 0), P90: seconds(f.P90, time.Second-1), Pods: int32(f.Pods), ComputedAt: metav1.NewTime(at)}
	if cp := f.CriticalPath; cp != nil {
		exit := "as the prior"
		if cp.Exit.Samples > 0 {
			exit = fmt.Sprintf("learned from %d", cp.Exit.Samples)
		}
		out.CriticalPath = fmt.Sprintf("%s %s: %d pods in %d rounds of %s (exit %s to %s, %s; grace %s; Ready after %s)",
			cp.Kind, objectName(cp.Namespace, cp.Name), cp.Pods, cp.Rounds, cp.RoundTime.Round(time.Second), cp.Exit.P50.Round(100*time.Millisecond),
			cp.Exit.P90.Round(100*time.Millisecond), exit, cp.Grace.Round(time.Second), cp.Ready.P50.Round(time.Second))
	}
	for _, c := range f.Causes {
		if len(out.Causes) == forecastCauses {
			break
		}
		out.Causes = append(out.Causes, api.ForecastCause{Verdict: string(c.Verdict), Reason: c.Reason, Object: objectText(c.Subject), Message: c.Message})
	}
	if started && out.P50 != nil {
		eta := metav1.NewTime(at.Add(out.P50.Duration))
		out.Remaining, out.ETA = out.P50.DeepCopy(), &eta
	}
	return out
}

// seconds is d in whole seconds, up from d+up.
func seconds(d *metav1.Duration, up time.Duration) *metav1.Duration {
	if d == nil {
		return nil
	}
	if up > 0 {
		return &metav1.Duration{Duration: (d.Duration + up).Truncate(time.Second)}
	}
	return &metav1.Duration{Duration: d.Duration.Round(time.Second)}
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// objectText is kind/namespace/name of a subject.
func objectText(s analyze.Subject) string {
	return s.Kind + "/" + objectName(s.Namespace, s.Name)
}

// forecast sets status.forecast once the rest of the status is decided. A
// new forecast is written with any other change of the status; alone, only
// when it says something new (Moved): a waiting plan whose facts barely
// change stays silent.
func (d *decider) forecast() {
	ep := d.st.EvictionProgress
	fresh := ForecastOf(d.f.Forecast, d.f.ForecastAt, ep != nil && ep.Scope != "")
	if Final(&d.st) || d.spec.Release {
		fresh = nil // nothing left to forecast
	}
	old := d.p.Status.Forecast
	d.st.Forecast = old
	if fresh == nil || Moved(old, fresh) || !apiequality.Semantic.DeepEqual(d.st, d.p.Status) {
		d.st.Forecast = fresh
	}
}

// Moved reports whether forecast b says something a reader of a should
// know: another verdict, other causes or critical path, or times that moved
// by more than a tenth (and 5 s).
func Moved(a, b *api.Forecast) bool {
	if a == nil || b == nil {
		return a != b
	}
	if a.Verdict != b.Verdict || len(a.Causes) != len(b.Causes) || subject(a.CriticalPath) != subject(b.CriticalPath) {
		return true
	}
	for i := range a.Causes {
		if a.Causes[i].Reason != b.Causes[i].Reason || a.Causes[i].Object != b.Causes[i].Object {
			return true
		}
	}
	if a.Pods == 0 && b.Pods == 0 {
		return false // nothing left to time
	}
	far := func(x, y time.Time) bool {
		diff := x.Sub(y).Abs()
		return diff > 5*time.Second && diff*10 > max(y.Sub(b.ComputedAt.Time), 0)
	}
	switch {
	case (a.ETA == nil) != (b.ETA == nil):
		return true
	case a.ETA != nil:
		return far(a.ETA.Time, b.ETA.Time)
	case (a.P50 == nil) != (b.P50 == nil):
		return true
	case a.P50 != nil:
		return far(b.ComputedAt.Add(a.P50.Duration), b.ComputedAt.Add(b.P50.Duration))
	}
	return false
}

// subject is the PDB or workload a critical path names.
func subject(path string) string {
	s, _, _ := strings.Cut(path, ":")
	return s
}

// Unaccepted are the causes of a verdict of never that risks (a plan's or a
// campaign's spec.acceptedRisks) do not accept: each is accepted by its
// reason (replacement-unschedulable, insufficient-capacity, ...), as a
// person who knows it will clear (an autoscaler adds the room) says.
func Unaccepted(risks []string, causes []analyze.ForecastCause) []analyze.ForecastCause {
	var out []analyze.ForecastCause
	for _, c := range causes {
		if c.Verdict == analyze.VerdictNever && !slices.Contains(risks, c.Reason) {
			out = append(out, c)
		}
	}
	return out
}

// neverCompletes blocks the plan when its forecast says the drain never
// completes, for a cause the plan does not accept (spec.acceptedRisks: an
// autoscaler may add the room a replacement lacks), and reports whether it
// did.
func (d *decider) neverCompletes() bool {
	f := d.f.Forecast
	if f == nil || f.Verdict != analyze.VerdictNever {
		return false
	}
	var never []string
	for _, c := range Unaccepted(d.spec.AcceptedRisks, f.Causes) {
		never = append(never, c.Reason+": "+c.Message)
	}
	if len(never) == 0 {
		return false
	}
	more := ""
	if len(never) > 3 {
		more = fmt.Sprintf("; and %d more", len(never)-3)
		never = never[:3]
	}
	d.waits.Add(waits.Placement)
	d.set(api.Blocked, api.DrainNeverCompletes, "the drain of node %s would never complete, so nothing was written: %s%s", d.spec.NodeName, strings.Join(never, "; "), more)
	return true
}
