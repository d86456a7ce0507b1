//go:build ignore

// Gen writes a generated Snapshot document (JSON, indented like
// k8s-snapshot's) of bench.Full divided by -div to stdout; with -node, only
// what k8s-snapshot --node NAME writes of it (the node and its siblings);
// with -constraints, the pods have the scheduling constraints the drain
// forecast judges (bench.Constrain).
//
//	go run ./bench/gen/main.go -div 10 > snapshot.json
//	go run ./bench/gen/main.go -node node-0007 > node.json
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func main() {
	div := flag.Int("div", 1, "divide the full size (5,000 nodes, 150,000 pods) by `N`")
	node := flag.String("node", "", "write only the scope of node `NAME`")
	constraints := flag.Bool("constraints", false, "give the pods topology spread and anti-affinity (bench.Constrain)")
	flag.Parse()
	if err := run(*div, *node, *constraints); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(div int, node string, constraints bool) error {
	s := bench.Generate(bench.Full.Scaled(div))
	if constraints {
		bench.Constrain(s)
	}
	if node != "" {
		var err error
		if s, err = snapshot.ForNodes(s, node); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := document.Encode(w, document.JSON, s); err != nil {
		return err
	}
	return w.Flush()
}
