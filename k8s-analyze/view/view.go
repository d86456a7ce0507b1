// Package view is what k8s-analyze reads of a Snapshot: types that hold the
// fields the checks read and no others, built from the Kubernetes objects
// by plain functions (Of and the functions of each kind).
//
// A big snapshot is decoded an object at a time into the Kubernetes type,
// which validates it, and only its view is kept: a Pod here is a sixth of a
// corev1.Pod. A check cannot read a field the view did not keep, because
// the types do not have it.
package view

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// Snapshot is the analysis's view of a snapshot.Snapshot. Every list keeps
// at least the objects' identity, which the analysis validates.
type Snapshot struct {
	document.Header `json:",inline"`
	Metadata        snapshot.Metadata `json:"metadata"`

	Nodes                    []Node                    `json:"nodes"`
	Pods                     []Pod                     `json:"pods"`
	ReplicaSets              []Scalable                `json:"replicaSets"`
	Deployments              []Scalable                `json:"deployments"`
	StatefulSets             []Scalable                `json:"statefulSets"`
	DaemonSets               []Object                  `json:"daemonSets"`
	Jobs                     []Object                  `json:"jobs"`
	CronJobs                 []Object                  `json:"cronJobs"`
	PodDisruptionBudgets     []PodDisruptionBudget     `json:"podDisruptionBudgets"`
	PersistentVolumeClaims   []PersistentVolumeClaim   `json:"persistentVolumeClaims"`
	PersistentVolumes        []PersistentVolume        `json:"persistentVolumes"`
	StorageClasses           []Object                  `json:"storageClasses"`
	HorizontalPodAutoscalers []HorizontalPodAutoscaler `json:"horizontalPodAutoscalers"`
	VolumeAttachments        []VolumeAttachment        `json:"volumeAttachments"`
	CSIDrivers               []CSIDriver               `json:"csiDrivers"`
	CSINodes                 []Object                  `json:"csiNodes"`
	Namespaces               []Object                  `json:"namespaces"`
}

// ObjectMeta is the metadata the analysis reads: identity, generation (of
// PDBs), labels for
// selectors, annotations for drain opt-outs, deletion, and owners.
type ObjectMeta struct {
	Name              string                  `json:"name"`
	Namespace         string                  `json:"namespace"`
	UID               types.UID               `json:"uid"`
	Generation        int64                   `json:"generation"`
	Labels            map[string]string       `json:"labels"`
	Annotations       map[string]string       `json:"annotations"`
	DeletionTimestamp *metav1.Time            `json:"deletionTimestamp"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
}

// Object is any object of which only the metadata matters: nodes, and the
// kinds that are only checked for identity or found in owner chains.
type Object struct {
	ObjectMeta `json:"metadata"`
}

// Node is a corev1.Node as the analysis reads it: its metadata, and what
// the drain forecast reads to place replacements on it (whether it takes
// new pods, its taints, its allocatable resources).
type Node struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		Unschedulable bool           `json:"unschedulable"`
		Taints        []corev1.Taint `json:"taints"`
	} `json:"spec"`
	Status struct {
		// Allocatable is nil when the node has no status.allocatable.
		Allocatable *Resources `json:"allocatable"`
		// VolumesAttached is status.volumesAttached: the volumes the
		// attach-detach controller attached to the node.
		VolumesAttached []corev1.AttachedVolume `json:"volumesAttached"`
	} `json:"status"`
}

// Resources are the amounts the drain forecast weighs: CPU in millicores,
// memory and ephemeral storage in bytes, and pods. Other names the other
// resources (extended resources, hugepages), which it does not weigh.
type Resources struct {
	MilliCPU         int64                 `json:"milliCPU"`
	Memory           int64                 `json:"memory"`
	EphemeralStorage int64                 `json:"ephemeralStorage"`
	Pods             int64                 `json:"pods"`
	Other            []corev1.ResourceName `json:"other"`
}

// Scalable is a ReplicaSet, Deployment or StatefulSet: an owner with
// replicas.
type Scalable struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		Replicas *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		ReadyReplicas int32 `json:"readyReplicas"`
	} `json:"status"`
}

// Pod is a corev1.Pod as the checks read it, and, in Scheduling, as the
// drain forecast reads it.
type Pod struct {
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec"`
	Status     PodStatus `json:"status"`
	// Scheduling is what the drain forecast reads: nil when the pod has
	// none of it (or the view was made by PodOf alone).
	Scheduling *Scheduling `json:"scheduling"`
}

// Scheduling is what the drain forecast reads of a pod: what the scheduler
// weighs to place its replacement (requests, node selection, tolerations,
// pod anti-affinity, topology spread, and the constraints the forecast
// cannot judge, kept to be named), and when it was scheduled and became
// Ready, from which a workload's time to Ready is learned.
type Scheduling struct {
	// Requests are the pod's effective requests, as the scheduler counts
	// them (pod-level resources, or the containers' with init and sidecar
	// containers, plus overhead); Pods is 1.
	Requests                  Resources                         `json:"requests"`
	NodeSelector              map[string]string                 `json:"nodeSelector"`
	Affinity                  *corev1.Affinity                  `json:"affinity"`
	Tolerations               []corev1.Toleration               `json:"tolerations"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	// HostPorts are the container ports with a hostPort.
	HostPorts []corev1.ContainerPort `json:"hostPorts"`
	// ResourceClaims counts spec.resourceClaims (dynamic resource
	// allocation).
	ResourceClaims int `json:"resourceClaims"`
	// Scheduled and Ready are the lastTransitionTime of the PodScheduled
	// and Ready conditions when they are True; zero otherwise.
	Scheduled metav1.Time `json:"scheduled"`
	Ready     metav1.Time `json:"ready"`
}

type PodSpec struct {
	NodeName                      string   `json:"nodeName"`
	TerminationGracePeriodSeconds *int64   `json:"terminationGracePeriodSeconds"`
	Volumes                       []Volume `json:"volumes"`
	// PluginPaths are the container args and env values that name a CSI
	// node plugin's directory (PluginPathsOf): how a storage system's node
	// plugin, and so its namespace, is recognised.
	PluginPaths []string `json:"pluginPaths"`
}

// Volume keeps the sources that tie a pod's data to its node or its life.
type Volume struct {
	Name     string                       `json:"name"`
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir"`
	// Ephemeral is non-nil for a generic ephemeral volume.
	Ephemeral             *struct{}                                 `json:"ephemeral"`
	HostPath              *corev1.HostPathVolumeSource              `json:"hostPath"`
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim"`
}

type PodStatus struct {
	Phase      corev1.PodPhase `json:"phase"`
	Conditions []PodCondition  `json:"conditions"`
	StartTime  *metav1.Time    `json:"startTime"`
}

type PodCondition struct {
	Type   corev1.PodConditionType `json:"type"`
	Status corev1.ConditionStatus  `json:"status"`
}

type PersistentVolumeClaim struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes"`
		VolumeName  string                              `json:"volumeName"`
	} `json:"spec"`
}

// PersistentVolume keeps what pins a volume to a node, the CSI volume it
// is (to match an attachment) and the claim it is bound to.
type PersistentVolume struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes"`
		// Local and HostPath are non-nil for volumes of those sources.
		Local        *struct{}                  `json:"local"`
		HostPath     *struct{}                  `json:"hostPath"`
		NodeAffinity *corev1.VolumeNodeAffinity `json:"nodeAffinity"`
		// CSI is the driver and volume handle of a CSI volume; nil for
		// any other source.
		CSI *CSIVolume `json:"csi"`
		// ClaimRef is the claim the volume is bound to, nil when none.
		ClaimRef *ClaimRef `json:"claimRef"`
	} `json:"spec"`
}

// CSIVolume is a CSI persistent volume's driver and volume handle.
type CSIVolume struct {
	Driver       string `json:"driver"`
	VolumeHandle string `json:"volumeHandle"`
}

// ClaimRef names the claim a persistent volume is bound to.
type ClaimRef struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// VolumeAttachment is a storagev1.VolumeAttachment as the analysis reads
// it: the volume, the node, the driver, and how far attaching or
// detaching got.
type VolumeAttachment struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		Attacher string `json:"attacher"`
		NodeName string `json:"nodeName"`
		// PersistentVolumeName is spec.source.persistentVolumeName, ""
		// for an inline volume.
		PersistentVolumeName string `json:"persistentVolumeName"`
	} `json:"spec"`
	Status struct {
		Attached bool `json:"attached"`
		// DetachError is status.detachError.message, "" when none.
		DetachError string `json:"detachError"`
	} `json:"status"`
}

// CSIDriver keeps whether the driver's volumes are attached (nil: the
// API's default, true).
type CSIDriver struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		AttachRequired *bool `json:"attachRequired"`
	} `json:"spec"`
}

// PodDisruptionBudget keeps a PDB's spec and status whole: the Eviction API
// reads most of them.
type PodDisruptionBudget struct {
	ObjectMeta `json:"metadata"`
	Spec       policyv1.PodDisruptionBudgetSpec   `json:"spec"`
	Status     policyv1.PodDisruptionBudgetStatus `json:"status"`
}

// HorizontalPodAutoscaler keeps what a surge must not fight: the object the
// autoscaler scales and the bounds it keeps the replicas in. A replica
// count that a surge changed under an autoscaler would be changed back.
type HorizontalPodAutoscaler struct {
	ObjectMeta `json:"metadata"`
	Spec       struct {
		ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`
		MinReplicas    *int32                                    `json:"minReplicas"`
		MaxReplicas    int32                                     `json:"maxReplicas"`
	} `json:"spec"`
}
