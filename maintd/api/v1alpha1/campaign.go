package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MaintenanceCampaign takes a set of nodes out for maintenance, each pod
// moved once: maintd checks that the nodes left schedulable can take the
// pods to move, then makes one MaintenancePlan per node (owned by the
// campaign), a wave at a time; every plan of a wave cordons its node before
// any of them evicts, so an evicted pod lands outside the wave. A breaker
// pauses the campaign when the cluster gets sick.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mc,categories=sentinel
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Wave",type=integer,JSONPath=`.status.wave`
// +kubebuilder:printcolumn:name="Drained",type=integer,JSONPath=`.status.counts.drained`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.counts.nodes`
// +kubebuilder:printcolumn:name="Evicted",type=integer,JSONPath=`.status.counts.evicted`
// +kubebuilder:printcolumn:name="Paused",type=string,JSONPath=`.status.conditions[?(@.type=="Paused")].status`
// +kubebuilder:printcolumn:name="Windows",type=integer,JSONPath=`.status.windows.needed`,priority=1
// +kubebuilder:printcolumn:name="ETA",type=string,JSONPath=`.status.windows.eta`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MaintenanceCampaign struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MaintenanceCampaignSpec   `json:"spec"`
	Status MaintenanceCampaignStatus `json:"status,omitempty"`
}

// MaintenanceCampaignSpec names the nodes, what may be disrupted on them,
// and the bounds of the whole campaign.
//
// +kubebuilder:validation:XValidation:rule="has(self.nodeSelector) != (has(self.nodes) && size(self.nodes) > 0)",message="name the nodes by nodeSelector or by nodes, exactly one of them"
// +kubebuilder:validation:XValidation:rule="!(has(self.allowAllWorkloads) && self.allowAllWorkloads && has(self.workloads) && size(self.workloads) > 0)",message="workloads and allowAllWorkloads are exclusive: list the workloads or allow all, not both"
type MaintenanceCampaignSpec struct {
	// NodeSelector selects the nodes, once, when the campaign starts: a
	// node labelled later is not added (status.nodes lists the set).
	// Exclusive with nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// Nodes lists the nodes by name. Exclusive with nodeSelector.
	// +optional
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	Nodes []string `json:"nodes,omitempty"`

	// Reason is free text, copied to every plan (and so to the nodes'
	// cordon-reason annotations).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`

	// Workloads whose pods may be evicted, copied to every plan (see
	// MaintenancePlan's spec.workloads).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Workloads []WorkloadRef `json:"workloads,omitempty"`
	// AllowAllWorkloads allows the eviction of every pod a controller owns
	// on the campaign's nodes, copied to every plan. Exclusive with
	// workloads.
	// +optional
	AllowAllWorkloads bool `json:"allowAllWorkloads,omitempty"`
	// AcceptedRisks are k8s-analyze finding codes a person accepts, and
	// causes of a verdict of never (insufficient-capacity,
	// replacement-unschedulable, ...) that a person knows will clear (an
	// autoscaler adds nodes), copied to every plan; the check of a wave's
	// capacity honours them as the plans do.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9][a-z0-9-]*$`
	AcceptedRisks []string `json:"acceptedRisks,omitempty"`
	// Surge is Never or IfNeeded, copied to every plan (see
	// MaintenancePlan's spec.surge).
	// +optional
	// +kubebuilder:default=Never
	Surge SurgePolicy `json:"surge,omitempty"`
	// VolumeDetachTimeout is copied to every plan (see MaintenancePlan's
	// spec.volumeDetachTimeout).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	VolumeDetachTimeout *metav1.Duration `json:"volumeDetachTimeout,omitempty"`
	// DrainRules are copied to every plan (see MaintenancePlan's
	// spec.drainRules).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	DrainRules []DrainRule `json:"drainRules,omitempty"`
	// MaxConcurrentEvictions bounds each plan's evictions in flight,
	// copied to every plan; the PodDisruptionBudgets, across all the
	// campaign's nodes at once, are what bound the disruption.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxConcurrentEvictions int32 `json:"maxConcurrentEvictions,omitempty"`

	// Deadline bounds the whole campaign, from its start (its first plan)
	// to every node drained. Each plan gets what is left of it as its own
	// deadline; past it the campaign fails (deadline-exceeded), makes no
	// new plan, and the nodes of plans that failed stay cordoned.
	// +optional
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="deadline must be positive"
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// Release, once set, releases each node as soon as its plan is
	// Drained (those already drained at once): maintd uncordons it and its
	// plan completes. Until then drained nodes stay cordoned for the work;
	// a person or an agent may also release one node by setting
	// spec.release on its plan. A wave's slots free up as its plans
	// complete; the next wave starts when every plan of the wave has.
	// +optional
	Release bool `json:"release,omitempty"`

	// Budget bounds how many of the campaign's nodes are in maintenance at
	// once, beside --max-nodes-in-maintenance (the cluster-wide cap over
	// every campaign and plan): a count or a percentage of its nodes, and
	// per topology domain (a zone).
	// +optional
	Budget *CampaignBudget `json:"budget,omitempty"`

	// Breaker says when the campaign pauses by itself.
	// +optional
	// +kubebuilder:default={}
	Breaker Breaker `json:"breaker,omitempty"`

	// Retry names nodes of the campaign to drain again: a listed node
	// whose plan is gone and that did not complete (its plan was deleted
	// before it ended, or failed or expired and was deleted) gets a new
	// plan in a later wave. Deleting a plan alone never makes the campaign
	// drain its node again (status.nodeStatus keeps what became of it).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	Retry []string `json:"retry,omitempty"`

	// Windows say when the campaign's nodes may be drained, copied to
	// every plan (see MaintenanceWindows); status.windows forecasts how
	// many windows the nodes left need.
	// +optional
	Windows *MaintenanceWindows `json:"windows,omitempty"`

	// HealthGate is copied to every plan: after release, a node is
	// uncordoned only once it holds, and the next wave waits for it.
	// +optional
	HealthGate *HealthGate `json:"healthGate,omitempty"`
}

// CampaignBudget bounds a wave: its nodes are at most nodes (a count, or a
// percentage of the campaign's nodes rounded down, at least 1), and, with
// a topologyKey, at most maxPerDomain of one domain (the nodes' value of
// that label; a node without it is a domain of its own kind, ""), or all
// of one domain with oneDomainAtATime.
//
// +kubebuilder:validation:XValidation:rule="!has(self.maxPerDomain) && !has(self.oneDomainAtATime) || has(self.topologyKey)",message="maxPerDomain and oneDomainAtATime need a topologyKey"
type CampaignBudget struct {
	// Nodes is a count (3) or a percentage ("10%") of the campaign's nodes.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="nodes is a count of at least 1 or a percentage from 1% to 100%"
	Nodes *intstr.IntOrString `json:"nodes,omitempty"`
	// TopologyKey is the node label whose values are the domains, such as
	// topology.kubernetes.io/zone.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	TopologyKey string `json:"topologyKey,omitempty"`
	// MaxPerDomain is how many nodes of one domain may be in a wave
	// (default 1 with a topologyKey).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxPerDomain int32 `json:"maxPerDomain,omitempty"`
	// OneDomainAtATime: a wave takes nodes of one domain only.
	// +optional
	OneDomainAtATime bool `json:"oneDomainAtATime,omitempty"`
}

// Breaker holds the thresholds that pause a campaign, evaluated from the
// caches on every reconcile: more nodes NotReady than maxNotReadyNodes (the
// campaign's own nodes not counted); a pod moved by the campaign not Ready
// podReadyTimeout after its creation; more PodDisruptionBudgets below their
// floor than maxPDBsBelowFloor (the campaign's evictions never take one
// below: the Eviction API refuses them). The campaign resumes once every
// cause has been clear for holdDown.
type Breaker struct {
	// MaxNotReadyNodes is how many nodes outside the campaign may be
	// NotReady before it pauses.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	MaxNotReadyNodes int32 `json:"maxNotReadyNodes"`
	// PodReadyTimeout is how long a pod the campaign moved may stay not
	// Ready (Pending, crash-looping, failing to pull its image).
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	PodReadyTimeout *metav1.Duration `json:"podReadyTimeout,omitempty"`
	// MaxPDBsBelowFloor is how many PodDisruptionBudgets may be below their
	// floor (fewer healthy pods than desired) before the campaign pauses.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	MaxPDBsBelowFloor int32 `json:"maxPDBsBelowFloor"`
	// HoldDown is how long every cause must stay clear before the campaign
	// resumes.
	// +optional
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	HoldDown *metav1.Duration `json:"holdDown,omitempty"`
}

// Reasons of a campaign.
const (
	// CampaignStarted: the campaign's nodes are chosen and checked.
	CampaignStarted Reason = "started"
	// WaveStarted: the plans of a wave are made; they cordon, then evict.
	WaveStarted Reason = "wave-started"
	// WaveCordoning: a plan's node is cordoned and it waits for the other
	// nodes of its wave to be, before its first eviction.
	WaveCordoning Reason = "wave-cordoning"
	// WaitingForRelease: every node of the wave is drained; the next wave
	// or the end waits for their release.
	WaitingForRelease Reason = "waiting-for-release"
	// InsufficientCapacity: the nodes left schedulable cannot take the
	// pods of the wave (resources or scheduling constraints).
	InsufficientCapacity Reason = "insufficient-capacity"
	// BreakerOpen: the campaign is paused by its breaker.
	BreakerOpen Reason = "breaker-open"
	// PlansBlocked: some of the campaign's plans are Blocked or Failed.
	PlansBlocked Reason = "plans-blocked"
	// NodesNotDone: every plan made has ended, and some nodes did not
	// complete (their plans were deleted before they ended): the campaign
	// cannot complete until they are listed in spec.retry.
	NodesNotDone Reason = "nodes-not-done"
	// NoNodes: the selector or the list names no existing node.
	NoNodes Reason = "no-nodes"
	// CampaignCompleted: every plan of the campaign completed.
	CampaignCompleted Reason = "completed"
)

// Labels of the plans a campaign makes.
const (
	// CampaignLabel names the campaign of a plan.
	CampaignLabel = "maintenance.sentinel.dev/campaign"
	// WaveLabel is the plan's wave, counted from 1.
	WaveLabel = "maintenance.sentinel.dev/wave"
)

// MaintenanceCampaignStatus is what maintd observed and did.
type MaintenanceCampaignStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is Pending, Draining, Drained (every node drained, waiting
	// for release), Completed, Blocked or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// +optional
	Reason Reason `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Conditions Ready, Progressing, Blocked and Paused (the breaker or
	// the cluster-wide switch, with the cause and its numbers).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Nodes is the campaign's set, fixed when it started, by name.
	// +optional
	// +listType=atomic
	Nodes []string `json:"nodes,omitempty"`
	// StartedAt is when the campaign started; Deadline is startedAt plus
	// spec.deadline.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// Wave is the current wave, counted from 1.
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// NodeStatus is what became of each node of the campaign, by name:
	// its plan and that plan's outcome, kept when the plan is deleted. The
	// counts, the nodes that remain and the campaign's end come from it.
	// +optional
	// +listType=map
	// +listMapKey=name
	NodeStatus []CampaignNode `json:"nodeStatus,omitempty"`
	// Counts sums up the nodes.
	// +optional
	Counts CampaignCounts `json:"counts,omitempty"`
	// Capacity is the last check that the nodes left schedulable can take
	// the pods of the next wave.
	// +optional
	Capacity *CampaignCapacity `json:"capacity,omitempty"`
	// Breaker is the breaker's state.
	// +optional
	Breaker *BreakerStatus `json:"breaker,omitempty"`
	// Windows is the campaign's forecast across spec.windows.
	// +optional
	Windows *CampaignWindows `json:"windows,omitempty"`
	// Owners are the UIDs of the controllers (ReplicaSet, StatefulSet, ...)
	// of the pods on the campaign's nodes when it started: their pods
	// created since are the pods the campaign moved, whose readiness the
	// breaker watches.
	// +optional
	// +listType=atomic
	Owners []types.UID `json:"owners,omitempty"`
	// Namespaces are the namespaces of those pods: the breaker watches
	// their PodDisruptionBudgets.
	// +optional
	// +listType=atomic
	Namespaces []string `json:"namespaces,omitempty"`
	// Since is when the current phase and reason began.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// CampaignNode is one node of a campaign and what became of it.
type CampaignNode struct {
	Name string `json:"name"`
	// Outcome is pending (no plan yet), planned (its plan is at work),
	// drained, completed, blocked, failed, expired (its plan did not start
	// before the campaign's deadline), or deleted (its plan was deleted
	// before it ended: listed in spec.retry, the node is drained again).
	Outcome NodeOutcome `json:"outcome"`
	// Plan and PlanUID name its latest plan.
	// +optional
	Plan string `json:"plan,omitempty"`
	// +optional
	PlanUID types.UID `json:"planUID,omitempty"`
	// Wave is the wave of its latest plan.
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// Evicted are the evictions of all its plans, deleted ones included;
	// EvictedBefore those of the plans before its latest.
	// +optional
	Evicted int32 `json:"evicted,omitempty"`
	// +optional
	EvictedBefore int32 `json:"evictedBefore,omitempty"`
}

// NodeOutcome is what became of a campaign's node.
// +kubebuilder:validation:Enum=pending;planned;drained;completed;blocked;failed;expired;deleted
type NodeOutcome string

// The outcomes of a campaign's node.
const (
	NodePending   NodeOutcome = "pending"
	NodePlanned   NodeOutcome = "planned"
	NodeDrained   NodeOutcome = "drained"
	NodeCompleted NodeOutcome = "completed"
	NodeBlocked   NodeOutcome = "blocked"
	NodeFailed    NodeOutcome = "failed"
	NodeExpired   NodeOutcome = "expired"
	NodeDeleted   NodeOutcome = "deleted"
)

// CampaignCounts counts a campaign's nodes by their outcome, and the pods.
type CampaignCounts struct {
	Nodes     int32 `json:"nodes"`
	Planned   int32 `json:"planned"`
	Drained   int32 `json:"drained"`
	Completed int32 `json:"completed"`
	Blocked   int32 `json:"blocked"`
	Failed    int32 `json:"failed"`
	// Expired are the nodes whose plans did not start before the
	// campaign's deadline (their startWithin); Deleted those whose plans
	// were deleted before they ended.
	// +optional
	Expired int32 `json:"expired,omitempty"`
	// +optional
	Deleted int32 `json:"deleted,omitempty"`
	// PodsAtStart are the pods to evict on the campaign's nodes when it
	// started; Evicted are the evictions its plans made. Evicted above
	// PodsAtStart are pods moved twice (a wave's pods that landed on a
	// node of a later wave).
	PodsAtStart int32 `json:"podsAtStart"`
	Evicted     int32 `json:"evicted"`
}

// CampaignCapacity is the check, before a wave's first write, that the
// nodes left schedulable can take the wave's pods.
type CampaignCapacity struct {
	// Wave is the wave checked.
	Wave int32 `json:"wave"`
	// Verdict is ok, never or unknown (k8s-analyze's capacity verdict).
	Verdict string `json:"verdict"`
	// Pods are the pods to move.
	Pods int32 `json:"pods"`
	// +optional
	Message string `json:"message,omitempty"`
}

// BreakerStatus is the breaker's state.
type BreakerStatus struct {
	// Open is true while the campaign is paused by its breaker.
	Open bool `json:"open"`
	// Reason is nodes-not-ready, pods-not-ready or pdbs-below-floor.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message names the numbers: which nodes, pods or budgets, against
	// which threshold.
	// +optional
	Message string `json:"message,omitempty"`
	// OpenedAt is when it opened; ClearSince is when every cause was last
	// seen clear (it closes holdDown after it).
	// +optional
	OpenedAt *metav1.Time `json:"openedAt,omitempty"`
	// +optional
	ClearSince *metav1.Time `json:"clearSince,omitempty"`
	// Trips counts the times it opened.
	// +optional
	Trips int32 `json:"trips,omitempty"`
}

// MaintenanceCampaignList is a list of campaigns.
//
// +kubebuilder:object:root=true
type MaintenanceCampaignList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MaintenanceCampaign `json:"items"`
}
