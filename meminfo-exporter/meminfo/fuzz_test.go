package meminfo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input panics, every line is either kept or counted, and
// valid lines placed before the junk always survive with their value.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"linux-3.2-x86_64", "lxcfs", "linux-5.15-arm64"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "procfs", name, "meminfo"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
	}
	for _, s := range []string{"", "\x00", "a:", ":", "X: 0x10 kB", "X: 18446744073709551616", "X: 18014398509481984 kB", "anon 1\npgfault 2", "a(b): 1 kB\n\n\t"} {
		f.Add([]byte(s), true)
	}
	valid := []struct {
		line  string
		name  string
		value uint64
		unit  Unit
	}{
		{"MemTotal:       16384 kB", "MemTotal", 16384 * 1024, Bytes},
		{"Active(anon):\t 7 kB", "Active(anon)", 7 * 1024, Bytes},
		{"HugePages_Total:   3", "HugePages_Total", 3, Count},
	}
	f.Fuzz(func(t *testing.T, junk []byte, flat bool) {
		format := Colon
		if flat {
			format = Flat
		}
		var s Sample
		p := NewParser(format)
		p.Parse(junk, &s)
		lines := countLines(junk)
		if got := uint64(len(s.Fields)) + s.SkippedLines(); got != lines {
			t.Fatalf("%d fields + %d skipped, want %d lines", len(s.Fields), s.SkippedLines(), lines)
		}
		if format == Flat {
			return
		}
		var in []byte
		for _, v := range valid {
			in = append(in, v.line...)
			in = append(in, '\n')
		}
		in = append(in, junk...)
		p.Parse(in, &s)
		for _, v := range valid {
			got, ok := s.Lookup(v.name)
			if !ok || got.Value != v.value || got.Unit != v.unit {
				t.Fatalf("valid line %q lost: got %+v (present %v)", v.line, got, ok)
			}
		}
	})
}

func countLines(data []byte) uint64 {
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return 0
	}
	n := uint64(bytes.Count(data, []byte("\n")))
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}
