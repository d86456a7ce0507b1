package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
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
	waiting := d.settle()
	recovered := d.liftCooldowns()
	d.count(pods)

	if c := d.cooldown(GlobalKey); c != nil {
		d.requeueAt(c.NextActionAt.Time)
		ep.NextActionAt = c.NextActionAt.DeepCopy()
		if blocking(c.Reason) {
			d.set(api.Blocked, c.Reason, "%s; maintd tries again at %s", c.Message, c.NextActionAt.UTC().Format(time.RFC3339))
		} else {
			d.set(api.CoolingDown, c.Reason, "%s; evictions resume at %s", c.Message, c.NextActionAt.UTC().Format(time.RFC3339))
		}
		return
	}
	if recovered != "" {
		d.set(api.Draining, api.BudgetRecovered, "%s", recovered)
		d.dec.Requeue = time.Nanosecond
		return
	}

	active := map[string]bool{}
	inFlight := 0
	for _, a := range ep.ActivePods {
		active[string(a.UID)] = true
		if a.Outcome != Gone {
			inFlight++
		}
	}
	unreflected := d.unreflected()
	picked := map[string]int{}
	var waits []string
	waitReason := api.Reason("")
	slots := d.spec.MaxConcurrentEvictions - inFlight
	for _, v := range pods {
		if active[string(v.UID)] {
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
		if c := d.cooldown(key); key != "" && c != nil {
			waits = append(waits, fmt.Sprintf("%s: %s", key, c.Message))
			waitReason = cmpReason(waitReason, c.Reason)
			d.requeueAt(c.NextActionAt.Time)
			continue
		}
		if !pred.Allowed {
			reason, ok := predictedWait(pred.Outcome)
			if !ok {
				d.set(api.Blocked, api.PDBMisconfigured, "pod %s/%s: the Eviction API would answer %d (%s): %s", v.Namespace, v.Name, pred.HTTPStatus, pred.Rule, pred.Message)
				return
			}
			d.wait(key, reason, pred.Message)
			waits = append(waits, fmt.Sprintf("%s: %s", key, pred.Message))
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
				waits = append(waits, key+": "+msg)
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
		}
		t := Target{Namespace: v.Namespace, Name: v.Name, UID: v.UID, PDB: pred.PDB}
		d.dec.Targets = append(d.dec.Targets, t)
		ep.ActivePods = append(ep.ActivePods, api.ActivePod{Namespace: t.Namespace, Name: t.Name, UID: t.UID, PDB: t.PDB,
			PDBResourceVersion: d.f.PDBs[key].ResourceVersion, RequestedAt: metav1.NewTime(d.now), Outcome: Requested})
	}
	d.count(pods)
	switch {
	case len(d.dec.Targets) > 0:
		sortTargets(d.dec.Targets)
		d.dec.Action = Evict
		names := make([]string, len(d.dec.Targets))
		for i, t := range d.dec.Targets {
			names[i] = t.Namespace + "/" + t.Name
		}
		d.set(api.Draining, api.EvictionRequested, "evicting %s", strings.Join(names, ", "))
	case len(waiting) > 0:
		d.set(api.Draining, api.WaitingForPodExit, "waiting for %s to exit", strings.Join(waiting, ", "))
	case len(waits) > 0:
		slices.Sort(waits)
		d.set(api.CoolingDown, waitReason, "%s", strings.Join(slices.Compact(waits), "; "))
	case inFlight == 0 && d.st.Pods.Remaining == 0:
		ep.Cooldowns = nil
		d.set(api.Drained, api.ReasonDrained, "node %s is drained: %d pods evicted; it stays cordoned until spec.release is set", d.spec.NodeName, d.st.Pods.Evicted)
	default:
		d.set(api.Draining, api.WaitingForPodExit, "waiting for the evicted pods' budgets to show the evictions")
	}
	for _, c := range ep.Cooldowns {
		if ep.NextActionAt == nil || c.NextActionAt.Before(ep.NextActionAt) {
			ep.NextActionAt = c.NextActionAt.DeepCopy()
		}
	}
}

// blocking reports whether a cooldown reason holds the plan in Blocked.
func blocking(r api.Reason) bool {
	switch r {
	case api.EvictionForbidden, api.EvictionRejected, api.PDBOverlap, api.PDBMisconfigured:
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
// still to exit.
func (d *decider) settle() (waiting []string) {
	ep := d.st.EvictionProgress
	kept := ep.ActivePods[:0]
	var dropped []api.ActivePod
	defer func() { d.forget(dropped) }()
	for _, a := range ep.ActivePods {
		pod, present := d.f.Pods[a.UID]
		switch {
		case !present:
			if a.Outcome != Gone {
				d.st.Pods.Evicted++
				a.Outcome = Gone
			}
			if d.reflected(a) {
				continue
			}
		case pod.Terminating:
			if a.Outcome != Accepted {
				a.Outcome = Accepted // after a restart: the pod is going, our request made it
			}
			waiting = append(waiting, a.Namespace+"/"+a.Name)
		case a.Outcome == Accepted:
			waiting = append(waiting, a.Namespace+"/"+a.Name) // the cache has not seen the deletion yet
		default:
			// Requested or unknown, and the pod is still there, not going:
			// the request did not happen or was refused. Let the pod be
			// picked again once an answer can no longer be on its way.
			if d.now.Before(a.RequestedAt.Add(d.spec.EvictionTimeout)) {
				d.requeueAt(a.RequestedAt.Add(d.spec.EvictionTimeout))
				waiting = append(waiting, a.Namespace+"/"+a.Name)
				break
			}
			dropped = append(dropped, a)
			continue
		}
		kept = append(kept, a)
	}
	ep.ActivePods = kept
	return waiting
}

// forget drops the cooldowns that the decision of a dropped pick predicted
// for the other pods of its PDB ("1 eviction not yet counted"): recorded
// with the pick (same PDB version, maxCooldown after its requestedAt),
// they wait for the pick's eviction to show, and it never went out. Left,
// they would hold the drain for maxCooldown after a restart. A cooldown
// from an answer (a 429) is recorded once the answers are in, and stays.
func (d *decider) forget(dropped []api.ActivePod) {
	ep := d.st.EvictionProgress
	for _, a := range dropped {
		until := metav1.NewTime(a.RequestedAt.Add(d.spec.MaxCooldown))
		ep.Cooldowns = slices.DeleteFunc(ep.Cooldowns, func(c api.Cooldown) bool {
			return c.PDB == a.Namespace+"/"+a.PDB && c.Reason == api.BudgetExhausted &&
				c.ResourceVersion == a.PDBResourceVersion && c.NextActionAt.Equal(&until)
		})
	}
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
		return false
	}
	if pod, present := d.f.Pods[a.UID]; present && !pod.Terminating && !pdb.DisruptedPods[a.Name] {
		return false
	}
	return true
}

// unreflected counts, per PDB, the evictions of this plan and of the
// other plans that its status does not show yet.
func (d *decider) unreflected() map[string]int {
	out := map[string]int{}
	for _, a := range slices.Concat(d.st.EvictionProgress.ActivePods, d.f.Others) {
		if a.PDB != "" && !d.reflected(a) {
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
		switch {
		case !d.now.Before(c.NextActionAt.Time):
			lifted = append(lifted, fmt.Sprintf("%s: the %s wait ran out", c.PDB, c.Reason))
		case c.Reason == api.BudgetExhausted && known && pdb.ResourceVersion != c.ResourceVersion && pdb.Current() &&
			int(pdb.DisruptionsAllowed)-d.unreflected()[c.PDB] > 0:
			lifted = append(lifted, fmt.Sprintf("PDB %s allows %d disruptions again", c.PDB, pdb.DisruptionsAllowed))
		case c.Reason == api.PDBStale && known && pdb.Current() && pdb.ResourceVersion != c.ResourceVersion:
			lifted = append(lifted, fmt.Sprintf("PDB %s is processed (generation %d)", c.PDB, pdb.ObservedGeneration))
		case !known && c.PDB != GlobalKey:
			lifted = append(lifted, fmt.Sprintf("PDB %s is gone", c.PDB))
		default:
			kept = append(kept, c)
			continue
		}
	}
	ep.Cooldowns = kept
	return strings.Join(lifted, "; ")
}
