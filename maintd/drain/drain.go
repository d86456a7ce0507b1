// Package drain decides the next step of a MaintenancePlan: pure functions
// from what the caches show (Facts), the plan and the time to the status to
// persist and the one action to take. It never talks to a cluster (a test
// fences its imports); the controller reads the facts, persists the status
// Decide returns BEFORE it acts, acts, and hands the outcome to Record.
package drain

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
	"github.com/sentinel-go/sentinel/maintd/windows"
)

// Defaults of the spec's optional fields (the CRD sets them too).
const (
	DefaultDeadline               = time.Hour
	DefaultStartWithin            = time.Hour
	DefaultMaxConcurrentEvictions = 50
	DefaultMaxCooldown            = time.Minute
	DefaultEvictionTimeout        = 10 * time.Second
	// HistoryLength is how many transitions status.history keeps.
	HistoryLength = 20
	// GlobalKey is the cooldown key of waits that hold every eviction.
	GlobalKey = "*"
)

// Facts is what the caches showed at one moment. The controller fills it;
// a read error is returned by the controller, never turned into a default.
type Facts struct {
	// Node is the plan's node; nil when it does not exist.
	Node *corev1.Node
	// Analysis is k8s-analyze's verdict on the node (nil without a node).
	Analysis *analyze.Node
	// Forecast is the node's drain forecast, made at ForecastAt (nil
	// without a node, or for a plan that is final or released).
	Forecast   *analyze.Forecast
	ForecastAt time.Time
	// Pods are the pods that exist now, by UID: every pod on the node and
	// every pod of the plan's active evictions.
	Pods map[types.UID]Pod
	// PDBs are the PodDisruptionBudgets of the namespaces involved, by
	// namespace/name.
	PDBs map[string]PDB
	// Workloads are the current UIDs of the spec's workloads; a workload
	// that does not exist has no entry.
	Workloads map[api.WorkloadRef]types.UID
	// Rivals are the other live plans for the same node created before this
	// one: the first plan of a node owns it.
	Rivals []string
	// Holders counts the other plans holding a cordon (maintenance slots in
	// use); MaxNodes is the number of slots (--max-nodes-in-maintenance).
	Holders, MaxNodes int
	// ThrottledUntil is when the API server's last throttling 429 to
	// another plan's eviction stops holding every eviction (zero: none).
	ThrottledUntil time.Time
	// Others are the active evictions of the other plans. Until a PDB's
	// status shows them they count against its disruptionsAllowed, as this
	// plan's own do, so that two plans draining nodes that share a PDB do
	// not both spend its one disruption (the second would meet a 429).
	// Their pods that exist are in Pods.
	Others []api.ActivePod
	// Owners are the owners that the plan's surges name and that the
	// pods needing a surge would scale, by OwnerKey.
	Owners map[string]SurgeOwner
	// Pause, when set, is maintenance paused cluster-wide, or the plan's
	// campaign paused by its breaker: no cordon, eviction or surge is made
	// until it is lifted.
	Pause *Pause
	// Wave, for a plan a MaintenanceCampaign made, is its wave as the
	// caches show it.
	Wave *Wave
	// Attachments are the volumes attached to the node
	// (analyze.NodeAttachments): the plan is Drained once none of them
	// belongs to a pod gone from it.
	Attachments []analyze.Attachment
	// Groups are the drain groups of the node's pods, in the order they go
	// (analyze.DrainOrder with the plan's rules).
	Groups []analyze.DrainGroup
	// Overrides are the MaintenanceOverrides for the plan (by name, and by
	// UID when they pin it); MayDelete says, by namespace, whether maintd
	// may delete pods there (its own SelfSubjectAccessReview): the
	// break-glass component grants it.
	Overrides []api.MaintenanceOverride
	MayDelete map[string]bool
}

// Wave is the wave of a campaign's plan: its plans cordon their nodes
// before any of them evicts, so that no evicted pod lands on a node of the
// wave (and is moved again).
type Wave struct {
	// Campaign names the campaign; Number is the wave, from 1.
	Campaign string
	Number   int
	// Nodes counts the wave's nodes; Cordoning are those whose plans are
	// still about to cordon (new, pending a cordon, or cordoning and not
	// yet seen cordoned). A plan waiting for a slot, Blocked, Failed or
	// final is not waited for.
	Nodes     int
	Cordoning []string
}

// Pause is the cluster-wide pause switch as the caches show it.
type Pause struct {
	// Object names the switch (namespace/name of the ConfigMap).
	Object string
	Since  time.Time
	// Reason is what the person who set it wrote (its data's reason), or
	// the breaker's cause with its numbers.
	Reason string
	// Campaign is set when the pause is the breaker of the plan's
	// campaign (Object names the campaign), not the cluster-wide switch.
	Campaign bool
}

// Pod is one pod as the cache shows it.
type Pod struct {
	Namespace, Name string
	Terminating     bool
	// Labels and GracePeriodSeconds are what a forced delete reads: an
	// override's selector, and the grace period the DELETE carries.
	Labels             map[string]string
	GracePeriodSeconds int64
}

// PDB is one PodDisruptionBudget's status as the cache shows it.
type PDB struct {
	ResourceVersion    string
	Generation         int64
	ObservedGeneration int64
	DisruptionsAllowed int32
	CurrentHealthy     int32
	DesiredHealthy     int32
	ExpectedPods       int32
	// DisruptedPods are the pod names the API server counts as evicted and
	// not yet gone.
	DisruptedPods map[string]bool
}

// Current reports whether the disruption controller has processed the
// PDB's latest spec.
func (p PDB) Current() bool { return p.ObservedGeneration >= p.Generation }

// Action is what the controller does after persisting the status.
type Action string

// The actions.
const (
	None        Action = ""
	Cordon      Action = "cordon"
	Evict       Action = "evict"
	DryRunEvict Action = "dry-run-evict"
	Uncordon    Action = "uncordon"
	// Scale writes the replica counts of surges (Decision.Scales).
	Scale Action = "scale"
)

// Target is one pod to evict.
type Target struct {
	Namespace, Name string
	UID             types.UID
	// PDB is the governing PDB's name, if any, and PDBVersion the
	// resourceVersion of its status the decision read.
	PDB, PDBVersion string
	// Live: an earlier request for this pod got no answer, so it may have
	// been applied; the controller reads the pod from the API server, not
	// the cache, and sends nothing when it is gone or going.
	Live bool
	// Force, set for a pod no budget allows and an override covers, is its
	// ledger entry: where the Eviction API still refuses, the controller
	// writes it (Ledger) and then deletes the pod. Ledgered: the entry is
	// written already (its DELETE was never answered): the pod, read
	// live, is deleted without another eviction or entry.
	Force    *api.ForcedDelete
	Ledgered bool
}

// Decision is Decide's answer.
type Decision struct {
	// Status is the plan's status to persist before acting.
	Status api.MaintenancePlanStatus
	// Action, with its Targets for evictions.
	Action  Action
	Targets []Target
	// Scales are the surges' writes, for Scale.
	Scales []OwnerScale
	// Owner and Reason are the cordon annotations' values, for Cordon and
	// Uncordon; NodeUID is the node the cordon is meant for.
	Owner, Reason string
	NodeUID       types.UID
	// Requeue is when to decide again without an event; 0 means only on an
	// event.
	Requeue time.Duration
	// Waits are what the decision waits on: an event of one of them may
	// change it, and no other event can (but the plan's own).
	Waits []waits.Wait
}

// Spec is a plan's spec with every default applied.
type Spec struct {
	api.MaintenancePlanSpec
	StartWithin, Deadline, MaxCooldown, EvictionTimeout, VolumeDetachTimeout time.Duration
	MaxConcurrentEvictions                                                   int
}

// Defaulted applies the defaults to s.
func Defaulted(s api.MaintenancePlanSpec) Spec {
	d := func(v *metav1.Duration, def time.Duration) time.Duration {
		if v == nil || v.Duration <= 0 {
			return def
		}
		return v.Duration
	}
	out := Spec{MaintenancePlanSpec: s, StartWithin: d(s.StartWithin, DefaultStartWithin),
		Deadline: d(s.Deadline, DefaultDeadline), MaxCooldown: d(s.MaxCooldown, DefaultMaxCooldown),
		EvictionTimeout: d(s.EvictionTimeout, DefaultEvictionTimeout), VolumeDetachTimeout: d(s.VolumeDetachTimeout, DefaultVolumeDetachTimeout),
		MaxConcurrentEvictions: int(s.MaxConcurrentEvictions)}
	if out.MaxConcurrentEvictions <= 0 {
		out.MaxConcurrentEvictions = DefaultMaxConcurrentEvictions
	}
	return out
}

// Owner is the cordon owner annotation of plan p: it carries the plan's UID,
// so a plan re-created under the same name is another owner.
func Owner(p *api.MaintenancePlan) string {
	return "maintenanceplan/" + p.Name + "/" + string(p.UID)
}

// IsOwner reports whether owner is a cordon owner value written by maintd.
func IsOwner(owner string) bool { return strings.HasPrefix(owner, "maintenanceplan/") }

// ParseOwner splits a cordon owner value written by maintd into the plan's
// name and UID; ok is false for any other owner.
func ParseOwner(owner string) (name string, uid types.UID, ok bool) {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 || parts[0] != "maintenanceplan" {
		return "", "", false
	}
	return parts[1], types.UID(parts[2]), true
}

// Scope is the digest of the fields that fix what a drain may evict: a change
// to them after the drain started blocks the plan.
func Scope(s api.MaintenancePlanSpec) string {
	risks := slices.Clone(s.AcceptedRisks)
	slices.Sort(risks)
	surge := s.Surge
	if surge == api.SurgeNever {
		surge = "" // the default, as a plan made before surges digests it
	}
	b, _ := json.Marshal(struct {
		W []api.WorkloadRef
		A bool
		R []string
		S api.SurgePolicy `json:",omitempty"`
	}{s.Workloads, s.AllowAllWorkloads, risks, surge})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Final reports whether a status can never change again without a person
// (editing or deleting the plan).
func Final(st *api.MaintenancePlanStatus) bool {
	switch st.Phase {
	case api.Completed, api.Failed:
		return true
	case api.Blocked:
		return st.Reason == api.PlanSpecChanged || st.Reason == api.TargetReplaced
	}
	return false
}

// Started reports whether a plan in this status has started its drain: it
// decided to cordon its node (the drain's scope is recorded), whatever
// happened since.
func Started(st *api.MaintenancePlanStatus) bool {
	return st.EvictionProgress != nil && st.EvictionProgress.Scope != ""
}

// CordonMayLand reports whether a plan in this status holds its node's
// slot even where no annotation shows it: it decided to cordon (Cordoning),
// or it failed its deadline while cordoning and its last cordon was not
// refused. The cordon it sent may have landed while a cache that lags
// shows neither, or land yet; only the node's annotation read live, or the
// plan's deletion, says otherwise. A plan whose cordon the API refused (the
// Refused condition) frees the slot.
func CordonMayLand(st *api.MaintenancePlanStatus) bool {
	if st.Phase == api.Cordoning {
		return true
	}
	n := len(st.History)
	if st.Phase != api.Failed || st.Reason != api.DeadlineExceeded || n < 2 || st.History[n-2].Phase != api.Cordoning {
		return false
	}
	// The Refused condition turns False as the plan leaves Cordoning; that
	// it is there at all says the API refused its cordon.
	return meta.FindStatusCondition(st.Conditions, api.ConditionRefused) == nil
}

// HoldsCordon reports whether a plan in this status has cordoned its node or
// is about to.
func HoldsCordon(st *api.MaintenancePlanStatus) bool {
	return Started(st) && st.Phase != api.Completed
}

// Decide is the next step of plan p given the facts at now.
func Decide(f Facts, p *api.MaintenancePlan, now time.Time) Decision {
	d := &decider{f: f, p: p, spec: Defaulted(p.Spec), now: now.UTC().Truncate(time.Second), at: now}
	d.st = *p.Status.DeepCopy()
	d.dec.Owner, d.dec.Reason = Owner(p), p.Spec.Reason
	d.win, d.winErr = WindowsOf(p.Spec.Windows)
	d.waits = waits.Set{}
	d.decide()
	d.restoreOnStop()
	d.finish()
	d.forecast()
	d.declare()
	d.dec.Status = d.st
	return d.dec
}

type decider struct {
	f    Facts
	p    *api.MaintenancePlan
	spec Spec
	// now is the time of the decision in whole seconds, as the status
	// records times; at is the time itself, from which delays count.
	now, at time.Time
	st      api.MaintenancePlanStatus
	dec     Decision
	// retry are the active pods whose request got no answer in time: they
	// may be picked again, read live first.
	retry map[types.UID]bool
	// surgeBusy names the owners a surge would scale that carry another
	// plan's surge.
	surgeBusy []string
	// waits are what the decision waits on, as its steps declare them;
	// parked is a plan that waits for a maintenance slot and nothing else
	// of its drain (the slot's freeing wakes it, and it decides afresh).
	waits  waits.Set
	parked bool
	// Break-glass (breakglass.go): the plan's overrides; pastDeadline, the
	// deadline passed with overrides to act; noForce, why an override
	// could not serve a pod; disabled, maintd may not delete pods.
	overrides    []*overrideState
	pastDeadline bool
	evicting     bool
	noForce      []string
	disabled     bool
	// win are the plan's windows (nil: none), winErr why they do not
	// parse (gates.go).
	win    *windows.Windows
	winErr error
}

func (d *decider) set(phase api.Phase, reason api.Reason, format string, args ...any) {
	d.st.Phase, d.st.Reason, d.st.Message = phase, reason, fmt.Sprintf(format, args...)
}

func (d *decider) decide() {
	if Final(&d.st) {
		return
	}
	ep := d.st.EvictionProgress
	if ep == nil {
		ep = &api.EvictionProgress{}
		d.st.EvictionProgress = ep
	}
	// The deadline counts from the start of the drain (the cordon): a wait
	// for a slot, a block before the start and a dry run spend none of it.
	started := Started(&d.st)
	if started && ep.StartedAt != nil {
		deadline := metav1.NewTime(ep.StartedAt.Add(d.spec.Deadline))
		ep.Deadline = &deadline
	}
	if d.st.Phase == "" {
		d.set(api.Pending, "", "plan accepted")
	}
	d.preflight()

	node := d.f.Node
	ours := node != nil && node.Annotations[cordon.OwnerAnnotation] == d.dec.Owner
	if d.spec.Release {
		if d.st.ReleasedAt == nil {
			d.st.ReleasedAt = Stamp(d.now)
		}
		if !d.healthGate() {
			d.release(ours)
		}
		return
	}
	if !started && d.expired() {
		return
	}
	// The deadline bounds every phase of the drain but Drained, Cordoning
	// included: a cordon the API keeps refusing does not hold a slot and a
	// wave forever.
	if started && ep.Deadline != nil && d.st.Phase != api.Drained && !d.now.Before(ep.Deadline.Time) {
		if d.st.Phase == api.Cordoning {
			// The cordon never showed (refused, or lost): the plan fails,
			// and holds a slot only if its cordon lands after all (its
			// annotation names it).
			why := ""
			if c := meta.FindStatusCondition(d.st.Conditions, api.ConditionRefused); c != nil && c.Status == metav1.ConditionTrue {
				why = ": " + c.Message
			}
			d.set(api.Failed, api.DeadlineExceeded, "the plan's deadline %s passed (started %s, deadline %s) while its cordon of node %s was never seen%s; nothing was evicted; if the cordon lands after all, it stays: delete the plan to lift it",
				d.spec.Deadline, ep.StartedAt.UTC().Format(time.RFC3339), ep.Deadline.UTC().Format(time.RFC3339), d.spec.NodeName, why)
			return
		}
		if len(d.f.Overrides) == 0 && len(d.st.Forced) == 0 {
			d.set(api.Failed, api.DeadlineExceeded, "the plan's deadline %s passed (started %s, deadline %s); %d of %d pods evicted; the node stays cordoned: delete the plan to uncordon it",
				d.spec.Deadline, ep.StartedAt.UTC().Format(time.RFC3339), ep.Deadline.UTC().Format(time.RFC3339), d.st.Pods.Evicted, d.st.Pods.Total)
			return
		}
		// Overrides name the plan: past its deadline they act on the pods
		// the budgets refuse (breakglass.go); the plan is Blocked, not
		// Failed, when none is left to serve them. Only a plan that gets
		// as far as its evictions: one that stops before (paused, its
		// node gone or uncordoned, a dry run, a wave) fails as without.
		d.pastDeadline = true
		defer func() {
			if !d.evicting && !Final(&d.st) {
				d.dec.Action, d.dec.Targets, d.dec.Scales = None, nil, nil
				d.set(api.Failed, api.DeadlineExceeded, "the plan's deadline %s passed (started %s, deadline %s) while it could not evict (%s: %s); %d of %d pods evicted; the node stays cordoned: delete the plan to uncordon it",
					d.spec.Deadline, ep.StartedAt.UTC().Format(time.RFC3339), ep.Deadline.UTC().Format(time.RFC3339), d.st.Phase, d.st.Reason, d.st.Pods.Evicted, d.st.Pods.Total)
			}
		}()
	}
	if pz := d.f.Pause; pz != nil {
		// Paused: the plan holds where it is (a cordon made stays, the
		// evictions in flight go on); its deadline still counts. A plan
		// that decided its cordon stays Cordoning (it holds its slot by
		// that intent), and a drained plan stays Drained.
		phase := api.Pending
		switch {
		case d.st.Phase == api.Drained:
			return
		case d.st.Phase == api.Cordoning:
			phase = api.Cordoning
		case started:
			phase = api.CoolingDown
		}
		if pz.Campaign {
			d.set(phase, api.Paused, "campaign %s is paused by its breaker since %s: %s; no cordon, eviction or surge until it resumes",
				pz.Object, pz.Since.UTC().Format(time.RFC3339), pz.Reason)
			return
		}
		why := ""
		if pz.Reason != "" {
			why = " (" + pz.Reason + ")"
		}
		d.set(phase, api.Paused, "maintenance is paused cluster-wide by ConfigMap %s since %s%s: no cordon, eviction or surge until it is deleted",
			pz.Object, pz.Since.UTC().Format(time.RFC3339), why)
		return
	}
	if d.windowsInvalid() {
		return
	}
	if started && ep.StartedAt != nil && d.st.Phase != api.Drained && d.windowClosed(ep.StartedAt.Time) {
		return
	}
	if node == nil {
		d.set(api.Blocked, api.NodeNotFound, "node %s not found", d.spec.NodeName)
		return
	}
	if started && ep.NodeUID != "" && node.UID != ep.NodeUID {
		d.set(api.Blocked, api.TargetReplaced, "node %s was re-created: its uid is %s, the plan started on %s", node.Name, node.UID, ep.NodeUID)
		return
	}
	if started && Scope(d.p.Spec) != ep.Scope {
		d.set(api.Blocked, api.PlanSpecChanged, "workloads, allowAllWorkloads, acceptedRisks or surge changed after the drain started (generation %d, started at %d): create a new plan", d.p.Generation, ep.PlanGeneration)
		return
	}
	if started {
		for _, w := range ep.WorkloadUIDs {
			if uid := d.f.Workloads[w.WorkloadRef]; uid != w.UID {
				now := "it no longer exists"
				if uid != "" {
					now = "its uid is now " + string(uid)
				}
				d.set(api.Blocked, api.TargetReplaced, "%s %s/%s was replaced since the drain started (uid %s): %s", w.Kind, w.Namespace, w.Name, w.UID, now)
				return
			}
		}
	}
	pods, unknown := d.classify()
	// A pod a drain rule or its annotation skips is left alone: neither
	// evicted nor, when the plan does not allow it, an unknown pod.
	pods, unknown = d.unskipped(pods), d.unskipped(unknown)
	if d.spec.DryRun {
		d.dryRun(pods, unknown)
		return
	}
	d.st.DryRun = nil
	if !started {
		d.start(node, ours, pods, unknown)
		return
	}
	if d.st.Phase == api.Cordoning {
		if ours && node.Spec.Unschedulable {
			d.set(api.Cordoned, api.CordonObserved, "node %s is cordoned by %s", node.Name, d.dec.Owner)
			d.dec.Requeue = time.Nanosecond
			return
		}
		if other := node.Annotations[cordon.OwnerAnnotation]; (other != "" && !ours) || node.Spec.Unschedulable {
			d.set(api.Blocked, api.NodeOccupied, "node %s was cordoned by %s before this plan's cordon landed", node.Name, ownerText(other))
			return
		}
		if d.st.Reason != api.CordonSubmitted { // a pause held it
			d.set(api.Cordoning, api.CordonSubmitted, "cordoning node %s as %s", node.Name, d.dec.Owner)
		}
		d.dec.Action, d.dec.NodeUID = Cordon, node.UID
		return
	}
	if !ours || !node.Spec.Unschedulable {
		d.set(api.Blocked, api.NodeUncordonedExternally, "node %s was uncordoned, or its cordon-owner annotation changed, outside this plan (owner now %s, unschedulable %t): maintd does not cordon it again; uncordon-and-delete or re-cordon it by hand",
			node.Name, ownerText(node.Annotations[cordon.OwnerAnnotation]), node.Spec.Unschedulable)
		return
	}
	if len(unknown) > 0 {
		d.unknownPods(unknown)
		return
	}
	if d.highRisk(pods) {
		return
	}
	// The wave's gate opens at the plan's first eviction the API server
	// accepted: a first request decided and never answered (maintd
	// stopped, the answer lost or unknown) is held again while the wave is
	// about to cordon (seed 917: decided while the other plan was Blocked,
	// sent after a pause said over its block).
	answered := slices.ContainsFunc(ep.ActivePods, func(a api.ActivePod) bool { return a.Outcome == Accepted || a.Outcome == Gone })
	if w := d.f.Wave; w != nil && len(w.Cordoning) > 0 && d.st.Pods.Evicted == 0 && !answered && len(ep.Surges) == 0 {
		const show = 5
		names := w.Cordoning[:min(len(w.Cordoning), show)]
		more := ""
		if len(w.Cordoning) > show {
			more = fmt.Sprintf(" and %d more", len(w.Cordoning)-show)
		}
		d.waits.Add(waits.Wave, WaveKey(w.Campaign, w.Number))
		d.set(api.Cordoned, api.WaveCordoning, "node %s is cordoned; waiting for %d of the %d nodes of campaign %s's wave %d to be cordoned (%s%s) before the first eviction, so that no evicted pod lands on a node of the wave",
			node.Name, len(w.Cordoning), w.Nodes, w.Campaign, w.Number, strings.Join(names, ", "), more)
		return
	}
	d.drain(pods)
}

// expired ends a plan that has not started by its start-by (its creation
// plus spec.startWithin): Completed, the node never touched. Before then it
// asks to decide again at the start-by, whatever it waits on.
func (d *decider) expired() bool {
	created := d.p.CreationTimestamp
	if created.IsZero() {
		d.st.StartBy = nil // not yet stored: the API server sets it
		return false
	}
	by := metav1.NewTime(created.Add(d.spec.StartWithin).Truncate(time.Second))
	d.st.StartBy = &by
	if d.now.Before(by.Time) {
		d.requeueAt(by.Time)
		return false
	}
	was := strings.ToLower(string(d.p.Status.Phase))
	if was == "" {
		was = "new"
	}
	if r := d.p.Status.Reason; r != "" {
		was += " (" + string(r) + ")"
	}
	d.set(api.Completed, api.Expired, "the plan did not start by %s (created %s, startWithin %s); it was %s: expired, node %s was never touched (create a new plan to drain it)",
		by.UTC().Format(time.RFC3339), created.UTC().Format(time.RFC3339), d.spec.StartWithin, was, d.spec.NodeName)
	return true
}

func ownerText(owner string) string {
	if owner == "" {
		return "nobody (no owner annotation)"
	}
	return owner
}

// start runs the checks made before any write and, when they pass, starts
// the drain by cordoning.
func (d *decider) start(node *corev1.Node, ours bool, pods, unknown []analyze.PodVerdict) {
	if len(d.f.Rivals) > 0 {
		d.set(api.Blocked, api.NodeOccupied, "node %s belongs to plan %s, created before this one", node.Name, strings.Join(d.f.Rivals, ", "))
		return
	}
	if other := node.Annotations[cordon.OwnerAnnotation]; other != "" && !ours {
		d.set(api.Blocked, api.NodeOccupied, "node %s is cordoned by %s: this plan never takes over another owner's node", node.Name, other)
		return
	}
	if node.Spec.Unschedulable && !ours {
		d.set(api.Blocked, api.NodeOccupied, "node %s is cordoned without an owner annotation: someone else is working on it", node.Name)
		return
	}
	if len(unknown) > 0 {
		d.unknownPods(unknown)
		return
	}
	if d.highRisk(pods) || d.neverCompletes() {
		return
	}
	d.count(pods)
	if d.outsideWindow() {
		return
	}
	if d.f.Holders >= d.f.MaxNodes {
		d.waits.Add(waits.Slot)
		d.parked = true
		d.set(api.Pending, api.WaitingForSlot, "%d of %d nodes are in maintenance: waiting for a slot", d.f.Holders, d.f.MaxNodes)
		return
	}
	ep := d.st.EvictionProgress
	ep.PlanGeneration, ep.Scope, ep.NodeUID = d.p.Generation, Scope(d.p.Spec), node.UID
	start, deadline := metav1.NewTime(d.now), metav1.NewTime(d.now.Add(d.spec.Deadline))
	ep.StartedAt, ep.Deadline = &start, &deadline
	ep.WorkloadUIDs = nil
	for _, w := range d.spec.Workloads {
		if uid, ok := d.f.Workloads[w]; ok {
			ep.WorkloadUIDs = append(ep.WorkloadUIDs, api.WorkloadUID{WorkloadRef: w, UID: uid})
		}
	}
	d.st.NodeUID = node.UID
	d.set(api.Cordoning, api.CordonSubmitted, "cordoning node %s as %s", node.Name, d.dec.Owner)
	d.dec.Action, d.dec.NodeUID = Cordon, node.UID
}

// release lifts this plan's cordon, then completes. Whether the node still
// carries the cordon is read live by the controller (cordon.Apply only
// removes this plan's own annotation), never taken from the cache, which
// may not show a cordon that just landed: the controller records
// Completed from that live answer (Uncordoned).
func (d *decider) release(ours bool) {
	if ours || HoldsCordon(&d.st) || d.st.Phase == api.Uncordoning {
		d.set(api.Uncordoning, api.UncordonSubmitted, "released: uncordoning node %s", d.spec.NodeName)
		d.dec.Action = Uncordon
		if d.f.Node != nil {
			d.dec.NodeUID = d.f.Node.UID
		}
		return
	}
	d.set(api.Completed, api.ReleasedBeforeWork, "released before this plan cordoned node %s: nothing to undo", d.spec.NodeName)
}

// count sets the pod counts: total = evicted + remaining.
func (d *decider) count(pods []analyze.PodVerdict) {
	remaining := 0
	for _, v := range pods {
		if pod, ok := d.f.Pods[v.UID]; !ok || !pod.Terminating {
			remaining++
		}
	}
	if ep := d.st.EvictionProgress; ep != nil {
		for _, a := range ep.ActivePods {
			if pod, ok := d.f.Pods[a.UID]; ok && pod.Terminating {
				remaining++
			}
		}
	}
	d.st.Pods.Remaining = int32(remaining)
	d.st.Pods.Total = d.st.Pods.Evicted + d.st.Pods.Remaining
}

// requeueAt asks to decide again at t, not before: from the decision's own
// time, not its time in whole seconds, which is up to a second earlier.
func (d *decider) requeueAt(t time.Time) {
	in := max(t.Sub(d.at), time.Nanosecond)
	if d.dec.Requeue == 0 || in < d.dec.Requeue {
		d.dec.Requeue = in
	}
}

func sortTargets(ts []Target) {
	slices.SortFunc(ts, func(a, b Target) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
}
