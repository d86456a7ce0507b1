package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// pinned is a Deployment of NAMESPACE whose one pod may run on NODE alone
// (a node selector on its hostname): draining NODE never completes.
const pinned = `apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned, namespace: "${NAMESPACE}"}
spec:
  replicas: 1
  selector:
    matchLabels: {app: pinned}
  template:
    metadata:
      labels: {app: pinned}
    spec:
      nodeSelector: {kubernetes.io/hostname: "${NODE}"}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers:
      - name: c
        image: registry.example/pinned:1
`

// preflightStep is the plan's first step kubectl maint preflight printed:
// Cordoning for a cordon, else the phase and reason it names.
var preflightStep = regexp.MustCompile(`(?m)^plan: would (cordon|be Blocked \(([a-z-]+)\)|wait \((\w+)/([a-z-]+)\))`)

// TestPreflightIsMaintdsDecision: kubectl maint preflight says what maintd
// then does with the same plan on the same cluster: its first status,
// phase and reason. A node whose pod can run nowhere else is Blocked by
// maintd (its forecast, judged on the whole cluster, says never); the
// preflight judged a node-scoped snapshot, whose forecast could not place
// replacements, and said it would cordon.
func TestPreflightIsMaintdsDecision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := newEnv(ctx, "1s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, node string
		setup      func()
	}{
		{name: "drain", node: e.node2},
		{name: "never", node: e.node1, setup: func() {
			if err := cp.Apply(ctx, []byte(pinned), map[string]string{"NAMESPACE": e.ns, "NODE": e.node1}); err != nil {
				t.Fatal(err)
			}
			if err := cp.WaitPodsReady(ctx, e.ns, "app=pinned", 1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			_, stdout, stderr := run(ctx, "preflight", tc.node, "--all-workloads", "--max-nodes-in-maintenance", "20")
			m := preflightStep.FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("no plan step in the preflight's output:\n%s\n%s", stdout, stderr)
			}
			said := [2]string{string(api.Cordoning), string(api.CordonSubmitted)}
			switch {
			case m[2] != "":
				said = [2]string{string(api.Blocked), m[2]}
			case m[3] != "":
				said = [2]string{m[3], m[4]}
			}
			p, err := e.plans.Create(ctx, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{GenerateName: e.ns + "-"},
				Spec: api.MaintenancePlanSpec{NodeName: tc.node, AllowAllWorkloads: true}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = e.plans.Delete(context.Background(), p.Name, metav1.DeleteOptions{})
			})
			var first [2]string
			for first[0] == "" {
				got, err := e.plans.Get(ctx, p.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if h := got.Status.History; len(h) > 0 {
					first = [2]string{string(h[0].Phase), string(h[0].Reason)}
				}
				select {
				case <-ctx.Done():
					t.Fatalf("maintd never decided plan %s", p.Name)
				case <-time.After(50 * time.Millisecond):
				}
			}
			if said != first {
				t.Errorf("preflight said %s/%s, maintd decided %s/%s\npreflight:\n%s", said[0], said[1], first[0], first[1], stdout)
			}
		})
	}
}
