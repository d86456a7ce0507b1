package analyze

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// The capacity of a node set (CHECKS.md, "Capacity of a node set"): a
// campaign cordons every node of a set first, so the pods its drains evict
// land outside the set; before any write it asks whether the nodes left
// schedulable can take them all. It is the forecast's placement, made for
// the whole set at once.

// MaxCapacityCauses bounds a CapacityReport's causes: a set of many nodes
// holds many workloads, each of which can have a cause of its own.
const MaxCapacityCauses = 20

// capacityWords are the words of a set's placement causes.
var capacityWords = placeWords{elsewhere: "any node outside the set", another: "a node outside the set",
	order: "the set's nodes by name, each in pod order", noCandidate: "no schedulable node outside the set",
	candidates: "schedulable nodes outside the set", model: "the capacity model"}

// Capacity judges whether the pods that draining every node of nodes evicts
// can run on the other nodes once all of nodes are cordoned: the
// replacements of the pods the forecast of each node would place (not
// DaemonSet, mirror, finished or terminating pods; only those a verified
// ReplicaSet or StatefulSet re-creates, whatever their action, surge
// included), placed one after the other, first fit, the set's nodes by name
// and each node's pods in order, each replacement seeing those placed
// before it (requests, pod count, topology spread and anti-affinity on the
// hostname) and the pods of the set gone from their nodes from their own
// turn on, as in a node's forecast. Every node of the set counts as
// cordoned; s is not changed (it may be shared, as maintd's caches are).
//
// It errors, and judges nothing, when nodes is empty, a node of it is not in
// s, or s is not internally consistent (as Analyze). opts tune the per-pod
// judgements as they do Analyze's (Surge, Now, MaxGrace); its Nodes and
// Forecast are not used. A node-scoped snapshot holds no other node: the
// verdict is unknown (nodes-out-of-scope) when there are pods to move,
// unless the capacity is judged on a Placement (Placement.Capacity).
func Capacity(s *view.Snapshot, nodes []string, opts Options) (*CapacityReport, error) {
	return capacity(s, nodes, opts, nil)
}

// Capacity is the function Capacity with the pods to move placed on pl's
// nodes instead of s's own: s may be node-scoped, snapshot.ForNodes of the
// set (a campaign's wave). pl must hold the nodes of the set, and be of the
// same cut of the cluster as s (as for ForecastOptions.Placement).
func (pl *Placement) Capacity(s *view.Snapshot, nodes []string, opts Options) (*CapacityReport, error) {
	return capacity(s, nodes, opts, pl)
}

// capacity is Capacity on the placement model given, or s's own when given
// is nil.
func capacity(s *view.Snapshot, nodes []string, opts Options, given *Placement) (*CapacityReport, error) {
	if len(nodes) == 0 {
		return nil, errors.New("capacity: the set of nodes is empty")
	}
	x, err := indexed(s)
	if err != nil {
		return nil, err
	}
	if err := missing(x, given, nodes); err != nil {
		return nil, err
	}
	set := slices.Compact(slices.Sorted(slices.Values(nodes)))
	a, _ := newAnalyzer(x, s, opts)
	// The pods each node's drain evicts, as its analysis judges them, in
	// the node's pod order: the nodes are independent, analysed in
	// parallel, each into its place.
	leave := make([][]leaving, len(set))
	var next atomic.Int64
	parallel.Do(min(runtime.GOMAXPROCS(0), len(set)), func(int) {
		var sc scratch
		for i := int(next.Add(1) - 1); i < len(set); i = int(next.Add(1) - 1) {
			a.node(x.nodes[set[i]], &sc)
			for k := range sc.states {
				if st := &sc.states[k]; !st.skipped {
					leave[i] = append(leave[i], x.leavingOf(st.pod, st.chain.top, placedBy(st.chain)))
				}
			}
		}
	})
	r := &CapacityReport{Nodes: set}
	var demand view.Resources
	for _, l := range leave {
		for _, m := range l {
			if m.placed {
				r.Pods++
				addResources(&demand, requestsOf(m.pod))
			}
		}
	}
	r.Demand = resourcesOf(demand)
	var cs causes
	if p := placerOf(given, x, s); p == nil {
		if r.Pods > 0 {
			cs.add(VerdictUnknown, ReasonNodesOutOfScope, Subject{Kind: "Snapshot", Name: s.Metadata.CapturedAt.UTC().Format(time.RFC3339)},
				"the snapshot is scoped to its nodes (k8s-snapshot --node): where the %d pods to move can run cannot be judged without the other nodes and their pods; take a whole-cluster snapshot", r.Pods)
		}
	} else {
		in, at := make([]bool, len(p.nodes)), make([]int, len(set))
		for i, name := range set {
			at[i] = p.at[name]
			in[at[i]] = true
			for k := range leave[i] {
				leave[i][k].node = at[i]
			}
		}
		var pl placement
		pl.resetSet(in, at)
		free, schedulable, known := p.free(&pl, nil)
		r.Schedulable = schedulable
		if known {
			f := resourcesOf(free)
			r.Free = &f
		}
		if r.Pods > 0 {
			all := slices.Concat(leave...)
			p.placeRun(&pl, len(all), func(k int) leaving { return all[k] }, &capacityWords, func(demand view.Resources, eligible []bool) string {
				free, nodes, known := p.free(&pl, eligible)
				if !known {
					return ""
				}
				return capacityShortfall(r.Pods, nodes, demand, free)
			}, &cs)
		}
	}
	slices.SortStableFunc(cs.list, causeOrder)
	switch {
	case slices.ContainsFunc(cs.list, func(c ForecastCause) bool { return c.Verdict == VerdictNever }):
		r.Verdict = VerdictNever
	case len(cs.list) > 0:
		r.Verdict = VerdictUnknown
	default:
		r.Verdict = VerdictOK
	}
	if len(cs.list) > MaxCapacityCauses {
		r.OmittedCauses = len(cs.list) - MaxCapacityCauses
		cs.list = cs.list[:MaxCapacityCauses]
	}
	r.Causes = cs.list
	return r, nil
}

// capacityShortfall says which resource the schedulable nodes outside the
// set have too little of, free in all, for the demand of the pods to move
// ("" when each suffices).
func capacityShortfall(pods, nodes int, demand, free view.Resources) string {
	who := fmt.Sprintf("the %d %s", pods, plural(pods, "pod to move requests", "pods to move request"))
	where := fmt.Sprintf("the %d %s", nodes, plural(nodes, "schedulable node outside the set has", "schedulable nodes outside the set have"))
	switch short(demand, free) {
	case "cpu":
		return fmt.Sprintf("%s %dm cpu and %s %dm free in all", who, demand.MilliCPU, where, free.MilliCPU)
	case "memory":
		return fmt.Sprintf("%s %d bytes of memory and %s %d free in all", who, demand.Memory, where, free.Memory)
	case "ephemeral-storage":
		return fmt.Sprintf("%s %d bytes of ephemeral-storage and %s %d free in all", who, demand.EphemeralStorage, where, free.EphemeralStorage)
	case "pods":
		return fmt.Sprintf("%s room for %d pods and %s room for %d more in all", who, demand.Pods, where, free.Pods)
	}
	return ""
}

func resourcesOf(r view.Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage, Pods: r.Pods}
}
