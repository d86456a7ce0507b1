package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// Break-glass: a MaintenanceOverride lets the plan delete, after its
// deadline (or, with actAfter Forecast, once its forecast says a budget
// never allows), the pods it names that a budget still refuses. The
// decision picks such a pod as a Target with Force set; the controller
// asks the Eviction API first, and only where the budget still refuses it
// writes the ledger entry (status.forced) and then sends the DELETE, with
// the pod's UID as precondition and its own grace period.

// DefaultMaxPerPDB is an override's maxPerPDB when unset.
const DefaultMaxPerPDB = 1

// Expiry is when an override stops being in force: its creation plus its
// duration.
func Expiry(o *api.MaintenanceOverride) time.Time {
	return o.CreationTimestamp.Add(o.Spec.Duration.Duration)
}

// Requester is who asked for the plan: the annotation kubectl-maint sets
// and admission pins to the creating user.
func Requester(p *api.MaintenancePlan) string {
	return p.Annotations[api.CreatedByAnnotation]
}

// Covers reports whether o names the pod: its namespace, and its workload
// (any controller up its owner chain) or its labels.
func Covers(o *api.MaintenanceOverride, v analyze.PodVerdict, podLabels map[string]string) bool {
	for _, sel := range o.Spec.Pods {
		if sel.Namespace != v.Namespace {
			continue
		}
		if sel.Workload != "" && !slices.ContainsFunc(v.Owners, func(h analyze.OwnerHop) bool {
			return h.Verified && strings.EqualFold(h.Kind+"/"+h.Name, sel.Workload)
		}) {
			continue
		}
		if sel.Selector != nil {
			s, err := metav1.LabelSelectorAsSelector(sel.Selector)
			if err != nil || !s.Matches(labels.Set(podLabels)) {
				continue
			}
		}
		return true
	}
	return false
}

// overrideState is what the decision knows of one override.
type overrideState struct {
	o *api.MaintenanceOverride
	// self says it is approved by the plan's requester; why, that it has
	// expired or is not stored yet ("" when neither).
	self, why string
	// used counts the ledger's entries under it, and perPDB by PDB key.
	used   int
	perPDB map[string]int
}

// breakGlass prepares the overrides of the plan for this decision: which
// are in force, how much of each is spent, and whether they may act now.
// It also settles the ledger's entries whose DELETE was never answered.
func (d *decider) breakGlass() {
	d.overrides = nil
	for i := range d.f.Overrides {
		d.overrides = append(d.overrides, &overrideState{o: &d.f.Overrides[i], perPDB: map[string]int{}})
	}
	for i := range d.st.Forced {
		e := &d.st.Forced[i]
		if e.Outcome != api.ForcedNotDeleted {
			if s := d.override(e.Override); s != nil {
				s.used++
				s.perPDB[e.Namespace+"/"+e.PDB]++
			}
		}
		if e.Outcome != "" {
			continue
		}
		// Written, its DELETE not answered: maintd stopped between the
		// two, or the answer was lost. The pod read back says whether
		// the DELETE went through; one that is still there is deleted
		// once more only while the approval is in force (pick).
		switch pod, ok := d.f.Pods[e.UID]; {
		case !ok:
			e.Outcome, e.Deleted = api.ForcedGone, ptr.To(metav1.NewTime(d.now))
		case pod.Terminating:
			e.Outcome, e.Deleted = api.ForcedAlreadyDeleting, ptr.To(metav1.NewTime(d.now))
		case !d.at.Before(e.ExpiresAt.Time):
			e.Outcome, e.Deleted = api.ForcedNotDeleted, ptr.To(metav1.NewTime(d.now))
		}
	}
	// Why an override cannot serve, once its use is counted: one spent
	// says so until it is deleted (its expiry changes nothing, and is no
	// reason to decide again).
	for _, s := range d.overrides {
		o := s.o
		switch {
		case o.Spec.ApprovedBy == Requester(d.p) && o.Spec.ApprovedBy != "":
			s.self = fmt.Sprintf("override %s is approved by %s, who requested the plan: break-glass needs a second person", o.Name, o.Spec.ApprovedBy)
		case s.used >= int(o.Spec.MaxPods):
		case !d.at.Before(Expiry(o)):
			s.why = fmt.Sprintf("override %s expired at %s", o.Name, Expiry(o).UTC().Format(time.RFC3339))
		case o.CreationTimestamp.IsZero():
			s.why = fmt.Sprintf("override %s is not stored yet", o.Name)
		default:
			d.requeueAt(Expiry(o))
		}
	}
	d.waits.Add(waits.Overrides, d.p.Name)
}

func (d *decider) override(name string) *overrideState {
	for _, s := range d.overrides {
		if s.o.Name == name {
			return s
		}
	}
	return nil
}

// mayForce reports whether the overrides may act now: after the deadline,
// or for an override that acts on the forecast, once the forecast says a
// budget never allows.
func (d *decider) mayForce(s *overrideState) bool {
	if d.pastDeadline {
		return true
	}
	if s.o.Spec.ActAfter != api.ActAfterForecast || d.f.Forecast == nil || d.f.Forecast.Verdict != analyze.VerdictNever {
		return false
	}
	return slices.ContainsFunc(d.f.Forecast.Causes, func(c analyze.ForecastCause) bool {
		return c.Verdict == analyze.VerdictNever && (c.Reason == analyze.ReasonPDBNeverAllows || c.Reason == analyze.ReasonPDBNeverRefills)
	})
}

// force picks v, which its budget refuses (key is its PDB), as a forced
// target when an override in force covers it and has room; it reports
// whether it did. Why an override could not serve is kept for the message
// of a plan left Blocked.
func (d *decider) force(v analyze.PodVerdict, key string, slots *int) bool {
	if len(d.overrides) == 0 && len(d.st.Forced) == 0 {
		return false
	}
	pod := d.f.Pods[v.UID]
	// An entry already written for this pod: its DELETE is sent again
	// (read live first), under the approval it recorded.
	if i := slices.IndexFunc(d.st.Forced, func(e api.ForcedDelete) bool { return e.UID == v.UID }); i >= 0 {
		e := d.st.Forced[i]
		if e.Outcome != "" {
			return false
		}
		d.pickForced(v, e, true, slots)
		return true
	}
	for _, s := range d.overrides {
		if !Covers(s.o, v, pod.Labels) {
			continue
		}
		max := int(s.o.Spec.MaxPerPDB)
		if max == 0 {
			max = DefaultMaxPerPDB
		}
		// Spent before expired: a spent override says so until it is
		// deleted, its expiry changing nothing (no status rewrite).
		switch {
		case s.self != "":
			d.noForce = append(d.noForce, s.self)
			continue
		case !d.mayForce(s):
			continue
		case s.used >= int(s.o.Spec.MaxPods):
			d.noForce = append(d.noForce, fmt.Sprintf("override %s is spent: %d of %d pods", s.o.Name, s.used, s.o.Spec.MaxPods))
			continue
		case key != "" && s.perPDB[key] >= max:
			d.noForce = append(d.noForce, fmt.Sprintf("override %s is spent for PodDisruptionBudget %s: %d of %d pods", s.o.Name, key, s.perPDB[key], max))
			continue
		case s.why != "":
			d.noForce = append(d.noForce, s.why)
			continue
		case !d.f.MayDelete[v.Namespace]:
			d.noForce = append(d.noForce, fmt.Sprintf("maintd may not delete pods in namespace %s: break-glass is off (apply the deploy/breakglass component)", v.Namespace))
			d.disabled = true
			continue
		}
		if *slots <= 0 {
			return true // covered; sent when a slot frees
		}
		s.used++
		s.perPDB[key]++
		pdbName := ""
		if key != "" {
			pdbName = strings.TrimPrefix(key, v.Namespace+"/")
		}
		e := api.ForcedDelete{Namespace: v.Namespace, Pod: v.Name, UID: v.UID, PDB: pdbName,
			Override: s.o.Name, ApprovedBy: s.o.Spec.ApprovedBy, ApprovedAt: s.o.CreationTimestamp,
			ExpiresAt: metav1.NewTime(Expiry(s.o)), GracePeriodSeconds: pod.GracePeriodSeconds}
		d.pickForced(v, e, false, slots)
		return true
	}
	return false
}

// pickForced adds the forced target and its active eviction.
func (d *decider) pickForced(v analyze.PodVerdict, e api.ForcedDelete, ledgered bool, slots *int) {
	if *slots <= 0 {
		return
	}
	*slots--
	ep := d.st.EvictionProgress
	key := v.Namespace + "/" + e.PDB
	t := Target{Namespace: v.Namespace, Name: v.Name, UID: v.UID, PDB: e.PDB, PDBVersion: d.f.PDBs[key].ResourceVersion,
		Live: d.retry[v.UID] || ledgered, Force: &e, Ledgered: ledgered}
	d.dec.Targets = append(d.dec.Targets, t)
	a := api.ActivePod{Namespace: t.Namespace, Name: t.Name, UID: t.UID, PDB: t.PDB,
		PDBResourceVersion: t.PDBVersion, RequestedAt: metav1.NewTime(d.now), Outcome: Requested}
	if i := slices.IndexFunc(ep.ActivePods, func(a api.ActivePod) bool { return a.UID == t.UID }); i >= 0 {
		ep.ActivePods[i] = a
	} else {
		ep.ActivePods = append(ep.ActivePods, a)
	}
}

// spent is the plan held past its deadline by pods that no override in
// force covers: Blocked until a new override comes (or the plan is
// deleted).
func (d *decider) spent(held []string) {
	reason := api.OverrideSpent
	if d.disabled {
		reason = api.BreakGlassDisabled
	}
	why := slices.Compact(slices.Sorted(slices.Values(d.noForce)))
	if len(why) == 0 {
		why = []string{"no override in force covers them"}
	}
	d.set(api.Blocked, reason, "the deadline passed with pods the budget refuses: %s; %s; approve a new MaintenanceOverride (kubectl maint override) or delete the plan",
		strings.Join(slices.Compact(held), "; "), strings.Join(why, "; "))
}

// Ledger adds the entries of the forced targets to st, each once (by pod
// UID), written at now with the budget's status before.
func Ledger(st api.MaintenancePlanStatus, entries []api.ForcedDelete) api.MaintenancePlanStatus {
	for _, e := range entries {
		if !slices.ContainsFunc(st.Forced, func(f api.ForcedDelete) bool { return f.UID == e.UID }) {
			st.Forced = append(st.Forced, e)
		}
	}
	return st
}

// Settled sets the outcome of a ledger entry (by pod UID).
func Settled(st api.MaintenancePlanStatus, uid types.UID, outcome string, at time.Time) api.MaintenancePlanStatus {
	for i := range st.Forced {
		if e := &st.Forced[i]; e.UID == uid && e.Outcome == "" {
			e.Outcome, e.Deleted = outcome, ptr.To(metav1.NewTime(at.UTC().Truncate(time.Second)))
		}
	}
	return st
}

// forcedNames describes the forced targets ("" when none).
func forcedNames(ts []Target) string {
	var out []string
	for _, t := range ts {
		if t.Force != nil {
			out = append(out, fmt.Sprintf("%s/%s under override %s approved by %s", t.Namespace, t.Name, t.Force.Override, t.Force.ApprovedBy))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "where the budget still refuses, deleting " + strings.Join(out, ", ")
}
