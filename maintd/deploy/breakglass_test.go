package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// The break-glass component's ClusterRole and its binding.
const breakglassRole = "sentinel-maintd-breakglass"

// waitCRDs waits until the API server serves the three CRDs of crd.yaml.
func waitCRDs(t *testing.T, ctx context.Context) {
	t.Helper()
	kubectl(t, ctx, "wait", "--for=condition=Established", "crd/maintenanceplans.maintenance.sentinel.dev",
		"crd/maintenancecampaigns.maintenance.sentinel.dev", "crd/maintenanceoverrides.maintenance.sentinel.dev", "--timeout=60s")
}

// breakglassOverlay writes, in a temporary directory, the overlay that
// breakglass/kustomization.yaml tells an operator to write: this
// directory as its resource and the component. kustomize refuses a base
// that contains the overlay, and absolute paths: the paths are relative.
func breakglassOverlay(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Rel(dir, here)
	if err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + filepath.ToSlash(base) +
		"\ncomponents:\n- " + filepath.ToSlash(filepath.Join(base, "breakglass")) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rendered is what kubectl kustomize renders: the objects by kind/name,
// and the roles that grant delete on pods with the subjects bound to them.
type rendered struct {
	objects     []string
	podDeleters map[string][]rbacv1.PolicyRule // kind/name of the role: its rules that grant it
	bindings    map[string][]rbacv1.Subject    // kind/name of the role bound: the subjects
}

func render(t *testing.T, dir string) rendered {
	t.Helper()
	out := kubectl(t, t.Context(), "kustomize", dir)
	r := rendered{podDeleters: map[string][]rbacv1.PolicyRule{}, bindings: map[string][]rbacv1.Subject{}}
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta   `json:"metadata"`
			Rules           []rbacv1.PolicyRule `json:"rules"`
			RoleRef         rbacv1.RoleRef      `json:"roleRef"`
			Subjects        []rbacv1.Subject    `json:"subjects"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		key := obj.Kind + "/" + obj.Metadata.Name
		r.objects = append(r.objects, key)
		switch obj.Kind {
		case "ClusterRole", "Role":
			for _, rule := range obj.Rules {
				if grants(rule, "", "pods", "delete") {
					r.podDeleters[key] = append(r.podDeleters[key], rule)
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			ref := obj.RoleRef.Kind + "/" + obj.RoleRef.Name
			r.bindings[ref] = append(r.bindings[ref], obj.Subjects...)
		}
	}
	slices.Sort(r.objects)
	return r
}

// grants: rule allows verb on group's resource, wildcards included.
func grants(rule rbacv1.PolicyRule, group, resource, verb string) bool {
	in := func(list []string, s string) bool { return slices.Contains(list, s) || slices.Contains(list, "*") }
	return in(rule.APIGroups, group) && in(rule.Resources, resource) && in(rule.Verbs, verb) && len(rule.ResourceNames) == 0
}

// TestBreakglassKustomization: the default kustomization grants nobody
// delete on pods; the overlay with the component adds exactly its
// ClusterRole, with delete on pods and nothing else, bound to maintd's
// ServiceAccount; the component alone renders those two objects.
func TestBreakglassKustomization(t *testing.T) {
	def := render(t, ".")
	if len(def.podDeleters) > 0 {
		t.Errorf("the default kustomization grants delete on pods: %v", def.podDeleters)
	}
	with := render(t, breakglassOverlay(t))
	added := slices.DeleteFunc(slices.Clone(with.objects), func(o string) bool { return slices.Contains(def.objects, o) })
	wantAdded := []string{"ClusterRole/" + breakglassRole, "ClusterRoleBinding/" + breakglassRole}
	if diff := cmp.Diff(wantAdded, added); diff != "" {
		t.Errorf("objects the component adds (-want +got):\n%s", diff)
	}
	if len(with.objects) != len(def.objects)+len(wantAdded) {
		t.Errorf("the overlay renders %d objects, want the default's %d and the component's %d", len(with.objects), len(def.objects), len(wantAdded))
	}
	wantDeleters := map[string][]rbacv1.PolicyRule{"ClusterRole/" + breakglassRole: {{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}}}}
	if diff := cmp.Diff(wantDeleters, with.podDeleters); diff != "" {
		t.Errorf("roles that grant delete on pods, with the component (-want +got):\n%s", diff)
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "maintd", Namespace: namespace}}
	if diff := cmp.Diff(wantSubjects, with.bindings["ClusterRole/"+breakglassRole]); diff != "" {
		t.Errorf("the break-glass ClusterRole is bound to (-want +got):\n%s", diff)
	}
	if alone := render(t, "breakglass"); !slices.Equal(alone.objects, wantAdded) {
		t.Errorf("kubectl kustomize breakglass renders %v, want %v", alone.objects, wantAdded)
	}
}

// breakglassInCluster: maintd's ServiceAccount may not delete pods with
// the default installation, and may with the component applied, as the
// authorizer says to an admin (SubjectAccessReview) and to maintd itself
// (SelfSubjectAccessReview, as maintd asks before a forced delete); still
// never create or update them. Deleting the component's objects takes the
// right away again, for the tests that follow.
func breakglassInCluster(t *testing.T, ctx context.Context, admin kubernetes.Interface) {
	self := kubernetes.NewForConfigOrDie(maintdConfig(t, ctx))
	deletePods := access{Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-0"}
	selfAllowed := func() bool {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-0"}}}
		res, err := self.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview: %v", err)
		}
		return res.Status.Allowed
	}
	if authorize(t, ctx, admin, "maintd", []access{deletePods})[deletePods] || selfAllowed() {
		t.Fatal("maintd may delete pods without the break-glass component")
	}

	t.Cleanup(func() {
		// Whatever happened, the default again.
		kubectl(t, context.WithoutCancel(ctx), "delete", "-k", "breakglass", "--ignore-not-found")
	})
	kubectl(t, ctx, "apply", "-k", breakglassOverlay(t), "--server-side")
	if err := poll(ctx, selfAllowed); err != nil {
		t.Fatalf("maintd may not delete pods with the component: %v", err)
	}
	others := []access{deletePods, {Verb: "delete", Resource: "pods", Namespace: namespace},
		{Verb: "create", Resource: "pods", Namespace: "default"}, {Verb: "update", Resource: "pods", Namespace: "default", Name: "web-0"},
		{Verb: "patch", Resource: "pods", Namespace: "default", Name: "web-0"}, {Verb: "deletecollection", Resource: "pods", Namespace: "default"}}
	got := authorize(t, ctx, admin, "maintd", others)
	for i, q := range others {
		if want := i < 2; got[q] != want {
			t.Errorf("with the component, %s: allowed %t, want %t", q, got[q], want)
		}
	}

	kubectl(t, ctx, "delete", "-k", "breakglass")
	if err := poll(ctx, func() bool { return !selfAllowed() }); err != nil {
		t.Fatalf("maintd may still delete pods once the component is deleted: %v", err)
	}
}

// maintdConfig is a client config with a token of maintd's ServiceAccount.
func maintdConfig(t *testing.T, ctx context.Context) *rest.Config {
	t.Helper()
	kc, err := cp.TokenKubeconfig(ctx, namespace, "maintd")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
