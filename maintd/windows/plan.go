package windows

import (
	"fmt"
	"time"
)

// maxIdle is how many windows in a row Plan looks through, none of them
// long enough for the next node, before it gives up.
const maxIdle = 1000

// Estimate is what Plan forecasts for the nodes left.
type Estimate struct {
	// Windows is how many windows the nodes need, the one open now
	// included if a node starts in it.
	Windows int
	// LastEnd is when the last of those windows ends.
	LastEnd time.Time
	// Done is when the last node is forecast to finish: the ETA, across
	// windows. At or before LastEnd.
	Done time.Time
}

// NoFitError says that a node needs more time than any window offers:
// none of the next 1000 windows, nor any in Lookahead, is long enough.
type NoFitError struct {
	// Node is the node's index in Plan's p90s.
	Node int
	// Need is its forecast p90 plus the margin.
	Need time.Duration
}

func (e *NoFitError) Error() string {
	return fmt.Sprintf("node %d needs %s: no window to come is that long", e.Node, e.Need)
}

// Plan forecasts how many windows the nodes left need and when the last
// one ends, from t. p90s are the nodes' forecasts in the order the nodes
// will be taken; parallel is how many nodes may be in progress at once
// (below 1: 1). The packing is greedy and keeps the order: in each window,
// from its start (or from t in the window open now), each node goes to the
// slot that frees up first, if its need (p90 plus the margin) fits before
// the window's end; the first node that does not fit waits for the next
// window, and so do all after it. Nodes already in progress are not
// counted: they finish in the window they are in, or in its overrun.
//
// For a nil *Windows the nodes are packed from t with no window at all:
// Windows is 0, LastEnd zero, Done the ETA.
func (w *Windows) Plan(t time.Time, p90s []time.Duration, parallel int) (Estimate, error) {
	var est Estimate
	if len(p90s) == 0 {
		return est, nil
	}
	parallel = max(parallel, 1)
	free := make([]time.Time, parallel)
	// place packs nodes from next into [start, end) (end zero: no end),
	// and returns the index of the first node that did not fit.
	place := func(next int, start, end time.Time) int {
		for i := range free {
			free[i] = start
		}
		for ; next < len(p90s); next++ {
			slot := 0
			for i := range free {
				if free[i].Before(free[slot]) {
					slot = i
				}
			}
			fin := free[slot].Add(w.Need(p90s[next]))
			if !end.IsZero() && (fin.After(end) || !free[slot].Before(end)) {
				break
			}
			free[slot] = fin
			if fin.After(est.Done) {
				est.Done = fin
			}
		}
		return next
	}
	if w == nil {
		place(0, t.Round(0), time.Time{})
		return est, nil
	}
	from := w.norm(t)
	node, idle := 0, 0
	for node < len(p90s) {
		iv, ok := w.scan().first(from, from.Add(Lookahead))
		if !ok {
			return est, &NoFitError{Node: node, Need: w.Need(p90s[node])}
		}
		if n := place(node, iv.Start, iv.End); n > node {
			node, idle = n, 0
			est.Windows++
			est.LastEnd = iv.End
		} else if need := w.Need(p90s[node]); need > MaxSpan || idle >= maxIdle {
			return est, &NoFitError{Node: node, Need: need}
		} else {
			idle++
		}
		from = iv.End
	}
	return est, nil
}
