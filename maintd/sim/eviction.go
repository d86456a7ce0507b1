package sim

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
)

// The Eviction API's messages (kube-apiserver v1.37; docs/eviction-api.md).
const (
	overlapMessage  = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	violateMessage  = "Cannot evict pod as it would violate the pod's disruption budget."
	maxDisruptedPDB = 2000
	// deletionTimeout is how long the disruption controller keeps a pod in
	// disruptedPods when it does not go.
	deletionTimeout = 2 * time.Minute
)

// Verdict is the eviction endpoint's answer, and what it did.
type Verdict struct {
	Code   int
	Status *metav1.Status
	// Applied: the pod was deleted (or, with a budget, the budget spent
	// first); PDB names the budget spent, "" when none was.
	Applied bool
	PDB     string
	// PDBVersion is the PDB's resourceVersion after the budget was spent.
	PDBVersion int64
}

func answer(err error) Verdict {
	st := err.(apierrors.APIStatus).Status()
	return Verdict{Code: int(st.Code), Status: &st}
}

// evict is POST pods/NAME/eviction, in the API server's order
// (its eviction subresource): the pod, its phase, the
// matching budgets (more than one: 500), an unhealthy pod's policy, the
// budget's generation, its arithmetic, the decrement recorded in
// status.disruptedPods BEFORE the delete with the caller's UID
// precondition (a failed precondition still spends the budget), dry runs
// stopping before any write but checking the precondition as a delete
// does. The maintd/sim/honesty test compares it with kube-apiserver.
func (s *store) evict(ev *policyv1.Eviction) Verdict {
	o, err := s.get(podsR, ev.Namespace, ev.Name)
	if err != nil {
		return answer(err)
	}
	pod := o.(*corev1.Pod)
	var uid types.UID
	dry := false
	if d := ev.DeleteOptions; d != nil {
		if d.Preconditions != nil && d.Preconditions.UID != nil {
			uid = *d.Preconditions.UID
		}
		dry = len(d.DryRun) > 0
	}
	// del deletes the pod once v's budget (if any) is spent. unhealthy
	// names the budget an unready pod goes without: the API server then
	// adds a resourceVersion precondition to the delete and answers any
	// conflict of it, a failed UID precondition included, with the
	// stale-budget 429.
	del := func(v Verdict, unhealthy string) Verdict {
		if uid != "" && uid != pod.UID {
			if unhealthy != "" {
				return answer(staleError(unhealthy))
			}
			a := answer(uidConflict(pod, uid))
			a.PDB, a.PDBVersion = v.PDB, v.PDBVersion
			return a
		}
		if dry {
			return ok(v)
		}
		if _, err := s.remove(podsR, pod.Namespace, pod.Name, uid, true); err != nil {
			a := answer(err)
			a.Applied, a.PDB, a.PDBVersion = v.Applied, v.PDB, v.PDBVersion
			return a
		}
		switch ref := metav1.GetControllerOf(pod); {
		case ref == nil || pod.DeletionTimestamp != nil:
		case ref.Kind == "ReplicaSet" || ref.Kind == "Job":
			// Its controller's next pod replaces it.
			s.holes[ref.UID] = append(s.holes[ref.UID], s.lineageOf(pod.UID))
		case ref.Kind == "StatefulSet":
			// The pod of its name made next replaces it.
			s.named[key(pod.Namespace, pod.Name)] = s.lineageOf(pod.UID)
		}
		v.Applied = true
		return ok(v)
	}
	// A pod that is deleting, Pending or ended goes without its budgets.
	// (A conflict of its delete, a wrong UID, is retried by the API
	// server for some 10 s before it answers the 409.)
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodPending || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return del(Verdict{}, "")
	}
	pdbs := matching(s, pod)
	switch {
	case len(pdbs) > 1:
		st := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: overlapMessage}
		return Verdict{Code: http.StatusInternalServerError, Status: &st}
	case len(pdbs) == 0:
		return del(Verdict{}, "")
	}
	pdb := pdbs[0]
	if !ready(pod) {
		policy := pdb.Spec.UnhealthyPodEvictionPolicy
		if policy != nil && *policy == policyv1.AlwaysAllow {
			return del(Verdict{}, pdb.Name)
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return del(Verdict{}, pdb.Name)
		}
	}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return answer(staleError(pdb.Name))
	case pdb.Status.DisruptionsAllowed < 0:
		return answer(forbidden(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative"))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPDB:
		return answer(forbidden(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller"))
	case pdb.Status.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests(violateMessage, 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: analyze.ExhaustedMessage(pdb.Name, pdb.Status)})
		return answer(err)
	}
	if dry {
		return del(Verdict{}, "")
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = s.now()
	out, err := s.update(pdbsR, pdb, true)
	if err != nil {
		return answer(err)
	}
	rv, _ := parseRV(out.(*policyv1.PodDisruptionBudget).ResourceVersion)
	return del(Verdict{PDB: pdb.Name, PDBVersion: rv}, "")
}

// staleError is the 429 for a budget whose status is not yet for its spec.
func staleError(pdb string) *apierrors.StatusError {
	err := apierrors.NewTooManyRequests(violateMessage, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb)})
	return err
}

// forbidden is the 403 of a budget whose status forbids any eviction.
func forbidden(pdb, reason, cause string) *apierrors.StatusError {
	err := apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdb, cause)})
	return err
}

// uidConflict is the 409 of a UID precondition the pod does not meet; the
// resource it names is the kind.
func uidConflict(pod *corev1.Pod, uid types.UID) *apierrors.StatusError {
	return apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, pod.Name,
		fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", uid, pod.UID))
}

func ok(v Verdict) Verdict {
	v.Code = http.StatusCreated
	v.Status = &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}
	return v
}

// matching is the budgets of pod's namespace that select it.
func matching(s *store, pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, o := range s.list(pdbsR, pod.Namespace, nil) {
		pdb := o.(*policyv1.PodDisruptionBudget)
		if pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Evict answers one eviction on a cluster holding objects (pods and
// PodDisruptionBudgets, stored as given: UIDs, generations and statuses
// kept) at now, as the simulation's endpoint does. A test compares its
// answers with a real API server's.
func Evict(objects []runtime.Object, ev *policyv1.Eviction, now time.Time) Verdict {
	s := newStore(func() metav1.Time { return metav1.NewTime(now) })
	for _, o := range objects {
		r := podsR
		if _, ok := o.(*policyv1.PodDisruptionBudget); ok {
			r = pdbsR
		}
		o = o.DeepCopyObject()
		m, _ := meta.Accessor(o)
		m.SetResourceVersion(s.nextRV())
		s.objects[r][keyOf(o)] = o
	}
	return s.evict(ev)
}
