package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// run runs kubectl-maint in-process as the admin user, as main does:
// its exit code, stdout and stderr.
func run(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	args = append([]string{name}, append(args, "--kubeconfig", cp.Kubeconfig(controlplane.Admin))...)
	code = command.Run(ctx, app(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRetry: kubectl maint retry CAMPAIGN NODE... lists nodes in the
// campaign's spec.retry with one guarded write, and refuses, writing
// nothing, a node that is not the campaign's, that completed, that is
// pending or whose plan still exists. The campaign and its plans are
// labelled for maintd to leave alone: the test writes their status as
// maintd would have.
func TestRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := cp.Namespace(ctx, "kmretry")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	campaigns, plans := mc.MaintenanceCampaigns(), mc.MaintenancePlans()
	node := func(s string) string { return ns + "-" + s }
	labels := map[string]string{unrunLabel: "true"}
	c, err := campaigns.Create(ctx, &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels},
		Spec: api.MaintenanceCampaignSpec{Nodes: []string{node("deleted"), node("completed"), node("pending"), node("failed"), node("expired"), node("gone")}, AllowAllWorkloads: true}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// node "failed" still has its plan, Failed; the plans of "deleted",
	// "expired" and "gone" (failed) were deleted.
	failed, err := plans.Create(ctx, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + node("failed"),
		Labels: map[string]string{unrunLabel: "true", api.CampaignLabel: ns, api.WaveLabel: "1"}},
		Spec: api.MaintenancePlanSpec{NodeName: node("failed"), AllowAllWorkloads: true}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failed.Status = api.MaintenancePlanStatus{Phase: api.Failed, Reason: api.DeadlineExceeded, Message: "the plan's deadline passed"}
	if _, err := plans.UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	deadline := metav1.NewTime(now.Add(time.Hour))
	c.Status = api.MaintenanceCampaignStatus{Phase: api.Blocked, Reason: api.NodesNotDone, Message: "nodes not done", StartedAt: &now, Deadline: &deadline, Wave: 1,
		Nodes: c.Spec.Nodes,
		NodeStatus: []api.CampaignNode{
			{Name: node("deleted"), Outcome: api.NodeDeleted, Plan: ns + "-" + node("deleted"), PlanUID: "uid-deleted", Wave: 1, Evicted: 1},
			{Name: node("completed"), Outcome: api.NodeCompleted, Plan: ns + "-" + node("completed"), PlanUID: "uid-completed", Wave: 1, Evicted: 2},
			{Name: node("pending"), Outcome: api.NodePending},
			{Name: node("failed"), Outcome: api.NodeFailed, Plan: failed.Name, PlanUID: failed.UID, Wave: 1},
			{Name: node("expired"), Outcome: api.NodeExpired, Plan: ns + "-" + node("expired"), PlanUID: "uid-expired", Wave: 1},
			{Name: node("gone"), Outcome: api.NodeFailed, Plan: ns + "-" + node("gone"), PlanUID: "uid-gone", Wave: 1},
		}}
	if c, err = campaigns.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// kubectl's plugin completion: the campaign, then its nodes that may
	// be retried.
	t.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
	complete := func(words ...string) []string {
		var out, errb bytes.Buffer
		if code := command.Run(ctx, app(), append([]string{name, "__complete"}, words...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("__complete %q: exit %d, %s", words, code, errb.String())
		}
		return strings.Fields(out.String())
	}
	if got := complete("retry", ns[:len(ns)-2]); !slices.Contains(got, ns) {
		t.Errorf("kubectl maint retry %s<TAB>: %q, want %s among them", ns[:len(ns)-2], got, ns)
	}
	if diff := cmp.Diff([]string{node("deleted"), node("gone"), ":4"}, complete("retry", ns, node("expired"), "")); diff != "" {
		t.Errorf("kubectl maint retry %s %s <TAB> (-want +got):\n%s", ns, node("expired"), diff)
	}

	// Refusals: exit 1, a message naming the node and why, nothing on
	// stdout, nothing written.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{ns, node("deleted"), node("elsewhere")}, "node " + node("elsewhere") + " is not a node of campaign " + ns},
		{[]string{ns, node("completed")}, "node " + node("completed") + " of campaign " + ns + " completed"},
		{[]string{ns, node("deleted"), node("pending")}, "node " + node("pending") + " of campaign " + ns + " is pending"},
		{[]string{ns, node("failed")}, "node " + node("failed") + " of campaign " + ns + " still has its plan " + failed.Name + " (Failed/deadline-exceeded)"},
		{[]string{ns + "-missing", node("deleted")}, "campaign " + ns + "-missing not found"},
		{[]string{ns}, "retry: missing NODE"},
		{[]string{ns, "Bad_Node"}, `invalid node "Bad_Node"`},
	} {
		code, stdout, stderr := run(ctx, append([]string{"retry"}, tc.args...)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("retry %s: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, stderr with %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
	if got, err := campaigns.Get(ctx, ns, metav1.GetOptions{}); err != nil || got.ResourceVersion != c.ResourceVersion || len(got.Spec.Retry) > 0 {
		t.Fatalf("the campaign after the refusals: %v; resourceVersion %s (was %s), spec.retry %q: want it unchanged", err, got.ResourceVersion, c.ResourceVersion, got.Spec.Retry)
	}

	// Nodes whose plan is gone and that did not complete are listed.
	code, stdout, stderr := run(ctx, "retry", ns, node("deleted"), node("expired"), node("gone"))
	if code != 0 {
		t.Fatalf("retry: exit %d, stderr %q", code, stderr)
	}
	if want := "maintenancecampaign/" + ns + " retry " + node("deleted") + " " + node("expired") + " " + node("gone") + "\n"; stdout != want {
		t.Errorf("retry: stdout %q, want %q", stdout, want)
	}
	for _, want := range []string{
		"node " + node("deleted") + " (deleted, plan " + ns + "-" + node("deleted") + "): listed in spec.retry",
		"node " + node("gone") + " (failed, plan " + ns + "-" + node("gone") + "): listed in spec.retry",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("retry: stderr %q lacks %q", stderr, want)
		}
	}
	got, err := campaigns.Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{node("deleted"), node("expired"), node("gone")}, got.Spec.Retry); diff != "" {
		t.Errorf("spec.retry (-want +got):\n%s", diff)
	}

	// A node listed already: said so, nothing written, exit 0.
	rv := got.ResourceVersion
	code, stdout, stderr = run(ctx, "retry", ns, node("gone"))
	if want := "maintenancecampaign/" + ns + " retry " + node("gone") + "\n"; code != 0 || stdout != want || !strings.Contains(stderr, "node "+node("gone")+" is listed in spec.retry already") {
		t.Errorf("retry of a listed node: exit %d, stdout %q, stderr %q; want exit 0, stdout %q", code, stdout, stderr, want)
	}
	if got, err := campaigns.Get(ctx, ns, metav1.GetOptions{}); err != nil || got.ResourceVersion != rv {
		t.Errorf("retry of a listed node wrote the campaign: %v", err)
	}

	// Once its plan is deleted, node "failed" may be retried; -o json
	// prints the campaign.
	if err := plans.Delete(ctx, failed.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(ctx, "retry", ns, node("failed"), "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"kind": "MaintenanceCampaign"`) || strings.Contains(stdout, "managedFields") {
		t.Errorf("retry -o json: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got, err = campaigns.Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{node("deleted"), node("expired"), node("gone"), node("failed")}, got.Spec.Retry); diff != "" {
		t.Errorf("spec.retry (-want +got):\n%s", diff)
	}

	// A campaign that failed makes no more plans: refused.
	got.Status.Phase, got.Status.Reason = api.Failed, api.DeadlineExceeded
	if _, err := campaigns.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(ctx, "retry", ns, node("deleted"))
	if want := "campaign " + ns + " is Failed/deadline-exceeded"; code != 1 || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("retry in a Failed campaign: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
}
