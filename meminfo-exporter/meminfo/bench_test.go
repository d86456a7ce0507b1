package meminfo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sentinel-go/sentinel/meminfo-exporter/kfile"
	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

// BenchmarkParse: target <= 3us and 0 allocs on this machine's kernel output.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "procfs", "linux-6.18-x86_64", "meminfo"))
	if err != nil {
		b.Fatal(err)
	}
	p := meminfo.NewParser(meminfo.Colon)
	var s meminfo.Sample
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p.Parse(data, &s)
	}
	if len(s.Fields) == 0 {
		b.Fatal("nothing parsed")
	}
}

// BenchmarkReadParse reads the live /proc/meminfo (pread on a kept fd) and
// parses it: target <= 10us.
func BenchmarkReadParse(b *testing.B) {
	f := kfile.New("/proc/meminfo")
	defer f.Close()
	p := meminfo.NewParser(meminfo.Colon)
	var s meminfo.Sample
	b.ReportAllocs()
	for b.Loop() {
		data, err := f.Read()
		if err != nil {
			b.Fatal(err)
		}
		p.Parse(data, &s)
	}
	if _, ok := s.Lookup("MemAvailable"); !ok {
		b.Fatal("no MemAvailable")
	}
}
