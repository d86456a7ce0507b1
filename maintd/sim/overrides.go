// Break-glass: the MaintenanceOverrides people approve, the API's answers
// to maintd's SelfSubjectAccessReviews and pod DELETEs, the scenario of the
// seeds that have them, and the kill points between a ledger entry and its
// DELETE. The promises about them are checked in breakglass.go.

package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

var overridesR = api.SchemeGroupVersion.WithResource("maintenanceoverrides")

func init() {
	resources = append(resources, overridesR)
	listKinds[overridesR] = func() runtime.Object { return &api.MaintenanceOverrideList{} }
}

// The people of break-glass: the plans' requester and two others.
const (
	requester = "alice"
	approver  = "bob"
)

// The kill points of break-glass, armed by its seeds and schedules.
const (
	// killAfterLedger kills maintd once its status write that adds a
	// ledger entry is applied (the answer lost): no DELETE was sent.
	killAfterLedger faultKind = "kill-after-ledger-write"
	// killBeforeDelete kills maintd before its next pod DELETE.
	killBeforeDelete faultKind = "kill-before-pod-delete"
	// killAfterDelete kills maintd once its pod DELETE is applied (the
	// answer lost).
	killAfterDelete faultKind = "kill-after-pod-delete"
	// deleteLost loses the answer to an applied pod DELETE.
	deleteLost faultKind = "pod-delete-answer-lost"
)

// breakGlass is what the world knows of break-glass.
type breakGlass struct {
	// r draws, apart from the others, whether a seed has overrides (1 in
	// 4) and what they are; its stream leaves the other seeds as they were.
	r  *rand.Rand
	on bool
	// enabled: the break-glass component is applied, so maintd may delete
	// pods (its SelfSubjectAccessReviews say so, and the API lets it).
	enabled bool
	// due are the overrides people approve later, by time; revoke the
	// times people delete them, by name.
	due    []dueOverride
	revoke map[string]time.Time
	// overrides are every override the world stored, deleted ones too.
	overrides map[string]*api.MaintenanceOverride
	// refused are the pod UIDs whose eviction by maintd the budget refused.
	refused map[types.UID]bool
	// deleted counts the applied pod DELETEs of maintd, per pod UID; under
	// are the pods deleted under each override, and per PDB (namespace/name).
	deleted map[types.UID]int
	under   map[string]map[types.UID]bool
	perPDB  map[string]map[types.UID]bool
	// reviews counts the SelfSubjectAccessReviews answered; kills the kill
	// points met between a ledger entry and its DELETE, by kind.
	reviews int
	kills   map[string]int
	deletes int
	// faults are the kill points the seed drew (armed until met).
	faults []faultKind
}

type dueOverride struct {
	at time.Time
	o  *api.MaintenanceOverride
}

func newBreakGlass(seed int64) *breakGlass {
	return &breakGlass{r: rand.New(rand.NewPCG(uint64(seed), 0xb9f25)), enabled: true, revoke: map[string]time.Time{},
		overrides: map[string]*api.MaintenanceOverride{}, refused: map[types.UID]bool{}, deleted: map[types.UID]int{},
		under: map[string]map[types.UID]bool{}, perPDB: map[string]map[types.UID]bool{}, kills: map[string]int{}}
}

// planAnnotations are the annotations of a plan people make: in a seed with
// overrides, its requester (as kubectl-maint writes it).
func (w *World) planAnnotations() map[string]string {
	if !w.bg.on {
		return nil
	}
	return map[string]string{api.CreatedByAnnotation: requester}
}

// breakGlassRisks are what a plan of break-glass accepts: its budgets
// never allow, and what else would block it before its drain starts.
var breakGlassRisks = []string{analyze.ReasonPDBNeverAllows, analyze.ReasonPDBNeverRefills, analyze.ReasonUnschedulable, analyze.ReasonNoCapacity,
	string(analyze.PDBZeroSpec), string(analyze.NeedsOverride), string(analyze.AllReplicasOnNode), string(analyze.RWOReattach), "single-replica"}

// override is an override of plan-1 by approvedBy for d, of at most max pods,
// of the StatefulSet's pods.
func override(name, approvedBy string, d time.Duration, max int32, sts string) *api.MaintenanceOverride {
	return &api.MaintenanceOverride{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: api.MaintenanceOverrideSpec{Plan: "plan-1", ApprovedBy: approvedBy,
		Reason: "INC-4711", Duration: metav1.Duration{Duration: d}, MaxPods: max, Pods: []api.OverridePods{{Namespace: Namespace, Workload: "StatefulSet/" + sts}}}}
}

// drawBreakGlass adds to a scenario, from its own stream, the seeds with
// overrides (1 in 4): on the first plan's node a single-replica
// StatefulSet whose budget never allows (minAvailable 1), at 1 in 2 a
// second one of two replicas there, both under minAvailable of all; a short
// deadline for that plan, which accepts that its budgets never allow; one
// to three overrides people approve at drawn times (in force, expired,
// approved by the requester, pinned to another plan, for other pods), with
// their bounds and when they act; break-glass off at 1 in 6; and the kill
// points between a ledger entry and its DELETE.
func (w *World) drawBreakGlass(sc *Scenario) {
	br := w.bg.r
	if br.IntN(4) != 0 || len(sc.Plans) == 0 {
		return
	}
	w.bg.on = true
	w.bg.enabled = br.IntN(6) != 0
	p := &sc.Plans[0]
	sc.Workloads = append(sc.Workloads, Workload{Name: "solo", Kind: statefulSet, Replicas: 1, PDB: "never", ReadyAfter: br.IntN(20), On: p.NodeName})
	apps := []string{"solo"}
	if br.IntN(2) == 0 {
		sc.Workloads = append(sc.Workloads, Workload{Name: "vault", Kind: statefulSet, Replicas: 2, PDB: "never", ReadyAfter: br.IntN(20), On: p.NodeName, Together: true})
		apps = append(apps, "vault")
	}
	p.DryRun, p.AllowAllWorkloads, p.Workloads = false, true, nil
	p.Deadline = &metav1.Duration{Duration: time.Duration(30+br.IntN(90)) * time.Second}
	p.AcceptedRisks = append(p.AcceptedRisks, breakGlassRisks...)
	made := epoch.Add(time.Minute) // Setup's clock when the plans are made
	for i := range 1 + br.IntN(3) {
		o := &api.MaintenanceOverride{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mo-%d", i+1)},
			Spec: api.MaintenanceOverrideSpec{Plan: "plan-1", ApprovedBy: approver, Reason: "INC-4711: the node's disk fails",
				Duration: metav1.Duration{Duration: time.Duration(5+br.IntN(56)) * time.Minute}, MaxPods: int32(1 + br.IntN(3)), MaxPerPDB: int32(br.IntN(3))}}
		at := made.Add(time.Duration(br.IntN(150)) * time.Second)
		switch k := br.IntN(10); {
		case k < 2: // expired before it acts
			o.Spec.Duration.Duration = time.Duration(20+br.IntN(70)) * time.Second
			at = made.Add(time.Duration(br.IntN(30)) * time.Second)
		case k < 4: // approved by the requester
			o.Spec.ApprovedBy = requester
		case k < 5: // for another instance of the plan
			o.Spec.PlanUID = "maintenanceplan-0"
		}
		if br.IntN(3) == 0 {
			o.Spec.ActAfter = api.ActAfterForecast
		} else if br.IntN(2) == 0 {
			o.Spec.ActAfter = api.ActAfterDeadline
		}
		switch k := br.IntN(6); {
		case k < 2:
			o.Spec.Pods = []api.OverridePods{{Namespace: Namespace, Workload: "StatefulSet/" + apps[br.IntN(len(apps))]}}
		case k < 4:
			o.Spec.Pods = []api.OverridePods{{Namespace: Namespace, Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: apps}}}}}
		case k < 5:
			o.Spec.Pods = []api.OverridePods{{Namespace: Namespace, Workload: "statefulset/solo"}, {Namespace: Namespace, Workload: "StatefulSet/vault"}}
		default: // pods elsewhere
			o.Spec.Pods = []api.OverridePods{{Namespace: "other", Workload: "StatefulSet/solo"}}
		}
		w.bg.due = append(w.bg.due, dueOverride{at: at, o: o})
		if br.IntN(6) == 0 {
			w.bg.revoke[o.Name] = at.Add(time.Duration(30+br.IntN(300)) * time.Second)
		}
	}
	for _, k := range []faultKind{killAfterLedger, killBeforeDelete, killAfterDelete, deleteLost} {
		if br.IntN(4) != 0 {
			w.bg.faults = append(w.bg.faults, k)
			w.arm(k)
		}
	}
}

// rearm arms again, as the world settles (its other faults stop), the kill
// points of break-glass its seed drew and no request met yet: most forced
// deletes come past the deadline, once the drawn steps are over.
func (w *World) rearm(armed []armedFault) {
	for _, f := range armed {
		if slices.Contains(w.bg.faults, f.kind) {
			w.armed = append(w.armed, f)
		}
	}
}

// overridesDue creates the overrides due by now and deletes those people
// revoke, as people do; w.mu is not held.
func (w *World) overridesDue() {
	if !w.bg.on {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	for len(w.bg.due) > 0 && !w.bg.due[0].at.After(now) {
		o := w.bg.due[0].o
		w.bg.due = w.bg.due[1:]
		w.createOverride(o)
	}
	for _, name := range sortedKeys(w.bg.revoke) {
		if at := w.bg.revoke[name]; !at.After(now) {
			if _, ok := w.bg.overrides[name]; !ok {
				continue // not made yet
			}
			delete(w.bg.revoke, name)
			_, err := w.s.remove(overridesR, "", name, "", false)
			w.logf("person: delete override %s -> %s", name, errText(err))
		}
	}
}

// nextOverride is when people next approve or revoke an override (zero:
// never).
func (w *World) nextOverride() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next time.Time
	if len(w.bg.due) > 0 {
		next = w.bg.due[0].at
	}
	for name, at := range w.bg.revoke {
		if _, made := w.bg.overrides[name]; made && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// createOverride stores an override as a person does (admission pinned its
// approvedBy to them); w.mu is held.
func (w *World) createOverride(o *api.MaintenanceOverride) {
	out, err := w.s.create(overridesR, o)
	if err == nil {
		w.bg.overrides[o.Name] = out.(*api.MaintenanceOverride)
	}
	w.logf("person %s: approve override %s for plan %s (%s, actAfter %q, maxPods %d, maxPerPDB %d, pods %s) -> %s", o.Spec.ApprovedBy, o.Name, o.Spec.Plan,
		o.Spec.Duration.Duration, o.Spec.ActAfter, o.Spec.MaxPods, o.Spec.MaxPerPDB, describePods(o.Spec.Pods), errText(err))
}

func describePods(ps []api.OverridePods) string {
	var out []string
	for _, p := range ps {
		s := p.Namespace + ":" + p.Workload
		if p.Selector != nil {
			sel, _ := metav1.LabelSelectorAsSelector(p.Selector)
			s += "{" + sel.String() + "}"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// authorize answers in's SelfSubjectAccessReviews: maintd may delete pods
// when the break-glass component is applied. A review is asked as the
// controller observes a plan, also in the decision the idle check makes
// (Controller.Would) while the world holds w.mu: the answer takes no lock,
// and as everything in the world, runs while nothing else does.
func (w *World) authorize(in *instance, core *kfake.Clientset) {
	core.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if in.dead {
			return true, nil, errKilled
		}
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = w.bg.enabled
		if !r.Status.Allowed {
			r.Status.Reason = "no RBAC policy matched"
		}
		w.bg.reviews++
		ra := r.Spec.ResourceAttributes
		w.logf("%s: may I %s %s in %s? -> %t", in.name, ra.Verb, ra.Resource, ra.Namespace, r.Status.Allowed)
		return true, r, nil
	})
}

// podDelete reports whether a is a DELETE of a pod.
func podDelete(a k8stesting.Action) bool {
	return a.GetVerb() == "delete" && a.GetResource() == podsR
}

// ledgerWrite reports whether a is a plan status write that adds a ledger
// entry to the stored status; w.mu is held.
func (w *World) ledgerWrite(a k8stesting.Action) bool {
	if a.GetVerb() != "update" || a.GetResource() != plansR || a.GetSubresource() != "status" {
		return false
	}
	p, ok := a.(k8stesting.UpdateAction).GetObject().(*api.MaintenancePlan)
	if !ok {
		return false
	}
	var stored []api.ForcedDelete
	if o, err := w.s.get(plansR, "", p.Name); err == nil {
		stored = o.(*api.MaintenancePlan).Status.Forced
	}
	for _, e := range p.Status.Forced {
		if !slices.ContainsFunc(stored, func(f api.ForcedDelete) bool { return f.UID == e.UID }) {
			return true
		}
	}
	return false
}

// killPoint names the kill fault f if it falls between a ledger entry and
// its DELETE: after the write of the entry, or before or after the DELETE
// (its answer lost); "" for any other. It is read before a is served;
// w.mu is held.
func (w *World) killPoint(f faultKind, a k8stesting.Action) string {
	switch {
	case (f == killAfter || f == killAfterLedger) && w.ledgerWrite(a):
		return "after-ledger"
	case (f == killBefore || f == killBeforeDelete) && podDelete(a):
		return "before-delete"
	case (f == killAfter || f == killAfterDelete) && podDelete(a):
		return "after-delete"
	}
	return ""
}

// killed counts a kill point met (killPoint); w.mu is held.
func (w *World) killed(point string) {
	if point != "" {
		w.bg.kills[point]++
		w.logf("break-glass kill point: %s", point)
	}
}

// serve answers one request of in from the store; a pod DELETE is checked
// against the promises of break-glass first, and served as the API server
// does: the UID precondition (409 when the pod was replaced, 404 when it is
// gone), the grace period (the pod Terminating until its kubelet removes
// it, or at once with 0), and RBAC (403 without the break-glass
// component). w.mu is held.
func (w *World) serve(in *instance, a k8stesting.Action) (runtime.Object, error) {
	if !podDelete(a) {
		return w.s.react(a)
	}
	d := a.(k8stesting.DeleteAction)
	opts := d.GetDeleteOptions()
	w.checkDelete(in, d)
	if !w.bg.enabled {
		return nil, apierrors.NewForbidden(podsR.GroupResource(), d.GetName(),
			//lint:ignore ST1005 the API server's own words, as RBAC writes them
			fmt.Errorf(`User "system:serviceaccount:maintd-system:maintd" cannot delete resource "pods" in API group "" in the namespace %q`, d.GetNamespace()))
	}
	var uid types.UID
	if p := opts.Preconditions; p != nil && p.UID != nil {
		uid = *p.UID
	}
	grace := int64(-1)
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	out, err := w.s.deletePod(d.GetNamespace(), d.GetName(), uid, grace)
	if err == nil {
		w.deleted(in, d, out.(*corev1.Pod))
	}
	return out, err
}

// deletePod is DELETE pods/NAME: as an accepted eviction removes a pod,
// without the budget (its disruptedPods untouched). grace is the request's
// grace period (-1: the pod's own); 0 removes it at once.
func (s *store) deletePod(namespace, name string, uid types.UID, grace int64) (runtime.Object, error) {
	o, err := s.get(podsR, namespace, name)
	if err != nil {
		return nil, err
	}
	pod := o.(*corev1.Pod)
	out, err := s.remove(podsR, namespace, name, uid, grace != 0)
	if err != nil {
		return nil, err
	}
	if pod.DeletionTimestamp == nil {
		switch ref := metav1.GetControllerOf(pod); {
		case ref == nil:
		case ref.Kind == "ReplicaSet" || ref.Kind == "Job":
			s.holes[ref.UID] = append(s.holes[ref.UID], s.lineageOf(pod.UID))
		case ref.Kind == "StatefulSet":
			s.named[key(pod.Namespace, pod.Name)] = s.lineageOf(pod.UID)
		}
	}
	return out, nil
}

// deleteFault applies a pod DELETE's fault after it was served: the answer
// lost (the process killed, or the connection).
func (w *World) deleteFault(in *instance, a k8stesting.Action, f faultKind, point string) error {
	switch f {
	case killAfterDelete:
		in.dead = true
		w.logf("kill %s after %s %s (applied, answer lost)", in.name, a.GetVerb(), describeAction(a))
		w.killed(point)
		return errKilled
	case deleteLost:
		w.logf("answer to %s's %s %s lost", in.name, a.GetVerb(), describeAction(a))
		return io.ErrUnexpectedEOF
	}
	return nil
}
