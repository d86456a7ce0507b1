package deploy_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// access is one question to the authorizer.
type access struct {
	Verb, Group, Resource, Namespace, Name string
}

func (a access) String() string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Name != "" {
		s += "/" + a.Name
	}
	if a.Namespace != "" {
		s += " in " + a.Namespace
	}
	return s
}

// leastPrivilege asks the authorizer, for every resource and verb that
// discovery lists (and the escalating verbs), in maintd's namespace,
// another namespace and cluster-wide, what the shipped ServiceAccount may
// do beyond what any ServiceAccount may; it must be exactly the list below.
func leastPrivilege(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[access]bool{}
	var questions []access
	ask := func(a access) {
		if !seen[a] {
			seen[a] = true
			questions = append(questions, a)
		}
	}
	special := map[string][]string{"users": {"impersonate"}, "groups": {"impersonate"}, "serviceaccounts": {"impersonate"},
		"roles": {"bind", "escalate"}, "clusterroles": {"bind", "escalate"}, "certificatesigningrequests/approval": {"approve"}, "signers": {"approve", "sign"}}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			namespaces := []string{""}
			if r.Namespaced {
				namespaces = []string{"", namespace, "default"}
			}
			for _, verb := range append(slices.Clone(r.Verbs), special[r.Name]...) {
				for _, ns := range namespaces {
					ask(access{Verb: verb, Group: gv.Group, Resource: r.Name, Namespace: ns})
				}
			}
		}
	}
	mine := authorize(t, ctx, cs, "maintd", questions)
	anyone := authorize(t, ctx, cs, "nobody", questions)
	var got []string
	for _, q := range questions {
		if mine[q] && !anyone[q] {
			got = append(got, q.String())
		}
	}
	slices.Sort(got)

	var want []string
	add := func(group, resource string, namespaced bool, verbs ...string) {
		for _, v := range verbs {
			if !namespaced {
				want = append(want, access{Verb: v, Group: group, Resource: resource}.String())
				continue
			}
			for _, ns := range []string{"", namespace, "default"} {
				want = append(want, access{Verb: v, Group: group, Resource: resource, Namespace: ns}.String())
			}
		}
	}
	read := []string{"get", "list", "watch"}
	add("", "nodes", false, "get", "list", "watch", "patch")
	add("", "persistentvolumes", false, read...)
	// The volumes' detach (Drained), and the namespaces' labels (drain
	// rules): read only.
	add("storage.k8s.io", "volumeattachments", false, read...)
	add("", "namespaces", false, read...)
	add("", "pods", true, read...)
	add("", "persistentvolumeclaims", true, read...)
	add("", "pods/eviction", true, "create")
	// A surge writes the replica count of a Deployment or ReplicaSet
	// with its annotations in one patch; it never writes a pod.
	add("apps", "replicasets", true, "get", "list", "watch", "patch")
	add("apps", "deployments", true, "get", "list", "watch", "patch")
	for _, r := range []string{"statefulsets", "daemonsets"} {
		add("apps", r, true, read...)
	}
	add("autoscaling", "horizontalpodautoscalers", true, read...)
	add("batch", "jobs", true, read...)
	add("batch", "cronjobs", true, read...)
	add("policy", "poddisruptionbudgets", true, read...)
	add("maintenance.sentinel.dev", "maintenanceplans", false, "get", "list", "watch", "update", "create")
	add("maintenance.sentinel.dev", "maintenanceplans/status", false, "update")
	add("maintenance.sentinel.dev", "maintenancecampaigns", false, "get", "list", "watch")
	add("maintenance.sentinel.dev", "maintenancecampaigns/status", false, "update")
	// Break-glass approvals: read only. Deleting the pods they cover is
	// the break-glass component's, not in the default (breakglass_test.go).
	add("maintenance.sentinel.dev", "maintenanceoverrides", false, read...)
	add("events.k8s.io", "events", true, "create", "patch")
	want = append(want, access{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace}.String())
	// The learned times' ConfigMap, created once in its namespace.
	want = append(want, access{Verb: "create", Resource: "configmaps", Namespace: namespace}.String())
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the ServiceAccount's privileges beyond any ServiceAccount's (-want +got):\n%s", diff)
	}
	t.Logf("%d questions asked of the authorizer for each account; %d allowed to maintd alone", len(questions), len(got))

	// The lease: only its own, only in its namespace; and the refusals the
	// least privilege is about, each asked by name.
	named := []access{
		{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace, Name: "maintd"},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace, Name: "maintd"},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace, Name: "kube-scheduler"},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "maintd"},
		{Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-0"},
		{Verb: "update", Resource: "pods", Namespace: "default", Name: "web-0"},
		{Verb: "create", Resource: "pods", Namespace: "default"},
		{Verb: "get", Resource: "secrets", Namespace: namespace, Name: "any"},
		{Verb: "list", Resource: "secrets"},
		{Verb: "get", Resource: "configmaps", Namespace: namespace, Name: "other"},
		{Verb: "watch", Resource: "configmaps", Namespace: "default", Name: "maintd-pause"},
		{Verb: "update", Resource: "configmaps", Namespace: namespace, Name: "maintd-pause"},
		{Verb: "update", Resource: "configmaps", Namespace: "default", Name: "sentinel-maintd-learned"},
		// The learned times, by name, in its namespace.
		{Verb: "get", Resource: "configmaps", Namespace: namespace, Name: "sentinel-maintd-learned"},
		{Verb: "update", Resource: "configmaps", Namespace: namespace, Name: "sentinel-maintd-learned"},
		// The pause switch, by name, in its namespace.
		{Verb: "get", Resource: "configmaps", Namespace: namespace, Name: "maintd-pause"},
		{Verb: "list", Resource: "configmaps", Namespace: namespace, Name: "maintd-pause"},
		{Verb: "watch", Resource: "configmaps", Namespace: namespace, Name: "maintd-pause"},
	}
	allowed := authorize(t, ctx, cs, "maintd", named)
	for i, q := range named {
		if want := i < 2 || i >= len(named)-5; allowed[q] != want {
			t.Errorf("%s: allowed %t, want %t", q, allowed[q], want)
		}
	}
}

// authorize asks a SubjectAccessReview for each question about the
// ServiceAccount maintd-system/name, eight at a time.
func authorize(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, questions []access) map[access]bool {
	t.Helper()
	user := "system:serviceaccount:" + namespace + ":" + name
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	out := make([]bool, len(questions))
	errs := make([]error, len(questions))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, q := range questions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			resource, sub, _ := strings.Cut(q.Resource, "/")
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: q.Verb, Group: q.Group, Resource: resource, Subresource: sub, Namespace: q.Namespace, Name: q.Name}}}
			res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = res.Status.Allowed
		})
	}
	wg.Wait()
	m := map[access]bool{}
	for i, q := range questions {
		if errs[i] != nil {
			t.Fatalf("SubjectAccessReview %s: %v", q, errs[i])
		}
		m[q] = out[i]
	}
	return m
}
