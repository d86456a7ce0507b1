// K8s-snapshot writes a consistent, read-only Snapshot of a cluster to
// stdout: the objects that judging a node drain needs, as real Kubernetes
// objects inside one sentinel.dev/v1alpha1 Snapshot document.
//
// The document holds metadata (capturedAt, the API server URL, the
// Kubernetes version, the scope, resourceVersion: the one etcd revision the
// whole snapshot was read at, consistent: whether it was, and the list
// resourceVersion per resource) and the lists nodes, pods, replicaSets,
// deployments, statefulSets, daemonSets, jobs, cronJobs,
// podDisruptionBudgets, persistentVolumeClaims, persistentVolumes,
// storageClasses, horizontalPodAutoscalers, volumeAttachments, csiDrivers,
// csiNodes and namespaces.
// managedFields and the kubectl last-applied annotation are dropped unless
// --full is given.
//
// Scope. Without --node the snapshot is the whole cluster. With --node
// (repeatable) it is what judging a drain of those nodes needs, and no
// more: the nodes; every pod on them, in every namespace; each such pod's
// owner chain (ReplicaSet -> Deployment, StatefulSet, DaemonSet,
// Job -> CronJob); every PodDisruptionBudget of a namespace that has a pod
// on the nodes; the other pods that the same ReplicaSets, Deployments,
// StatefulSets or Jobs own (the replicas elsewhere, to judge "all replicas
// are on this node") or that a PDB selecting a pod on the nodes also
// selects (the rest of that budget), with their owner chains; the PVCs
// the pods on the nodes mount, with their PVs and StorageClasses; the
// HorizontalPodAutoscalers of the owners; the VolumeAttachments of the
// nodes, the PVs attached to the nodes (by VolumeAttachment or
// status.volumesAttached) and the claims they are bound to; every
// CSIDriver; the CSINodes of the nodes; and the Namespaces of the pods on
// the nodes. An unknown node is an error.
//
// Consistent. The first list fixes an etcd revision R; every other list,
// every continue page and every --node query is made at exactly R
// (resourceVersion=R, resourceVersionMatch=Exact), so the snapshot is the
// cluster as it was at one moment: no pod newer than its ReplicaSet, no PDB
// status counted against pods that are not in the document.
// metadata.resourceVersion is R and metadata.consistent is true. When the
// API server has compacted R away meanwhile (410 Expired), the snapshot
// starts again at a new R, said on stderr, at most 3 times; then it fails
// (exit 1, nothing on stdout), never a partial or mixed document.
// --consistent=false lists each kind at its own latest revision instead,
// as kubectl does, for servers that refuse exact lists: the document then
// says consistent: false and has no resourceVersion.
//
// Reads only: every request is a get or a list, on the resources above
// (the manual links the ClusterRole that grants exactly those). Lists use
// protobuf, are paginated (--chunk-size) and run a few at a time
// (--parallel); with --consistent=false a list whose continue token
// expired (410 Gone) starts again from its first page, said on stderr.
// --timeout bounds the whole run. If any list fails nothing is written to stdout: the error names the
// resource and the API's answer (401, 403 with the verb and resource, an
// unreachable server, no answer within the timeout) and the exit code is 1.
// With --progress (the default when stderr is a terminal) every finished
// list prints its count on stderr.
package main
