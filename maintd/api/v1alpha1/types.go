package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaintenancePlan takes one node out for maintenance: maintd cordons it,
// evicts the pods of the allowed workloads under their PodDisruptionBudgets,
// reports Drained, and uncordons it once spec.release is set. It stops for a
// person, with the exact reason in status, whenever the cluster says no.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mp,categories=sentinel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.spec.nodeName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Evicted",type=integer,JSONPath=`.status.pods.evicted`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.pods.total`
// +kubebuilder:printcolumn:name="ETA",type=string,JSONPath=`.status.forecast.remaining`
// +kubebuilder:printcolumn:name="Forecast",type=string,JSONPath=`.status.forecast.verdict`,priority=1
// +kubebuilder:printcolumn:name="P50",type=string,JSONPath=`.status.forecast.p50`,priority=1
// +kubebuilder:printcolumn:name="P90",type=string,JSONPath=`.status.forecast.p90`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MaintenancePlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MaintenancePlanSpec   `json:"spec"`
	Status MaintenancePlanStatus `json:"status,omitempty"`
}

// MaintenancePlanSpec says which node, which workloads may be disrupted, and
// within which bounds.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.allowAllWorkloads) && self.allowAllWorkloads && has(self.workloads) && size(self.workloads) > 0)",message="workloads and allowAllWorkloads are exclusive: list the workloads or allow all, not both"
type MaintenancePlanSpec struct {
	// NodeName is the node to take out. It cannot change: make a new plan
	// for another node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeName is immutable: create another plan for another node"
	NodeName string `json:"nodeName"`

	// Reason is free text shown in status, in events and in the node's
	// cordon-reason annotation (e.g. a change ticket).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`

	// Workloads whose pods may be evicted. DaemonSet pods, mirror pods and
	// finished pods stay on the node; any other pod that belongs to none of
	// these blocks the plan (unknown-pods-on-node).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Workloads []WorkloadRef `json:"workloads,omitempty"`

	// AllowAllWorkloads allows the eviction of every pod on the node that a
	// controller owns. Exclusive with workloads.
	// +optional
	AllowAllWorkloads bool `json:"allowAllWorkloads,omitempty"`

	// AcceptedRisks are k8s-analyze finding codes (e.g. rwo-reattach) that a
	// person accepts for this plan. Every other High finding on a pod to be
	// evicted blocks the plan before any write. They may also name the
	// causes of a drain forecast of never (replacement-unschedulable,
	// insufficient-capacity, ...) that a person knows will clear, such as
	// the room an autoscaler adds for pending replacements; any other
	// never cause blocks the plan before any write
	// (drain-never-completes).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9][a-z0-9-]*$`
	AcceptedRisks []string `json:"acceptedRisks,omitempty"`

	// StartWithin bounds the wait before the drain starts: counted from the
	// plan's creation, past it a plan that has not cordoned its node ends
	// Completed (expired) and never touches the node. Waiting for a
	// maintenance slot, a block before the start (unknown pods, the node
	// occupied, a forecast of never), a pause and a dry run all spend it,
	// so that a plan left behind does not start days later, at a moment
	// nobody chose. A campaign sets it on its plans to what is left of its
	// own deadline. Make it longer for a plan queued behind many others.
	// +optional
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="startWithin must be positive"
	StartWithin *metav1.Duration `json:"startWithin,omitempty"`

	// Deadline bounds the drain: it counts from the cordon (the start of the
	// drain) to Drained; past it the plan fails (deadline-exceeded) and the
	// node stays cordoned. Waiting for a maintenance slot, being Blocked
	// before the start, and dry runs before the start do not spend it.
	// +optional
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="deadline must be positive"
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// MaxConcurrentEvictions bounds the evictions in flight (requested and
	// not yet gone): the pods terminating at once because of this plan.
	// Never more are in flight against one PDB than its
	// disruptionsAllowed: the PDBs, not this bound, protect availability.
	// The default, 50, lets a node's pods go together, as kubectl drain
	// sends them, even when each takes its grace period to exit.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxConcurrentEvictions int32 `json:"maxConcurrentEvictions,omitempty"`

	// MaxCooldown caps any wait: a PDB's cooldown, a Retry-After, a backoff.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="maxCooldown must be positive"
	MaxCooldown *metav1.Duration `json:"maxCooldown,omitempty"`

	// EvictionTimeout bounds each eviction call.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="evictionTimeout must be positive"
	EvictionTimeout *metav1.Duration `json:"evictionTimeout,omitempty"`

	// Release is set when the maintenance work is done: maintd uncordons the
	// node (only if this plan cordoned it) and completes the plan.
	// +optional
	Release bool `json:"release,omitempty"`

	// DryRun runs the preflight and server-side dry-run evictions and
	// reports them; it writes nothing but this plan's status.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`

	// Surge says what to do with a pod whose PodDisruptionBudget never
	// allows its eviction (a single replica with minAvailable: 1, three
	// with minAvailable: 3). Never (the default) blocks the plan
	// (pdb-misconfigured). IfNeeded moves it with no downtime when its
	// owner is a Deployment or ReplicaSet that no HorizontalPodAutoscaler
	// scales: maintd adds one replica to the owner (recording the original
	// count in status.evictionProgress.surges and in the owner's
	// maintenance.sentinel.dev/surge annotations first), waits until the
	// new pod is Ready, evicts the old pod through the Eviction API (which
	// the budget now allows), and restores the replica count once.
	// +optional
	// +kubebuilder:default=Never
	Surge SurgePolicy `json:"surge,omitempty"`

	// VolumeDetachTimeout bounds the wait, once the evicted pods are gone,
	// for their volumes to detach from the node (their VolumeAttachments
	// gone and node.status.volumesAttached without them): the plan is
	// Drained only then. Past it the plan is Blocked (volume-detach-stuck),
	// naming the attachment, its volume and driver, until it goes. The
	// default, 5m, is under the 6 minutes after which the attach-detach
	// controller forces a detach: maintd says so before that happens.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="volumeDetachTimeout must be positive"
	VolumeDetachTimeout *metav1.Duration `json:"volumeDetachTimeout,omitempty"`

	// DrainRules order the node's pods into groups, lowest order first, each
	// group gone (and its volumes detached) before the next starts, or keep
	// pods out of the drain. They mean what Cluster API's MachineDrainRule
	// means (its spec.drain and spec.pods, copied as they are): Drain with
	// an order, Skip (never evicted), WaitCompleted (not evicted; the drain
	// waits until the pod completes). A pod's annotation
	// maintenance.sentinel.dev/drain ("skip", "wait-completed" or
	// "order=N") overrides them. Storage providers go last without a rule.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	DrainRules []DrainRule `json:"drainRules,omitempty"`

	// Windows say when the drain may start and run (see
	// MaintenanceWindows). A campaign copies its own to its plans.
	// +optional
	Windows *MaintenanceWindows `json:"windows,omitempty"`

	// HealthGate is what the node must show after release before maintd
	// uncordons it and the plan completes (see HealthGate).
	// +optional
	HealthGate *HealthGate `json:"healthGate,omitempty"`
}

// SurgePolicy says whether a plan may add a replica to move a pod.
// +kubebuilder:validation:Enum=Never;IfNeeded
type SurgePolicy string

// The surge policies.
const (
	SurgeNever    SurgePolicy = "Never"
	SurgeIfNeeded SurgePolicy = "IfNeeded"
)

// WorkloadRef names a workload whose pods may be evicted.
type WorkloadRef struct {
	// Kind of the workload.
	// +kubebuilder:validation:Enum=Deployment;StatefulSet;ReplicaSet;Job
	Kind string `json:"kind"`
	// Namespace of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Phase is where a plan is.
type Phase string

// The phases, in the order of a drain.
const (
	Pending     Phase = "Pending"
	Cordoning   Phase = "Cordoning"
	Cordoned    Phase = "Cordoned"
	Draining    Phase = "Draining"
	CoolingDown Phase = "CoolingDown"
	Drained     Phase = "Drained"
	Uncordoning Phase = "Uncordoning"
	Completed   Phase = "Completed"
	Blocked     Phase = "Blocked"
	Failed      Phase = "Failed"
)

// Reason is why a plan is in its phase: a stable code for scripts and alerts.
type Reason string

// Reasons of the steps.
const (
	WaitingForSlot    Reason = "waiting-for-slot"
	CordonSubmitted   Reason = "cordon-submitted"
	CordonObserved    Reason = "cordon-observed"
	EvictionRequested Reason = "eviction-requested"
	EvictionAccepted  Reason = "eviction-accepted"
	WaitingForPodExit Reason = "waiting-for-pod-exit"
	BudgetExhausted   Reason = "pdb-budget-exhausted"
	PDBStale          Reason = "pdb-stale"
	EvictionThrottled Reason = "eviction-throttled"
	APIContention     Reason = "api-contention"
	BudgetRecovered   Reason = "budget-recovered"
	ReasonDrained     Reason = "drained"
	UncordonSubmitted Reason = "uncordon-submitted"
	Uncordoned        Reason = "uncordoned"
	DryRunDone        Reason = "dry-run"
	// SurgeRequested: an owner is being scaled up by one replica.
	SurgeRequested Reason = "surge-requested"
	// SurgePending: the pod a surge added is not Ready yet (or not
	// scheduled: no node can take it); nothing it covers is evicted.
	SurgePending Reason = "surge-pending"
	// SurgeRestoring: a surge's replica count is being restored.
	SurgeRestoring Reason = "surge-restoring"
	// Paused: maintenance is paused cluster-wide (maintd's pause
	// ConfigMap exists): no cordon, eviction or surge until it is deleted.
	Paused             Reason = "paused"
	ReleasedBeforeWork Reason = "released"
	// Expired: the plan did not start (cordon) within spec.startWithin of
	// its creation; it ends Completed, having written nothing to the node.
	Expired Reason = "expired"
	// WaitingForVolumeDetach: the evicted pods are gone and volumes they
	// used are still attached to the node (a VolumeAttachment, or
	// node.status.volumesAttached): not Drained until they detach.
	WaitingForVolumeDetach Reason = "waiting-for-volume-detach"
	// WaitingForDrainGroup: the pods of an earlier drain group (a drain
	// rule's lower order, or the consumers of a storage provider) are not
	// gone, or their volumes not detached: the next group waits.
	WaitingForDrainGroup Reason = "waiting-for-drain-group"
	// WaitingForCompletion: the pods left are WaitCompleted by a drain rule
	// (or their annotation): the drain waits until they complete.
	WaitingForCompletion Reason = "waiting-for-completion"
)

// Reasons of Blocked and Failed.
const (
	NodeNotFound             Reason = "node-not-found"
	NodeOccupied             Reason = "node-occupied"
	NodeUncordonedExternally Reason = "node-uncordoned-externally"
	UnknownPodsOnNode        Reason = "unknown-pods-on-node"
	PreflightHighRisk        Reason = "preflight-high-risk"
	PDBOverlap               Reason = "pdb-overlap"
	// DrainNeverCompletes: the drain forecast's verdict is never (a budget
	// that never allows or never refills, a replacement that fits nowhere):
	// the plan blocks before any write.
	DrainNeverCompletes Reason = "drain-never-completes"
	// SurgeImpossible: a pod's budget never allows its eviction and no
	// surge can move it (a StatefulSet, a bare pod, an owner that a
	// HorizontalPodAutoscaler scales or that maintd may not write).
	SurgeImpossible   Reason = "surge-impossible"
	PDBMisconfigured  Reason = "pdb-misconfigured"
	EvictionForbidden Reason = "eviction-forbidden"
	EvictionRejected  Reason = "eviction-rejected"
	PlanSpecChanged   Reason = "plan-spec-changed"
	TargetReplaced    Reason = "target-replaced"
	DeadlineExceeded  Reason = "deadline-exceeded"
	// VolumeDetachStuck: a volume of the evicted pods did not detach from
	// the node within spec.volumeDetachTimeout.
	VolumeDetachStuck Reason = "volume-detach-stuck"
	// VolumeAttachmentLeaked: a VolumeAttachment of the node names a
	// PersistentVolume, or a volume whose claim, that no longer exists:
	// nothing will detach it by itself.
	VolumeAttachmentLeaked Reason = "volume-attachment-leaked"
)

// Condition types.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionBlocked     = "Blocked"
	// ConditionPaused is True while maintenance is paused cluster-wide,
	// and absent from a plan that was never paused.
	ConditionPaused = "Paused"
	// ConditionRefused is True while the API keeps refusing the plan's
	// cordon or uncordon (a webhook, RBAC): its message is the API's, its
	// lastTransitionTime the first refusal; maintd retries with backoff
	// until the deadline. Absent from a plan that was never refused.
	ConditionRefused = "Refused"
)

// MaintenancePlanStatus is what maintd observed and did, written before and
// after every action so that a restarted maintd resumes where it stopped.
type MaintenancePlanStatus struct {
	// ObservedGeneration is the spec generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase of the plan.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Reason of the phase: a stable code.
	// +optional
	Reason Reason `json:"reason,omitempty"`
	// Message for people: what is happening or what blocks, naming the pod,
	// the PDB and the numbers.
	// +optional
	Message string `json:"message,omitempty"`
	// Conditions Ready (drained or completed), Progressing and Blocked.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// NodeUID is the UID of the node when the plan started.
	// +optional
	NodeUID types.UID `json:"nodeUID,omitempty"`
	// Preflight is the latest drain-risk analysis of the node.
	// +optional
	Preflight *Preflight `json:"preflight,omitempty"`
	// EvictionProgress is the persisted drain: the targets bound by UID, the
	// evictions in flight, the cooldowns and the deadline.
	// +optional
	EvictionProgress *EvictionProgress `json:"evictionProgress,omitempty"`
	// Pods counts the node's pods.
	// +optional
	Pods PodCounts `json:"pods,omitempty"`
	// Forecast is the drain forecast of the node, from the caches: made
	// when the plan starts and again when the node, its pods or their
	// budgets change.
	// +optional
	Forecast *Forecast `json:"forecast,omitempty"`
	// DryRun holds the per-pod verdicts of the last dry run.
	// +optional
	// +listType=atomic
	DryRun []PodVerdict `json:"dryRun,omitempty"`
	// StartBy is the plan's creation plus spec.startWithin: a plan that has
	// not started by then expires.
	// +optional
	StartBy *metav1.Time `json:"startBy,omitempty"`
	// Since is when the current phase and reason began: a wait (for a slot,
	// a budget, a pod's exit) has lasted since then, for the cause the
	// reason and message name.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// History holds the last 20 phase/reason transitions, oldest first.
	// +optional
	// +listType=atomic
	History []Transition `json:"history,omitempty"`
	// Forced is the ledger of pods deleted under a MaintenanceOverride,
	// each entry written before its DELETE was sent; it is never trimmed.
	// +optional
	// +listType=atomic
	Forced []ForcedDelete `json:"forced,omitempty"`
	// Window is where the plan stands with spec.windows.
	// +optional
	Window *PlanWindow `json:"window,omitempty"`
	// ReleasedAt is when maintd first saw spec.release set: the health
	// gate's timeout counts from it.
	// +optional
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`
}

// Preflight is the drain-risk analysis of the node (k8s-analyze's checks).
type Preflight struct {
	// Risk is the node's grade: low, medium or high.
	Risk string `json:"risk"`
	// Findings are the top 10 findings, worst first.
	// +optional
	// +listType=atomic
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one finding of the analysis.
type Finding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	// Object is kind/namespace/name of the subject.
	Object  string `json:"object"`
	Message string `json:"message"`
}

// Forecast is how long the drain takes, or why it never completes
// (docs/design.md, "Drain forecast", has the model).
type Forecast struct {
	// Verdict is ok, never (the causes say why; the plan blocks before it
	// starts) or unknown (the causes name what could not be judged; the
	// times assume it turns out well).
	Verdict string `json:"verdict"`
	// P50 and P90 are the time, from computedAt, until the node is empty
	// of the pods the drain evicts, at each workload's median and
	// upper-quantile time to Ready. Absent when the verdict is never.
	// +optional
	P50 *metav1.Duration `json:"p50,omitempty"`
	// +optional
	P90 *metav1.Duration `json:"p90,omitempty"`
	// Remaining is, once the drain has started, P50: the time left at
	// computedAt. ETA is computedAt plus Remaining.
	// +optional
	Remaining *metav1.Duration `json:"remaining,omitempty"`
	// +optional
	ETA *metav1.Time `json:"eta,omitempty"`
	// CriticalPath is the PodDisruptionBudget or workload whose last pod
	// goes last, with its rounds and the time of one round.
	// +optional
	CriticalPath string `json:"criticalPath,omitempty"`
	// Causes are why the verdict is never or unknown, never causes first
	// (at most 5).
	// +optional
	// +listType=atomic
	Causes []ForecastCause `json:"causes,omitempty"`
	// Pods are the pods of the node the drain evicts, as timed.
	Pods int32 `json:"pods"`
	// ComputedAt is when the forecast was made.
	ComputedAt metav1.Time `json:"computedAt"`
}

// ForecastCause is one reason for a never or unknown forecast.
type ForecastCause struct {
	// Verdict is what this cause alone makes of the forecast.
	Verdict string `json:"verdict"`
	// Reason is a stable code: pdb-never-allows, pdb-never-refills,
	// pdb-overlap, replacement-unschedulable, insufficient-capacity, or
	// one of the unknown causes (k8s-analyze's CHECKS.md lists them).
	Reason string `json:"reason"`
	// Object is kind/namespace/name of the subject.
	Object  string `json:"object"`
	Message string `json:"message"`
}

// EvictionProgress is the drain's persisted state.
type EvictionProgress struct {
	// PlanGeneration is the spec generation the drain started with.
	PlanGeneration int64 `json:"planGeneration"`
	// Scope is a digest of workloads, allowAllWorkloads and acceptedRisks
	// when the drain started: a change to them blocks the plan.
	Scope string `json:"scope"`
	// NodeUID is the node's UID when the drain started.
	NodeUID types.UID `json:"nodeUID,omitempty"`
	// WorkloadUIDs are the allowed workloads' UIDs when the drain started.
	// +optional
	// +listType=atomic
	WorkloadUIDs []WorkloadUID `json:"workloadUIDs,omitempty"`
	// StartedAt is when the drain started: when the plan decided to cordon
	// its node. It never changes once set.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Deadline is startedAt plus spec.deadline.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// ActivePods are the evictions requested and not yet settled.
	// +optional
	// +listType=atomic
	ActivePods []ActivePod `json:"activePods,omitempty"`
	// Cooldowns are the waits per PDB (or for the API as a whole).
	// +optional
	// +listType=atomic
	Cooldowns []Cooldown `json:"cooldowns,omitempty"`
	// NextActionAt is when maintd acts next at the latest.
	// +optional
	NextActionAt *metav1.Time `json:"nextActionAt,omitempty"`
	// Surges are the owners this plan scaled up by one replica (or is
	// about to) to move their pods (spec.surge), each restored once.
	// +optional
	// +listType=atomic
	Surges []Surge `json:"surges,omitempty"`
	// Detaches are the volumes of the evicted pods still attached to the
	// node once the pods are gone, each since it was first seen waiting.
	// +optional
	// +listType=atomic
	Detaches []Detach `json:"detaches,omitempty"`
	// Groups are the drain groups of the node's pods, in the order they go
	// (spec.drainRules, the pods' annotations, storage providers last).
	// +optional
	// +listType=atomic
	Groups []DrainGroup `json:"groups,omitempty"`
}

// Detach is one volume the plan waits to see detached from its node.
type Detach struct {
	// VolumeAttachment names it ("" for an entry of
	// node.status.volumesAttached alone).
	// +optional
	VolumeAttachment string `json:"volumeAttachment,omitempty"`
	// PersistentVolume is its volume, when known.
	// +optional
	PersistentVolume string `json:"persistentVolume,omitempty"`
	// Driver is its CSI driver or volume plugin.
	// +optional
	Driver string `json:"driver,omitempty"`
	// Since is when the plan first saw it waiting.
	Since metav1.Time `json:"since"`
	// Leaked says why nothing will detach it ("pv-gone", "claim-gone").
	// +optional
	Leaked string `json:"leaked,omitempty"`
	// DetachError is the driver's last detach error, when it reported one.
	// +optional
	DetachError string `json:"detachError,omitempty"`
}

// DrainGroup is one group of the node's pods that go together.
type DrainGroup struct {
	// Order: lower goes first.
	Order int32 `json:"order"`
	// Behavior is Drain, Skip or WaitCompleted.
	Behavior string `json:"behavior"`
	// Why the pods are in it: a rule, an annotation, storage providers, or
	// the default.
	Why string `json:"why"`
	// Pods counts its pods; Remaining those not gone yet.
	Pods      int32 `json:"pods"`
	Remaining int32 `json:"remaining"`
}

// Surge is one owner scaled up by one replica so that its pods on the node
// can be evicted with no moment of downtime.
type Surge struct {
	// Kind is Deployment or ReplicaSet.
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// PDB is the budget that never allowed the eviction without the surge.
	PDB string `json:"pdb"`
	// From is the owner's spec.replicas before the surge, written before
	// the owner is scaled to From+1.
	From int32 `json:"from"`
	// State is intended (written before the scale-up), scaled (the owner
	// has From+1 and the annotation naming this plan), restoring (written
	// before the scale-down) or restored.
	State string `json:"state"`
	// ScaledAt and RestoredAt are when the owner was scaled and restored.
	// +optional
	ScaledAt *metav1.Time `json:"scaledAt,omitempty"`
	// +optional
	RestoredAt *metav1.Time `json:"restoredAt,omitempty"`
	// Message says what the restore did: the count set back, or why a
	// count someone else changed during the surge was left as it is.
	// +optional
	Message string `json:"message,omitempty"`
}

// WorkloadUID binds an allowed workload to its UID.
type WorkloadUID struct {
	WorkloadRef `json:",inline"`
	UID         types.UID `json:"uid"`
}

// ActivePod is one eviction: its intent is written before the request.
type ActivePod struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// PDB is the name of the PodDisruptionBudget that governs it, if any.
	// +optional
	PDB string `json:"pdb,omitempty"`
	// PDBResourceVersion is the PDB's resourceVersion when the eviction was
	// requested: until it changes, the budget does not show this eviction.
	// +optional
	PDBResourceVersion string `json:"pdbResourceVersion,omitempty"`
	// RequestedAt is when the intent was written.
	RequestedAt metav1.Time `json:"requestedAt"`
	// Outcome is requested (sent, no answer recorded yet), accepted,
	// unknown, or gone (the pod is gone; kept until the budget shows it).
	Outcome string `json:"outcome"`
	// AnsweredAt is when an unknown answer came back (a timeout, a lost
	// answer): the pod waits evictionTimeout from it, then is read live
	// before anything is sent again.
	// +optional
	AnsweredAt *metav1.Time `json:"answeredAt,omitempty"`
}

// Cooldown is a wait before the next eviction under one PDB.
type Cooldown struct {
	// PDB is namespace/name, or "*" for the API as a whole.
	PDB string `json:"pdb"`
	// Reason is pdb-budget-exhausted, pdb-stale, eviction-throttled or
	// api-contention.
	Reason Reason `json:"reason"`
	// NextActionAt ends the cooldown at the latest.
	NextActionAt metav1.Time `json:"nextActionAt"`
	// ResourceVersion is the PDB's resourceVersion when the wait began: the
	// wait ends early only on a newer status.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Attempts counts the refusals in a row (backoff).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Message is the API's answer.
	// +optional
	Message string `json:"message,omitempty"`
}

// PodCounts counts the node's pods: total = evicted + remaining.
type PodCounts struct {
	// Total pods to evict: evicted plus remaining.
	Total int32 `json:"total"`
	// Evicted by this plan and gone.
	Evicted int32 `json:"evicted"`
	// Remaining pods to evict.
	Remaining int32 `json:"remaining"`
	// Skipped pods that stay (DaemonSet, mirror, finished) or left by themselves.
	Skipped int32 `json:"skipped"`
}

// PodVerdict is a dry run's answer for one pod.
type PodVerdict struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
	// Outcome is the classified answer of the server-side dry run.
	Outcome    string `json:"outcome"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Transition is one step of the plan's story.
type Transition struct {
	Phase  Phase       `json:"phase"`
	Reason Reason      `json:"reason"`
	Time   metav1.Time `json:"time"`
	// +optional
	Message string `json:"message,omitempty"`
}

// MaintenancePlanList is a list of plans.
//
// +kubebuilder:object:root=true
type MaintenancePlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MaintenancePlan `json:"items"`
}
