// Package waits names what a decision waits on, and indexes the waiters by
// it. A plan's or a campaign's decision declares its waits (drain.Decision,
// campaign.Decision); the controller keeps them in an Index, and an event
// wakes the waiters of what it changed, nothing else. No wake-up re-derives
// why a decision waits.
package waits

import (
	"cmp"
	"slices"
	"sync"
)

// On is a kind of thing waited on; a Wait's Key says which one.
type On string

// The kinds of waits, and the events that end them.
const (
	// Node, Key a node: the node, a pod on it, or a plan of it changed.
	Node On = "node"
	// Slot: a maintenance slot may have been freed (a node's cordon owner
	// or a plan's hold of one changed: slots.Held).
	Slot On = "slot"
	// PDB, Key namespace/name: that PodDisruptionBudget changed (its
	// status included).
	PDB On = "pdb"
	// PDBs, Key a namespace: any PodDisruptionBudget of it changed.
	PDBs On = "pdbs"
	// Budgets, Key a namespace: a PodDisruptionBudget of it was created or
	// deleted, or its spec changed (it may select other pods).
	Budgets On = "budgets"
	// Pods, Key a namespace: a pod of it was created, bound, deleted, or
	// became Ready or unready (a surge's new replica, a moved pod).
	Pods On = "pods"
	// Owners, Key a namespace ("" for the cluster-scoped volumes): an
	// owner or a volume the analysis reads was created or deleted.
	Owners On = "owners"
	// Placement: where pods may go changed (a node's cordon, taints,
	// labels or allocatable; a pod bound, gone or finished).
	Placement On = "placement"
	// Nodes: a node was created or deleted, or its readiness changed.
	Nodes On = "nodes"
	// Others: what one plan's decision reads of the others changed (their
	// evictions in flight, a throttle, whether they can act).
	Others On = "others"
	// Overrides, Key a plan's name: a MaintenanceOverride for it came,
	// changed or went.
	Overrides On = "overrides"
	// Pause, Key "" for the cluster-wide switch or a campaign's name for
	// its breaker: it was set or lifted.
	Pause On = "pause"
	// Wave, Key campaign/wave: a plan of that wave moved (its phase or
	// reason changed).
	Wave On = "wave"
	// Campaign, Key a campaign: a plan of it moved, or was released.
	Campaign On = "campaign"
)

// Wait is one thing waited on.
type Wait struct {
	On  On
	Key string
}

func (w Wait) String() string {
	if w.Key == "" {
		return string(w.On)
	}
	return string(w.On) + ":" + w.Key
}

// Set collects a decision's waits without repeats.
type Set map[Wait]struct{}

// Add adds the wait on what, for each key (one without a key when none is
// given).
func (s Set) Add(on On, keys ...string) {
	if len(keys) == 0 {
		s[Wait{On: on}] = struct{}{}
	}
	for _, k := range keys {
		s[Wait{On: on, Key: k}] = struct{}{}
	}
}

// List is the set in a stable order.
func (s Set) List() []Wait {
	out := make([]Wait, 0, len(s))
	for w := range s {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Wait) int { return cmp.Or(cmp.Compare(a.On, b.On), cmp.Compare(a.Key, b.Key)) })
	return out
}

// Index maps each wait to its waiters (plan or campaign names), and each
// waiter to its waits. It is safe for concurrent use.
type Index struct {
	mu sync.Mutex
	by map[Wait]map[string]struct{}
	of map[string][]Wait
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{by: map[Wait]map[string]struct{}{}, of: map[string][]Wait{}}
}

// Set replaces the waits of waiter name.
func (x *Index) Set(name string, ws []Wait) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.forget(name)
	if len(ws) == 0 {
		return
	}
	x.of[name] = ws
	for _, w := range ws {
		m := x.by[w]
		if m == nil {
			m = map[string]struct{}{}
			x.by[w] = m
		}
		m[name] = struct{}{}
	}
}

// Forget drops waiter name.
func (x *Index) Forget(name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.forget(name)
}

func (x *Index) forget(name string) {
	for _, w := range x.of[name] {
		if m := x.by[w]; m != nil {
			delete(m, name)
			if len(m) == 0 {
				delete(x.by, w)
			}
		}
	}
	delete(x.of, name)
}

// Waiting calls f with each waiter on w.
func (x *Index) Waiting(w Wait, f func(name string)) {
	for _, n := range x.names(w) {
		f(n)
	}
}

// names copies the waiters of w, so that f runs without the index's lock.
func (x *Index) names(w Wait) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.by[w]
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	return out
}

// Of is the waits of waiter name (nil: none known).
func (x *Index) Of(name string) []Wait {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.of[name]
}
