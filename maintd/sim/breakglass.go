// The promises of break-glass, judged from the world's own records: the
// requests the API received, the objects it stored (the plans' ledgers as
// stored at the moment of each DELETE, the overrides people approved) and
// its answers to the evictions; never from maintd's predicates.

package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// checkDelete checks a pod DELETE of in as the API receives it, before it
// is served: (e) break-glass is on; (a) it carries a UID precondition and
// a plan's ledger, as stored now, holds an open entry for that UID (and
// that pod), written before; (b) the override the entry names was stored
// by the world, is for that plan, was not approved by the plan's
// requester, is in force at the time the DELETE was sent, and covers the
// pod; (f) the plan's deadline (from the start of its drain the world
// recorded) has passed, unless the override acts on the forecast; and the
// pod is on the plan's node, its eviction was refused by its budget
// before, and the DELETE carries its own grace period. w.mu is held.
func (w *World) checkDelete(in *instance, d k8stesting.DeleteAction) {
	ns, name := d.GetNamespace(), d.GetName()
	at := w.sentAt(in)
	if !w.bg.enabled {
		w.violate("%s sent DELETE pods %s/%s while break-glass is off (its SelfSubjectAccessReviews answered no)", in.name, ns, name)
	}
	opts := d.GetDeleteOptions()
	if opts.Preconditions == nil || opts.Preconditions.UID == nil {
		w.violate("%s sent DELETE pods %s/%s without a UID precondition", in.name, ns, name)
		return
	}
	uid := *opts.Preconditions.UID
	var plan *api.MaintenancePlan
	var entry api.ForcedDelete
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		if i := slices.IndexFunc(p.Status.Forced, func(e api.ForcedDelete) bool { return e.UID == uid }); i >= 0 {
			plan, entry = p, p.Status.Forced[i]
		}
	}
	if plan == nil {
		w.violate("%s sent DELETE pods %s/%s (uid %s) with no ledger entry for that UID in any plan's stored status", in.name, ns, name, uid)
		return
	}
	if entry.Namespace != ns || entry.Pod != name {
		w.violate("%s sent DELETE pods %s/%s (uid %s), whose ledger entry in plan %s names pod %s/%s", in.name, ns, name, uid, plan.Name, entry.Namespace, entry.Pod)
	}
	if entry.Outcome != "" && !in.deposed {
		// (An old leader's DELETE in flight may land after the new one
		// settled the entry.)
		w.violate("%s sent DELETE pods %s/%s (uid %s) for a ledger entry of plan %s already settled %q", in.name, ns, name, uid, plan.Name, entry.Outcome)
	}
	o := w.bg.overrides[entry.Override]
	switch {
	case o == nil:
		w.violate("%s sent DELETE pods %s/%s under override %q, which no person approved", in.name, ns, name, entry.Override)
		return
	case o.Spec.Plan != plan.Name || o.Spec.PlanUID != "" && o.Spec.PlanUID != plan.UID:
		w.violate("%s sent DELETE pods %s/%s for plan %s (uid %s) under override %s, which is for plan %s (uid %q)", in.name, ns, name, plan.Name, plan.UID, o.Name, o.Spec.Plan, o.Spec.PlanUID)
	case o.Spec.ApprovedBy == plan.Annotations[api.CreatedByAnnotation]:
		w.violate("%s sent DELETE pods %s/%s under override %s, approved by %s, who requested plan %s", in.name, ns, name, o.Name, o.Spec.ApprovedBy, plan.Name)
	}
	if exp := o.CreationTimestamp.Add(o.Spec.Duration.Duration); !at.Before(exp) {
		w.violate("%s sent DELETE pods %s/%s at %s under override %s, which expired at %s", in.name, ns, name, at.Format("15:04:05"), o.Name, exp.Format("15:04:05"))
	}
	start, started := w.drainStart[plan.UID]
	deadline := start.Add(drain.Defaulted(plan.Spec).Deadline)
	switch {
	case o.Spec.ActAfter == api.ActAfterForecast:
	case !started:
		w.violate("%s sent DELETE pods %s/%s for plan %s, whose drain never started", in.name, ns, name, plan.Name)
	case at.Before(deadline):
		w.violate("%s sent DELETE pods %s/%s at %s, before plan %s's deadline %s, under override %s (actAfter %q)", in.name, ns, name, at.Format("15:04:05"), plan.Name, deadline.Format("15:04:05"), o.Name, o.Spec.ActAfter)
	}
	live, err := w.s.get(podsR, ns, name)
	if err != nil || live.(*corev1.Pod).UID != uid {
		return // the API answers 404 or 409: nothing is deleted
	}
	pod := live.(*corev1.Pod)
	if pod.Spec.NodeName != plan.Spec.NodeName {
		w.violate("%s sent DELETE pods %s/%s, on node %s, for plan %s of node %s", in.name, ns, name, pod.Spec.NodeName, plan.Name, plan.Spec.NodeName)
	}
	if !w.covers(o, pod) {
		w.violate("%s sent DELETE pods %s/%s under override %s, which does not name it (%s)", in.name, ns, name, o.Name, describePods(o.Spec.Pods))
	}
	if !w.bg.refused[uid] {
		w.violate("%s sent DELETE pods %s/%s (uid %s) before any eviction of it was refused by its budget", in.name, ns, name, uid)
	}
	if g := ptrOr(pod.Spec.TerminationGracePeriodSeconds, 30); opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != g {
		w.violate("%s sent DELETE pods %s/%s without the pod's grace period %ds", in.name, ns, name, g)
	}
}

// deleted records an applied pod DELETE of maintd (pod as it was before):
// (c) no pod is deleted twice; (d) no override deletes more pods than its
// maxPods, nor more under one budget (those selecting the pod now) than
// its maxPerPDB. w.mu is held.
func (w *World) deleted(in *instance, d k8stesting.DeleteAction, before *corev1.Pod) {
	uid := before.UID
	w.bg.deletes++
	w.bg.deleted[uid]++
	if n := w.bg.deleted[uid]; n > 1 {
		w.violate("%s deleted pod %s/%s (uid %s) %d times", in.name, before.Namespace, before.Name, uid, n)
	}
	var o *api.MaintenanceOverride
	for _, q := range w.s.list(plansR, "", nil) {
		for _, e := range q.(*api.MaintenancePlan).Status.Forced {
			if e.UID == uid {
				o = w.bg.overrides[e.Override]
			}
		}
	}
	if o == nil {
		return // checkDelete said why
	}
	if w.bg.under[o.Name] == nil {
		w.bg.under[o.Name] = map[types.UID]bool{}
	}
	w.bg.under[o.Name][uid] = true
	if n := len(w.bg.under[o.Name]); n > int(o.Spec.MaxPods) {
		w.violate("override %s (maxPods %d) has had %d pods deleted under it", o.Name, o.Spec.MaxPods, n)
	}
	max := int(o.Spec.MaxPerPDB)
	if max == 0 {
		max = drain.DefaultMaxPerPDB
	}
	for _, pdb := range matching(w.s, before) {
		k := o.Name + " " + key(pdb.Namespace, pdb.Name)
		if w.bg.perPDB[k] == nil {
			w.bg.perPDB[k] = map[types.UID]bool{}
		}
		w.bg.perPDB[k][uid] = true
		if n := len(w.bg.perPDB[k]); n > max {
			w.violate("override %s (maxPerPDB %d) has had %d pods of PDB %s deleted under it", o.Name, max, n, key(pdb.Namespace, pdb.Name))
		}
	}
}

// covers reports whether o names pod, as the world sees it: its namespace,
// and its workload (its controller, or the Deployment above its
// ReplicaSet) or its labels.
func (w *World) covers(o *api.MaintenanceOverride, pod *corev1.Pod) bool {
	top, _, ok := w.workloadOf(pod)
	direct := metav1.GetControllerOf(pod)
	for _, sel := range o.Spec.Pods {
		if sel.Namespace != pod.Namespace {
			continue
		}
		if sel.Workload != "" && !(ok && strings.EqualFold(sel.Workload, top.Kind+"/"+top.Name) ||
			direct != nil && strings.EqualFold(sel.Workload, direct.Kind+"/"+direct.Name)) {
			continue
		}
		if sel.Selector != nil {
			s, err := metav1.LabelSelectorAsSelector(sel.Selector)
			if err != nil || !s.Matches(labels.Set(pod.Labels)) {
				continue
			}
		}
		return true
	}
	return false
}

// forcible reports whether an eviction of maintd that its caches predict
// the budget refuses is the first step of a forced delete: break-glass is
// on, and an override people approved for the plan whose cordon the
// pod's node carries, by another than its requester and in force when the
// eviction was sent, covers the pod, and acts on the forecast or the
// plan's deadline (from the start the world recorded) has passed. Such an
// eviction is sent knowing the budget may refuse it (maintd asks the
// Eviction API first). w.mu is held.
func (w *World) forcible(in *instance, pod *corev1.Pod) bool {
	if !w.bg.on || !w.bg.enabled {
		return false
	}
	p := w.cordonPlan(pod.Spec.NodeName)
	if p == nil {
		return false
	}
	at := w.sentAt(in)
	for _, name := range sortedKeys(w.bg.overrides) {
		o := w.bg.overrides[name]
		if o.Spec.Plan != p.Name || o.Spec.PlanUID != "" && o.Spec.PlanUID != p.UID || o.Spec.ApprovedBy == p.Annotations[api.CreatedByAnnotation] ||
			!at.Before(o.CreationTimestamp.Add(o.Spec.Duration.Duration)) || !w.covers(o, pod) {
			continue
		}
		if o.Spec.ActAfter == api.ActAfterForecast {
			return true
		}
		if start, ok := w.drainStart[p.UID]; ok && !at.Before(start.Add(drain.Defaulted(p.Spec).Deadline)) {
			return true
		}
	}
	return false
}

// refusals records the pods whose eviction by maintd the budget refused;
// w.mu is held.
func (w *World) refusals(ev *policyv1.Eviction, res *evict.Result) {
	if res.Outcome == evict.BudgetExhausted && ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil && ev.DeleteOptions.Preconditions.UID != nil {
		w.bg.refused[*ev.DeleteOptions.Preconditions.UID] = true
	}
}

// bgTotals is what the seeds of a run met of break-glass.
var bgTotals struct {
	sync.Mutex
	seeds, off, deleting, deletes, reviews int
	// kills are the seeds that met each kill point between a ledger entry
	// and its DELETE.
	kills map[string][]int64
}

// tallyBreakGlass adds w's run to bgTotals.
func tallyBreakGlass(w *World) {
	if !w.bg.on {
		return
	}
	bgTotals.Lock()
	defer bgTotals.Unlock()
	bgTotals.seeds++
	if !w.bg.enabled {
		bgTotals.off++
	}
	if w.bg.deletes > 0 {
		bgTotals.deleting++
	}
	bgTotals.deletes += w.bg.deletes
	bgTotals.reviews += w.bg.reviews
	if bgTotals.kills == nil {
		bgTotals.kills = map[string][]int64{}
	}
	for k, n := range w.bg.kills {
		if n > 0 {
			bgTotals.kills[k] = append(bgTotals.kills[k], w.Seed)
		}
		if n > 0 && !slices.Contains(bgTotals.kills["any"], w.Seed) {
			bgTotals.kills["any"] = append(bgTotals.kills["any"], w.Seed)
		}
	}
}

// breakGlassSummary says what the seeds met of break-glass, and how many
// seeds killed maintd between a ledger entry and its DELETE.
func breakGlassSummary() (string, int) {
	bgTotals.Lock()
	defer bgTotals.Unlock()
	k := bgTotals.kills
	return fmt.Sprintf("break-glass: %d seeds (%d with it off), %d deleting pods (%d DELETEs applied, %d access reviews); killed between a ledger entry and its DELETE in %d seeds: after the entry's write %d, before the DELETE %d, after the DELETE %d",
		bgTotals.seeds, bgTotals.off, bgTotals.deleting, bgTotals.deletes, bgTotals.reviews, len(k["any"]), len(k["after-ledger"]), len(k["before-delete"]), len(k["after-delete"])), len(k["any"])
}
