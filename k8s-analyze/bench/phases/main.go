//go:build ignore

// Phases times k8s-analyze's phases on a snapshot file, in process: the
// decoding (the strictjson fast path, and with -canonical also
// document.Unmarshal, the canonical strict decoder), the analysis of every
// node, and the JSON encoding of the report.
//
//	go run ./bench/phases/main.go -f snapshot.json -canonical
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func main() {
	file := flag.String("f", "", "snapshot `FILE`")
	canonical := flag.Bool("canonical", false, "also time document.Unmarshal")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the fast path's phases to `FILE`")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the fast path's phases to `FILE`")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
	if *canonical {
		t0 := time.Now()
		var s snapshot.Snapshot
		if err := document.Unmarshal(data, snapshot.Kind, &s); err != nil {
			fmt.Fprintln(os.Stderr, "phases:", err)
			os.Exit(1)
		}
		fmt.Printf("canonical_decode_s %.3f\n", time.Since(t0).Seconds())
		runtime.GC()
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "phases:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	s, err := analyze.DecodeSnapshot(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
	decode := time.Since(t0)
	heap("decode")
	t1 := time.Now()
	r, err := analyze.Analyze(s, analyze.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
	analysis := time.Since(t1)
	heap("analysis")
	t2 := time.Now()
	if err := analyze.WriteJSON(io.Discard, r); err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
	encode := time.Since(t2)
	heap("encoding")
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err == nil {
			runtime.GC()
			err = pprof.Lookup("allocs").WriteTo(f, 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "phases:", err)
			os.Exit(1)
		}
	}
	total := decode + analysis + encode
	fmt.Printf("bytes %d\npods %d\nnodes %d\ndecode_s %.3f\nanalyze_s %.3f\nencode_s %.3f\ndecode_share %.2f\n",
		len(data), len(s.Pods), len(r.Nodes), decode.Seconds(), analysis.Seconds(), encode.Seconds(), decode.Seconds()/total.Seconds())
}

// heap prints the bytes allocated so far and the heap in use, in MB.
func heap(phase string) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("after_%s_allocated_mb %d\nafter_%s_heap_mb %d\n", phase, m.TotalAlloc>>20, phase, m.HeapInuse>>20)
}
