package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// TestRBAC cordons and uncordons with the token of a ServiceAccount bound
// to deploy/rbac.yaml and nothing else: the shipped role is enough.
func TestRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	role, err := cp.ApplyClusterRole(ctx, "deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	node := nodes(t, ctx, 1)[0]
	ns, err := cp.Namespace(ctx, "cordon-rbac")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.BindServiceAccount(ctx, ns, "cordon", role.Name)
	if err != nil {
		t.Fatal(err)
	}
	// BindServiceAccount returned once the authorizer knows the binding:
	// the first answer is the role's.
	o := cordonAs(ctx, controlplane.Admin, "--kubeconfig", kubeconfig, "--node", node, "--owner", "rbac")
	want := summary{Action: cordon.Cordoned, Owner: "rbac", Unschedulable: true, Observed: true}
	if diff := cmp.Diff(want, summarize(t, o)); diff != "" {
		t.Fatalf("cordon as the ServiceAccount (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
	o = cordonAs(ctx, controlplane.Admin, "--kubeconfig", kubeconfig, "--node", node, "--owner", "rbac", "--uncordon")
	want = summary{Action: cordon.Uncordoned, Owner: "rbac", PreviousOwner: "rbac", Observed: true}
	if diff := cmp.Diff(want, summarize(t, o)); diff != "" {
		t.Errorf("uncordon as the ServiceAccount (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
}
