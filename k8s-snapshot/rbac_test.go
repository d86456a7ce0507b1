package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// TestRBAC applies deploy/rbac.yaml, binds it to a fresh ServiceAccount,
// runs k8s-snapshot with that account's token (whole cluster and one
// node), and asks the API server (SubjectAccessReview) whether the account
// may do anything but get and list: it may not.
func TestRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	role, err := cp.ApplyClusterRole(ctx, "deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if role.Name != "sentinel-snapshot-reader" {
		t.Fatalf("deploy/rbac.yaml: ClusterRole %q, want sentinel-snapshot-reader", role.Name)
	}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" {
				t.Errorf("deploy/rbac.yaml grants %q on %v", v, r.Resources)
			}
		}
	}

	ns, err := cp.Namespace(ctx, "snap-rbac")
	if err != nil {
		t.Fatal(err)
	}
	pool := ns
	if err := cp.CreateNodes(ctx, pool, ns+"-a"); err != nil {
		t.Fatal(err)
	}
	const sa = "snapshot"
	kubeconfig, err := cp.BindServiceAccount(ctx, ns, sa, role.Name)
	if err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{}, {"--node", ns + "-a"}} {
		var stdout, stderr bytes.Buffer
		argv := append([]string{name, "--kubeconfig", kubeconfig}, args...)
		if code := command.Run(ctx, app(), argv, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d, stderr:\n%s", argv, code, stderr.String())
		}
		var s snapshot.Snapshot
		if err := document.Unmarshal(stdout.Bytes(), snapshot.Kind, &s); err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		if !slices.ContainsFunc(s.Nodes, func(n corev1.Node) bool { return n.Name == ns+"-a" }) {
			t.Errorf("%v: the snapshot lacks node %s-a", argv, ns)
		}
	}

	user := "system:serviceaccount:" + ns + ":" + sa
	writes := []string{"create", "update", "patch", "delete", "deletecollection", "watch", "escalate", "bind", "impersonate", "approve", "sign"}
	type check struct{ group, resource, subresource, verb string }
	var checks []check
	for _, r := range role.Rules {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range append(writes, "get", "list") {
					checks = append(checks, check{group, res, "", verb})
				}
			}
		}
	}
	checks = append(checks,
		check{"", "pods", "eviction", "create"}, check{"", "nodes", "status", "patch"},
		check{"", "secrets", "", "get"}, check{"", "configmaps", "", "list"},
		check{"rbac.authorization.k8s.io", "clusterroles", "", "escalate"}, check{"*", "*", "", "*"},
	)
	for _, c := range checks {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: c.group, Resource: c.resource, Subresource: c.subresource, Verb: c.verb, Namespace: "default",
			},
		}}
		got, err := cp.Clientset(controlplane.Admin).AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := c.subresource == "" && (c.verb == "get" || c.verb == "list") && c.resource != "secrets" && c.resource != "configmaps"
		if got.Status.Allowed != want {
			t.Errorf("%s may %s %s/%s (group %q): allowed = %v, want %v", user, c.verb, c.resource, c.subresource, c.group, got.Status.Allowed, want)
		}
	}
}
