package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaintenanceOverride is a break-glass approval: a person other than the
// plan's requester lets maintd delete, for one plan and for at most an
// hour, the pods that no PodDisruptionBudget will ever let it evict. maintd
// tries the Eviction API first; only where the budget still refuses does
// it delete the pod, with the pod's UID as precondition and its own grace
// period, after writing the delete to the plan's ledger
// (status.forced). An override acts only after the plan's deadline
// (or, with actAfter Forecast, once the plan's forecast says the budget
// never allows), never for more pods than it names, and never when the
// approver is the plan's requester. The admission policies in
// deploy/admission.yaml pin approvedBy to the caller and bound the
// duration; without the break-glass component (deploy/breakglass) maintd
// may not delete pods and refuses every override, saying so.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=create,get,list,watch,delete
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mo,categories=sentinel
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.plan`
// +kubebuilder:printcolumn:name="Approved-By",type=string,JSONPath=`.spec.approvedBy`
// +kubebuilder:printcolumn:name="Max-Pods",type=integer,JSONPath=`.spec.maxPods`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.spec.duration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MaintenanceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MaintenanceOverrideSpec `json:"spec"`
}

// OverrideActAfter is when an override may begin to act.
// +kubebuilder:validation:Enum=Deadline;Forecast
type OverrideActAfter string

const (
	// ActAfterDeadline: once the plan's deadline has passed.
	ActAfterDeadline OverrideActAfter = "Deadline"
	// ActAfterForecast: once the plan's forecast says the drain never
	// completes because of a budget (or after the deadline).
	ActAfterForecast OverrideActAfter = "Forecast"
)

// MaintenanceOverrideSpec names the plan, the pods and the bounds.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an override is immutable: delete it and approve a new one"
type MaintenanceOverrideSpec struct {
	// Plan is the name of the MaintenancePlan the override is for.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Plan string `json:"plan"`
	// PlanUID, when set, pins the override to one instance of the plan:
	// a plan deleted and made again under the same name is not covered.
	// +optional
	PlanUID types.UID `json:"planUID,omitempty"`
	// ApprovedBy is the user who approved the override; admission pins it
	// to the user who creates the object.
	// +kubebuilder:validation:MinLength=1
	ApprovedBy string `json:"approvedBy"`
	// Reason says why (a ticket, an incident); it is copied to every
	// ledger entry and Event.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`
	// Duration is how long the override is in force from its creation: at
	// most 1h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1h')",message="an override lasts more than 0s and at most 1h"
	Duration metav1.Duration `json:"duration"`
	// ActAfter is Deadline (default) or Forecast.
	// +optional
	ActAfter OverrideActAfter `json:"actAfter,omitempty"`
	// Pods are the pods the override covers: each entry names a namespace
	// and a workload (kind and name of the pod's controller, or of the
	// Deployment above its ReplicaSet) or a label selector, or both.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	Pods []OverridePods `json:"pods"`
	// MaxPods bounds the pods deleted under the override, in all.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxPods int32 `json:"maxPods"`
	// MaxPerPDB bounds the pods deleted under one PodDisruptionBudget
	// (default 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxPerPDB int32 `json:"maxPerPDB,omitempty"`
}

// OverridePods is one namespace's covered pods.
//
// +kubebuilder:validation:XValidation:rule="has(self.workload) || has(self.selector)",message="name the pods by workload or by selector"
type OverridePods struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Workload is Kind/name: StatefulSet/db, Deployment/web.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z]+/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Workload string `json:"workload,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// MaintenanceOverrideList is a list of overrides.
//
// +kubebuilder:object:root=true
type MaintenanceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MaintenanceOverride `json:"items"`
}

// ForcedDelete is one entry of a plan's ledger: a pod that maintd deletes
// under an override, written before the DELETE is sent.
type ForcedDelete struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	UID       types.UID `json:"uid"`
	// PDB is the budget that refused the eviction; PDBBefore its status
	// when the entry was written.
	PDB       string    `json:"pdb"`
	PDBBefore PDBStatus `json:"pdbBefore"`
	// Override and the approver (and the override's bounds in time) that
	// allowed the delete.
	Override   string      `json:"override"`
	ApprovedBy string      `json:"approvedBy"`
	ApprovedAt metav1.Time `json:"approvedAt"`
	ExpiresAt  metav1.Time `json:"expiresAt"`
	// GracePeriodSeconds is the pod's own grace period, sent with the DELETE.
	GracePeriodSeconds int64 `json:"gracePeriodSeconds"`
	// RecordedAt is when the entry was written: before the DELETE.
	RecordedAt metav1.Time `json:"recordedAt"`
	// Deleted is when the DELETE was answered (or, after a restart, when
	// the pod was read back already deleting or gone); Outcome says which.
	// +optional
	Deleted *metav1.Time `json:"deleted,omitempty"`
	// Outcome: deleted (the DELETE was accepted), already-deleting (a
	// restart found the pod terminating: the DELETE of an earlier process
	// went through), gone (the pod left before any DELETE), or
	// not-deleted (the pod was evicted after all, or its UID changed).
	// +optional
	Outcome string `json:"outcome,omitempty"`
}

// PDBStatus is a PodDisruptionBudget's status at one moment.
type PDBStatus struct {
	CurrentHealthy     int32 `json:"currentHealthy"`
	DesiredHealthy     int32 `json:"desiredHealthy"`
	ExpectedPods       int32 `json:"expectedPods"`
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
}

// CreatedByAnnotation names the requester of a plan or a campaign, as the
// API server names the user; admission (deploy/admission.yaml) pins it to
// the user who creates the object, and it never changes. An override whose
// approver it names is ignored (two people).
const CreatedByAnnotation = "maintenance.sentinel.dev/created-by"

// Reasons of a plan's break-glass.
const (
	// ForcingDeletes: deleting, under an override, pods no budget allows.
	ForcingDeletes Reason = "forcing-deletes"
	// OverrideSpent: past the deadline, pods the budget refuses remain and
	// no override in force covers them (spent, expired, or approved by the
	// requester); a new override resumes the plan.
	OverrideSpent Reason = "override-spent"
	// BreakGlassDisabled: an override would act, but maintd may not
	// delete pods (the break-glass component is not applied).
	BreakGlassDisabled Reason = "break-glass-disabled"
)

// Outcomes of a ForcedDelete.
const (
	ForcedDeleted         = "deleted"
	ForcedAlreadyDeleting = "already-deleting"
	ForcedGone            = "gone"
	ForcedNotDeleted      = "not-deleted"
)
