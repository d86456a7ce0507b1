package evict

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Overlapping names, sorted, the PDBs of pod's namespace that select pod
// the way the Eviction API matches them: a nil selector matches nothing,
// an empty one every pod, and an invalid one is skipped. Two or more names
// are what a pdb-overlap answer (500) does not say.
func Overlapping(pod *corev1.Pod, pdbs []policyv1.PodDisruptionBudget) []string {
	var names []string
	for _, pdb := range pdbs {
		if pdb.Namespace != pod.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		names = append(names, pdb.Name)
	}
	slices.Sort(names)
	return names
}
