package snapshot

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

// Kind is the document kind of a Snapshot.
const Kind = "Snapshot"

// Snapshot is a read-only view of the cluster objects that matter for
// judging a drain. The objects are real Kubernetes objects, so familiar jq
// paths work on them.
type Snapshot struct {
	document.Header `json:",inline"`
	Metadata        Metadata `json:"metadata"`

	Nodes                    []corev1.Node                           `json:"nodes"`
	Pods                     []corev1.Pod                            `json:"pods"`
	ReplicaSets              []appsv1.ReplicaSet                     `json:"replicaSets"`
	Deployments              []appsv1.Deployment                     `json:"deployments"`
	StatefulSets             []appsv1.StatefulSet                    `json:"statefulSets"`
	DaemonSets               []appsv1.DaemonSet                      `json:"daemonSets"`
	Jobs                     []batchv1.Job                           `json:"jobs"`
	CronJobs                 []batchv1.CronJob                       `json:"cronJobs"`
	PodDisruptionBudgets     []policyv1.PodDisruptionBudget          `json:"podDisruptionBudgets"`
	PersistentVolumeClaims   []corev1.PersistentVolumeClaim          `json:"persistentVolumeClaims"`
	PersistentVolumes        []corev1.PersistentVolume               `json:"persistentVolumes"`
	StorageClasses           []storagev1.StorageClass                `json:"storageClasses"`
	HorizontalPodAutoscalers []autoscalingv2.HorizontalPodAutoscaler `json:"horizontalPodAutoscalers"`
	VolumeAttachments        []storagev1.VolumeAttachment            `json:"volumeAttachments"`
	CSIDrivers               []storagev1.CSIDriver                   `json:"csiDrivers"`
	CSINodes                 []storagev1.CSINode                     `json:"csiNodes"`
	Namespaces               []corev1.Namespace                      `json:"namespaces"`
}

// Metadata says when, where and what was captured.
type Metadata struct {
	// CapturedAt is when the first list was sent; analysis uses it as "now".
	CapturedAt metav1.Time `json:"capturedAt"`
	// Server is the API server URL.
	Server string `json:"server"`
	// KubernetesVersion is the server's gitVersion.
	KubernetesVersion string `json:"kubernetesVersion"`
	// Scope is what was captured.
	Scope Scope `json:"scope"`
	// ResourceVersion is the etcd revision the whole snapshot was read at:
	// every list, every page, was made at exactly this resourceVersion.
	// Empty when the snapshot is not consistent.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Consistent is true when every object is as it was at
	// ResourceVersion, one cut of the cluster; false when each kind was
	// listed at its own latest revision (k8s-snapshot --consistent=false,
	// or a snapshot older than the field).
	Consistent bool `json:"consistent"`
	// ResourceVersions is the list resourceVersion per kind (e.g. "pods").
	ResourceVersions map[string]string `json:"resourceVersions,omitempty"`
}

// Scope is the whole cluster (no nodes) or what judging a drain of Nodes needs.
type Scope struct {
	Nodes []string `json:"nodes,omitempty"`
	// Full is true when managedFields and last-applied annotations were kept.
	Full bool `json:"full,omitempty"`
}

// New is an empty Snapshot with its header set.
func New() *Snapshot { return &Snapshot{Header: document.NewHeader(Kind)} }
