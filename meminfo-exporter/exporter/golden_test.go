package exporter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
)

// TestGolden compares every family of a scrape, but the read durations
// and the build info (which names the Go version), with
// testdata/<fixture>.prom. UPDATE=1 rewrites the files.
func TestGolden(t *testing.T) {
	for _, fixture := range []string{"v2", "v2-unlimited", "v2-root"} {
		t.Run(fixture, func(t *testing.T) {
			e := newExporter(t, Config{CgroupFS: testdata("cgroupfs", fixture)})
			mfs, err := e.Registry().Gather()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, mf := range mfs {
				switch name := mf.GetName(); name {
				case "meminfo_scrape_collector_duration_seconds", "meminfo_exporter_build_info":
				default:
					names = append(names, name)
				}
			}
			golden := filepath.Join("testdata", fixture+".prom")
			if os.Getenv("UPDATE") != "" {
				var buf bytes.Buffer
				for _, mf := range mfs {
					if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
						t.Fatal(err)
					}
				}
				want := buf.String()
				want = strings.Join(filterFamilies(want, names), "")
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(golden)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := testutil.GatherAndCompare(e.Registry(), f, names...); err != nil {
				t.Error(err)
			}
		})
	}
}

// filterFamilies keeps the lines of an exposition that belong to the
// named families.
func filterFamilies(exposition string, names []string) []string {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	var out []string
	for line := range strings.Lines(exposition) {
		name := line
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			name = strings.Fields(rest)[1]
		}
		name = strings.FieldsFunc(name, func(r rune) bool { return r == '{' || r == ' ' })[0]
		if keep[name] {
			out = append(out, line)
		}
	}
	return out
}

// TestLint lints every collector on its own (a pedantic registry, which
// also checks a checked collector's descriptors) and the whole registry
// with the exporter metrics. The one problem allowed is the camelCase of
// names that keep a /proc/meminfo field's spelling, as node_exporter's do.
func TestLint(t *testing.T) {
	e := newExporter(t, Config{ExporterMetrics: true})
	check := func(what string, problems []promlint.Problem, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, p := range problems {
			kernel := !strings.HasPrefix(p.Metric, "meminfo_cgroup_") && !strings.HasPrefix(p.Metric, "meminfo_scrape_") &&
				!strings.HasPrefix(p.Metric, "meminfo_parse_") && !strings.HasPrefix(p.Metric, "meminfo_exporter_")
			if p.Text == "metric names should be written in 'snake_case' not 'camelCase'" && strings.HasPrefix(p.Metric, "meminfo_") && kernel {
				continue
			}
			t.Errorf("%s: %s: %s", what, p.Metric, p.Text)
		}
	}
	if len(e.sources) != 3 {
		t.Fatalf("%d sources, want meminfo, cgroup and pressure", len(e.sources))
	}
	for _, c := range e.sources {
		problems, err := testutil.CollectAndLint(c)
		check(c.name, problems, err)
	}
	problems, err := testutil.GatherAndLint(e.Registry())
	check("registry", problems, err)
}
