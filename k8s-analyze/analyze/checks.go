package analyze

// Code is a finding's stable identifier. CHECKS.md documents every code.
type Code string

// PDB checks.
const (
	PDBExhausted           Code = "pdb-exhausted"
	PDBInsufficientForNode Code = "pdb-insufficient-for-node"
	PDBZeroSpec            Code = "pdb-zero-spec"
	// SurgeMovable is a pod whose budget never allows its eviction, but
	// one more replica of its owner would.
	SurgeMovable Code = "surge-movable"
	// NeedsOverride is a pod whose budget never allows its eviction and
	// that no surge moves: only a break-glass delete does.
	NeedsOverride     Code = "needs-override"
	PDBOverlap        Code = "pdb-overlap"
	PDBStale          Code = "pdb-stale"
	PDBSyncFailed     Code = "pdb-sync-failed"
	PDBForbidden      Code = "pdb-forbidden"
	PDBSelectsNothing Code = "pdb-selects-nothing"
	PDBBadSelector    Code = "pdb-bad-selector"
	UnhealthyBlocks   Code = "unhealthy-blocks"
)

// Pod and ownership checks.
const (
	OwnerMissing      Code = "owner-missing"
	OwnerImpostor     Code = "owner-impostor"
	OwnerUnverifiable Code = "owner-unverifiable"
	UnmanagedPod      Code = "unmanaged-pod"
	SingleReplica     Code = "single-replica"
	// SingleReplicaNotServing is a single replica that is not serving.
	SingleReplicaNotServing Code = "single-replica-not-serving"
	AllReplicasOnNode       Code = "all-replicas-on-node"
	DaemonSetPod            Code = "daemonset-pod"
	MirrorPod               Code = "mirror-pod"
	TerminalPod             Code = "terminal-pod"
	TerminatingPod          Code = "terminating-pod"
	DoNotEvict              Code = "do-not-evict"
	LongGrace               Code = "long-grace"
	KubeSystemNoPDB         Code = "kube-system-no-pdb"
)

// Storage checks.
const (
	EmptyDirDataLoss Code = "emptydir-data-loss"
	HostPath         Code = "hostpath"
	LocalPVPinned    Code = "local-pv-pinned"
	RWOReattach      Code = "rwo-reattach"
	PVCMissing       Code = "pvc-missing"
	// VolumeAttachmentLeaked is a VolumeAttachment on the node whose PV or
	// claim is gone (NodeAttachments, Attachment.Leaked).
	VolumeAttachmentLeaked Code = "volume-attachment-leaked"
	// StorageProvider is a pod that serves volumes other pods on the node
	// use: it goes last (DrainOrder).
	StorageProvider Code = "storage-provider"
)

// Snapshot checks: about the snapshot itself, reported on every node.
const (
	SnapshotInconsistent Code = "snapshot-inconsistent"
	SnapshotStale        Code = "snapshot-stale"
)

// Check is what a code stands for: its severity and the fix hint every
// finding of that code carries.
type Check struct {
	Code     Code
	Severity Severity
	Fix      string
}

// Checks lists every check, in the order CHECKS.md documents them.
func Checks() []Check {
	return []Check{
		{PDBOverlap, High, "make the PDBs select disjoint pods (mind that an empty selector {} matches every pod of the namespace); the Eviction API answers 500 for any pod more than one PDB selects"},
		{PDBZeroSpec, High, "allow at least one disruption: maxUnavailable >= 1, or minAvailable below the replica count"},
		{NeedsOverride, High, "first make the eviction possible: allow at least one disruption in the PDB (maxUnavailable >= 1, or minAvailable below the replicas), or run more replicas; only if the pod must go now and the downtime in the message is acceptable, a person other than the plan's requester approves a MaintenanceOverride for it (kubectl maint override): maintd then tries the eviction first and deletes only what the budget still refuses, recording each delete in the plan's status.forced"},
		{SurgeMovable, Medium, "drain with a surge (maintd spec.surge: IfNeeded; k8s-analyze --surge shows the plan): one more replica of the owner, Ready before the eviction, lets the budget allow it with no downtime; or allow at least one disruption in the PDB"},
		{PDBSyncFailed, High, "make the PDB select pods of one controller that exposes a scale (Deployment, ReplicaSet, StatefulSet) or use an integer minAvailable; see the PDB's DisruptionAllowed condition"},
		{PDBForbidden, High, "the PDB status is corrupt (negative disruptionsAllowed or more than 2000 disruptedPods): check the disruption controller, then recreate the PDB"},
		{PDBExhausted, Medium, "wait until the PDB's pods are Ready again, or scale the workload up so the budget allows a disruption"},
		{PDBInsufficientForNode, Medium, "expect several eviction rounds, each waiting for replacements to become Ready; spread the workload (topologySpreadConstraints) or raise maxUnavailable"},
		{PDBStale, Medium, "wait for the disruption controller to observe the PDB's latest generation (is kube-controller-manager running?)"},
		{PDBBadSelector, Medium, "fix the selector: the Eviction API ignores a PDB whose selector does not parse, so it protects nothing"},
		{PDBSelectsNothing, Low, "point the selector at the pods it is meant to protect, or delete the PDB"},
		{UnhealthyBlocks, Medium, "set spec.unhealthyPodEvictionPolicy: AlwaysAllow on the PDB so not-Ready pods can be evicted without budget, or fix the pod"},
		{UnmanagedPod, High, "run the pod under a controller (Deployment, StatefulSet, Job); evicting a bare pod deletes it for good"},
		{OwnerMissing, High, "the pod's controller is gone: recreate it, or treat the pod as unmanaged"},
		{OwnerImpostor, High, "the owner reference points to an object that was replaced (same name, new UID): the pod is orphaned; recreate it under the current controller"},
		{OwnerUnverifiable, Low, "the owner is a kind the snapshot does not hold (custom controller): check that it recreates evicted pods"},
		{AllReplicasOnNode, High, "scale up or spread the replicas (topologySpreadConstraints, pod anti-affinity) so Ready replicas exist on other nodes"},
		{SingleReplica, Medium, "run at least two replicas if the workload must stay available while the node drains"},
		{SingleReplicaNotServing, Low, "none for the drain: the only replica is not serving (Pending or not Ready), so evicting it takes nothing away; find out why it is not Ready"},
		{DoNotEvict, High, "ask the workload's owner, then remove the annotation (cluster-autoscaler.kubernetes.io/safe-to-evict or karpenter.sh/do-not-disrupt)"},
		{LongGrace, Medium, "expect the pod to take up to its terminationGracePeriodSeconds to stop; lower it or extend the drain deadline"},
		{KubeSystemNoPDB, Medium, "give the kube-system workload a PDB so its disruption is bounded"},
		{DaemonSetPod, Low, "none: DaemonSet pods tolerate the cordon and are not evicted"},
		{MirrorPod, Low, "none: static (mirror) pods belong to the kubelet and cannot be evicted"},
		{TerminalPod, Low, "none: the pod has finished (Succeeded or Failed) and needs no eviction"},
		{TerminatingPod, Low, "none: the pod is already being deleted"},
		{LocalPVPinned, High, "move the data off the node first: the volume is local to the node or pinned to it by nodeAffinity, so the pod stays Pending anywhere else"},
		{RWOReattach, High, "plan for the volume's detach and re-attach (and its zone restriction); a ReadWriteOnce volume follows the pod only after the old attachment is released"},
		{PVCMissing, High, "the pod mounts a PersistentVolumeClaim the snapshot does not hold: check it exists; the pod cannot start elsewhere without it"},
		{EmptyDirDataLoss, Medium, "copy the data out first or accept its loss: emptyDir (and generic ephemeral) volumes are deleted with the pod"},
		{HostPath, Medium, "the data stays on this node: make sure the workload does not need it elsewhere"},
		{VolumeAttachmentLeaked, High, "the VolumeAttachment outlived its PersistentVolume or claim, and nothing detaches it by itself: make sure with the storage system that the volume is detached from the node, then remove the attacher's finalizer and delete the VolumeAttachment"},
		{StorageProvider, Low, "none: the pod serves volumes that other pods on the node use, so the drain evicts it after them and after their volumes detach; if it serves none of them, say so with a drain rule or the maintenance.sentinel.dev/drain annotation"},
		{SnapshotInconsistent, Low, "take the snapshot again with k8s-snapshot's default --consistent (one etcd revision for every list) before acting on the report"},
		{SnapshotStale, Low, "take a fresh snapshot right before the drain (k8s-snapshot | k8s-analyze), or raise --max-age if the cluster is known to be at rest"},
	}
}

func checksByCode() map[Code]Check {
	cs := Checks()
	m := make(map[Code]Check, len(cs))
	for _, c := range cs {
		m[c.Code] = c
	}
	return m
}
