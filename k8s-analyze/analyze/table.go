package analyze

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteTable writes r for people: one line per node, then its findings, one
// a line. colour adds ANSI colours to risks and severities.
func WriteTable(w io.Writer, r *Report, colour bool) error {
	bw := bufio.NewWriter(w)
	paint := func(s Severity, text string) string {
		if !colour {
			return text
		}
		switch s {
		case High:
			return "\x1b[1;31m" + text + "\x1b[0m"
		case Medium:
			return "\x1b[33m" + text + "\x1b[0m"
		}
		return "\x1b[2m" + text + "\x1b[0m"
	}
	nodeW := len("NODE")
	for _, n := range r.Nodes {
		nodeW = max(nodeW, len(n.Name))
	}
	fmt.Fprintf(bw, "%-*s  %-6s  %4s  %5s  %4s  %5s  %s\n", nodeW, "NODE", "RISK", "PODS", "EVICT", "SKIP", "BLOCK", "FINDINGS")
	for _, n := range r.Nodes {
		c := n.Counts
		fmt.Fprintf(bw, "%-*s  %s  %4d  %5d  %4d  %5d  %d high, %d medium, %d low\n", nodeW, n.Name,
			paint(n.Risk, fmt.Sprintf("%-6s", n.Risk)), c.Pods, c.Evict, c.Skip, c.Block, c.High, c.Medium, c.Low)
		codeW, subjW := 0, 0
		subjects := make([]string, len(n.Findings))
		for i, f := range n.Findings {
			subjects[i] = f.Subject.Kind + " " + name(f.Subject.Namespace, f.Subject.Name)
			codeW, subjW = max(codeW, len(f.Code)), max(subjW, len(subjects[i]))
		}
		for i, f := range n.Findings {
			fmt.Fprintf(bw, "  %s  %-*s  %-*s  %s\n", paint(f.Severity, fmt.Sprintf("%-6s", f.Severity)),
				codeW, f.Code, subjW, subjects[i], strings.ReplaceAll(f.Message, "\n", " "))
		}
	}
	return bw.Flush()
}
