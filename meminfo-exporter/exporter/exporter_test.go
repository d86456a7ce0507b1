package exporter

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"

	"github.com/sentinel-go/sentinel/meminfo-exporter/cgroup"
)

var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, parts...)...)
}

// tree copies a procfs fixture into a temp dir, so that a test can change it.
func tree(t *testing.T, kernel string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testdata("procfs", kernel))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newExporter(t *testing.T, cfg Config) *Exporter {
	t.Helper()
	if cfg.ProcFS == "" {
		cfg.ProcFS = testdata("procfs", "linux-6.18-x86_64")
	}
	if cfg.CgroupFS == "" {
		cfg.CgroupFS = testdata("cgroupfs", "v2")
	}
	cfg.Now = func() time.Time { return fixedNow }
	cfg.Version = "test"
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// exposition is what /metrics would serve, in the text format; a
// gathering error fails the test.
func exposition(t *testing.T, e *Exporter) string {
	t.Helper()
	got, err := gather(e)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func gather(e *Exporter) (string, error) {
	mfs, err := e.Registry().Gather()
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return "", err
		}
	}
	return buf.String(), err
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func TestCollectors(t *testing.T) {
	tests := map[string]struct {
		cfg  Config
		want []string
	}{
		"all available on v2":       {Config{}, []string{Meminfo, Cgroup, Pressure}},
		"v2 without PSI":            {Config{CgroupFS: testdata("cgroupfs", "v2-unlimited")}, []string{Meminfo, Cgroup}},
		"v2 root cgroup":            {Config{CgroupFS: testdata("cgroupfs", "v2-root")}, []string{Meminfo, Cgroup, Pressure}},
		"no cgroup filesystem":      {Config{CgroupFS: "/nonexistent"}, []string{Meminfo}},
		"explicit, even if missing": {Config{CgroupFS: "/nonexistent", Collectors: []string{Pressure}}, []string{Pressure}},
		"no procfs meminfo":         {Config{ProcFS: "/nonexistent"}, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := newExporter(t, tt.cfg).Collectors()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("collectors (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := New(Config{Collectors: []string{"meminfo", "swap"}}); err == nil || !strings.Contains(err.Error(), `unknown collector "swap"`) {
		t.Errorf("unknown collector: error %v", err)
	}
}

func TestGather(t *testing.T) {
	e := newExporter(t, Config{})
	got := exposition(t, e)
	for _, want := range []string{
		"# TYPE meminfo_MemAvailable_bytes gauge\nmeminfo_MemAvailable_bytes 2.431881216e+10\n",
		"meminfo_Active_anon_bytes 1.59744e+06\n",
		"# TYPE meminfo_HugePages_Total gauge\nmeminfo_HugePages_Total 0\n",
		"meminfo_cgroup_memory_usage_bytes 3.22961408e+08\n",
		"meminfo_cgroup_memory_limit_bytes 5.36870912e+08\n",
		"meminfo_cgroup_memory_peak_bytes 4.02653184e+08\n",
		"meminfo_cgroup_memory_working_set_bytes 1.65675008e+08\n",
		"meminfo_cgroup_memory_swap_usage_bytes 0\n",
		"# TYPE meminfo_cgroup_memory_stat_anon_bytes gauge\nmeminfo_cgroup_memory_stat_anon_bytes 1.048576e+08\n",
		"# TYPE meminfo_cgroup_memory_stat_pgfault_total counter\nmeminfo_cgroup_memory_stat_pgfault_total 2.233445e+06\n",
		"# TYPE meminfo_cgroup_memory_events_oom_kill_total counter\nmeminfo_cgroup_memory_events_oom_kill_total 1\n",
		"meminfo_cgroup_pressure_memory_waiting_seconds_total 1.234567\n",
		"meminfo_cgroup_pressure_memory_stalled_seconds_total 0.345678\n",
		`meminfo_scrape_collector_success{collector="meminfo"} 1` + "\n",
		`meminfo_scrape_collector_success{collector="cgroup"} 1` + "\n",
		`meminfo_scrape_collector_success{collector="pressure"} 1` + "\n",
		`meminfo_parse_errors_total{reason="bad_value",source="meminfo"} 0` + "\n",
		`meminfo_parse_errors_total{reason="duplicate",source="memory.events"} 0` + "\n",
		`meminfo_exporter_build_info{goversion="` + runtime.Version() + `",version="test"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(got, "go_goroutines") {
		t.Error("Go collector present although exporter metrics are off")
	}
	// Families are sorted and unique.
	var names []string
	for line := range strings.Lines(got) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("families out of order or repeated: %s, %s", names[i-1], names[i])
		}
	}
}

func TestGatherUnlimitedAndRoot(t *testing.T) {
	got := exposition(t, newExporter(t, Config{CgroupFS: testdata("cgroupfs", "v2-unlimited")}))
	if strings.Contains(got, "meminfo_cgroup_memory_limit_bytes") || strings.Contains(got, "meminfo_cgroup_memory_peak_bytes") {
		t.Errorf("limit \"max\" or missing memory.peak exported:\n%s", got)
	}
	got = exposition(t, newExporter(t, Config{CgroupFS: testdata("cgroupfs", "v2-root")}))
	if strings.Contains(got, "meminfo_cgroup_memory_usage_bytes") || !strings.Contains(got, "meminfo_cgroup_memory_stat_anon_bytes") {
		t.Errorf("root cgroup: want memory.stat and no usage:\n%s", got)
	}
}

func TestGatherFailures(t *testing.T) {
	tests := map[string]struct {
		meminfo string
		want    []string
		absent  string
	}{
		"empty file": {
			meminfo: "",
			want:    []string{`meminfo_scrape_collector_success{collector="meminfo"} 0`},
			absent:  "meminfo_MemFree_bytes",
		},
		"MemTotal 0": {
			meminfo: "MemTotal: 0 kB\nMemFree: 5 kB\n",
			want:    []string{`meminfo_scrape_collector_success{collector="meminfo"} 0`},
			absent:  "meminfo_MemFree_bytes",
		},
		"bad lines are counted, the rest kept": {
			meminfo: "MemTotal: 10 kB\nMemFree: -1 kB\nMemFree: 0x10 kB\nFoo 3\nMemAvailable: 18446744073709551615 kB\nBuffers: 1 MB\nBuffers: 2 kB\nBuffers: 3 kB\n\n",
			want: []string{
				`meminfo_scrape_collector_success{collector="meminfo"} 1`,
				"meminfo_MemTotal_bytes 10240",
				"meminfo_Buffers_bytes 2048",
				`meminfo_parse_errors_total{reason="bad_value",source="meminfo"} 4`,
				`meminfo_parse_errors_total{reason="no_colon",source="meminfo"} 2`,
				`meminfo_parse_errors_total{reason="overflow",source="meminfo"} 2`,
				`meminfo_parse_errors_total{reason="bad_unit",source="meminfo"} 2`,
				`meminfo_parse_errors_total{reason="duplicate",source="meminfo"} 2`,
				`meminfo_parse_errors_total{reason="empty_line",source="meminfo"} 2`,
			},
			absent: "meminfo_MemFree_bytes",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			proc := tree(t, "linux-6.18-x86_64")
			if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte(tt.meminfo), 0o644); err != nil {
				t.Fatal(err)
			}
			e := newExporter(t, Config{ProcFS: proc, Collectors: []string{Meminfo}})
			got := exposition(t, e) // read twice: once in New, once here
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("exposition lacks %q:\n%s", want, got)
				}
			}
			if tt.absent != "" && strings.Contains(got, tt.absent) {
				t.Errorf("exposition has %q", tt.absent)
			}
		})
	}
}

// TestValuesFollowReads: a series whose value has not moved since the
// last scrape is sent again as it was; every other is made anew. Each
// scrape shows what its own read found, whichever way the values go.
func TestValuesFollowReads(t *testing.T) {
	proc := tree(t, "linux-6.18-x86_64")
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("MemTotal: 10 kB\nMemFree: 5 kB\n")
	e := newExporter(t, Config{ProcFS: proc, Collectors: []string{Meminfo}}) // the first read
	reads := []struct {
		meminfo string
		want    []string
	}{
		{"MemTotal: 10 kB\nMemFree: 5 kB\n", []string{ // nothing moved
			"meminfo_MemTotal_bytes 10240\n", "meminfo_MemFree_bytes 5120\n",
			`meminfo_parse_errors_total{reason="no_colon",source="meminfo"} 0` + "\n",
			`meminfo_scrape_collector_success{collector="meminfo"} 1` + "\n",
		}},
		{"MemTotal: 10 kB\nMemFree: 6 kB\nFoo 3\n", []string{ // MemFree and a count moved
			"meminfo_MemTotal_bytes 10240\n", "meminfo_MemFree_bytes 6144\n",
			`meminfo_parse_errors_total{reason="no_colon",source="meminfo"} 1` + "\n",
		}},
		{"", []string{ // a failed read
			`meminfo_parse_errors_total{reason="no_colon",source="meminfo"} 1` + "\n",
			`meminfo_scrape_collector_success{collector="meminfo"} 0` + "\n",
		}},
		{"MemTotal: 10 kB\nMemFree: 5 kB\n", []string{ // back to the first values
			"meminfo_MemTotal_bytes 10240\n", "meminfo_MemFree_bytes 5120\n",
			`meminfo_parse_errors_total{reason="no_colon",source="meminfo"} 1` + "\n",
			`meminfo_scrape_collector_success{collector="meminfo"} 1` + "\n",
		}},
	}
	for i, r := range reads {
		write(r.meminfo)
		got := exposition(t, e)
		for _, want := range r.want {
			if !strings.Contains(got, want) {
				t.Errorf("read %d: exposition lacks %q:\n%s", i+1, want, got)
			}
		}
	}
}

// TestCollidingNames: Active(anon) and Active_anon both make
// meminfo_Active_anon_bytes. The registry keeps the first and reports the
// second; /metrics serves the rest (ContinueOnError) and says so in
// promhttp_metric_handler_errors_total.
func TestCollidingNames(t *testing.T) {
	proc := tree(t, "linux-6.18-x86_64")
	data := "MemTotal: 10 kB\nActive(anon): 1 kB\nActive_anon: 2 kB\n"
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newExporter(t, Config{ProcFS: proc, Collectors: []string{Meminfo}, ExporterMetrics: true})
	got, err := gather(e)
	if err == nil || !strings.Contains(err.Error(), "meminfo_Active_anon_bytes") {
		t.Errorf("Gather error %v, want one naming meminfo_Active_anon_bytes", err)
	}
	for _, want := range []string{
		"meminfo_Active_anon_bytes 1024\n",
		"meminfo_MemTotal_bytes 10240\n",
		`meminfo_scrape_collector_success{collector="meminfo"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %q:\n%s", want, got)
		}
	}
	code, body := get(t, e.Handler(), "/metrics")
	if code != http.StatusOK || !strings.Contains(body, "meminfo_Active_anon_bytes 1024\n") {
		t.Errorf("/metrics = %d:\n%s", code, body)
	}
	_, body = get(t, e.Handler(), "/metrics")
	if !strings.Contains(body, `promhttp_metric_handler_errors_total{cause="gathering"} 1`) {
		t.Errorf("the first scrape's error is not counted:\n%s", body)
	}
}

func TestHealthzReadyz(t *testing.T) {
	proc := tree(t, "linux-6.18-x86_64")
	e := newExporter(t, Config{ProcFS: proc})
	h := e.Handler()
	if code, body := get(t, h, "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz = %d %q, want 200 ok", code, body)
	}
	// The file goes bad: the next scrape fails the source, readiness follows.
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, h, "/metrics"); code != http.StatusOK {
		t.Errorf("/metrics = %d, want 200 even when a source fails", code)
	}
	code, body := get(t, h, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready: meminfo: ") || strings.Contains(body, "cgroup") {
		t.Errorf("/readyz = %d %q, want 503 naming meminfo only", code, body)
	}
	if code, body := get(t, h, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}

	// Liveness never depends on /proc.
	h = newExporter(t, Config{ProcFS: "/nonexistent", Collectors: []string{Meminfo}}).Handler()
	if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz without procfs = %d, want 200", code)
	}
	if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "meminfo: open /nonexistent/meminfo") {
		t.Errorf("/readyz without procfs = %d %q", code, body)
	}
}

func TestMeminfoEndpoint(t *testing.T) {
	e := newExporter(t, Config{})
	h := e.Handler()
	code, body := get(t, h, "/meminfo?field=MemAvailable")
	want := `{
  "field": "MemAvailable",
  "value": 24318812160,
  "unit": "bytes",
  "readTime": "2026-11-29T12:00:00Z"
}
`
	if code != http.StatusOK || body != want {
		t.Errorf("/meminfo?field=MemAvailable = %d\n%s", code, cmp.Diff(want, body))
	}
	code, body = get(t, h, "/meminfo?field=HugePages_Total")
	if code != http.StatusOK || !strings.Contains(body, `"unit": "count"`) {
		t.Errorf("HugePages_Total = %d %s", code, body)
	}

	code, body = get(t, h, "/meminfo")
	var doc meminfoDoc
	if err := json.Unmarshal([]byte(body), &doc); err != nil || code != http.StatusOK {
		t.Fatalf("/meminfo = %d %s (%v)", code, body, err)
	}
	if len(doc.Fields) != 53 || doc.Fields["Active(anon)"] != (value{1560 * 1024, "bytes"}) || !doc.ReadTime.Equal(fixedNow) {
		t.Errorf("/meminfo: %d fields, Active(anon) %+v, read %v", len(doc.Fields), doc.Fields["Active(anon)"], doc.ReadTime)
	}

	before, _, _ := e.store.meminfo()
	for target, want := range map[string]struct {
		code int
		body string
	}{
		"/meminfo?field=NoSuchField":          {http.StatusNotFound, `unknown field \"NoSuchField\"`},
		"/meminfo?field=":                     {http.StatusBadRequest, "query parameter field must be given once"},
		"/meminfo?field=MemFree&field=Cached": {http.StatusBadRequest, "query parameter field must be given once"},
		"/meminfo?fields=MemFree":             {http.StatusBadRequest, `unknown query parameter \"fields\"`},
		"/meminfo?field=%zz":                  {http.StatusBadRequest, "malformed query"},
		"/meminfo?field=Mem;Free":             {http.StatusBadRequest, "malformed query"},
	} {
		code, body := get(t, h, target)
		var doc errorDoc
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Errorf("%s: body %q is not a JSON error: %v", target, body, err)
		}
		if code != want.code || !strings.Contains(body, want.body) {
			t.Errorf("%s = %d %s, want %d with %q", target, code, body, want.code, want.body)
		}
	}
	after, _, _ := e.store.meminfo()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("stored sample changed by bad requests (-before +after):\n%s", diff)
	}

	h = newExporter(t, Config{Collectors: []string{Cgroup}}).Handler()
	if code, _ := get(t, h, "/meminfo"); code != http.StatusNotFound {
		t.Errorf("/meminfo without the meminfo collector = %d, want 404", code)
	}
	h = newExporter(t, Config{ProcFS: "/nonexistent", Collectors: []string{Meminfo}}).Handler()
	if code, _ := get(t, h, "/meminfo"); code != http.StatusServiceUnavailable {
		t.Errorf("/meminfo before any good read = %d, want 503", code)
	}
}

func TestMetricsHandler(t *testing.T) {
	e := newExporter(t, Config{ExporterMetrics: true, MaxRequests: 4, Timeout: 5 * time.Second})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()

	// Concurrent scrapes, in text and in protobuf: the const metrics of
	// values that did not move are shared by the scrapes, and -race checks
	// that nothing writes them.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
				if i%2 == 1 {
					req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && !bytes.Contains(body, []byte("meminfo_MemTotal_bytes")) {
					t.Errorf("scrape without MemTotal:\n%s", body)
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				resp, err := http.Get(srv.URL + "/meminfo?field=MemTotal")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("Content-Type %q, want OpenMetrics", ct)
	}
	for _, want := range []string{"# TYPE meminfo_parse_errors counter\n", "go_goroutines", "process_resident_memory_bytes", "promhttp_metric_handler_requests_total", "# EOF\n"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("OpenMetrics body lacks %q", want)
		}
	}
}

func TestCgroupModes(t *testing.T) {
	// The hybrid fixture: memory from v1, PSI from the unified mount.
	proc := tree(t, "linux-6.18-x86_64")
	self := "12:memory:/kubepods/pod1\n0::/kubepods/pod1\n"
	if err := os.WriteFile(filepath.Join(proc, "self", "cgroup"), []byte(self), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newExporter(t, Config{ProcFS: proc, CgroupFS: testdata("cgroupfs", "hybrid")})
	if got := e.CgroupPaths().Mode; got != cgroup.Hybrid {
		t.Errorf("mode %v, want hybrid", got)
	}
	got := exposition(t, e)
	for _, want := range []string{
		"meminfo_cgroup_memory_usage_bytes 3.22961408e+08\n",
		"meminfo_cgroup_memory_working_set_bytes 1.65675008e+08\n",
		"meminfo_cgroup_memory_stat_total_pgfault_total 2.233445e+06\n",
		"meminfo_cgroup_pressure_memory_waiting_seconds_total 1.234567\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hybrid exposition lacks %q", want)
		}
	}
	if strings.Contains(got, "meminfo_cgroup_memory_limit_bytes") || strings.Contains(got, "memory_events") {
		t.Error("hybrid: unlimited v1 limit or v2 events exported")
	}
}
