// What every status carries (conditions, history), and the statuses the
// controller records from live answers.

package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Uncordoned is the status once the controller's live uncordon of a
// released plan's node answered: msg says what it did.
func Uncordoned(p *api.MaintenancePlan, st api.MaintenancePlanStatus, msg string, now time.Time) api.MaintenancePlanStatus {
	now = now.UTC().Truncate(time.Second)
	st = *st.DeepCopy()
	st.Phase, st.Reason, st.Message = api.Completed, api.Uncordoned, fmt.Sprintf("node %s: %s; the plan is complete", p.Spec.NodeName, msg)
	clearBookkeeping(&st)
	SetConditions(&st, p.Generation, now)
	Remember(&st, now)
	return st
}

// CordonLost is the status once the controller's live cordon found the node
// taken by another owner before this plan's cordon landed: Blocked, and
// this plan holds no cordon (no maintenance slot).
func CordonLost(p *api.MaintenancePlan, st api.MaintenancePlanStatus, msg string, now time.Time) api.MaintenancePlanStatus {
	now = now.UTC().Truncate(time.Second)
	st = *st.DeepCopy()
	st.Phase, st.Reason, st.Message = api.Blocked, api.NodeOccupied, msg+": this plan never takes over another owner's node; it did not cordon it"
	if ep := st.EvictionProgress; ep != nil {
		ep.Scope, ep.StartedAt, ep.Deadline = "", nil, nil
	}
	clearBookkeeping(&st)
	SetConditions(&st, p.Generation, now)
	Remember(&st, now)
	return st
}

// Refused is the status once the API refused the plan's act (cordon or
// uncordon) with msg: the Refused condition, True since the first refusal;
// the plan stays where it is and the act is tried again.
func Refused(p *api.MaintenancePlan, st api.MaintenancePlanStatus, act, msg string, now time.Time) api.MaintenancePlanStatus {
	now = now.UTC().Truncate(time.Second)
	st = *st.DeepCopy()
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: api.ConditionRefused, Status: metav1.ConditionTrue, ObservedGeneration: p.Generation,
		Reason: Camel(act + "-refused"), Message: fmt.Sprintf("the API refuses the %s of node %s (retried with backoff until the deadline): %s", act, p.Spec.NodeName, msg),
		LastTransitionTime: metav1.NewTime(now)})
	return st
}

// SlotTaken is the status once the controller, about to cordon, read live
// that the maintenance slots are taken (held, of max): the caches it
// decided on lagged. The plan waits for a slot again; its drain has not
// started.
func SlotTaken(p *api.MaintenancePlan, st api.MaintenancePlanStatus, held []string, max int, now time.Time) api.MaintenancePlanStatus {
	now = now.UTC().Truncate(time.Second)
	st = *st.DeepCopy()
	st.Phase, st.Reason = api.Pending, api.WaitingForSlot
	st.Message = fmt.Sprintf("%d of %d nodes are in maintenance (%s): waiting for a slot", len(held), max, strings.Join(held, ", "))
	if ep := st.EvictionProgress; ep != nil {
		ep.Scope, ep.StartedAt, ep.Deadline, ep.NodeUID, ep.WorkloadUIDs = "", nil, nil, "", nil
	}
	clearBookkeeping(&st)
	SetConditions(&st, p.Generation, now)
	Remember(&st, now)
	return st
}

// clearBookkeeping drops, from a status that can no longer act, the
// evictions that may never have gone out and the waits: other plans count
// only what this one really spent (accepted evictions, until their budgets
// show them).
func clearBookkeeping(st *api.MaintenancePlanStatus) {
	ep := st.EvictionProgress
	if ep == nil {
		return
	}
	ep.ActivePods = slices.DeleteFunc(ep.ActivePods, func(a api.ActivePod) bool { return a.Outcome != Accepted })
	ep.Cooldowns, ep.NextActionAt = nil, nil
}

// finish sets what every status carries: generation, conditions, history,
// and the deadline's wake-up.
func (d *decider) finish() {
	st := &d.st
	st.ObservedGeneration = d.p.Generation
	if ep := st.EvictionProgress; ep != nil && ep.Deadline != nil && !Final(st) && st.Phase != api.Drained && ep.Deadline.After(d.at) {
		// Past it, an override keeps the plan (breakGlass): nothing is
		// left to wait for at the deadline.
		d.requeueAt(ep.Deadline.Time)
		if ep.NextActionAt != nil && ep.NextActionAt.After(d.now) {
			d.requeueAt(ep.NextActionAt.Time)
		}
	}
	if Final(st) {
		clearBookkeeping(st)
	}
	SetConditions(st, d.p.Generation, d.now)
	Remember(st, d.now)
}

// SetConditions derives Ready, Progressing and Blocked from the phase. A
// condition's lastTransitionTime is now when it is new or its status flips,
// and is kept otherwise.
func SetConditions(st *api.MaintenancePlanStatus, generation int64, now time.Time) {
	cond := func(typ string, on bool) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		reason := string(st.Reason)
		if reason == "" {
			reason = string(st.Phase)
		}
		// The message on the conditions that hold: a False one would
		// repeat it for nothing, and every status write carries them all.
		msg := ""
		if on {
			msg = st.Message
		}
		// The injected now, not SetStatusCondition's time.Now, for a new
		// condition or a flip.
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, ObservedGeneration: generation,
			Reason: Camel(reason), Message: msg, LastTransitionTime: metav1.NewTime(now)})
	}
	cond(api.ConditionReady, st.Phase == api.Drained || st.Phase == api.Completed)
	switch st.Phase {
	case api.Cordoning, api.Cordoned, api.Draining, api.CoolingDown, api.Uncordoning:
		cond(api.ConditionProgressing, true)
	default:
		cond(api.ConditionProgressing, false)
	}
	cond(api.ConditionBlocked, st.Phase == api.Blocked || st.Phase == api.Failed)
	if st.Reason == api.Paused || meta.FindStatusCondition(st.Conditions, api.ConditionPaused) != nil {
		cond(api.ConditionPaused, st.Reason == api.Paused)
	}
	// A refused act (Refused) holds while the plan still waits for it.
	if c := meta.FindStatusCondition(st.Conditions, api.ConditionRefused); c != nil && c.Status == metav1.ConditionTrue && st.Phase != api.Cordoning && st.Phase != api.Uncordoning {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: api.ConditionRefused, Status: metav1.ConditionFalse, ObservedGeneration: generation,
			Reason: "Done", LastTransitionTime: metav1.NewTime(now)})
	}
}

// Camel turns a reason code (pdb-budget-exhausted) into a condition reason
// (PdbBudgetExhausted), which must be CamelCase.
func Camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || r == ' ':
			up = true
		case up && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}

// Remember appends the current phase and reason to the history when they
// changed, keeping the last HistoryLength.
func Remember(st *api.MaintenancePlanStatus, now time.Time) {
	if n := len(st.History); n > 0 && st.History[n-1].Phase == st.Phase && st.History[n-1].Reason == st.Reason {
		return
	}
	since := metav1.NewTime(now)
	st.Since = &since
	st.History = append(st.History, api.Transition{Phase: st.Phase, Reason: st.Reason, Time: metav1.NewTime(now), Message: st.Message})
	if over := len(st.History) - HistoryLength; over > 0 {
		st.History = slices.Delete(st.History, 0, over)
	}
}
