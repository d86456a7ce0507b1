package cgroup

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sentinel-go/sentinel/meminfo-exporter/meminfo"
)

func fixture(name string) string { return filepath.Join("..", "testdata", "cgroupfs", name) }

func TestDetectStatfs(t *testing.T) {
	// Real mounts, seen through statfs: the magic numbers decide.
	tests := map[string]struct {
		magics map[string]int64
		want   Mode
	}{
		"v2":                    {map[string]int64{"/cg": cgroup2Magic}, V2},
		"hybrid":                {map[string]int64{"/cg": tmpfsMagic, "/cg/unified": cgroup2Magic, "/cg/memory": cgroupMagic}, Hybrid},
		"v1":                    {map[string]int64{"/cg": tmpfsMagic, "/cg/memory": cgroupMagic}, V1},
		"tmpfs without cgroups": {map[string]int64{"/cg": tmpfsMagic}, None},
		"something else":        {map[string]int64{"/cg": 0xEF53}, None},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			statfs := func(path string) (int64, error) {
				if m, ok := tt.magics[path]; ok {
					return m, nil
				}
				return 0, fs.ErrNotExist
			}
			got, err := Detect("/cg", statfs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Detect = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := Detect("/cg", func(string) (int64, error) { return 0, fs.ErrNotExist }); err == nil {
		t.Error("Detect on a missing root: no error")
	}
}

func TestDetectFixtures(t *testing.T) {
	// Plain-file trees are no cgroup filesystem: their layout decides.
	tests := map[string]Mode{"v2": V2, "v2-root": V2, "hybrid": Hybrid, "v1": V1, "nothing-here": None}
	for name, want := range tests {
		root := fixture(name)
		if name == "nothing-here" {
			root = t.TempDir()
		}
		got, err := Detect(root, Statfs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Detect(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	tests := map[string]struct {
		mode Mode
		root string
		self string
		want Paths
	}{
		"v2 namespaced": {V2, fixture("v2"), "0::/\n", Paths{V2, fixture("v2"), fixture("v2")}},
		"v2 host path not mounted": {V2, fixture("v2"), "0::/kubepods/pod9/c1\n",
			Paths{V2, fixture("v2"), fixture("v2")}},
		"hybrid": {Hybrid, fixture("hybrid"), "12:memory:/kubepods/pod1\n3:cpu,cpuacct:/kubepods/pod1\n0::/kubepods/pod1\n",
			Paths{Hybrid, filepath.Join(fixture("hybrid"), "memory", "kubepods", "pod1"), filepath.Join(fixture("hybrid"), "unified", "kubepods", "pod1")}},
		"v1": {V1, fixture("v1"), "4:memory:/\n",
			Paths{V1, filepath.Join(fixture("v1"), "memory"), ""}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Locate(tt.mode, tt.root, []byte(tt.self))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Locate (-want +got):\n%s", diff)
			}
		})
	}
	for name, tt := range map[string]struct {
		mode Mode
		self string
	}{
		"empty":             {V2, ""},
		"v2 without 0::":    {V2, "4:memory:/x\n"},
		"v1 without memory": {V1, "0::/\n"},
		"none":              {None, "0::/\n"},
	} {
		if _, err := Locate(tt.mode, "/cg", []byte(tt.self)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRead(t *testing.T) {
	tests := map[string]struct {
		paths Paths
		want  Memory
		stat  map[string]uint64
	}{
		"v2": {
			paths: Paths{Mode: V2, Memory: fixture("v2")},
			want: Memory{Usage: 322961408, WorkingSet: 322961408 - 157286400, Limit: 536870912, Peak: 402653184,
				HasUsage: true, HasLimit: true, HasPeak: true, HasSwap: true},
			stat: map[string]uint64{"anon": 104857600, "pgfault": 2233445},
		},
		"v2 unlimited, no memory.peak (before 5.19)": {
			paths: Paths{Mode: V2, Memory: fixture("v2-unlimited")},
			want:  Memory{Usage: 322961408, WorkingSet: 322961408 - 157286400, HasUsage: true, HasSwap: true},
		},
		"v2 root cgroup": {
			paths: Paths{Mode: V2, Memory: fixture("v2-root")},
			want:  Memory{},
		},
		"hybrid": {
			paths: Paths{Mode: Hybrid, Memory: filepath.Join(fixture("hybrid"), "memory", "kubepods", "pod1")},
			want:  Memory{Usage: 322961408, WorkingSet: 322961408 - 157286400, Peak: 402653184, HasUsage: true, HasPeak: true},
			stat:  map[string]uint64{"total_inactive_file": 157286400, "pgpgin": 40000},
		},
		"v1": {
			paths: Paths{Mode: V1, Memory: filepath.Join(fixture("v1"), "memory")},
			want: Memory{Usage: 322961408, WorkingSet: 322961408 - 157286400, Limit: 536870912, Peak: 402653184,
				HasUsage: true, HasLimit: true, HasPeak: true, HasSwap: true},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got Memory
			for range 2 { // a second read of the same files gives the same
				if err := r.Read(&got); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Memory{}, "Stat", "Events")); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
			if got.Stat.SkippedLines() != 0 || got.Events.SkippedLines() != 0 {
				t.Errorf("skipped lines: stat %v events %v", got.Stat.Skipped, got.Events.Skipped)
			}
			for k, v := range tt.stat {
				if f, ok := got.Stat.Lookup(k); !ok || f.Value != v {
					t.Errorf("memory.stat %s = %d (%v), want %d", k, f.Value, ok, v)
				}
			}
		})
	}
	if _, err := NewReader(Paths{Mode: V2, Memory: t.TempDir()}); err == nil {
		t.Error("NewReader on an empty directory: no error")
	}
}

func TestReadEvents(t *testing.T) {
	r, err := NewReader(Paths{Mode: V2, Memory: fixture("v2")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var m Memory
	if err := r.Read(&m); err != nil {
		t.Fatal(err)
	}
	want := []meminfo.Field{{Name: "low"}, {Name: "high"}, {Name: "max", Value: 3}, {Name: "oom", Value: 1}, {Name: "oom_kill", Value: 1}, {Name: "oom_group_kill"}}
	if diff := cmp.Diff(want, m.Events.Fields); diff != "" {
		t.Errorf("memory.events (-want +got):\n%s", diff)
	}
}

func TestParseSingle(t *testing.T) {
	tests := map[string]struct {
		in     string
		v      uint64
		isMax  bool
		reason meminfo.Reason
		ok     bool
	}{
		"number":        {in: "123\n", v: 123, ok: true},
		"no newline":    {in: "123", v: 123, ok: true},
		"max":           {in: "max\n", v: 1<<64 - 1, isMax: true, ok: true},
		"empty":         {in: "", reason: meminfo.BadValue},
		"negative":      {in: "-1\n", reason: meminfo.BadValue},
		"two lines":     {in: "1\n2\n", reason: meminfo.BadValue},
		"overflow":      {in: "18446744073709551616\n", reason: meminfo.Overflow},
		"trailing NULs": {in: "7\n\x00\x00", v: 7, ok: true},
	}
	for name, tt := range tests {
		v, isMax, reason, ok := parseSingle([]byte(tt.in))
		if v != tt.v && tt.ok || isMax != tt.isMax || reason != tt.reason || ok != tt.ok {
			t.Errorf("%s: parseSingle(%q) = %d, %v, %v, %v; want %d, %v, %v, %v", name, tt.in, v, isMax, reason, ok, tt.v, tt.isMax, tt.reason, tt.ok)
		}
	}
}

func TestParsePressure(t *testing.T) {
	tests := map[string]struct {
		in   string
		want Pressure
		fail bool
		err  meminfo.Reason
	}{
		"some and full": {in: "some avg10=0.00 avg60=0.12 avg300=0.05 total=1234567\nfull avg10=0.00 avg60=0.04 avg300=0.01 total=345678\n",
			want: Pressure{Waiting: 1234567, Stalled: 345678, HasWaiting: true, HasStalled: true}},
		"some only":      {in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", want: Pressure{Waiting: 5, HasWaiting: true}},
		"empty":          {in: "", fail: true, err: meminfo.EmptyLine},
		"no total":       {in: "some avg10=0.00\n", fail: true, err: meminfo.BadValue},
		"bad total":      {in: "some total=-3\n", fail: true, err: meminfo.BadValue},
		"unknown kind":   {in: "most total=3\n", fail: true, err: meminfo.BadKey},
		"overflow total": {in: "some total=99999999999999999999999\n", fail: true, err: meminfo.Overflow},
	}
	for name, tt := range tests {
		got, err := parsePressure([]byte(tt.in))
		var pe *ParseError
		switch {
		case !tt.fail && err != nil:
			t.Errorf("%s: %v", name, err)
		case tt.fail && (!errors.As(err, &pe) || pe.Reason != tt.err):
			t.Errorf("%s: error %v, want reason %v", name, err, tt.err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	r, err := NewPressureReader(Paths{Mode: V2, Pressure: fixture("v2")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if p, err := r.Read(); err != nil || p.Waiting != 1234567 {
		t.Errorf("PressureReader.Read = %+v, %v", p, err)
	}
	if _, err := NewPressureReader(Paths{Mode: V1}); err == nil {
		t.Error("NewPressureReader on v1: no error")
	}
}

func TestStatIsCount(t *testing.T) {
	for key, want := range map[string]bool{
		"anon": false, "file": false, "anon_thp": false, "inactive_file": false, "zswap": false, "zswapped": false,
		"hierarchical_memory_limit": false, "total_cache": false,
		"pgfault": true, "pgscan_kswapd": true, "thp_fault_alloc": true, "workingset_refault_file": true,
		"zswpout": true, "total_pgfault": true, "pgpgin": true, "numa_pages_migrated": true,
	} {
		if got := StatIsCount(key); got != want {
			t.Errorf("StatIsCount(%q) = %v, want %v", key, got, want)
		}
	}
}

// FuzzCgroupFiles: the one-value and PSI parsers never panic, and what
// they accept reads back.
func FuzzCgroupFiles(f *testing.F) {
	for _, s := range []string{"123\n", "max\n", "", "some avg10=0.00 total=5\nfull total=1\n", "some total=\n", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, isMax, _, ok := parseSingle(data); ok && !isMax && v == 0 && len(data) == 0 {
			t.Fatal("empty file read as 0")
		}
		p, err := parsePressure(data)
		if err == nil && !p.HasWaiting {
			t.Fatalf("accepted %q without a some line", data)
		}
	})
}
