// Drain rules: the order and behaviour people give the pods of a drain
// (spec.drainRules, Cluster API's MachineDrainRule meanings, and a pod's
// annotation), and what maintd promises about them.

package sim

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// drawRules adds to a scenario, from w.ruling, drain rules (1 seed in 4):
// on most plans (and the campaign) an app that goes first (order -1 or
// -2), at 1 in 2 another that goes last (order 1 or 2), at 1 in 3 an app
// kept out of the drain (Skip), the Job waited for (WaitCompleted) when
// there is one; and at 1 in 3 an app whose pods carry the annotation
// (order=3, or skip).
func (w *World) drawRules(sc *Scenario) {
	rr := w.ruling
	if rr.IntN(4) != 0 {
		return
	}
	var apps []string
	for _, wl := range sc.Workloads {
		if wl.Kind == "" {
			apps = append(apps, wl.Name)
		}
	}
	app := func() string { return apps[rr.IntN(len(apps))] }
	order := func(n int32) *int32 { return &n }
	rule := func(name, behavior string, order *int32, app string) api.DrainRule {
		return api.DrainRule{Name: name, Drain: api.DrainRuleDrain{Behavior: behavior, Order: order},
			Pods: []api.DrainRulePods{{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: Namespace}}}}}
	}
	rules := []api.DrainRule{rule("first", "Drain", order(-1-int32(rr.IntN(2))), app())}
	if rr.IntN(2) == 0 {
		rules = append(rules, rule("last", "Drain", order(1+int32(rr.IntN(2))), app()))
	}
	if rr.IntN(3) == 0 {
		rules = append(rules, rule("keep", "Skip", nil, app()))
	}
	if slices.ContainsFunc(sc.Workloads, func(wl Workload) bool { return wl.Name == "batch" }) {
		rules = append(rules, rule("batch", "WaitCompleted", nil, "batch"))
	}
	w.rules = true
	for i := range sc.Plans {
		if rr.IntN(4) != 0 {
			sc.Plans[i].DrainRules = rules
		}
	}
	if sc.Campaign != nil {
		sc.Campaign.DrainRules = rules
	}
	if rr.IntN(3) == 0 {
		for i := range sc.Workloads {
			if sc.Workloads[i].Name == apps[0] {
				sc.Workloads[i].Drain = []string{"order=3", "skip"}[rr.IntN(2)]
			}
		}
	}
}

// placeOf is where people put pod in a drain by rules (sorted by name:
// the first that matches wins, as Cluster API's) and its annotation
// (which wins over them): its behaviour ("Drain", "Skip",
// "WaitCompleted") and order (0 but for Drain by an order).
func placeOf(pod *corev1.Pod, rules []api.DrainRule) (string, int32) {
	switch v := pod.Annotations[analyze.DrainAnnotation]; {
	case v == "skip":
		return "Skip", 0
	case v == "wait-completed":
		return "WaitCompleted", 0
	case strings.HasPrefix(v, "order="):
		if n, err := strconv.ParseInt(strings.TrimPrefix(v, "order="), 10, 32); err == nil {
			return "Drain", int32(n)
		}
	}
	ns := labels.Set{corev1.LabelMetadataName: pod.Namespace}
	for _, r := range slices.SortedFunc(slices.Values(rules), func(a, b api.DrainRule) int { return strings.Compare(a.Name, b.Name) }) {
		if !slices.ContainsFunc(r.Pods, func(p api.DrainRulePods) bool {
			return selected(p.Selector, labels.Set(pod.Labels)) && selected(p.NamespaceSelector, ns)
		}) && len(r.Pods) > 0 {
			continue
		}
		if r.Drain.Behavior == "Drain" && r.Drain.Order != nil {
			return "Drain", *r.Drain.Order
		}
		return r.Drain.Behavior, 0
	}
	return "Drain", 0
}

// selected reports whether sel (nil: everything) selects set.
func selected(sel *metav1.LabelSelector, set labels.Set) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(set)
}

// checkRules checks an eviction of maintd that was applied against the
// rules people wrote on the plan whose cordon the pod's node carries on
// the server, and the pods' annotations: no Skip or WaitCompleted pod is
// evicted, and no pod while a pod of a lower order (a WaitCompleted pod's
// is 0) is still on its node, not gone and not ended. Storage providers
// are the storage-last promise's (checkProvider). w.mu is held.
func (w *World) checkRules(in *instance, pod *corev1.Pod) {
	if w.s.provider(pod) {
		return
	}
	p := w.cordonPlan(pod.Spec.NodeName)
	if p == nil {
		return
	}
	name := p.Name
	rules := p.Spec.DrainRules
	behavior, order := placeOf(pod, rules)
	if behavior != "Drain" {
		w.violate("%s evicted %s/%s, which plan %s's drain rules or its annotation say %s", in.name, pod.Namespace, pod.Name, name, behavior)
		return
	}
	for _, q := range w.s.list(podsR, "", nil) {
		q := q.(*corev1.Pod)
		if q.Spec.NodeName != pod.Spec.NodeName || q.UID == pod.UID || ended(q) || w.s.provider(q) || daemon(q) {
			continue
		}
		if b, o := placeOf(q, rules); b != "Skip" && o < order {
			w.violate("%s evicted %s/%s (order %d by plan %s's drain rules) while %s/%s (%s, order %d) is still on node %s (deleting %t)",
				in.name, pod.Namespace, pod.Name, order, name, q.Namespace, q.Name, b, o, q.Spec.NodeName, q.DeletionTimestamp != nil)
			return
		}
	}
}

// daemon reports whether a DaemonSet runs pod (a drain leaves it).
func daemon(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}
