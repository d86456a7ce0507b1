//go:build ignore

// Gen writes a generated Snapshot document (JSON, indented like
// k8s-snapshot's) of bench.Full divided by -div to stdout.
//
//	go run ./bench/gen/main.go -div 10 > snapshot.json
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func main() {
	div := flag.Int("div", 1, "divide the full size (5,000 nodes, 150,000 pods) by `N`")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := document.Encode(w, document.JSON, bench.Generate(bench.Full.Scaled(*div))); err == nil {
		err = w.Flush()
	} else {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
