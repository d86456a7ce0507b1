// K8s-analyze grades how risky draining a node is, from a Snapshot, offline.
//
// It reads a Snapshot document (JSON or YAML, as written by k8s-snapshot)
// from stdin or -f FILE and never contacts a cluster. For each node (--node,
// repeatable; default every node of the snapshot) it writes a Report: the
// node's risk (low, medium, high), its findings (stable code, severity,
// subject, message, evidence, fix), a verdict per pod (evict, skip, block,
// or surge with --surge; the owner chain with each hop's UID verified, the
// matching PDBs, and evictableNow: the answer the Eviction API would give
// right now), and the arithmetic of every PDB covering the node's pods.
// --list-checks prints every check with its severity and fix.
//
// Every node also gets a forecast: how long until its evictable pods are
// gone, p50 and p90, as Go durations; the critical path (the PDB, or the
// workload, whose rounds dominate, with its rounds and the time of one:
// the grace period plus the time a replacement takes to become Ready,
// learned from the workload's own pods' PodScheduled and Ready times,
// --default-ready-time when none shows both); and a verdict: ok, never (a
// PDB that can never allow, overlapping PDBs, a budget that never refills,
// replacements no other node can run) or unknown (naming what the snapshot
// cannot tell). Evictions in flight are bounded by
// --max-concurrent-evictions (default 50, as maintd). Where replacements
// can run is judged only on a whole-cluster snapshot (k8s-snapshot without
// --node); on a node-scoped one the forecast is unknown and gives no times
// (k8s-snapshot | k8s-analyze --node NAME gives them).
//
// Every node also gets its drain order: its pods in groups, in the order
// they may go, each after the groups before it are gone (a pod's
// maintenance.sentinel.dev/drain annotation: skip, wait-completed or
// order=N; then storage providers, recognised by the namespace of their
// CSI driver's node plugin, well-known labels or the
// maintenance.sentinel.dev/storage-provider annotation, last, once the
// volumes of the pods that use them have detached; order 0 otherwise). A
// VolumeAttachment on the node whose PersistentVolume or claim is gone is a
// high finding volume-attachment-leaked. The forecast times a pod whose
// ReadWriteOnce volume must move as grace + detach + attach + ready (the
// detach and attach 5s each: nothing in a snapshot measures them, and a
// cause volume-move-assumed says so), and evicts group after group.
//
// A pod whose PodDisruptionBudget can never allow its eviction (a Deployment
// of 1 with minAvailable: 1) can still move with no downtime when one more
// replica of its owner lets the budget allow one: its verdict names the
// owner such a surge scales (surge) or says why none can (noSurge), and it
// gets a medium finding surge-movable. With --surge the report plans that
// drain, as maintd does with spec.surge: IfNeeded: such a pod's action is
// surge instead of block, its PDB's pdb-zero-spec no longer grades the node
// when a surge moves every pod of it there, and the forecast times it (the
// surge pod Ready, then one eviction a time to Ready).
//
// A pod whose budget never allows its eviction and that no surge moves (a
// StatefulSet of 1 under minAvailable: 1, a Deployment under
// maxUnavailable: 0, a bare pod under a PDB) gets a high finding
// needs-override: no eviction ever moves it, only a delete under a
// MaintenanceOverride that someone other than the plan's requester
// approves (kubectl maint override). Its message names the pod, the PDB,
// why it never allows, why no surge helps, and the downtime that delete
// implies: until the replacement is Ready (its time to Ready, after the
// grace for a StatefulSet's pod, and after the volume's detach and attach
// for a ReadWriteOnce volume), or for good when nothing re-creates it. The
// forecast lists the same pods, with their downtime p50 and p90
// (nodes[].forecast.needsOverride[].downtime), for scripts.
//
// With --together NAME,... (repeatable) the report also has a capacity: can
// the other nodes take the pods that draining every node of that set moves,
// all of the set cordoned first, as a maintenance campaign does? The pods to
// move are those each node's forecast places (a ReplicaSet's or a
// StatefulSet's), placed one after the other, first fit, on the schedulable
// nodes outside the set; it tells their requests (demand), what those nodes
// have free in all, and a verdict: ok, never (insufficient-capacity,
// replacement-unschedulable) or unknown, with the causes. Like the forecast,
// it changes neither the risk nor the exit code. It needs a whole-cluster
// snapshot.
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
// Output: -o json (default), yaml, or table (one line per node with its
// forecast, then its pods to surge with the owner each scales, the
// forecast's critical path, causes and pods that need an override, its
// drain order's groups unless all pods go in one default group, then its
// findings; last a line for the capacity; colour only on a terminal).
//
// JSON is the fast path. YAML goes through a general YAML parser first,
// many times slower: keep big snapshots in JSON, k8s-snapshot's default
// (docs/benchmarks.md in the repository has the figures).
//
// Decoding is strict: an unknown field, a duplicate one or one in another
// case is an error naming its JSON path (/pods/17/spec/nodeNmae: unknown
// field). JSON is decoded as it is read, an object at a time.
package main
