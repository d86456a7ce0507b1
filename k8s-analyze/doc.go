// K8s-analyze grades how risky draining a node is, from a Snapshot, offline.
//
// It reads a Snapshot document (JSON or YAML, as written by k8s-snapshot)
// from stdin or -f FILE and never contacts a cluster. For each node (--node,
// repeatable; default every node of the snapshot) it writes a Report: the
// node's risk (low, medium, high), its findings (stable code, severity,
// subject, message, evidence, fix), a verdict per pod (evict, skip or block,
// the owner chain with each hop's UID verified, the matching PDBs, and
// evictableNow: the answer the Eviction API would give right now), and the
// arithmetic of every PDB covering the node's pods. The checks are listed in
// k8s-analyze/CHECKS.md of the sentinel repository.
//
// Time is the snapshot's capturedAt, so the verdicts are deterministic;
// --now overrides it.
//
// The report's metadata says whether the snapshot is one consistent cut of
// the cluster (consistent, resourceVersion, from k8s-snapshot) and its age:
// the clock at analysis (or --now) minus capturedAt. Every node gets a low
// finding snapshot-inconsistent when the snapshot is not consistent, and
// snapshot-stale when it is older than --max-age (default 5m).
//
// Usage:
//
//	k8s-snapshot --node node-1 | k8s-analyze --node node-1 -o table
//	k8s-analyze -f snapshot.json -o yaml
//
// Output: -o json (default), yaml, or table (one line per node, then its
// findings; colour only on a terminal).
//
// JSON is the fast path. YAML goes through a general YAML parser first,
// many times slower: keep big snapshots in JSON, k8s-snapshot's default
// (docs/benchmarks.md in the repository has the figures).
//
// Decoding is strict: an unknown field, a duplicate one or one in another
// case is an error naming its JSON path (/pods/17/spec/nodeNmae: unknown
// field). JSON is decoded as it is read, an object at a time.
//
// Exit status: 0 when every requested node is low risk, 2 when the worst is
// medium, 3 when it is high, 1 on any error (bad input, unknown node).
package main
