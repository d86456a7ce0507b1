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
			cfg.ProcFS, cfg.Collectors = "/proc", []string{Meminfo}
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			h := e.Handler()
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
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
