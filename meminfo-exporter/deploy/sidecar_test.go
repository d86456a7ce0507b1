package deploy_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { os.Exit(controlplane.Main(m, controlplane.Options{}, &cp)) }

// warnings collects the apiserver's warnings (Pod Security "warn" mode).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, msg)
	w.mu.Unlock()
}

// TestSidecarDryRun: the apiserver accepts deploy/sidecar.yaml in a
// server-side dry-run, in a namespace that enforces and warns on the
// "restricted" Pod Security Standard, without a warning; and the example
// has what it promises (probes, limits, non-root, read-only root).
func TestSidecarDryRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data, err := os.ReadFile("sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		t.Fatalf("sidecar.yaml: %v", err)
	}

	ns, err := cp.Namespace(ctx, "meminfo-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	admin := cp.Clientset(controlplane.Admin)
	nsObj, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nsObj.Labels == nil {
		nsObj.Labels = map[string]string{}
	}
	for _, mode := range []string{"enforce", "warn", "audit"} {
		nsObj.Labels["pod-security.kubernetes.io/"+mode] = "restricted"
	}
	if _, err := admin.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	var w warnings
	cfg := rest.CopyConfig(cp.Config(controlplane.Admin))
	cfg.WarningHandler = &w
	cfg.ContentType = runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.Namespace = ns
	got, err := cs.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("server-side dry-run of sidecar.yaml: %v", err)
	}
	if len(w.msgs) > 0 {
		t.Errorf("apiserver warnings:\n%s", strings.Join(w.msgs, "\n"))
	}
	// Dry run: nothing was stored.
	if _, err := admin.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{}); err == nil {
		t.Error("dry-run stored the deployment")
	}

	// The pod itself, as the ReplicaSet would create it, under "enforce".
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-dry-run", Namespace: ns, Labels: got.Spec.Template.Labels},
		Spec:       got.Spec.Template.Spec,
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("server-side dry-run of the pod under the restricted Pod Security Standard: %v", err)
	}
	// The check has teeth: without its security context the pod is refused.
	bad := pod.DeepCopy()
	bad.Name = "web-dry-run-bad"
	bad.Spec.SecurityContext = nil
	for i := range bad.Spec.Containers {
		bad.Spec.Containers[i].SecurityContext = nil
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("pod without a security context: error %v, want Forbidden by Pod Security", err)
	}

	spec := got.Spec.Template.Spec
	found := false
	for _, c := range spec.Containers {
		if c.Name != "meminfo-exporter" {
			continue
		}
		found = true
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
		}
		if c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() {
			t.Errorf("limits %v, want memory and cpu", c.Resources.Limits)
		}
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Error("root filesystem is not read-only")
		}
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Error("runAsNonRoot is not set")
		}
	}
	if !found {
		t.Fatal("no meminfo-exporter container")
	}
}
