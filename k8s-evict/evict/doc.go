// Package evict asks the Eviction API, exactly once, to evict one pod and
// classifies the answer.
//
// Classify is pure: an HTTP status, the Status body and the headers in, a
// Result out, with the outcomes of sentinel's classification table
// (accepted, gone, pdb-stale, budget-exhausted, throttled, pdb-overlap,
// forbidden, contention, invalid, unknown). Pod is the thin shell: it builds
// the Eviction (UID precondition, dry run), sends it through a Poster, once,
// and classifies the raw answer. HTTP is a Poster over a plain
// *http.Client: one POST, no hidden retries (client-go's REST client
// silently retries answers that carry Retry-After, up to ten times), and the
// headers are kept. WaitGone watches until the pod with a given UID is gone.
//
// The package imports API types only, never client-go: callers hand it an
// *http.Client (rest.HTTPClientFor) and, for WaitGone, anything with the
// typed pod client's List and Watch.
package evict
