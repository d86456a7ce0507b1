package analyze

// Needs are the fields of a Snapshot the analysis reads, as strictjson
// field paths (JSON names joined by dots; the field a path ends at is kept
// whole). DecodeSnapshot stores only these and validates everything else.
// A check that reads a field not listed here sees it empty:
// TestProjectionKeepsWhatAnalysisReads compares the reports of full and
// projected decodes of every test snapshot and fails.
func Needs() []string {
	paths := []string{
		"apiVersion", "kind", "metadata",
		// Nodes: hostname label for pinned volumes.
		"nodes.metadata.labels",
		// Pods: PDB selection, do-not-evict and mirror annotations,
		// owner chain, skip rules, grace, volumes, readiness.
		"pods.metadata.labels", "pods.metadata.annotations", "pods.metadata.deletionTimestamp",
		"pods.spec.nodeName", "pods.spec.terminationGracePeriodSeconds",
		"pods.spec.volumes.name", "pods.spec.volumes.emptyDir", "pods.spec.volumes.ephemeral",
		"pods.spec.volumes.hostPath", "pods.spec.volumes.persistentVolumeClaim",
		"pods.status.phase", "pods.status.conditions", "pods.status.startTime",
		// Scalable owners: replicas and readiness.
		"replicaSets.spec.replicas", "replicaSets.status.readyReplicas",
		"deployments.spec.replicas", "deployments.status.readyReplicas",
		"statefulSets.spec.replicas", "statefulSets.status.readyReplicas",
		// PDBs: the Eviction API's whole decision.
		"podDisruptionBudgets.metadata.generation", "podDisruptionBudgets.spec", "podDisruptionBudgets.status",
		// Storage.
		"persistentVolumeClaims.spec.accessModes", "persistentVolumeClaims.spec.volumeName",
		"persistentVolumes.spec.accessModes", "persistentVolumes.spec.local",
		"persistentVolumes.spec.hostPath", "persistentVolumes.spec.nodeAffinity",
	}
	// Every object: identity (validate), and owner references for what
	// can be in an owner chain.
	for _, list := range []string{"nodes", "pods", "replicaSets", "deployments", "statefulSets", "daemonSets", "jobs", "cronJobs",
		"podDisruptionBudgets", "persistentVolumeClaims", "persistentVolumes", "storageClasses", "horizontalPodAutoscalers"} {
		paths = append(paths, list+".metadata.name", list+".metadata.namespace", list+".metadata.uid")
	}
	for _, list := range []string{"nodes", "pods", "replicaSets", "deployments", "statefulSets", "daemonSets", "jobs", "cronJobs"} {
		paths = append(paths, list+".metadata.ownerReferences")
	}
	return paths
}
