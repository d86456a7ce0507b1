//go:build ignore

// Phases times k8s-analyze's phases on a snapshot file, in process, the way
// the binary runs them: the decoding (decode.Snapshot), the analysis of
// every node with its drain forecast, and the JSON encoding of the report,
// with the memory each phase allocates; then the analysis 3 times with and 3
// times without the forecast, alternating, so that forecast_s, the
// difference of their medians, is the forecast's share.
// With -canonical it then times document.Unmarshal, the canonical strict
// decoder, on the same bytes.
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
	"slices"
	"time"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func main() {
	file := flag.String("f", "", "snapshot `FILE`")
	canonical := flag.Bool("canonical", false, "also time document.Unmarshal")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the phases to `FILE`")
	flag.Parse()
	if err := run(*file, *canonical, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
}

func run(file string, canonical bool, profile string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
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
	s, err := decode.Snapshot(data)
	if err != nil {
		return err
	}
	decoding, decodeMB := time.Since(t0), allocated()-before
	t1 := time.Now()
	r, err := analyze.Analyze(s, analyze.Options{Forecast: &analyze.ForecastOptions{}})
	if err != nil {
		return err
	}
	analysis, analysisMB := time.Since(t1), allocated()-before-decodeMB
	t2 := time.Now()
	if err := analyze.WriteJSON(io.Discard, r); err != nil {
		return err
	}
	encode := time.Since(t2)
	pprof.StopCPUProfile()
	var with, without []time.Duration
	for range 3 {
		for _, forecast := range []bool{false, true} {
			opts := analyze.Options{}
			if forecast {
				opts.Forecast = &analyze.ForecastOptions{}
			}
			runtime.GC()
			t := time.Now()
			if _, err := analyze.Analyze(s, opts); err != nil {
				return err
			}
			if forecast {
				with = append(with, time.Since(t))
			} else {
				without = append(without, time.Since(t))
			}
		}
	}
	slices.Sort(with)
	slices.Sort(without)
	total := decoding + analysis + encode
	fmt.Printf("bytes %d\npods %d\nnodes %d\n", len(data), len(s.Pods), len(r.Nodes))
	fmt.Printf("decode_s %.3f\nanalyze_s %.3f\nencode_s %.3f\ndecode_share %.2f\n",
		decoding.Seconds(), analysis.Seconds(), encode.Seconds(), decoding.Seconds()/total.Seconds())
	fmt.Printf("decode_allocated_mb %d\nanalyze_allocated_mb %d\n", decodeMB, analysisMB)
	fmt.Printf("analyze_checks_s %.3f\nanalyze_forecast_s %.3f\nforecast_s %.3f\n", without[1].Seconds(), with[1].Seconds(), (with[1] - without[1]).Seconds())
	if canonical {
		s, r = nil, nil
		runtime.GC()
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
