// Package evict asks the Eviction API, exactly once, to evict one pod and
// classifies the answer.
//
// Classify is pure: an HTTP status, the Status body and the headers in, a
// Result out, with the outcomes of sentinel's classification table
// (accepted, gone, pdb-stale, budget-exhausted, throttled, pdb-overlap,
// forbidden, contention, invalid, unknown). Check is pure too: the pod as
// read (or cached) and the request in, and when the pod is absent or has
// another UID than the one asked for, the outcome gone without any
// eviction sent (a failed UID precondition still spends the PDB's budget
// for up to two minutes). Pod is the thin shell around Classify: it builds
// the Eviction (UID precondition, dry run), sends it through a Poster,
// once, and classifies the raw answer. Run is the whole flow the k8s-evict
// command runs: read the pod and Check it, Pod, then WaitGone for an
// accepted eviction, or name the PDBs behind a pdb-overlap answer
// (Overlapping).
//
// The package imports API types only, never client-go: its I/O goes
// through small interfaces (Poster, PodClient, Pods, Budgets) that the
// typed clientset satisfies. Package evictrest is the Poster over
// client-go's REST client, with its hidden retries switched off.
package evict
