package evict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func budget(name, ns string, sel *metav1.LabelSelector) policyv1.PodDisruptionBudget {
	return policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
}

func TestOverlapping(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-0", Namespace: "shop", Labels: map[string]string{"app": "api", "tier": "backend"}}}
	pdbs := []policyv1.PodDisruptionBudget{
		budget("tier", "shop", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "backend"}}),
		budget("api", "shop", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}),
		budget("web", "shop", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}),
		budget("everything", "shop", &metav1.LabelSelector{}),
		budget("nothing", "shop", nil),
		budget("invalid", "shop", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}),
		budget("v1beta1-empty", "shop", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match", Operator: metav1.LabelSelectorOpExists}}}),
		budget("elsewhere", "other", &metav1.LabelSelector{}),
	}
	got := Overlapping(pod, pdbs)
	want := []string{"api", "everything", "tier"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Overlapping (-want +got):\n%s", diff)
	}
}
