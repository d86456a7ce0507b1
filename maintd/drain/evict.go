package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// Outcomes of an active pod's eviction, as status.evictionProgress.activePods
// records them.
const (
	// Requested: the intent is persisted; the answer is not recorded yet.
	Requested = "requested"
	// Accepted: the API said yes; the pod is not gone yet.
	Accepted = "accepted"
	// Unknown: no reliable answer (timeout); never assumed either way.
	Unknown = "unknown"
	// Gone: the pod is gone; the entry stays until the PDB's status shows it.
	Gone = "gone"
)

// drain settles the active evictions, lifts the cooldowns whose cause is gone
// and picks the next evictions: only those the caches say the API accepts
// now, never more in flight under one PDB than it allows.
func (d *decider) drain(pods []analyze.PodVerdict) {
	ep := d.st.EvictionProgress
	ep.NextActionAt = nil
	d.waits.Add(waits.Others) // their evictions in flight, a throttle
	for _, a := range ep.ActivePods {
		d.waits.Add(waits.PDBs, a.Namespace) // its PDB is the one the API answered with, or none yet
	}
	d.evicting = true
	waiting := d.settle()
	d.breakGlass()
	recovered := d.liftCooldowns()
	d.count(pods)

	if c := d.cooldown(GlobalKey); c != nil {
		d.recheck(c)
		ep.NextActionAt = c.NextActionAt.DeepCopy()
		if blocking(c.Reason) {
			d.set(api.Blocked, c.Reason, "%s; maintd tries again at %s", c.Message, c.NextActionAt.UTC().Format(time.RFC3339))
		} else {
			d.set(api.CoolingDown, c.Reason, "%s; evictions resume at %s", c.Message, c.NextActionAt.UTC().Format(time.RFC3339))
		}
		return
	}
	if d.f.ThrottledUntil.After(d.at) { // not a whole second: the controller's clock
		// A throttle is the API server's, not one plan's.
		d.requeueAt(d.f.ThrottledUntil)
		d.set(api.CoolingDown, api.EvictionThrottled, "the API server throttled another plan's eviction: evictions resume at %s", d.f.ThrottledUntil.UTC().Format(time.RFC3339))
		return
	}
	if !d.pastDeadline && d.surge(pods) {
		return // past the deadline no surge starts: an override, or nothing, moves the pods
	}

	active := map[string]bool{}
	inFlight := 0
	for _, a := range ep.ActivePods {
		active[string(a.UID)] = true
		// A request to try again is not in flight: its new request takes
		// its place (and its slot).
		if a.Outcome != Gone && !d.retry[a.UID] {
			inFlight++
		}
	}
	unreflected := d.unreflected()
	picked := map[string]int{}
	waited := map[string]bool{}
	var held []string
	waitReason := api.Reason("")
	slots := d.spec.MaxConcurrentEvictions - inFlight
	now, gateReason, gate := d.ordered(pods)
	for _, v := range now {
		if active[string(v.UID)] && !d.retry[v.UID] {
			continue
		}
		if pod, ok := d.f.Pods[v.UID]; !ok || pod.Terminating {
			continue // gone or going by itself
		}
		pred := v.EvictableNow
		key := ""
		if pred.PDB != "" {
			key = v.Namespace + "/" + pred.PDB
		}
		if key != "" {
			waited[key] = true // undone below if picked
			d.waits.Add(waits.PDB, key)
		}
		if c := d.cooldown(key); key != "" && c != nil {
			if budgetWait(c.Reason) && d.force(v, key, &slots) {
				continue
			}
			held = append(held, fmt.Sprintf("%s: %s", key, c.Message))
			waitReason = cmpReason(waitReason, c.Reason)
			d.recheck(c)
			continue
		}
		if !pred.Allowed {
			reason, ok := predictedWait(pred.Outcome)
			if !ok {
				d.set(api.Blocked, api.PDBMisconfigured, "pod %s/%s: the Eviction API would answer %d (%s): %s", v.Namespace, v.Name, pred.HTTPStatus, pred.Rule, pred.Message)
				return
			}
			d.wait(key, reason, pred.Message)
			if budgetWait(reason) && d.force(v, key, &slots) {
				continue
			}
			held = append(held, fmt.Sprintf("%s: %s", key, pred.Message))
			waitReason = cmpReason(waitReason, reason)
			continue
		}
		if pred.UsesBudget {
			pdb := d.f.PDBs[key]
			if int(pdb.DisruptionsAllowed)-unreflected[key]-picked[key] <= 0 {
				msg := fmt.Sprintf("The disruption budget %s allows %d disruptions and %d evictions (of this plan and others) are not yet counted in it", pred.PDB, pdb.DisruptionsAllowed, unreflected[key]+picked[key])
				if unreflected[key]+picked[key] == 0 {
					msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pred.PDB, pdb.DesiredHealthy, pdb.CurrentHealthy)
				}
				d.wait(key, api.BudgetExhausted, msg)
				if unreflected[key]+picked[key] == 0 && d.force(v, key, &slots) {
					continue
				}
				held = append(held, key+": "+msg)
				waitReason = cmpReason(waitReason, api.BudgetExhausted)
				continue
			}
		}
		if slots <= 0 {
			continue
		}
		slots--
		if key != "" {
			picked[key]++
			delete(waited, key)
		}
		t := Target{Namespace: v.Namespace, Name: v.Name, UID: v.UID, PDB: pred.PDB, PDBVersion: d.f.PDBs[key].ResourceVersion, Live: d.retry[v.UID]}
		d.dec.Targets = append(d.dec.Targets, t)
		a := api.ActivePod{Namespace: t.Namespace, Name: t.Name, UID: t.UID, PDB: t.PDB,
			PDBResourceVersion: d.f.PDBs[key].ResourceVersion, RequestedAt: metav1.NewTime(d.now), Outcome: Requested}
		if i := slices.IndexFunc(ep.ActivePods, func(a api.ActivePod) bool { return a.UID == t.UID }); i >= 0 {
			ep.ActivePods[i] = a
		} else {
			ep.ActivePods = append(ep.ActivePods, a)
		}
	}
	d.count(pods)
	if len(d.dec.Targets) == 0 && d.restores(pods) {
		return
	}
	switch {
	case len(d.dec.Targets) > 0:
		if recovered != "" {
			// The moment the budget recovered stays in the history, and
			// the evictions it allows go in the same write: one write
			// and one round trip less per round of a drain.
			d.set(api.Draining, api.BudgetRecovered, "%s", recovered)
			Remember(&d.st, d.now)
		}
		sortTargets(d.dec.Targets)
		d.dec.Action = Evict
		names := make([]string, len(d.dec.Targets))
		for i, t := range d.dec.Targets {
			names[i] = t.Namespace + "/" + t.Name
		}
		d.set(api.Draining, api.EvictionRequested, "evicting %s", strings.Join(names, ", "))
		if forced := forcedNames(d.dec.Targets); forced != "" {
			d.set(api.Draining, api.ForcingDeletes, "evicting %s; %s", strings.Join(names, ", "), forced)
		}
	case recovered != "" && len(held) == 0:
		// Nothing picked, nothing else waited on: say what changed, and
		// look again at once.
		d.set(api.Draining, api.BudgetRecovered, "%s", recovered)
		d.dec.Requeue = time.Nanosecond
	case len(waiting) > 0:
		d.set(api.Draining, api.WaitingForPodExit, "waiting for %s to exit", strings.Join(waiting, ", "))
	case len(held) > 0 && d.pastDeadline && inFlight == 0:
		slices.Sort(held)
		d.spent(held)
	case len(held) > 0:
		slices.Sort(held)
		if pending := d.surgePending(waited); pending != "" {
			d.set(api.Draining, api.SurgePending, "%s; %s", pending, strings.Join(slices.Compact(held), "; "))
			break
		}
		d.set(api.CoolingDown, waitReason, "%s", strings.Join(slices.Compact(held), "; "))
	case inFlight == 0 && d.st.Pods.Remaining == 0:
		d.drained()
	case gate != "" && inFlight == 0:
		d.set(api.Draining, gateReason, "%s", gate)
	default:
		d.set(api.Draining, api.WaitingForPodExit, "waiting for the evicted pods' budgets to show the evictions")
	}
	for _, c := range ep.Cooldowns {
		if ep.NextActionAt == nil || c.NextActionAt.Before(ep.NextActionAt) {
			ep.NextActionAt = c.NextActionAt.DeepCopy()
		}
	}
}

// budgetWait reports whether a wait is a budget's refusal, the one an
// override may break.
func budgetWait(r api.Reason) bool { return r == api.BudgetExhausted }

// blocking reports whether a cooldown reason holds the plan in Blocked.
func blocking(r api.Reason) bool {
	switch r {
	case api.EvictionForbidden, api.EvictionRejected, api.PDBOverlap, api.PDBMisconfigured, api.SurgeImpossible:
		return true
	}
	return false
}

// predictedWait is the cooldown reason of a refusal the caches predict.
func predictedWait(outcome string) (api.Reason, bool) {
	switch outcome {
	case analyze.OutcomeBudgetExhausted:
		return api.BudgetExhausted, true
	case analyze.OutcomePDBStale:
		return api.PDBStale, true
	}
	return "", false
}

// cmpReason keeps the first reason seen.
func cmpReason(have, next api.Reason) api.Reason {
	if have == "" {
		return next
	}
	return have
}

// settle updates the active evictions from the caches and returns the pods
// still to exit. A request without an answer (never answered: maintd
// stopped after persisting it; or answered unknown: a timeout, a lost
// answer) may or may not have been applied: once no answer can still be on
// its way, the pod may be picked again (d.retry), and the controller reads
// it live before sending anything (Target.Live).
func (d *decider) settle() (waiting []string) {
	ep := d.st.EvictionProgress
	d.retry = map[types.UID]bool{}
	kept := ep.ActivePods[:0]
	for _, a := range ep.ActivePods {
		pod, present := d.f.Pods[a.UID]
		switch {
		case !present:
			if a.Outcome != Gone {
				d.st.Pods.Evicted++
				a.Outcome, a.AnsweredAt = Gone, nil
			}
			if d.reflected(a) {
				continue
			}
			d.requeueAt(a.RequestedAt.Add(d.spec.MaxCooldown)) // see reflected
		case pod.Terminating:
			if a.Outcome != Accepted {
				a.Outcome, a.AnsweredAt = Accepted, nil // after a restart: the pod is going, our request made it
			}
			waiting = append(waiting, a.Namespace+"/"+a.Name)
		case a.Outcome == Accepted:
			waiting = append(waiting, a.Namespace+"/"+a.Name) // the cache has not seen the deletion yet
		default:
			// The wait for an answer counts from its arrival (an unknown
			// answer) or from the request.
			from := a.RequestedAt.Time
			if a.AnsweredAt != nil {
				from = a.AnsweredAt.Time
			}
			if until := from.Add(d.spec.EvictionTimeout); d.now.Before(until) {
				d.requeueAt(until)
				waiting = append(waiting, a.Namespace+"/"+a.Name)
				break
			}
			d.retry[a.UID] = true
			d.forget(a)
		}
		kept = append(kept, a)
	}
	ep.ActivePods = kept
	return waiting
}

// forget drops the cooldown that the decision of a pick predicted for the
// other pods of its PDB ("1 eviction not yet counted"), once the pick got
// no answer in time: recorded with the pick (same PDB version, maxCooldown
// after its requestedAt), it waits for the pick's eviction to show, which
// may never have gone out. The pick is tried again (read live first) and
// the budget counted anew. A cooldown from an answer (a 429) stays.
func (d *decider) forget(a api.ActivePod) {
	ep := d.st.EvictionProgress
	until := metav1.NewTime(a.RequestedAt.Add(d.spec.MaxCooldown))
	ep.Cooldowns = slices.DeleteFunc(ep.Cooldowns, func(c api.Cooldown) bool {
		return c.PDB == a.Namespace+"/"+a.PDB && c.Reason == api.BudgetExhausted &&
			c.ResourceVersion == a.PDBResourceVersion && c.NextActionAt.Equal(&until)
	})
}

// recheck requeues for a cooldown: at its end, or, once that passed and
// its cause stayed, maxCooldown from now (a re-check that writes nothing).
func (d *decider) recheck(c *api.Cooldown) {
	if c.NextActionAt.After(d.now) {
		d.requeueAt(c.NextActionAt.Time)
		return
	}
	d.requeueAt(d.now.Add(d.spec.MaxCooldown))
}

// reflected reports whether the governing PDB's status shows the eviction:
// it changed since the request and no longer counts the pod as healthy.
func (d *decider) reflected(a api.ActivePod) bool {
	if a.PDB == "" {
		return true
	}
	pdb, ok := d.f.PDBs[a.Namespace+"/"+a.PDB]
	if !ok {
		return true
	}
	if pdb.ResourceVersion == a.PDBResourceVersion {
		// An eviction that spent the budget changed the PDB's status. One
		// that did not (an unready pod goes without it) may never change
		// it: once the pod is gone and maxCooldown has passed since the
		// request, no write of the budget is still on its way.
		_, present := d.f.Pods[a.UID]
		return !present && !d.now.Before(a.RequestedAt.Add(d.spec.MaxCooldown))
	}
	if pod, present := d.f.Pods[a.UID]; present && !pod.Terminating && !pdb.DisruptedPods[a.Name] {
		return false
	}
	return true
}

// unreflected counts, per PDB, the evictions of this plan and of the
// other plans that its status does not show yet. A pod to try again
// (d.retry) is not counted: its new request takes the place of the one
// that got no answer, and counting both would hold it behind itself.
func (d *decider) unreflected() map[string]int {
	out := map[string]int{}
	for _, a := range slices.Concat(d.st.EvictionProgress.ActivePods, d.f.Others) {
		if a.PDB != "" && !d.retry[a.UID] && !d.reflected(a) {
			out[a.Namespace+"/"+a.PDB]++
		}
	}
	return out
}

func (d *decider) cooldown(key string) *api.Cooldown {
	for i, c := range d.st.EvictionProgress.Cooldowns {
		if c.PDB == key {
			return &d.st.EvictionProgress.Cooldowns[i]
		}
	}
	return nil
}

// wait records a cooldown for a refusal the caches predict: no request is
// sent; the PDB's next status update, or maxCooldown, ends it.
func (d *decider) wait(key string, reason api.Reason, msg string) {
	if c := d.cooldown(key); c != nil {
		return
	}
	pdb := d.f.PDBs[key]
	until := metav1.NewTime(d.now.Add(d.spec.MaxCooldown))
	ep := d.st.EvictionProgress
	ep.Cooldowns = append(ep.Cooldowns, api.Cooldown{PDB: key, Reason: reason, NextActionAt: until, Message: msg, ResourceVersion: pdb.ResourceVersion})
	d.requeueAt(until.Time)
}

// liftCooldowns drops the cooldowns whose wait ran out or whose cause is
// gone, and describes the recovery ("" when none).
func (d *decider) liftCooldowns() string {
	ep := d.st.EvictionProgress
	var lifted []string
	kept := ep.Cooldowns[:0]
	for _, c := range ep.Cooldowns {
		pdb, known := d.f.PDBs[c.PDB]
		// A budget's wait ends when its cause does: a newer status of the
		// PDB that allows a disruption (or that the server processed).
		// Its timer only re-checks: lifted on the timer alone, the same
		// refusal would come back, and the plan would flap between
		// budget-recovered and pdb-budget-exhausted while nothing changed.
		budget := c.Reason == api.BudgetExhausted || c.Reason == api.PDBStale
		switch {
		case !known && c.PDB != GlobalKey:
			lifted = append(lifted, fmt.Sprintf("PDB %s is gone", c.PDB))
		case !budget && !d.now.Before(c.NextActionAt.Time):
			lifted = append(lifted, fmt.Sprintf("%s: the %s wait ran out", c.PDB, c.Reason))
		// A wait the caches predicted (no answer: Attempts 0) ends when the
		// prediction no longer holds, as when an eviction it counted
		// stopped counting; a 429's needs a newer status of the PDB.
		case c.Reason == api.BudgetExhausted && known && (pdb.ResourceVersion != c.ResourceVersion || c.Attempts == 0) && pdb.Current() &&
			int(pdb.DisruptionsAllowed)-d.unreflected()[c.PDB] > 0:
			lifted = append(lifted, fmt.Sprintf("PDB %s allows %d disruptions again", c.PDB, pdb.DisruptionsAllowed))
		case c.Reason == api.PDBStale && known && pdb.Current() && pdb.ResourceVersion != c.ResourceVersion:
			lifted = append(lifted, fmt.Sprintf("PDB %s is processed (generation %d)", c.PDB, pdb.ObservedGeneration))
		default:
			if !d.now.Before(c.NextActionAt.Time) {
				d.requeueAt(d.now.Add(d.spec.MaxCooldown)) // re-check, write nothing
			}
			kept = append(kept, c)
			continue
		}
	}
	ep.Cooldowns = kept
	return strings.Join(lifted, "; ")
}
