package analyze

import (
	"testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// BenchmarkAnalyze analyses every node of a generated cluster (bench.Full
// divided by 10: 500 nodes, 15,000 pods) with the checks alone and with the
// drain forecast: the difference is the forecast's cost.
//
//	go test ./analyze -run '^$' -bench Analyze -benchmem
func BenchmarkAnalyze(b *testing.B) {
	s := view.Of(bench.Generate(bench.Full.Scaled(10)))
	for _, bc := range []struct {
		name string
		opts Options
	}{{"checks", Options{}}, {"forecast", Options{Forecast: &ForecastOptions{}}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Analyze(s, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(s.Nodes)), "µs/node")
		})
	}
}

// BenchmarkCapacity judges the capacity of a set of 100 nodes drained
// together (every tenth node) on a generated cluster of 1,000 nodes and
// 30,000 pods (bench.Full divided by 5), as generated and with a topology
// spread or an anti-affinity on every pod (bench.Constrain). Validating and
// indexing the snapshot are part of it, as for each call.
//
//	go test ./analyze -run '^$' -bench Capacity -benchmem
func BenchmarkCapacity(b *testing.B) {
	raw := bench.Generate(bench.Full.Scaled(5))
	var set []string
	for i := 0; i < len(raw.Nodes); i += 10 {
		set = append(set, raw.Nodes[i].Name)
	}
	plain := view.Of(raw)
	bench.Constrain(raw)
	constrained := view.Of(raw)
	for _, bc := range []struct {
		name string
		s    *view.Snapshot
	}{{"plain", plain}, {"constrained", constrained}} {
		b.Run(bc.name, func(b *testing.B) {
			var r *CapacityReport
			for b.Loop() {
				var err error
				if r, err = Capacity(bc.s, set, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			if r.Verdict != VerdictOK || r.Pods < 2000 {
				b.Fatalf("verdict %s, %d pods to move: want ok and about 3,000 (%+v)", r.Verdict, r.Pods, r.Causes)
			}
			b.ReportMetric(float64(r.Pods), "pods-moved")
		})
	}
}

// BenchmarkSharedPlacement times one node's forecast made two ways on a
// generated cluster of 1,000 nodes and 30,000 pods (bench.Full divided by
// 5), as generated and with bench.Constrain: "whole" is Analyze of a view
// of the whole cluster, validated and indexed again for each forecast (as
// maintd's widened views are); "scoped" is Analyze of the node's scoped
// snapshot (snapshot.ForNodes, made beforehand as maintd's caches make it)
// on one Placement of the whole cluster, shared by every forecast.
// "NewPlacement" is what making that Placement costs, once. The forecasts
// go round 20 nodes, every 50th.
//
//	go test ./analyze -run '^$' -bench SharedPlacement -benchmem -count 3
func BenchmarkSharedPlacement(b *testing.B) {
	raw := bench.Generate(bench.Full.Scaled(5))
	for _, variant := range []string{"plain", "constrained"} {
		if variant == "constrained" {
			bench.Constrain(raw)
		}
		full := view.Of(raw)
		var nodes []string
		var scoped []*view.Snapshot
		for i := 0; i < len(raw.Nodes); i += 50 {
			s, err := snapshot.ForNodes(raw, raw.Nodes[i].Name)
			if err != nil {
				b.Fatal(err)
			}
			nodes, scoped = append(nodes, raw.Nodes[i].Name), append(scoped, view.Of(s))
		}
		shared := NewPlacement(full)
		forecast := func(b *testing.B, s func(i int) *view.Snapshot, p *Placement) {
			for i := 0; b.Loop(); i++ {
				k := i % len(nodes)
				if _, err := Analyze(s(k), Options{Nodes: []string{nodes[k]}, Forecast: &ForecastOptions{Placement: p}}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(variant+"/whole", func(b *testing.B) { forecast(b, func(int) *view.Snapshot { return full }, nil) })
		b.Run(variant+"/scoped", func(b *testing.B) { forecast(b, func(k int) *view.Snapshot { return scoped[k] }, shared) })
		b.Run(variant+"/NewPlacement", func(b *testing.B) {
			for b.Loop() {
				NewPlacement(full)
			}
		})
	}
}
