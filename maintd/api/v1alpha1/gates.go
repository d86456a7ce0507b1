package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaintenanceWindows say when work on a node may start and run: recurring
// allow windows (a cron schedule and a duration, on the wall clock of an
// IANA time zone), deny windows and excluded dates that close time the
// allow windows open. A node is cordoned only in an open window, and only
// when its drain forecast (p90) plus the margin fits in the time left; at
// the window's end a node in progress goes on for at most maxOverrun (0:
// it stops evicting and goes on in the next window), no node starts, and
// the nodes not begun wait for the next window.
type MaintenanceWindows struct {
	// TimeZone is an IANA zone name (Europe/Berlin); empty is UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
	// Allow are the windows in which work may start. None: all time is
	// open but what deny and exclude close.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Allow []MaintenanceWindow `json:"allow,omitempty"`
	// Deny are windows in which no work starts or runs.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Deny []MaintenanceWindow `json:"deny,omitempty"`
	// Exclude are dates (YYYY-MM-DD) closed from midnight to midnight in
	// timeZone.
	// +optional
	// +kubebuilder:validation:MaxItems=366
	// +kubebuilder:validation:items:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	// +listType=set
	Exclude []string `json:"exclude,omitempty"`
	// MaxOverrun is how long past a window's end a node begun in it may go
	// on evicting; 0 (the default): it stops at the end.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	MaxOverrun *metav1.Duration `json:"maxOverrun,omitempty"`
	// Margin is added to a node's forecast p90 to get the time it needs
	// in a window (default 30s).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Margin *metav1.Duration `json:"margin,omitempty"`
}

// MaintenanceWindow is one recurring window: it opens each time schedule
// fires and stays open for duration (elapsed time).
type MaintenanceWindow struct {
	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week) or a descriptor (@daily, @weekly).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`
	// Duration of each window, at most a week.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="duration must be positive and at most 168h"
	Duration metav1.Duration `json:"duration"`
}

// PlanWindow is where a plan stands with its windows.
type PlanWindow struct {
	// Open is true while a window is open.
	Open bool `json:"open"`
	// End is when the open window closes; Next when the next one opens.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// +optional
	Next *metav1.Time `json:"next,omitempty"`
	// Need is the node's forecast p90 plus the margin: what a window must
	// have left for the drain to start.
	// +optional
	Need *metav1.Duration `json:"need,omitempty"`
}

// CampaignWindows is a campaign's forecast across its windows.
type CampaignWindows struct {
	// Open is true while a window is open; End is when it closes, Next
	// when the next one opens.
	Open bool `json:"open"`
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// +optional
	Next *metav1.Time `json:"next,omitempty"`
	// Needed is how many windows the nodes not begun need (the one open
	// now included if a node starts in it); LastEnd is when the last of
	// them ends, and ETA when the last node is forecast drained.
	// +optional
	Needed int32 `json:"needed,omitempty"`
	// +optional
	LastEnd *metav1.Time `json:"lastEnd,omitempty"`
	// +optional
	ETA *metav1.Time `json:"eta,omitempty"`
	// Message says why there is no estimate (a node needs more than any
	// window offers, no window opens), when there is none.
	// +optional
	Message string `json:"message,omitempty"`
}

// HealthGate is what the node must show after release, before maintd
// uncordons it: Ready, and every condition and label named. A node that
// does not within timeout blocks the plan (node-unhealthy) and, for a
// campaign, its next wave; a node deleted after release (replaced, not
// rebooted) completes the plan.
type HealthGate struct {
	// Conditions the node must show with the status given (a condition an
	// upgrade agent sets, Type=KernelUpgraded Status=True).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Conditions []NodeConditionGate `json:"conditions,omitempty"`
	// Labels the node must carry, with these values.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Labels map[string]string `json:"labels,omitempty"`
	// Timeout counts from release (default 10m).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="timeout must be positive"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// NodeConditionGate is one node condition a health gate waits for.
type NodeConditionGate struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Type=string
	Type corev1.NodeConditionType `json:"type"`
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status corev1.ConditionStatus `json:"status"`
}

// Reasons of windows and the health gate.
const (
	// OutsideWindow: no window is open, or the one open has less time left
	// than the node needs (forecast p90 plus margin): the plan waits.
	OutsideWindow Reason = "outside-window"
	// WindowClosed: the window closed (and its overrun passed) while the
	// node was in progress: no eviction until the next window opens.
	WindowClosed Reason = "window-closed"
	// WindowsInvalid: spec.windows does not parse (a schedule, a zone).
	WindowsInvalid Reason = "windows-invalid"
	// WaitingForHealth: released, the node is not yet Ready with the
	// health gate's conditions and labels: it stays cordoned.
	WaitingForHealth Reason = "waiting-for-health"
	// NodeUnhealthy: the health gate did not hold within its timeout.
	NodeUnhealthy Reason = "node-unhealthy"
	// NodeReplaced: the node was deleted (or re-created) after release:
	// replaced, not rebooted; the plan completes.
	NodeReplaced Reason = "node-replaced"
)
