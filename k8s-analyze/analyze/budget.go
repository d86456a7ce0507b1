package analyze

import (
	"fmt"
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The checks of a PodDisruptionBudget: its arithmetic on a node, a spec
// that never allows, a status the Eviction API refuses, a PDB that
// protects nothing (CHECKS.md, "Checks").

// budget is the arithmetic and the findings of one PDB covering onNode pods
// of the node, usingBudget of which draw on its budget.
func (a *analyzer) budget(info *pdbInfo, onNode, usingBudget int) (PDBBudget, []Finding) {
	pdb := info.pdb
	st := pdb.Status
	b := PDBBudget{
		Namespace: pdb.Namespace, Name: pdb.Name, UID: pdb.UID,
		DisruptionsAllowed: st.DisruptionsAllowed, CurrentHealthy: st.CurrentHealthy,
		DesiredHealthy: st.DesiredHealthy, ExpectedPods: st.ExpectedPods,
		PodsOnNode: onNode, PodsUsingBudget: usingBudget,
	}
	switch {
	case usingBudget == 0:
		b.RoundsNeeded = new(int)
	case st.DisruptionsAllowed > 0:
		r := (usingBudget + int(st.DisruptionsAllowed) - 1) / int(st.DisruptionsAllowed)
		b.RoundsNeeded = &r
	}
	subj := pdbSubject(pdb)
	ev := func(kv ...string) map[string]string {
		m := map[string]string{
			"disruptionsAllowed": itoa(st.DisruptionsAllowed), "currentHealthy": itoa(st.CurrentHealthy),
			"desiredHealthy": itoa(st.DesiredHealthy), "expectedPods": itoa(st.ExpectedPods),
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var fs []Finding
	zero := zeroSpec(pdb, func() int { return a.x.wholePods(info) })
	if zero != "" {
		fs = append(fs, a.finding(PDBZeroSpec, subj, ev("spec", zero), "PDB %s can never allow a disruption (%s)", pdb.Name, zero))
	}
	syncFailed := false
	if c := meta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition); c != nil && c.Status == metav1.ConditionFalse && c.Reason == policyv1.SyncFailedReason {
		syncFailed = true
		fs = append(fs, a.finding(PDBSyncFailed, subj, ev("condition", c.Message), "PDB %s failed to sync: %s", pdb.Name, c.Message))
	}
	if st.DisruptionsAllowed < 0 || len(st.DisruptedPods) > maxDisruptedPods {
		fs = append(fs, a.finding(PDBForbidden, subj, ev("disruptedPods", strconv.Itoa(len(st.DisruptedPods))),
			"PDB %s status makes the Eviction API answer 403 (disruptionsAllowed %d, %d disruptedPods)", pdb.Name, st.DisruptionsAllowed, len(st.DisruptedPods)))
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		fs = append(fs, a.finding(PDBStale, subj, ev("generation", strconv.FormatInt(pdb.Generation, 10), "observedGeneration", strconv.FormatInt(st.ObservedGeneration, 10)),
			"PDB %s has not been processed since its last change (generation %d, observed %d): evictions get 429", pdb.Name, pdb.Generation, st.ObservedGeneration))
	}
	if st.DisruptionsAllowed == 0 && usingBudget > 0 && zero == "" && !syncFailed {
		fs = append(fs, a.finding(PDBExhausted, subj, ev("podsOnNode", strconv.Itoa(onNode)),
			"PDB %s allows no disruption now (needs %d healthy pods, has %d)", pdb.Name, st.DesiredHealthy, st.CurrentHealthy))
	}
	switch {
	case st.ExpectedPods > 0 && onNode >= int(st.ExpectedPods):
		fs = append(fs, a.finding(PDBInsufficientForNode, subj, ev("podsOnNode", strconv.Itoa(onNode), "podsUsingBudget", strconv.Itoa(usingBudget)),
			"all %d pods of PDB %s are on this node", onNode, pdb.Name))
	case st.DisruptionsAllowed > 0 && usingBudget > int(st.DisruptionsAllowed):
		fs = append(fs, a.finding(PDBInsufficientForNode, subj, ev("podsOnNode", strconv.Itoa(onNode), "podsUsingBudget", strconv.Itoa(usingBudget), "roundsNeeded", strconv.Itoa(*b.RoundsNeeded)),
			"PDB %s allows %d disruption(s) but %d of its pods are on this node: the drain needs %d rounds", pdb.Name, st.DisruptionsAllowed, usingBudget, *b.RoundsNeeded))
	}
	return b, fs
}

// zeroSpec says why pdb's spec can never allow a disruption ("" when it
// can). whole, asked only when the pods there are leave none to spare, is
// how many it selects once their workloads are whole.
func zeroSpec(pdb *view.PodDisruptionBudget, whole func() int) string {
	expected := int(pdb.Status.ExpectedPods)
	if mu := pdb.Spec.MaxUnavailable; mu != nil {
		if (mu.Type == intstr.Int && mu.IntVal <= 0) || (mu.Type == intstr.String && strings.TrimSpace(mu.StrVal) == "0%") {
			return "maxUnavailable " + mu.String()
		}
		return ""
	}
	ma := pdb.Spec.MinAvailable
	if ma == nil {
		return ""
	}
	if ma.Type == intstr.String && ma.StrVal == "100%" {
		return "minAvailable 100%"
	}
	if expected == 0 {
		return ""
	}
	if need, err := intstr.GetScaledValueFromIntOrPercent(ma, expected, true); err != nil || need < expected {
		return ""
	}
	expected = max(expected, whole())
	if need, err := intstr.GetScaledValueFromIntOrPercent(ma, expected, true); err == nil && need >= expected {
		return fmt.Sprintf("minAvailable %s >= %d expected pods", ma.String(), expected)
	}
	return ""
}

// uselessPDB reports a PDB of a drained namespace that protects nothing.
func (a *analyzer) uselessPDB(info *pdbInfo) []Finding {
	pdb := info.pdb
	subj := pdbSubject(pdb)
	switch {
	case info.selErr != nil:
		return []Finding{a.finding(PDBBadSelector, subj, map[string]string{"error": info.selErr.Error()},
			"PDB %s has an invalid selector, so the Eviction API ignores it: %v", pdb.Name, info.selErr)}
	case pdb.Spec.Selector == nil:
		return []Finding{a.finding(PDBSelectsNothing, subj, map[string]string{"selector": "null"}, "PDB %s has no selector and matches no pod", pdb.Name)}
	case !a.x.selectsAny(info):
		sel := info.sel.String()
		if sel == "" {
			sel = "{}"
		}
		return []Finding{a.finding(PDBSelectsNothing, subj, map[string]string{"selector": sel}, "PDB %s selects no pod (selector %s)", pdb.Name, sel)}
	}
	return nil
}
