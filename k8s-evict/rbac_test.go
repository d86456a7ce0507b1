package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// TestRBAC runs k8s-evict --wait with the token of a ServiceAccount bound
// to deploy/rbac.yaml and nothing else: the shipped role is enough.
func TestRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	role, err := cp.ApplyClusterRole(ctx, "deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, ctx, "evict-free.yaml")
	if err := cp.WaitPodsReady(ctx, e.ns, "app=solo", 2); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.BindServiceAccount(ctx, e.ns, "evict", role.Name)
	if err != nil {
		t.Fatal(err)
	}
	// BindServiceAccount returned once the authorizer knows the binding:
	// the first answer is the role's.
	o := evictAs(ctx, controlplane.Admin, "--kubeconfig", kubeconfig, "-n", e.ns, "--pod", "solo-0", "--dry-run")
	if diff := cmp.Diff(view{Outcome: evict.Accepted, HTTPStatus: 201}, viewOf(t, o)); diff != "" {
		t.Fatalf("dry run as the ServiceAccount (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
	o = evictAs(ctx, controlplane.Admin, "--kubeconfig", kubeconfig, "-n", e.ns, "--pod", "solo-0", "--wait", "30s")
	if diff := cmp.Diff(view{Outcome: evict.Accepted, HTTPStatus: 201, Gone: true}, viewOf(t, o)); diff != "" {
		t.Errorf("evict --wait as the ServiceAccount (-want +got):\n%s\nstderr: %s", diff, o.stderr)
	}
}
