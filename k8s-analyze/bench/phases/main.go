//go:build ignore

// Phases times k8s-analyze's phases on a snapshot file, in process, the way
// the binary runs them (file mapped, fresh heap, no collection; Linux): the
// decoding (view.Decode's fast path), the analysis of every node, and the
// JSON encoding of the report, with the memory each phase allocates. With
// -canonical it then times document.Unmarshal, the canonical strict
// decoder, on the same bytes; with -faults, what touching fresh memory
// costs on this machine (much of the run).
//
//	go run ./bench/phases/main.go -f snapshot.json -canonical -faults
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func main() {
	file := flag.String("f", "", "snapshot `FILE`")
	canonical := flag.Bool("canonical", false, "also time document.Unmarshal")
	faults := flag.Bool("faults", false, "also time touching 256 MiB of fresh memory")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the fast path's phases to `FILE`")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the fast path's phases to `FILE`")
	flag.Parse()
	if err := run(*file, *canonical, *faults, *profile, *memprofile); err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
}

func run(file string, canonical, faults bool, profile, memprofile string) error {
	// Mapped like the binary maps a file (see mapFile in app.go).
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return err
	}
	if faults {
		t := time.Now()
		b := make([]byte, 256<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Printf("fresh_memory_ms_per_mb %.2f\n", float64(time.Since(t).Milliseconds())/256)
		b = nil
		runtime.GC()
		debug.FreeOSMemory()
	}
	// As the binary does.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(2 * int64(len(data)))
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	before := allocated()
	t0 := time.Now()
	s, err := view.Decode(data)
	if err != nil {
		return err
	}
	decode, decodeMB := time.Since(t0), allocated()-before
	t1 := time.Now()
	r, err := analyze.Analyze(s, analyze.Options{})
	if err != nil {
		return err
	}
	analysis, analysisMB := time.Since(t1), allocated()-before-decodeMB
	t2 := time.Now()
	if err := analyze.WriteJSON(io.Discard, r); err != nil {
		return err
	}
	encode := time.Since(t2)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	total := decode + analysis + encode
	fmt.Printf("bytes %d\npods %d\nnodes %d\n", len(data), len(s.Pods), len(r.Nodes))
	fmt.Printf("decode_s %.3f\nanalyze_s %.3f\nencode_s %.3f\ndecode_share %.2f\n",
		decode.Seconds(), analysis.Seconds(), encode.Seconds(), decode.Seconds()/total.Seconds())
	fmt.Printf("decode_allocated_mb %d\nanalyze_allocated_mb %d\n", decodeMB, analysisMB)
	if canonical {
		s, r = nil, nil
		runtime.GC()
		debug.SetGCPercent(100)
		t := time.Now()
		var full snapshot.Snapshot
		if err := document.Unmarshal(data, snapshot.Kind, &full); err != nil {
			return err
		}
		fmt.Printf("canonical_decode_s %.3f\n", time.Since(t).Seconds())
	}
	return nil
}

// allocated is the heap allocated so far, in MB.
func allocated() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.TotalAlloc >> 20)
}
