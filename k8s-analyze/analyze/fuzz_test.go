package analyze

import (
	"io"
	"slices"
	"testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-analyze/internal/golden"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// FuzzAnalyze feeds arbitrary bytes through decoding, analysis with the drain
// forecast (its placement model parses selectors, node affinity,
// tolerations and spread constraints of the input), without and with
// planned surges, and encoding: it must never panic, and whatever decodes
// either analyses into a report that encodes, or fails with an error. A
// forecast has its estimate (p50 and p90, p90 >= p50) unless it is never or
// its snapshot is out of scope (nodes-out-of-scope), and without one no
// critical path; a pod has at most one of
// Surge and NoSurge, and its action is surge exactly when Options.Surge asks
// and a surge moves it (unless another finding blocks it). The capacity of
// the first half of the nodes, drained together, is judged too: it never
// fails where the analysis did not, and its verdict follows its causes.
// Every node's drain order holds each pod a drain must see gone exactly
// once, its groups in order (Skip last), and only storage groups wait. A
// pod needs an override (blocked) exactly when no surge helps it, and the
// forecast lists only such pods, with a downtime (p90 >= p50) exactly when
// something re-creates them.
func FuzzAnalyze(f *testing.F) {
	for _, file := range golden.Snapshots(f, "../testdata/script") {
		f.Add(file.Data)
	}
	f.Add([]byte(`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","metadata":{"capturedAt":"2026-11-29T12:00:00Z"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decode.Snapshot(data)
		if err != nil {
			return
		}
		for _, surge := range []bool{false, true} {
			analyse(t, s, surge)
		}
	})
}

// analyse is one analysis of FuzzAnalyze and its checks.
func analyse(t *testing.T, s *view.Snapshot, surge bool) {
	r, err := Analyze(s, Options{Forecast: &ForecastOptions{}, Surge: surge})
	if err != nil {
		return
	}
	for _, n := range r.Nodes {
		f := n.Forecast
		if f == nil {
			t.Fatalf("node %s: no forecast", n.Name)
		}
		untimed := f.Verdict == VerdictNever || slices.ContainsFunc(f.Causes, func(c ForecastCause) bool { return c.Reason == ReasonNodesOutOfScope })
		if untimed != (f.P50 == nil) || (f.P50 == nil) != (f.P90 == nil) || (f.P50 == nil && f.CriticalPath != nil) || (f.P50 != nil && f.P90.Duration < f.P50.Duration) {
			t.Fatalf("node %s: forecast %+v", n.Name, f)
		}
		checkPartition(t, s, n.Name, n.DrainOrder)
		for i := 1; i < len(n.DrainOrder); i++ {
			if a, b := n.DrainOrder[i-1], n.DrainOrder[i]; b.Behavior != BehaviorSkip && (a.Behavior == BehaviorSkip || a.Order > b.Order) {
				t.Fatalf("node %s: drain order out of order: %+v", n.Name, n.DrainOrder)
			}
		}
		for _, g := range n.DrainOrder {
			if len(g.WaitsFor) > 0 && len(g.Drivers) == 0 {
				t.Fatalf("node %s: a group that is no storage group waits: %+v", n.Name, g)
			}
		}
		needs := map[string]bool{}
		for _, v := range n.Pods {
			if (v.Surge != nil && v.NoSurge != "") || (v.Action == Surge) != (surge && v.Surge != nil && v.Action != Block) {
				t.Fatalf("node %s: pod %s: action %s, surge %+v, noSurge %q (Options.Surge %v)", n.Name, v.Name, v.Action, v.Surge, v.NoSurge, surge)
			}
			if need := slices.Contains(v.Reasons, NeedsOverride); need != (v.NoSurge != "") || (need && v.Action != Block) {
				t.Fatalf("node %s: pod %s: reasons %v, action %s, noSurge %q: needs-override exactly when no surge helps, and blocked", n.Name, v.Name, v.Reasons, v.Action, v.NoSurge)
			} else if need {
				needs[name(v.Namespace, v.Name)] = true
			}
		}
		for _, o := range n.Forecast.NeedsOverride {
			if d := o.Downtime; !needs[name(o.Namespace, o.Name)] || (d == nil) != (o.Replacement == "") || (d != nil && d.P90.Duration < d.P50.Duration) {
				t.Fatalf("node %s: needsOverride %+v of a pod without needs-override, or a downtime that does not follow its replacement", n.Name, o)
			}
		}
	}
	if len(r.Nodes) > 0 {
		var set []string
		for _, n := range r.Nodes[:(len(r.Nodes)+1)/2] {
			set = append(set, n.Name)
		}
		c, err := Capacity(s, set, Options{Surge: surge})
		if err != nil {
			t.Fatalf("capacity of %q: %v", set, err)
		}
		never := slices.ContainsFunc(c.Causes, func(c ForecastCause) bool { return c.Verdict == VerdictNever })
		if never != (c.Verdict == VerdictNever) || (len(c.Causes) == 0) != (c.Verdict == VerdictOK) || c.Demand.Pods != int64(c.Pods) {
			t.Fatalf("capacity of %q: %+v", set, c)
		}
		r.Capacity = c
	}
	if err := document.Encode(io.Discard, document.JSON, r); err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := WriteTable(io.Discard, r, true); err != nil {
		t.Fatalf("table: %v", err)
	}
}
