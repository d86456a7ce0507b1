package analyze

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Kind is the document kind of a Report.
const Kind = "Report"

// Report is the drain-risk grading of one or more nodes.
type Report struct {
	document.Header `json:",inline"`
	Metadata        Metadata `json:"metadata"`
	// Risk is the worst risk over Nodes.
	Risk Severity `json:"risk"`
	// Capacity judges whether the nodes left schedulable can take the pods
	// that draining a set of nodes together moves (the command's
	// --together; absent otherwise). It changes neither Risk nor the exit
	// code, as the forecast does not.
	Capacity *CapacityReport `json:"capacity,omitempty"`
	Nodes    []Node          `json:"nodes"`
}

// Metadata says what was analysed and as of when.
type Metadata struct {
	// Now is the time the analysis judged at: the snapshot's capturedAt
	// unless overridden.
	Now               metav1.Time `json:"now"`
	CapturedAt        metav1.Time `json:"capturedAt"`
	Server            string      `json:"server,omitempty"`
	KubernetesVersion string      `json:"kubernetesVersion,omitempty"`
	// ResourceVersion is the etcd revision of a consistent snapshot.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Consistent is the snapshot's metadata.consistent: true when it is one
	// cut of the cluster at ResourceVersion.
	Consistent bool `json:"consistent"`
	// Age is how old the snapshot was when analysed: the analysis' clock
	// (or --now) minus capturedAt, to the second.
	Age metav1.Duration `json:"age"`
}

// Node is the grading of one node's drain.
type Node struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
	// Risk is the highest severity among Findings, low when there are none.
	Risk   Severity `json:"risk"`
	Counts Counts   `json:"counts"`
	// Forecast is how long draining the node takes, or why it never ends
	// (absent unless Options.Forecast is set; the command always sets it).
	Forecast *Forecast `json:"forecast,omitempty"`
	// DrainOrder are the node's pods to evict in the groups they may go
	// in, in order (DrainOrder, with Options.DrainRules).
	DrainOrder []DrainGroup `json:"drainOrder"`
	Findings   []Finding    `json:"findings"`
	Pods       []PodVerdict `json:"pods"`
	PDBs       []PDBBudget  `json:"pdbs"`
}

// Counts sums up a node's pods and findings.
type Counts struct {
	Pods  int `json:"pods"`
	Evict int `json:"evict"`
	Skip  int `json:"skip"`
	Block int `json:"block"`
	// Surge counts the pods whose action is surge (only with
	// Options.Surge; absent when none).
	Surge  int `json:"surge,omitzero"`
	High   int `json:"high"`
	Medium int `json:"medium"`
	Low    int `json:"low"`
}

// Subject names the object a finding is about.
type Subject struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

// Finding is one detected risk. Its severity and fix belong to its code
// (see Checks).
type Finding struct {
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	Subject  Subject  `json:"subject"`
	Message  string   `json:"message"`
	// Evidence holds the field values that triggered the finding.
	Evidence map[string]string `json:"evidence,omitempty"`
	Fix      string            `json:"fix"`
}

// Action is what a drain should do with a pod.
type Action string

const (
	Evict Action = "evict"
	Skip  Action = "skip"
	Block Action = "block"
	// Surge: the pod's budget never allows its eviction, but one more
	// replica of its owner does: scale the owner up by one (PodVerdict.Surge),
	// wait for the new pod to be Ready, evict the pod, scale back. Only
	// with Options.Surge.
	Surge Action = "surge"
)

// PodVerdict is the judgement of one pod on the node.
type PodVerdict struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	Action    Action    `json:"action"`
	// Surge is set when the pod's budget never allows its eviction but one
	// more replica of its owner would: the owner a surge scales.
	Surge *SurgeMove `json:"surge,omitempty"`
	// NoSurge says why no surge can move a pod whose budget never allows
	// its eviction ("" otherwise).
	NoSurge string `json:"noSurge,omitempty"`
	// Reasons are the codes of the findings about this pod or its PDBs.
	Reasons []Code `json:"reasons,omitempty"`
	// Owners is the controller chain from the pod upwards.
	Owners []OwnerHop `json:"owners,omitempty"`
	// PDBs are the budgets whose selector matches the pod, as the Eviction
	// API matches them.
	PDBs         []Ref      `json:"pdbs,omitempty"`
	EvictableNow Prediction `json:"evictableNow"`
}

// SurgeMove is the owner a surge scales up by one replica so that the
// pod's budget allows its eviction (CHECKS.md, "Surge").
type SurgeMove struct {
	// Kind is Deployment, or ReplicaSet for one that no controller owns.
	Kind string    `json:"kind"`
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
	// Replicas is spec.replicas now; the surge sets Replicas+1.
	Replicas int32 `json:"replicas"`
	// PDB is the budget's name (in the pod's namespace).
	PDB string `json:"pdb"`
}

// OwnerHop is one controller reference in a pod's owner chain.
type OwnerHop struct {
	Kind string    `json:"kind"`
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
	// Verified is true when the snapshot holds this object under this name
	// with this UID.
	Verified bool `json:"verified"`
	// Problem says why the hop is not verified: missing, uid-mismatch or
	// unknown-kind.
	Problem string `json:"problem,omitempty"`
}

// Ref names a namespaced object.
type Ref struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// PDBBudget is the arithmetic of one PodDisruptionBudget that covers pods of
// the node.
type PDBBudget struct {
	Namespace          string    `json:"namespace"`
	Name               string    `json:"name"`
	UID                types.UID `json:"uid"`
	DisruptionsAllowed int32     `json:"disruptionsAllowed"`
	CurrentHealthy     int32     `json:"currentHealthy"`
	DesiredHealthy     int32     `json:"desiredHealthy"`
	ExpectedPods       int32     `json:"expectedPods"`
	// PodsOnNode are the pods of the node the PDB covers and a drain evicts.
	PodsOnNode int `json:"podsOnNode"`
	// PodsUsingBudget are those whose eviction would use the budget (the
	// others are not Ready and may go without it).
	PodsUsingBudget int `json:"podsUsingBudget"`
	// RoundsNeeded is how many budget refills draining the node needs:
	// ceil(PodsUsingBudget / DisruptionsAllowed). Absent when the budget
	// allows nothing now.
	RoundsNeeded *int `json:"roundsNeeded,omitempty"`
	// Findings are the PDB's findings when it governs the eviction of none
	// of the node's pods (PodsUsingBudget 0): told here, they do not weigh
	// on the node's risk. Otherwise they are among the node's findings.
	Findings []Finding `json:"findings,omitempty"`
}

// Verdict is a forecast's verdict.
type Verdict string

const (
	// VerdictOK: the drain ends, in about P50 (P90 at the upper quantile).
	VerdictOK Verdict = "ok"
	// VerdictNever: the drain cannot complete; the causes say why.
	VerdictNever Verdict = "never"
	// VerdictUnknown: something the forecast needs could not be judged
	// from the snapshot; the causes name it. P50 and P90 assume it turns
	// out well, except under ReasonNodesOutOfScope: where replacements go
	// is not judged at all, and there are no times.
	VerdictUnknown Verdict = "unknown"
)

// Forecast is the drain forecast of a node: how long until the pods a drain
// evicts are gone (docs/design.md, "Drain forecast", has the model).
type Forecast struct {
	Verdict Verdict `json:"verdict"`
	// P50 and P90 are the time until the node is empty of the pods a drain
	// evicts and their volumes are detached, with each workload's median and
	// upper-quantile time to Ready.
	// Absent when the verdict is never, or a cause is
	// ReasonNodesOutOfScope (a node-scoped snapshot without a Placement).
	P50 *metav1.Duration `json:"p50,omitempty"`
	P90 *metav1.Duration `json:"p90,omitempty"`
	// CriticalPath is the group of pods whose last one goes last (at P50).
	// Absent when nothing is evicted, or there is no P50.
	CriticalPath *CriticalPath `json:"criticalPath,omitempty"`
	// Causes say why the verdict is never, and what could not be judged;
	// never causes first.
	Causes []ForecastCause `json:"causes,omitempty"`
	// Pods are the node's pods the drain evicts (not skipped): those timed.
	Pods int `json:"pods"`
	// Concurrency bounds the evictions in flight (requested, pod not yet
	// gone).
	Concurrency int `json:"concurrency"`
	// NeedsOverride are the pods the drain evicts (not Skip or
	// WaitCompleted in its order) that only a break-glass delete moves
	// (finding needs-override), in the node's pod order, each with the
	// downtime that delete implies. Absent when none.
	NeedsOverride []OverrideNeed `json:"needsOverride,omitempty"`
}

// OverrideNeed is a pod whose eviction no PodDisruptionBudget ever allows
// and for which no surge makes room (finding needs-override): the drain
// moves it only by deleting it under a MaintenanceOverride. It says what
// that delete costs.
type OverrideNeed struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// PDB is the budget that governs its eviction and never allows it (in
	// the pod's namespace); Spec says why, as pdb-zero-spec does.
	PDB  string `json:"pdb"`
	Spec string `json:"spec"`
	// NoSurge says why no surge makes room (the pod verdict's noSurge).
	NoSurge string `json:"noSurge"`
	// Ready is whether the pod is Ready now: deleting a pod that is not
	// takes nothing that serves.
	Ready bool `json:"ready"`
	// Replacement is the controller that re-creates the pod once it is
	// deleted (kind namespace/name, the first of its owner chain); absent
	// when nothing does (no controller, or one missing or replaced): the
	// delete removes the pod for good.
	Replacement string `json:"replacement,omitempty"`
	// Grace is the pod's termination grace period (30s when unset): the
	// most its exit takes.
	Grace metav1.Duration `json:"grace"`
	// VolumeMove is what the replacement waits for, after the grace, for
	// its ReadWriteOnce volume to move (detach, and attach unless
	// ReplacementReady was learned); absent when none moves.
	VolumeMove metav1.Duration `json:"volumeMove,omitzero"`
	// ReplacementReady is the replacement's time from scheduled to Ready,
	// as the forecast takes it (absent without a replacement).
	ReplacementReady *ReadyTime `json:"replacementReady,omitempty"`
	// Downtime is how long the pod is down after the delete until its
	// replacement is Ready, at the median and upper-quantile time to Ready
	// (absent without a replacement).
	Downtime *Downtime `json:"downtime,omitempty"`
}

// Downtime is a pod's time without a Ready replacement, at the median
// (P50) and the upper quantile (P90) of its workload's time to Ready.
type Downtime struct {
	P50 metav1.Duration `json:"p50"`
	P90 metav1.Duration `json:"p90"`
}

// CriticalPath is the PodDisruptionBudget, or for pods no budget governs
// the workload, that dominates a node's drain.
type CriticalPath struct {
	// Kind is PodDisruptionBudget, or the workload's kind (the top of its
	// owner chain: Deployment, StatefulSet, ...; Pod for a pod without a
	// controller).
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Pods are the node's pods in the group.
	Pods int `json:"pods"`
	// Rounds are how many times the drain evicts some of the group's pods
	// and waits: its budget's refills, or free eviction slots.
	Rounds int `json:"rounds"`
	// RoundTime is one round, the longest of the group's pods: Ready.P50
	// (a ReplicaSet replaces a pod as soon as it terminates), or Grace plus
	// Ready.P50 for a StatefulSet's pod (replaced once it is gone), plus
	// VolumeMove for a pod whose ReadWriteOnce volume must move.
	RoundTime metav1.Duration `json:"roundTime"`
	// Grace is the termination grace period that applies to the group's
	// pods (the longest; 30s when unset).
	Grace metav1.Duration `json:"grace"`
	// Exit is how long the group's pods take to be gone once evicted (the
	// pod with the longest at p90).
	Exit ExitTime `json:"exit"`
	// Ready is how long a replacement takes from scheduled to Ready.
	Ready ReadyTime `json:"ready"`
	// Detach is how long the group's volumes take to detach once their pod
	// is gone (the longest; absent without attached volumes): the node is
	// empty only then.
	Detach metav1.Duration `json:"detach,omitzero"`
	// VolumeMove is what a replacement waits for, after the grace, for its
	// ReadWriteOnce volume to move: detach, and attach unless Ready holds
	// it (learned from pods). Part of RoundTime; absent when none moves.
	VolumeMove metav1.Duration `json:"volumeMove,omitzero"`
	// Surge is true for a budget that never allows an eviction and whose
	// pods a surge moves (Options.Surge): the first goes once the surge
	// pod is Ready, each next once the previous one's replacement is.
	Surge bool `json:"surge,omitzero"`
}

// ReadyTime is a workload's time from PodScheduled to Ready, learned from its
// pods, or the default when none shows both.
type ReadyTime struct {
	// Workload is the workload it was learned from (kind namespace/name).
	Workload string          `json:"workload"`
	P50      metav1.Duration `json:"p50"`
	P90      metav1.Duration `json:"p90"`
	// Samples are the pods that showed both times; 0 means the default.
	Samples int `json:"samples"`
}

// ExitTime is how long a workload's pods take from their eviction to
// being gone.
type ExitTime struct {
	P50 metav1.Duration `json:"p50"`
	P90 metav1.Duration `json:"p90"`
	// Samples are the exits learned (ForecastOptions.Learned); 0 means the
	// prior: analyze.DefaultExitP50, at most the grace, at p50 and the
	// grace at p90.
	Samples int `json:"samples"`
}

// ForecastCause is one reason for a never or unknown verdict.
type ForecastCause struct {
	// Verdict is never or unknown: what this cause alone makes of the
	// forecast.
	Verdict Verdict `json:"verdict"`
	// Reason is a stable code (CHECKS.md, "Drain forecast").
	Reason  string  `json:"reason"`
	Subject Subject `json:"subject"`
	Message string  `json:"message"`
}

// CapacityReport is the judgement of Capacity: can the pods that draining
// every node of a set evicts run on the other nodes once all of the set is
// cordoned (CHECKS.md, "Capacity of a node set")?
type CapacityReport struct {
	// Verdict is ok: every pod to move has a place outside the set, placed
	// one after the other; never: some cannot (the causes say why);
	// unknown: something could not be judged (the causes name it).
	Verdict Verdict `json:"verdict"`
	// Nodes is the set, sorted by name, each once.
	Nodes []string `json:"nodes"`
	// Pods are the pods to move: those of the set's nodes a drain evicts
	// whose replacement the scheduler places (a ReplicaSet's or a
	// StatefulSet's, owner verified), one replacement each.
	Pods int `json:"pods"`
	// Schedulable are the nodes outside the set that are not cordoned:
	// where the replacements may go (0 on a node-scoped snapshot, unless
	// judged on a Placement).
	Schedulable int `json:"schedulable"`
	// Demand are the requests of the pods to move (Pods: one each).
	Demand Resources `json:"demand"`
	// Free is what the Schedulable nodes have free in all: on each,
	// allocatable less the requests of its pods that are not terminal, at
	// least 0. Absent when it cannot be told: one of them has no
	// status.allocatable, or the snapshot is node-scoped (and not judged
	// on a Placement).
	Free *Resources `json:"free,omitempty"`
	// Causes say why the verdict is never, and what could not be judged;
	// never causes first, at most MaxCapacityCauses of them.
	Causes []ForecastCause `json:"causes,omitempty"`
	// OmittedCauses are the causes left out beyond MaxCapacityCauses (the
	// verdict counts them).
	OmittedCauses int `json:"omittedCauses,omitzero"`
}

// Resources are amounts of what placement weighs: CPU in millicores,
// memory and ephemeral storage in bytes, and pods.
type Resources struct {
	MilliCPU         int64 `json:"milliCPU"`
	Memory           int64 `json:"memory"`
	EphemeralStorage int64 `json:"ephemeralStorage"`
	Pods             int64 `json:"pods"`
}

// Severity is a finding's severity and a node's risk.
type Severity string

const (
	Low    Severity = "low"
	Medium Severity = "medium"
	High   Severity = "high"
)

func (s Severity) rank() int {
	switch s {
	case Medium:
		return 1
	case High:
		return 2
	}
	return 0
}

// worse is the more severe of s and t.
func (s Severity) worse(t Severity) Severity {
	if t.rank() > s.rank() {
		return t
	}
	return s
}

// ExitCode is the exit code for a report of risk s: 0 low, 2 medium, 3 high.
func (s Severity) ExitCode() exitcode.Code {
	switch s {
	case Medium:
		return exitcode.NotNow
	case High:
		return exitcode.Blocked
	}
	return exitcode.OK
}
