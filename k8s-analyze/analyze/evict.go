package analyze

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"k8s.io/apimachinery/pkg/labels"
)

// Prediction is the answer the Eviction API would give to
// POST pods/{name}/eviction for the pod right now.
type Prediction struct {
	// Allowed is true when the pod would be deleted.
	Allowed bool `json:"allowed"`
	// Outcome uses the k8s-evict classification: accepted, pdb-stale,
	// budget-exhausted, pdb-overlap or forbidden.
	Outcome string `json:"outcome"`
	// HTTPStatus is the status code of the answer.
	HTTPStatus int `json:"httpStatus"`
	// Rule is the step of the API's decision that settled the answer.
	Rule string `json:"rule"`
	// PDB names the budget that decided, when one did.
	PDB string `json:"pdb,omitempty"`
	// UsesBudget is true when the eviction would decrement the PDB.
	UsesBudget bool `json:"usesBudget,omitzero"`
	// Message is the API's message (for a 429, the cause's message).
	Message string `json:"message,omitempty"`
}

// Outcomes of a prediction, named as k8s-evict classifies real answers.
const (
	OutcomeAccepted        = "accepted"
	OutcomePDBStale        = "pdb-stale"
	OutcomeBudgetExhausted = "budget-exhausted"
	OutcomePDBOverlap      = "pdb-overlap"
	OutcomeForbidden       = "forbidden"
)

// Rules: which step of the Eviction API's decision settled a prediction.
const (
	RuleTerminal             = "pod-terminal"
	RulePending              = "pod-pending"
	RuleTerminating          = "pod-terminating"
	RuleMultiplePDBs         = "multiple-pdbs"
	RuleNoPDB                = "no-pdb"
	RuleUnhealthyAlwaysAllow = "unhealthy-always-allow"
	RuleUnhealthyBudget      = "unhealthy-if-healthy-budget"
	RulePDBStale             = "pdb-stale"
	RuleNegativeBudget       = "negative-budget"
	RuleDisruptedPodsFull    = "disrupted-pods-too-many"
	RuleBudgetExhausted      = "budget-exhausted"
	RuleBudgetAvailable      = "budget-available"
)

// maxDisruptedPods is the apiserver's MaxDisruptedPodSize.
const maxDisruptedPods = 2000

// MultiplePDBsMessage is the Eviction API's message for a pod that more than
// one PDB selects.
const MultiplePDBsMessage = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

// EvictableNow predicts the Eviction API's answer for pod, given pdbs, the
// PodDisruptionBudgets of the pod's namespace (others are ignored), following
// the apiserver's decision order (its eviction handler, v1.37; the e2e
// cross-check compares every prediction with a server-side dry run).
func EvictableNow(pod *view.Pod, pdbs []*view.PodDisruptionBudget) Prediction {
	return evictableNow(pod, MatchingPDBs(pod, pdbs))
}

// MatchingPDBs are the pdbs whose selector matches pod the way the Eviction
// API matches them: same namespace; a nil or unparseable selector matches
// nothing; an empty selector matches every pod of the namespace.
func MatchingPDBs(pod *view.Pod, pdbs []*view.PodDisruptionBudget) []*view.PodDisruptionBudget {
	var out []*view.PodDisruptionBudget
	for _, pdb := range pdbs {
		if pdb.Namespace != pod.Namespace {
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

// evictableNow is EvictableNow once the matching PDBs are known.
func evictableNow(pod *view.Pod, matching []*view.PodDisruptionBudget) Prediction {
	accepted := func(rule string) Prediction {
		return Prediction{Allowed: true, Outcome: OutcomeAccepted, HTTPStatus: http.StatusCreated, Rule: rule}
	}
	// Step 3: terminal, Pending and terminating pods bypass the PDBs.
	switch {
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return accepted(RuleTerminal)
	case pod.Status.Phase == corev1.PodPending:
		return accepted(RulePending)
	case pod.DeletionTimestamp != nil:
		return accepted(RuleTerminating)
	}
	// Step 5: more than one PDB, before any arithmetic.
	if len(matching) > 1 {
		return Prediction{Outcome: OutcomePDBOverlap, HTTPStatus: http.StatusInternalServerError, Rule: RuleMultiplePDBs, Message: MultiplePDBsMessage}
	}
	// Step 6: no PDB.
	if len(matching) == 0 {
		return accepted(RuleNoPDB)
	}
	pdb := matching[0]
	// Step 7: a pod that is not Ready may go without using the budget.
	if !podReady(pod) {
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			p := accepted(RuleUnhealthyAlwaysAllow)
			p.PDB = pdb.Name
			return p
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			p := accepted(RuleUnhealthyBudget)
			p.PDB = pdb.Name
			return p
		}
	}
	// Step 8: the budget.
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return Prediction{Outcome: OutcomePDBStale, HTTPStatus: http.StatusTooManyRequests, Rule: RulePDBStale, PDB: pdb.Name,
			Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name)}
	case pdb.Status.DisruptionsAllowed < 0:
		return Prediction{Outcome: OutcomeForbidden, HTTPStatus: http.StatusForbidden, Rule: RuleNegativeBudget, PDB: pdb.Name,
			Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name)}
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return Prediction{Outcome: OutcomeForbidden, HTTPStatus: http.StatusForbidden, Rule: RuleDisruptedPodsFull, PDB: pdb.Name,
			Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", pdb.Name)}
	case pdb.Status.DisruptionsAllowed == 0:
		return Prediction{Outcome: OutcomeBudgetExhausted, HTTPStatus: http.StatusTooManyRequests, Rule: RuleBudgetExhausted, PDB: pdb.Name,
			Message: ExhaustedMessage(pdb.Name, pdb.Status)}
	}
	p := accepted(RuleBudgetAvailable)
	p.PDB, p.UsesBudget = pdb.Name, true
	return p
}

// ExhaustedMessage is the cause message of the API server's 429 for the
// budget called name, whose status allows no disruption: a failed sync
// first (its counts are not to be trusted), then the counts when they
// explain it, then the DisruptionAllowed condition's message. maintd's
// simulated Eviction API answers with it too.
func ExhaustedMessage(name string, st policyv1.PodDisruptionBudgetStatus) string {
	c := meta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
	failed := c != nil && c.Status == metav1.ConditionFalse && c.Message != ""
	switch {
	case failed && c.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", name, c.Message)
	case st.CurrentHealthy <= st.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", name, st.DesiredHealthy, st.CurrentHealthy)
	case failed:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", name, c.Reason, c.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", name)
}

// podReady is the apiserver's IsPodReady: a Ready condition with status True.
func podReady(pod *view.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
