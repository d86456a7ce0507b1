package exporter

import (
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// BenchmarkScrapeTail serves GET /metrics one request after the other
// (as wrk -c1 does) and reports where the slow ones come from: the
// latency percentiles of all requests, the share of requests during which
// a GC cycle ended, and the median of those requests. Run it with
// -benchtime 20000x or more, so that p99 rests on enough requests.
func BenchmarkScrapeTail(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"lean", Config{MaxRequests: 40}},
		{"exporter", Config{ExporterMetrics: true, MaxRequests: 40}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h, req := liveHandler(b, tc.cfg)
			gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
			var all, withGC, without []time.Duration
			var gcs []bool
			for b.Loop() {
				metrics.Read(gc)
				before := gc[0].Value.Uint64()
				start := time.Now()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				took := time.Since(start)
				metrics.Read(gc)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
				all = append(all, took)
				hadGC := gc[0].Value.Uint64() != before
				gcs = append(gcs, hadGC)
				if hadGC {
					withGC = append(withGC, took)
				} else {
					without = append(without, took)
				}
			}
			// The share of the slowest 1% during which a GC cycle ended.
			p99 := slices.Sorted(slices.Values(all))[len(all)*99/100]
			slow, slowGC := 0, 0
			for i, d := range all {
				if d >= p99 {
					slow++
					if gcs[i] {
						slowGC++
					}
				}
			}
			q := func(d []time.Duration, p float64) float64 {
				if len(d) == 0 {
					return 0
				}
				slices.Sort(d)
				return float64(d[int(p*float64(len(d)-1))].Microseconds())
			}
			b.ReportMetric(q(all, 0.5), "p50-us")
			b.ReportMetric(q(all, 0.99), "p99-us")
			b.ReportMetric(100*float64(len(withGC))/float64(len(all)), "%-with-gc")
			b.ReportMetric(q(withGC, 0.5), "p50-with-gc-us")
			b.ReportMetric(q(without, 0.99), "p99-without-gc-us")
			b.ReportMetric(100*float64(slowGC)/float64(slow), "%-of-slowest-1%-with-gc")
		})
	}
}
