package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DrainRule is one rule of spec.drainRules.
type DrainRule struct {
	// Name names the rule in the status and in messages.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Drain is what happens to the pods the rule matches.
	Drain DrainRuleDrain `json:"drain"`
	// Pods select the pods: a pod matches when both selectors of one entry
	// match it (a missing selector matches every pod). No entry: every pod.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Pods []DrainRulePods `json:"pods,omitempty"`
}

// DrainRuleDrain is a rule's behavior and order.
type DrainRuleDrain struct {
	// Behavior of the matched pods.
	// +kubebuilder:validation:Enum=Drain;Skip;WaitCompleted
	Behavior string `json:"behavior"`
	// Order of the group of matched pods, for Drain: lower goes first; the
	// pods of no rule have order 0.
	// +optional
	Order *int32 `json:"order,omitempty"`
}

// DrainRulePods selects pods by their labels and their namespace's labels.
type DrainRulePods struct {
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}
