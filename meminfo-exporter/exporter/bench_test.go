package exporter

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkMetrics is one GET /metrics through the handler, for the
// live /proc/meminfo only.
func BenchmarkMetrics(b *testing.B) {
	for name, cfg := range map[string]Config{
		"lean":             {},
		"lean+timeout":     {Timeout: 10 * time.Second},
		"exporter":         {ExporterMetrics: true},
		"exporter+timeout": {ExporterMetrics: true, Timeout: 10 * time.Second},
	} {
		b.Run(name, func(b *testing.B) {
			h, req := liveHandler(b, cfg)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// liveHandler is the handler of an exporter of the live /proc/meminfo
// only, and a GET /metrics for it.
func liveHandler(b *testing.B, cfg Config) (http.Handler, *http.Request) {
	cfg.ProcFS, cfg.Collectors = "/proc", []string{Meminfo}
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e.Handler(), httptest.NewRequest(http.MethodGet, "/metrics", nil)
}
