package controller

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultPauseSwitch is the ConfigMap maintd's pause switch is by default
// (maintd --pause-configmap; kubectl maint preflight reads the same).
const DefaultPauseSwitch = "maintd-system/maintd-pause"

// ParsePauseSwitch reads a --pause-configmap value, NAMESPACE/NAME; "" is
// no switch.
func ParsePauseSwitch(v string) (types.NamespacedName, error) {
	return parseConfigMap("--pause-configmap", v)
}

// ParseLearned reads a --learned-configmap value, NAMESPACE/NAME; "" keeps
// the learned times in memory only.
func ParseLearned(v string) (types.NamespacedName, error) {
	return parseConfigMap("--learned-configmap", v)
}

// parseConfigMap reads flag's value v, a ConfigMap's NAMESPACE/NAME; "" is
// none.
func parseConfigMap(flag, v string) (types.NamespacedName, error) {
	if v == "" {
		return types.NamespacedName{}, nil
	}
	ns, n, ok := strings.Cut(v, "/")
	if !ok {
		return types.NamespacedName{}, fmt.Errorf("invalid %s %q: want NAMESPACE/NAME", flag, v)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("invalid %s %q: namespace: %s", flag, v, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("invalid %s %q: name: %s", flag, v, strings.Join(errs, "; "))
	}
	return types.NamespacedName{Namespace: ns, Name: n}, nil
}
