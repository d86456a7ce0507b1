package analyze

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

func mustYAML[T any](t *testing.T, src string) *T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict([]byte(src), &v); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, src)
	}
	return &v
}

const (
	readyPod    = `{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`
	notReadyPod = `{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Running, conditions: [{type: Ready, status: "False"}]}}`
)

func TestEvictableNow(t *testing.T) {
	// A PDB of namespace ns selecting app=web, with its status.
	pdb := func(name, rest string) string {
		return `{metadata: {name: ` + name + `, namespace: ns, generation: 1}, spec: {selector: {matchLabels: {app: web}}}, status: {observedGeneration: 1` + rest + `}}`
	}
	tests := map[string]struct {
		pod  string
		pdbs []string
		want Prediction
	}{
		"no pdb": {readyPod, nil,
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleNoPDB}},
		"budget available": {readyPod, []string{pdb("a", ", disruptionsAllowed: 1")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleBudgetAvailable, PDB: "a", UsesBudget: true}},
		"budget exhausted": {readyPod, []string{pdb("a", ", disruptionsAllowed: 0, desiredHealthy: 3, currentHealthy: 3")},
			Prediction{Outcome: "budget-exhausted", HTTPStatus: 429, Rule: RuleBudgetExhausted, PDB: "a", Message: "The disruption budget a needs 3 healthy pods and has 3 currently"}},
		"exhausted after sync failure": {readyPod, []string{pdb("a", `, disruptionsAllowed: 0, conditions: [{type: DisruptionAllowed, status: "False", reason: SyncFailed, message: "found no controllers", lastTransitionTime: "2026-11-29T11:00:00Z"}]`)},
			Prediction{Outcome: "budget-exhausted", HTTPStatus: 429, Rule: RuleBudgetExhausted, PDB: "a", Message: "The disruption budget a does not allow evicting pods currently because it failed sync: found no controllers"}},
		"exhausted with more healthy than desired": {readyPod, []string{pdb("a", ", disruptionsAllowed: 0, desiredHealthy: 1, currentHealthy: 2")},
			Prediction{Outcome: "budget-exhausted", HTTPStatus: 429, Rule: RuleBudgetExhausted, PDB: "a", Message: "The disruption budget a does not allow evicting pods currently"}},
		"negative budget": {readyPod, []string{pdb("a", ", disruptionsAllowed: -1")},
			Prediction{Outcome: "forbidden", HTTPStatus: 403, Rule: RuleNegativeBudget, PDB: "a", Message: "The disruption budget a does not allow evicting pods currently: pdb disruptions allowed is negative"}},
		"stale before budget": {readyPod, []string{`{metadata: {name: a, namespace: ns, generation: 2}, spec: {selector: {matchLabels: {app: web}}}, status: {observedGeneration: 1, disruptionsAllowed: 5}}`},
			Prediction{Outcome: "pdb-stale", HTTPStatus: 429, Rule: RulePDBStale, PDB: "a", Message: "The disruption budget a is still being processed by the server."}},
		"stale before negative": {readyPod, []string{`{metadata: {name: a, namespace: ns, generation: 2}, spec: {selector: {matchLabels: {app: web}}}, status: {observedGeneration: 1, disruptionsAllowed: -1}}`},
			Prediction{Outcome: "pdb-stale", HTTPStatus: 429, Rule: RulePDBStale, PDB: "a", Message: "The disruption budget a is still being processed by the server."}},
		"overlap before budget": {readyPod, []string{pdb("a", ", disruptionsAllowed: 5"), pdb("b", ", disruptionsAllowed: 5")},
			Prediction{Outcome: "pdb-overlap", HTTPStatus: 500, Rule: RuleMultiplePDBs, Message: MultiplePDBsMessage}},
		"empty selector matches all": {readyPod, []string{pdb("a", ", disruptionsAllowed: 5"), `{metadata: {name: all, namespace: ns}, spec: {selector: {}}}`},
			Prediction{Outcome: "pdb-overlap", HTTPStatus: 500, Rule: RuleMultiplePDBs, Message: MultiplePDBsMessage}},
		"nil selector matches nothing": {readyPod, []string{pdb("a", ", disruptionsAllowed: 1"), `{metadata: {name: none, namespace: ns}, spec: {}}`},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleBudgetAvailable, PDB: "a", UsesBudget: true}},
		"invalid selector is skipped": {readyPod, []string{`{metadata: {name: bad, namespace: ns}, spec: {selector: {matchExpressions: [{key: app, operator: Bogus}]}}, status: {disruptionsAllowed: 0}}`},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleNoPDB}},
		"v1beta1 empty selector matches nothing": {readyPod, []string{`{metadata: {name: old, namespace: ns}, spec: {selector: {matchExpressions: [{key: pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match, operator: Exists}]}}}`},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleNoPDB}},
		"other namespace ignored": {readyPod, []string{`{metadata: {name: a, namespace: other}, spec: {selector: {}}}`},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleNoPDB}},
		"pending bypasses exhausted": {`{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Pending}}`, []string{pdb("a", ", disruptionsAllowed: 0")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RulePending}},
		"pending bypasses overlap": {`{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Pending}}`, []string{pdb("a", ""), pdb("b", "")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RulePending}},
		"succeeded bypasses": {`{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Succeeded}}`, []string{pdb("a", ", disruptionsAllowed: 0")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleTerminal}},
		"failed bypasses": {`{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Failed}}`, []string{pdb("a", ", disruptionsAllowed: 0")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleTerminal}},
		"terminating bypasses": {`{metadata: {name: p, namespace: ns, labels: {app: web}, deletionTimestamp: "2026-11-29T11:00:00Z"}, status: {phase: Running}}`, []string{pdb("a", ", disruptionsAllowed: 0")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleTerminating}},
		"unready, AlwaysAllow": {notReadyPod, []string{`{metadata: {name: a, namespace: ns, generation: 2}, spec: {selector: {matchLabels: {app: web}}, unhealthyPodEvictionPolicy: AlwaysAllow}, status: {observedGeneration: 1, disruptionsAllowed: 0}}`},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleUnhealthyAlwaysAllow, PDB: "a"}},
		"unready, healthy budget": {notReadyPod, []string{pdb("a", ", disruptionsAllowed: 0, desiredHealthy: 2, currentHealthy: 2")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleUnhealthyBudget, PDB: "a"}},
		"unready, IfHealthyBudget, unhealthy": {notReadyPod, []string{`{metadata: {name: a, namespace: ns}, spec: {selector: {matchLabels: {app: web}}, unhealthyPodEvictionPolicy: IfHealthyBudget}, status: {disruptionsAllowed: 0, desiredHealthy: 2, currentHealthy: 1}}`},
			Prediction{Outcome: "budget-exhausted", HTTPStatus: 429, Rule: RuleBudgetExhausted, PDB: "a", Message: "The disruption budget a needs 2 healthy pods and has 1 currently"}},
		"unready, desired zero uses budget": {notReadyPod, []string{pdb("a", ", disruptionsAllowed: 1, desiredHealthy: 0, currentHealthy: 0")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleBudgetAvailable, PDB: "a", UsesBudget: true}},
		"no ready condition is unready": {`{metadata: {name: p, namespace: ns, labels: {app: web}}, status: {phase: Running}}`, []string{pdb("a", ", disruptionsAllowed: 0, desiredHealthy: 1, currentHealthy: 1")},
			Prediction{Allowed: true, Outcome: "accepted", HTTPStatus: 201, Rule: RuleUnhealthyBudget, PDB: "a"}},
		"ready pod, healthy budget rule does not apply": {readyPod, []string{pdb("a", ", disruptionsAllowed: 0, desiredHealthy: 1, currentHealthy: 1")},
			Prediction{Outcome: "budget-exhausted", HTTPStatus: 429, Rule: RuleBudgetExhausted, PDB: "a", Message: "The disruption budget a needs 1 healthy pods and has 1 currently"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := mustYAML[view.Pod](t, tc.pod)
			var pdbs []*view.PodDisruptionBudget
			for _, p := range tc.pdbs {
				pdbs = append(pdbs, mustYAML[view.PodDisruptionBudget](t, p))
			}
			got := EvictableNow(pod, pdbs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EvictableNow (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvictableNowDisruptedPodsFull(t *testing.T) {
	pod := mustYAML[view.Pod](t, readyPod)
	pdb := mustYAML[view.PodDisruptionBudget](t, `{metadata: {name: a, namespace: ns}, spec: {selector: {}}, status: {disruptionsAllowed: 3}}`)
	pdb.Status.DisruptedPods = map[string]metav1.Time{}
	for i := range maxDisruptedPods + 1 {
		pdb.Status.DisruptedPods[string(rune('a'+i%26))+itoa(int32(i))] = metav1.Time{}
	}
	got := EvictableNow(pod, []*view.PodDisruptionBudget{pdb})
	want := Prediction{Outcome: "forbidden", HTTPStatus: 403, Rule: RuleDisruptedPodsFull, PDB: "a",
		Message: "The disruption budget a does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvictableNow (-want +got):\n%s", diff)
	}
}
