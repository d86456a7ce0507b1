package analyze

import (
	"testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
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
