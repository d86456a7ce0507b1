package exporter

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

func values(mfs []*dto.MetricFamily, prefix string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		if len(mf.GetName()) < len(prefix) || mf.GetName()[:len(prefix)] != prefix {
			continue
		}
		m := mf.GetMetric()[0]
		out[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	return out
}

// TestProcessMetrics: the same names and, within what changes between two
// reads, the same values as client_golang's process collector.
func TestProcessMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{ReportErrors: true}))
	theirs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	e := newExporter(t, Config{ExporterMetrics: true})
	mfs, done, err := e.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ours := values(mfs, "process_")
	done()
	want := values(theirs, "process_")

	keys := func(m map[string]float64) []string {
		var k []string
		for name := range m {
			k = append(k, name)
		}
		return k
	}
	sortStrings := cmp.Transformer("sort", func(in []string) []string {
		out := append([]string(nil), in...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
	if diff := cmp.Diff(keys(want), keys(ours), sortStrings); diff != "" {
		t.Fatalf("process metric names (-client_golang +ours):\n%s", diff)
	}
	close := map[string]float64{ // allowed difference
		"process_start_time_seconds":           0.011,
		"process_max_fds":                      0,
		"process_virtual_memory_max_bytes":     0,
		"process_open_fds":                     20, // the exporter keeps its files open
		"process_cpu_seconds_total":            5,
		"process_resident_memory_bytes":        64 << 20,
		"process_virtual_memory_bytes":         1 << 30,
		"process_network_receive_bytes_total":  1e12,
		"process_network_transmit_bytes_total": 1e12,
	}
	for name, v := range want {
		if d := math.Abs(ours[name] - v); d > close[name] {
			t.Errorf("%s = %v, client_golang says %v", name, ours[name], v)
		}
		if ours[name] < 0 || name != "process_network_receive_bytes_total" && name != "process_network_transmit_bytes_total" && ours[name] == 0 {
			t.Errorf("%s = %v", name, ours[name])
		}
	}
}

func TestStatFields(t *testing.T) {
	line := "4242 (a b) c) S 1 2 3 4 5 6 7 8 9 10 110 220 13 14 15 16 17 18 33000 5000000 123 18446744073709551615 1 2\n"
	got, ok := statFields([]byte(line))
	want := procStat{utime: 110, stime: 220, startTicks: 33000, vsize: 5000000, rssPages: 123}
	if !ok || got != want {
		t.Errorf("statFields = %+v, %v; want %+v", got, ok, want)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -1 2 3 4 5 6 7 8 9 10 11"} {
		if _, ok := statFields([]byte(bad)); ok {
			t.Errorf("statFields(%q) accepted", bad)
		}
	}
	netstat := "TcpExt: A B\nTcpExt: 1 2\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 1000 2000\n"
	if in, out, ok := ipExtOctets([]byte(netstat)); !ok || in != 1000 || out != 2000 {
		t.Errorf("ipExtOctets = %d %d %v", in, out, ok)
	}
	if _, _, ok := ipExtOctets([]byte("IpExt: InOctets\n")); ok {
		t.Error("ipExtOctets accepted a header without values")
	}
	if b, ok := bootTime([]byte("cpu 1 2\nbtime 1700000000\nprocesses 5\n")); !ok || b != 1700000000 {
		t.Errorf("bootTime = %d %v", b, ok)
	}
}

// FuzzProcFiles: the /proc/self/stat, /proc/stat and net/netstat readers
// never panic on any content.
func FuzzProcFiles(f *testing.F) {
	for _, s := range []string{
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
		"IpExt: InOctets OutOctets\nIpExt: 1 2\n",
		"btime 5\n", ")", "", "IpExt:\nIpExt:",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		statFields(data)
		bootTime(data)
		if in, out, ok := ipExtOctets(data); !ok && (in != 0 || out != 0) {
			t.Fatalf("not ok but %d %d", in, out)
		}
	})
}
