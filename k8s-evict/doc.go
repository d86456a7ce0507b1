// K8s-evict asks the Eviction API, exactly once, to evict one pod, and
// prints the classified answer as an EvictionResult.
//
// At most one POST pods/NAME/eviction per run, never a DELETE. It goes
// through client-go's REST client with its retries switched off: by
// default client-go silently retries answers that carry Retry-After, up to
// ten times inside one call, so the stale-PDB 429 (Retry-After 10) would
// be hidden for about 100 s; here it comes back at once and is reported.
// --timeout bounds each request; --dry-run sends dryRun=All (the API
// server checks everything, PDBs included, and changes nothing).
//
// --uid UID: the pod is read first. When it is not there, or the name now
// belongs to a pod with another UID, the answer is "gone" (reason
// not-found or replaced) and NO eviction is sent: an eviction whose UID
// precondition fails still spends the PDB's budget for up to two minutes.
// Otherwise the UID is sent as the precondition preconditions.uid, so a pod
// re-created in between is not evicted either (409: "gone", replaced).
//
// --wait D: after an accepted eviction, watch until the pod with that UID
// is gone (a new pod with the same name is not it), for at most D. Without
// --uid the pod is read first to learn its UID, which is then also sent as
// the precondition. A pod still there after D is "accepted-not-gone".
//
// The EvictionResult document (apiVersion sentinel.dev/v1alpha1) holds
// namespace, pod, uid, dryRun, outcome, reason, httpStatus,
// retryAfterSeconds (capped by --max-retry-after), pdb (name, need, have:
// when the answer names them), pdbs, gone and message. Outcomes:
//
//	accepted           200/201: the pod is being deleted                  exit 0
//	gone               404 (reason not-found), or 409 on the UID
//	                   precondition (reason replaced); or, with --uid
//	                   or --wait, found so by the read before: no POST
//	                   and httpStatus 0                                   exit 0
//	pdb-stale          429: the PDB's status lags its spec; retry after
//	                   retryAfterSeconds                                  exit 2
//	budget-exhausted   429: the PDB allows no disruption now (pdb names
//	                   the budget, need and have)                         exit 2
//	throttled          any other 429                                      exit 2
//	contention         504: the PDB kept conflicting; or the pod changed  exit 2
//	accepted-not-gone  --wait ended with the pod still there              exit 2
//	pdb-overlap        500: more than one PDB selects the pod (pdbs names
//	                   them, read after the answer when permitted)        exit 3
//	forbidden          403; reason rbac, negative-budget, too-many-pending,
//	                   namespace-terminating or denied                    exit 3
//	unknown            any other answer; or none after the request was
//	                   sent (the connection closed, or --timeout ended:
//	                   reason answer-lost or timeout): the eviction may
//	                   or may not have happened, read the pod again
//	                   before sending anything again                      exit 1
//
// For exit 2 and 3, and for unknown, the message is also printed on
// stderr. Bad input (a missing or invalid flag, an unknown namespace, a
// request the API server refuses as malformed or unauthenticated), a read
// of the pod that fails, and an unreachable API server (no eviction sent)
// print an error on stderr, nothing on stdout, and exit 1.
//
// Permissions: create on pods/eviction; with --uid also get on pods; with
// --wait get, list and watch on pods; to name overlapping PDBs, get on pods
// and list on poddisruptionbudgets (the manual links the ClusterRole that
// grants exactly these).
package main
