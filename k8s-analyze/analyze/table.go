package analyze

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WriteTable writes r for people: one line per node (with its count of
// surges when some node has one, and its forecast's verdict, p50 and p90
// when the report has forecasts), then its pods to surge with the owner
// each scales, then the forecast's critical path, causes and pods that need
// an override (with the downtime a delete implies), then its
// drain order's groups (unless every pod goes in one default group), then
// its findings, one a line; last, with a capacity, one line for it. colour adds
// ANSI colours to risks, severities and verdicts.
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
	nodeW, p50W, p90W, forecasts, surges := len("NODE"), len("P50"), len("P90"), false, false
	for _, n := range r.Nodes {
		nodeW = max(nodeW, len(n.Name))
		surges = surges || n.Counts.Surge > 0
		if f := n.Forecast; f != nil {
			forecasts = true
			p50W, p90W = max(p50W, len(duration(f.P50))), max(p90W, len(duration(f.P90)))
		}
	}
	forecastCols := func(f *Forecast) string {
		if !forecasts {
			return ""
		}
		if f == nil {
			f = &Forecast{}
		}
		return fmt.Sprintf("%s  %-*s  %-*s  ", paint(verdictSeverity(f.Verdict), fmt.Sprintf("%-8s", cmp.Or(string(f.Verdict), "-"))), p50W, duration(f.P50), p90W, duration(f.P90))
	}
	// The surge column only when a node has a pod to surge: the reports of
	// analyses without Options.Surge read as they always did.
	surgeCol := func(s any) string {
		if !surges {
			return ""
		}
		return fmt.Sprintf("%5v  ", s)
	}
	header := surgeCol("SURGE")
	if forecasts {
		header += fmt.Sprintf("%-8s  %-*s  %-*s  ", "FORECAST", p50W, "P50", p90W, "P90")
	}
	fmt.Fprintf(bw, "%-*s  %-6s  %4s  %5s  %4s  %5s  %sFINDINGS\n", nodeW, "NODE", "RISK", "PODS", "EVICT", "SKIP", "BLOCK", header)
	for _, n := range r.Nodes {
		c := n.Counts
		fmt.Fprintf(bw, "%-*s  %s  %4d  %5d  %4d  %5d  %s%s%d high, %d medium, %d low\n", nodeW, n.Name,
			paint(n.Risk, fmt.Sprintf("%-6s", n.Risk)), c.Pods, c.Evict, c.Skip, c.Block, surgeCol(c.Surge), forecastCols(n.Forecast), c.High, c.Medium, c.Low)
		podW := 0
		for _, v := range n.Pods {
			if v.Action == Surge && v.Surge != nil {
				podW = max(podW, len("Pod ")+len(name(v.Namespace, v.Name)))
			}
		}
		for _, v := range n.Pods {
			if m := v.Surge; v.Action == Surge && m != nil {
				fmt.Fprintf(bw, "  surge     %-*s  %s %s %d→%d, then evict (PDB %s)\n", podW, "Pod "+name(v.Namespace, v.Name),
					m.Kind, name(v.Namespace, m.Name), m.Replicas, m.Replicas+1, m.PDB)
			}
		}
		if f := n.Forecast; f != nil {
			if cp := f.CriticalPath; cp != nil {
				fmt.Fprintf(bw, "  forecast  %-7s  %s %s: %s\n", "path", cp.Kind, name(cp.Namespace, cp.Name), pathText(cp))
			}
			reasonW, subjW := 0, 0
			subjects := make([]string, len(f.Causes))
			for i, c := range f.Causes {
				subjects[i] = c.Subject.Kind + " " + name(c.Subject.Namespace, c.Subject.Name)
				reasonW, subjW = max(reasonW, len(c.Reason)), max(subjW, len(subjects[i]))
			}
			for i, c := range f.Causes {
				fmt.Fprintf(bw, "  forecast  %s  %-*s  %-*s  %s\n", paint(verdictSeverity(c.Verdict), fmt.Sprintf("%-7s", c.Verdict)),
					reasonW, c.Reason, subjW, subjects[i], strings.ReplaceAll(c.Message, "\n", " "))
			}
			podW := 0
			for _, o := range f.NeedsOverride {
				podW = max(podW, len("Pod ")+len(name(o.Namespace, o.Name)))
			}
			for _, o := range f.NeedsOverride {
				fmt.Fprintf(bw, "  forecast  %s  %-*s  %s\n", paint(High, "override"), podW, "Pod "+name(o.Namespace, o.Name), overrideText(o))
			}
		}
		if len(n.DrainOrder) > 1 || len(n.DrainOrder) == 1 && n.DrainOrder[0].Why != "default" {
			for _, g := range n.DrainOrder {
				fmt.Fprintf(bw, "  order     %3d  %-13s  %s\n", g.Order, g.Behavior, groupText(g))
			}
		}
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
	if c := r.Capacity; c != nil {
		fmt.Fprintf(bw, "capacity  %s  %s\n", paint(verdictSeverity(c.Verdict), fmt.Sprintf("%-7s", c.Verdict)), capacityText(c))
	}
	return bw.Flush()
}

// overrideText tells what a break-glass delete of a pod that needs an
// override costs, on one line.
func overrideText(o OverrideNeed) string {
	why := fmt.Sprintf("PDB %s never allows (%s), no surge helps", o.PDB, o.Spec)
	if o.Downtime == nil {
		return "a delete removes it for good (nothing re-creates it); " + why
	}
	return fmt.Sprintf("down %s (p90 %s) after a delete, until %s's replacement is Ready; %s", o.Downtime.P50.Duration, o.Downtime.P90.Duration, o.Replacement, why)
}

// groupText tells a drain-order group on one line: why, its pods (five at
// most), and what a storage group waits for.
func groupText(g DrainGroup) string {
	pods := g.Pods
	if len(pods) > 5 {
		pods = append(slices.Clip(pods[:5]), fmt.Sprintf("and %d more", len(g.Pods)-5))
	}
	text := fmt.Sprintf("%s: %s", g.Why, strings.Join(pods, ", "))
	if len(g.WaitsFor) > 0 {
		text += fmt.Sprintf("; waits for %d %s to detach (%s)", len(g.WaitsFor), plural(len(g.WaitsFor), "volume", "volumes"), strings.Join(g.WaitsFor, ", "))
	}
	return text
}

// capacityText tells a capacity on one line: the set, the pods to move and
// their requests, what the nodes outside have free, and the first cause.
func capacityText(c *CapacityReport) string {
	var b strings.Builder
	names := c.Nodes
	if len(names) > 5 {
		names = append(slices.Clip(names[:3]), fmt.Sprintf("and %d more", len(c.Nodes)-3))
	}
	fmt.Fprintf(&b, "%d %s together (%s): %d %s", len(c.Nodes), plural(len(c.Nodes), "node", "nodes"), strings.Join(names, ", "),
		c.Pods, plural(c.Pods, "pod to move", "pods to move"))
	if c.Pods > 0 {
		fmt.Fprintf(&b, " requesting %s", amounts(c.Demand, c.Demand))
	}
	fmt.Fprintf(&b, "; %d schedulable %s outside the set", c.Schedulable, plural(c.Schedulable, "node", "nodes"))
	if c.Free != nil {
		fmt.Fprintf(&b, " with %s free", amounts(*c.Free, c.Demand))
	} else {
		b.WriteString(", free unknown")
	}
	if len(c.Causes) > 0 {
		first := c.Causes[0]
		fmt.Fprintf(&b, "; %s %s %s: %s", first.Verdict, first.Reason, first.Subject.Kind+" "+name(first.Subject.Namespace, first.Subject.Name), strings.ReplaceAll(first.Message, "\n", " "))
		if more := len(c.Causes) - 1 + c.OmittedCauses; more > 0 {
			fmt.Fprintf(&b, " (and %d more %s)", more, plural(more, "cause", "causes"))
		}
	}
	return b.String()
}

// amounts tells r's cpu and memory, and its ephemeral storage when demand
// has some.
func amounts(r, demand Resources) string {
	s := fmt.Sprintf("%dm cpu, %s memory", r.MilliCPU, resource.NewQuantity(r.Memory, resource.BinarySI))
	if demand.EphemeralStorage > 0 {
		s += fmt.Sprintf(", %s ephemeral-storage", resource.NewQuantity(r.EphemeralStorage, resource.BinarySI))
	}
	return s
}

// duration is d as a Go duration, "-" for none.
func duration(d *metav1.Duration) string {
	if d == nil {
		return "-"
	}
	return d.Duration.String()
}

// verdictSeverity colours a verdict as the severity of the same weight.
func verdictSeverity(v Verdict) Severity {
	switch v {
	case VerdictNever:
		return High
	case VerdictUnknown:
		return Medium
	}
	return Low
}

// pathText tells a critical path's rounds and their time: each round but
// the last waits for the replacement's Ready (after the eviction, or after
// the exit for a StatefulSet's pod); the last ends when its pods are gone.
func pathText(cp *CriticalPath) string {
	pods := "pods"
	if cp.Pods == 1 {
		pods = "pod"
	}
	learned := "the default"
	if cp.Ready.Samples > 0 {
		learned = fmt.Sprintf("learned from %d pods of %s", cp.Ready.Samples, cp.Ready.Workload)
	}
	exit := fmt.Sprintf("their exit %s (p90 %s, the prior of grace %s)", cp.Exit.P50.Duration, cp.Exit.P90.Duration, cp.Grace.Duration)
	if cp.Exit.Samples > 0 {
		exit = fmt.Sprintf("their exit %s (p90 %s, learned from %d exits)", cp.Exit.P50.Duration, cp.Exit.P90.Duration, cp.Exit.Samples)
	}
	if cp.Surge {
		// Every eviction waits for a pod Ready: the surge pod's for the
		// first, the previous one's replacement for each next.
		return fmt.Sprintf("%d %s behind a surge, in %d %s of ready p50 %s (the surge pod's, then each replacement's), the last ending with %s; ready p90 %s, %s",
			cp.Pods, pods, cp.Rounds, plural(cp.Rounds, "round", "rounds"), cp.Ready.P50.Duration, exit, cp.Ready.P90.Duration, learned)
	}
	gone := exit
	if cp.Detach.Duration > 0 {
		gone += " and the volume detach " + cp.Detach.Duration.String()
	}
	if cp.Rounds == 1 {
		return fmt.Sprintf("%d %s in 1 round, gone after %s; ready p50 %s, p90 %s, %s", cp.Pods, pods, gone,
			cp.Ready.P50.Duration, cp.Ready.P90.Duration, learned)
	}
	round := fmt.Sprintf("ready p50 %s after the eviction", cp.Ready.P50.Duration)
	switch {
	case cp.VolumeMove.Duration > 0:
		round = fmt.Sprintf("exit %s + volume move %s + ready p50 %s", cp.Exit.P50.Duration, cp.VolumeMove.Duration, cp.Ready.P50.Duration)
	case cp.RoundTime.Duration != cp.Ready.P50.Duration:
		round = fmt.Sprintf("exit %s + ready p50 %s", cp.Exit.P50.Duration, cp.Ready.P50.Duration)
	}
	return fmt.Sprintf("%d %s in %d rounds of %s (%s), the last ending with %s; ready p90 %s, %s", cp.Pods, pods, cp.Rounds,
		cp.RoundTime.Duration, round, gone, cp.Ready.P90.Duration, learned)
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}
