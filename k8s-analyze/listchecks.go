package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// check is one entry of --list-checks.
type check struct {
	Code     analyze.Code     `json:"code"`
	Severity analyze.Severity `json:"severity"`
	Fix      string           `json:"fix"`
}

// listChecks writes the catalogue of checks, in CHECKS.md's order: a JSON
// array, or with -o table a table.
func listChecks(w io.Writer, f document.Format) error {
	var checks []check
	for _, c := range analyze.Checks() {
		checks = append(checks, check{Code: c.Code, Severity: c.Severity, Fix: c.Fix})
	}
	if f == document.Table {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tSEVERITY\tFIX")
		for _, c := range checks {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Code, c.Severity, c.Fix)
		}
		return tw.Flush()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(checks)
}
