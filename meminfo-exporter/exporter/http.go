package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics, /healthz, /readyz and /meminfo.
func (e *Exporter) Handler() http.Handler {
	opts := promhttp.HandlerOpts{
		ErrorLog:            e.cfg.ErrorLog,
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: e.cfg.MaxRequests,
		Timeout:             e.cfg.Timeout,
		EnableOpenMetrics:   true,
	}
	var metrics http.Handler
	if e.cfg.ExporterMetrics {
		opts.Registry = e.registry // promhttp_metric_handler_errors_total
		metrics = promhttp.InstrumentMetricHandler(e.registry, promhttp.HandlerFor(e.registry, opts))
	} else {
		metrics = promhttp.HandlerFor(e.registry, opts)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		// Liveness: the process serves. It never reads a source.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", e.readyz)
	mux.HandleFunc("GET /meminfo", e.meminfo)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "meminfo-exporter: /metrics /meminfo /healthz /readyz")
	})
	return mux
}

// readyz is 200 when the last read of every enabled source succeeded,
// else 503 naming the failing ones.
func (e *Exporter) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	failing := e.store.failing()
	if len(e.sources) == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready: no collector enabled")
		return
	}
	if len(failing) == 0 {
		fmt.Fprintln(w, "ok")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	for _, st := range failing {
		if st.err == nil {
			fmt.Fprintf(w, "not ready: %s: not read yet\n", st.collector)
			continue
		}
		fmt.Fprintf(w, "not ready: %s: %v\n", st.collector, st.err)
	}
}

// value is one field in /meminfo.
type value struct {
	Value uint64 `json:"value"`
	Unit  string `json:"unit"`
}

// meminfoDoc is the body of GET /meminfo.
type meminfoDoc struct {
	ReadTime time.Time        `json:"readTime"`
	Fields   map[string]value `json:"fields"`
}

// fieldDoc is the body of GET /meminfo?field=NAME.
type fieldDoc struct {
	Field    string    `json:"field"`
	Value    uint64    `json:"value"`
	Unit     string    `json:"unit"`
	ReadTime time.Time `json:"readTime"`
}

type errorDoc struct {
	Error string `json:"error"`
}

// meminfo serves the last successful read of /proc/meminfo. It only reads
// the store.
func (e *Exporter) meminfo(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorDoc{fmt.Sprintf("malformed query: %v", err)})
		return
	}
	for k := range q {
		if k != "field" {
			writeJSON(w, http.StatusBadRequest, errorDoc{fmt.Sprintf("unknown query parameter %q (known: field)", k)})
			return
		}
	}
	name, one := "", q.Has("field")
	if one {
		if len(q["field"]) != 1 || q.Get("field") == "" {
			writeJSON(w, http.StatusBadRequest, errorDoc{"query parameter field must be given once, with a field name"})
			return
		}
		name = q.Get("field")
	}
	if !e.enabled(Meminfo) {
		writeJSON(w, http.StatusNotFound, errorDoc{"the meminfo collector is not enabled"})
		return
	}
	fields, at, ok := e.store.meminfo()
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, errorDoc{"no successful read of meminfo yet"})
		return
	}
	at = at.UTC()
	if one {
		for _, f := range fields {
			if f.Name == name {
				writeJSON(w, http.StatusOK, fieldDoc{Field: f.Name, Value: f.Value, Unit: f.Unit.String(), ReadTime: at})
				return
			}
		}
		writeJSON(w, http.StatusNotFound, errorDoc{fmt.Sprintf("unknown field %q", name)})
		return
	}
	doc := meminfoDoc{ReadTime: at, Fields: make(map[string]value, len(fields))}
	for _, f := range fields {
		doc.Fields[f.Name] = value{Value: f.Value, Unit: f.Unit.String()}
	}
	writeJSON(w, http.StatusOK, doc)
}

func (e *Exporter) enabled(name string) bool {
	for _, s := range e.sources {
		if s.name == name {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
