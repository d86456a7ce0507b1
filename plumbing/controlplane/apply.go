package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// DefaultTimeout bounds a wait whose context has no deadline.
const DefaultTimeout = 2 * time.Minute

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Expand replaces every ${NAME} in manifests with vars[NAME]; a reference to
// a name not in vars is an error.
func Expand(manifests []byte, vars map[string]string) ([]byte, error) {
	var missing []string
	out := varRef.ReplaceAllFunc(manifests, func(ref []byte) []byte {
		name := string(ref[2 : len(ref)-1])
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("manifests reference undefined variables: %s", strings.Join(slices.Compact(missing), ", "))
	}
	return out, nil
}

// Apply server-side applies every object in the multi-document YAML (or
// JSON) manifests, after Expand. Namespaces and CRDs go first; a new
// namespace is ready for pods (its default ServiceAccount exists) before
// the objects after it.
func (cp *ControlPlane) Apply(ctx context.Context, manifests []byte, vars map[string]string) error {
	data, err := Expand(manifests, vars)
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("manifests: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, &u)
	}
	first := func(u *unstructured.Unstructured) int {
		switch u.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			return 0
		}
		return 1
	}
	sort.SliceStable(objs, func(i, j int) bool { return first(objs[i]) < first(objs[j]) })

	cfg := cp.Config(Admin)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		var mapping *meta.RESTMapping
		// A kind defined by a CRD in the same manifests appears a moment later.
		err := cp.poll(ctx, "kube-apiserver", func(context.Context) (bool, error) {
			var err error
			mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				mapper.Reset()
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, u.GetName(), err)
		}
		ri := dyn.Resource(mapping.Resource)
		var target dynamic.ResourceInterface = ri
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if u.GetNamespace() == "" {
				u.SetNamespace("default")
			}
			target = ri.Namespace(u.GetNamespace())
		}
		if _, err := target.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "sentinel-controlplane", Force: true}); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
		if gvk.Kind == "Namespace" && gvk.Group == "" {
			if err := cp.waitServiceAccount(ctx, u.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Namespace creates a fresh namespace named prefix-<random> and waits until
// pods can be created in it.
func (cp *ControlPlane) Namespace(ctx context.Context, prefix string) (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	name := strings.ToLower(prefix) + "-" + hex.EncodeToString(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cp.Clientset(Admin).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create namespace %s: %w", name, err)
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	return name, cp.waitServiceAccount(ctx, name)
}

func (cp *ControlPlane) waitServiceAccount(ctx context.Context, namespace string) error {
	sas := cp.Clientset(Admin).CoreV1().ServiceAccounts(namespace)
	return cp.poll(ctx, "kube-controller-manager", func(ctx context.Context) (bool, error) {
		_, err := sas.Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// WaitPodsReady waits until at least n pods matching labelSelector in
// namespace are Ready and not terminating.
func (cp *ControlPlane) WaitPodsReady(ctx context.Context, namespace, labelSelector string, n int) error {
	pods := cp.Clientset(Admin).CoreV1().Pods(namespace)
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	var last string
	err := cp.poll(ctx, "kube-scheduler", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
		if err != nil {
			return false, nil
		}
		ready := 0
		for i := range list.Items {
			if p := &list.Items[i]; p.DeletionTimestamp == nil && PodReady(p) {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d pods Ready", ready, len(list.Items))
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("pods %q in %s (want %d Ready, have %s): %w", labelSelector, namespace, n, last, err)
	}
	return nil
}

// PodReady is true when the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
