package meminfo

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parse(t *testing.T, format Format, data string) Sample {
	t.Helper()
	var s Sample
	NewParser(format).Parse([]byte(data), &s)
	return s
}

func skipped(reasons ...Reason) [NumReasons]uint64 {
	var s [NumReasons]uint64
	for _, r := range reasons {
		s[r]++
	}
	return s
}

func TestParseKernels(t *testing.T) {
	tests := map[string]struct {
		fields  int
		skipped [NumReasons]uint64
		want    map[string]Field // a few fields that must be there
		absent  []string         // fields that this kernel does not print
	}{
		"linux-3.2-x86_64": {
			fields: 42,
			want: map[string]Field{
				"MemTotal":        {"MemTotal", 2050148 * 1024, Bytes},
				"Active(anon)":    {"Active(anon)", 243652 * 1024, Bytes},
				"HugePages_Total": {"HugePages_Total", 0, Count},
				"VmallocTotal":    {"VmallocTotal", 34359738367 * 1024, Bytes},
			},
			absent: []string{"MemAvailable", "KReclaimable"},
		},
		"linux-4.19-x86_64": {
			fields: 48,
			want: map[string]Field{
				"MemAvailable": {"MemAvailable", 5611296 * 1024, Bytes},
				"DirectMap1G":  {"DirectMap1G", 3145728 * 1024, Bytes},
			},
			absent: []string{"KReclaimable"},
		},
		"linux-5.15-arm64": {
			fields: 51,
			want: map[string]Field{
				"KReclaimable":    {"KReclaimable", 140036 * 1024, Bytes},
				"ShadowCallStack": {"ShadowCallStack", 2368 * 1024, Bytes},
				"CmaTotal":        {"CmaTotal", 524288 * 1024, Bytes},
			},
			absent: []string{"DirectMap4k", "DirectMap2M"},
		},
		"linux-6.18-x86_64": {
			fields: 53,
			want: map[string]Field{
				"MemAvailable":  {"MemAvailable", 23748840 * 1024, Bytes},
				"SecPageTables": {"SecPageTables", 0, Bytes},
				"Zswapped":      {"Zswapped", 0, Bytes},
				"Hugepagesize":  {"Hugepagesize", 2048 * 1024, Bytes},
			},
		},
		"lxcfs": { // MemFree underflowed in LXCFS; NUL padding; no final newline
			fields:  25,
			skipped: skipped(Overflow),
			want: map[string]Field{
				"MemTotal":     {"MemTotal", 2097152 * 1024, Bytes},
				"MemAvailable": {"MemAvailable", 1048576 * 1024, Bytes},
				"Hugepagesize": {"Hugepagesize", 2048 * 1024, Bytes},
			},
			absent: []string{"MemFree"},
		},
		"lxcfs-blank": {absent: []string{"MemTotal"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "procfs", name, "meminfo"))
			if err != nil {
				t.Fatal(err)
			}
			got := parse(t, Colon, string(data))
			if len(got.Fields) != tt.fields {
				t.Errorf("got %d fields, want %d", len(got.Fields), tt.fields)
			}
			if diff := cmp.Diff(tt.skipped, got.Skipped); diff != "" {
				t.Errorf("skipped lines (-want +got):\n%s", diff)
			}
			for k, want := range tt.want {
				f, ok := got.Lookup(k)
				if !ok {
					t.Errorf("field %s missing", k)
					continue
				}
				if diff := cmp.Diff(want, f); diff != "" {
					t.Errorf("field %s (-want +got):\n%s", k, diff)
				}
			}
			for _, k := range tt.absent {
				if f, ok := got.Lookup(k); ok {
					t.Errorf("field %s = %d, want it absent", k, f.Value)
				}
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	const ok = "MemTotal: 1 kB\n"
	tests := map[string]struct {
		format Format
		in     string
		want   []Field
		skip   [NumReasons]uint64
	}{
		"empty file":              {in: ""},
		"only NULs":               {in: "\x00\x00\x00"},
		"no final newline":        {in: "MemTotal: 1 kB", want: []Field{{"MemTotal", 1024, Bytes}}},
		"trailing NULs":           {in: ok + "MemFree: 2 kB\n\x00\x00", want: []Field{{"MemTotal", 1024, Bytes}, {"MemFree", 2048, Bytes}}},
		"NUL inside a line":       {in: ok + "Mem\x00Free: 2 kB\n", want: []Field{{"MemTotal", 1024, Bytes}}, skip: skipped(BadKey)},
		"empty lines":             {in: "\n" + ok + "\n   \n\t\n", want: []Field{{"MemTotal", 1024, Bytes}}, skip: skipped(EmptyLine, EmptyLine, EmptyLine, EmptyLine)},
		"no colon":                {in: ok + "MemFree 2 kB\n", want: []Field{{"MemTotal", 1024, Bytes}}, skip: skipped(NoColon)},
		"old header lines":        {in: "        total:    used:    free:\nMem:  1055760384 1041887232 13873152\n" + ok, want: []Field{{"MemTotal", 1024, Bytes}}, skip: skipped(BadValue, BadUnit)},
		"tabs and padding":        {in: "MemTotal:\t\t 7 \t kB \t\n  MemFree  :3 kB\n", want: []Field{{"MemTotal", 7 * 1024, Bytes}, {"MemFree", 3 * 1024, Bytes}}},
		"crlf is not blank":       {in: "MemTotal: 1 kB\r\n", skip: skipped(BadUnit)},
		"empty key":               {in: ": 1 kB\n", skip: skipped(BadKey)},
		"key with a space":        {in: "Mem Total: 1 kB\n", skip: skipped(BadKey)},
		"key with a dot":          {in: "Mem.Total: 1 kB\n", skip: skipped(BadKey)},
		"missing value":           {in: "MemTotal:\n", skip: skipped(BadValue)},
		"missing value, unit":     {in: "MemTotal: kB\n", skip: skipped(BadValue)},
		"letters":                 {in: "MemTotal: abc kB\n", skip: skipped(BadValue)},
		"negative":                {in: "MemTotal: -1 kB\n", skip: skipped(BadValue)},
		"leading plus":            {in: "MemTotal: +1 kB\n", skip: skipped(BadValue)},
		"hex":                     {in: "MemTotal: 0x10 kB\n", skip: skipped(BadValue)},
		"underscore":              {in: "MemTotal: 1_0 kB\n", skip: skipped(BadValue)},
		"float":                   {in: "MemTotal: 1.5 kB\n", skip: skipped(BadValue)},
		"leading zero is decimal": {in: "MemTotal: 010 kB\n", want: []Field{{"MemTotal", 10 * 1024, Bytes}}},
		"max uint64 count":        {in: "HugePages_Total: 18446744073709551615\n", want: []Field{{"HugePages_Total", math.MaxUint64, Count}}},
		"digits overflow":         {in: "HugePages_Total: 18446744073709551616\n", skip: skipped(Overflow)},
		"long digits":             {in: "MemTotal: 99999999999999999999999999 kB\n", skip: skipped(Overflow)},
		"kB overflow":             {in: "MemTotal: 18014398509481984 kB\n", skip: skipped(Overflow)}, // 2^54
		"largest kB":              {in: "MemTotal: 18014398509481983 kB\n", want: []Field{{"MemTotal", 18014398509481983 * 1024, Bytes}}},
		"other unit":              {in: "MemTotal: 1 MB\n", skip: skipped(BadUnit)},
		"lowercase kb":            {in: "MemTotal: 1 kb\n", skip: skipped(BadUnit)},
		"extra token":             {in: "MemTotal: 1 kB x\n", skip: skipped(BadUnit)},
		"duplicate: first wins": {
			in:   "MemTotal: 1 kB\nMemFree: 2 kB\nMemTotal: 3 kB\n",
			want: []Field{{"MemTotal", 1024, Bytes}, {"MemFree", 2048, Bytes}},
			skip: skipped(Duplicate),
		},
		"unknown field is kept": {in: "NewField2030: 5 kB\nNewCount: 6\n", want: []Field{{"NewField2030", 5 * 1024, Bytes}, {"NewCount", 6, Count}}},
		"flat":                  {format: Flat, in: "anon 4096\npgfault 12\n", want: []Field{{"anon", 4096, Count}, {"pgfault", 12, Count}}},
		"flat with kB":          {format: Flat, in: "anon 4 kB\n", skip: skipped(BadUnit)},
		"flat with colon":       {format: Flat, in: "anon: 4\n", skip: skipped(BadKey)},
		"flat without value":    {format: Flat, in: "anon\n", skip: skipped(BadValue)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := parse(t, tt.format, tt.in)
			if diff := cmp.Diff(tt.want, got.Fields, cmp.Comparer(func(a, b []Field) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.skip, got.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseReuse(t *testing.T) {
	// The same parser and sample across files: nothing from an earlier
	// parse leaks into a later one, and duplicates are per parse.
	p := NewParser(Colon)
	var s Sample
	p.Parse([]byte("A: 1 kB\nB: 2 kB\nC: 3\n"), &s)
	p.Parse([]byte("C: 4\nA: 5 kB\nC: 6\n"), &s)
	want := Sample{Fields: []Field{{"C", 4, Count}, {"A", 5 * 1024, Bytes}}, Skipped: skipped(Duplicate)}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("second parse (-want +got):\n%s", diff)
	}
}

func TestParseAllocs(t *testing.T) {
	for _, name := range []string{"linux-6.18-x86_64", "linux-3.2-x86_64", "lxcfs"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "procfs", name, "meminfo"))
		if err != nil {
			t.Fatal(err)
		}
		p := NewParser(Colon)
		var s Sample
		p.Parse(data, &s) // sizes the sample
		if n := testing.AllocsPerRun(100, func() { p.Parse(data, &s) }); n != 0 {
			t.Errorf("%s: %v allocations per parse, want 0", name, n)
		}
	}
	// Unknown fields allocate once, when first seen, and never again.
	data := []byte("MemTotal: 1 kB\nBrandNew: 2 kB\n")
	p := NewParser(Colon)
	var s Sample
	p.Parse(data, &s)
	if n := testing.AllocsPerRun(100, func() { p.Parse(data, &s) }); n != 0 {
		t.Errorf("unknown field: %v allocations per parse, want 0", n)
	}
}

func TestMetricName(t *testing.T) {
	tests := map[string]string{
		"MemTotal":        "MemTotal",
		"Active(anon)":    "Active_anon",
		"Inactive(file)":  "Inactive_file",
		"HugePages_Total": "HugePages_Total",
		"NFS_Unstable":    "NFS_Unstable",
	}
	for in, want := range tests {
		if got := MetricName(in); got != want {
			t.Errorf("MetricName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReasonString(t *testing.T) {
	var got []string
	for r := Reason(0); r <= NumReasons; r++ {
		got = append(got, r.String())
	}
	want := "empty_line no_colon bad_key bad_value overflow bad_unit duplicate unknown"
	if diff := cmp.Diff(want, strings.Join(got, " ")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
