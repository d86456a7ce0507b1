package verify

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/auditlog"
)

const md = DefaultMaintdUser

// fixture is testdata/audit.log (13 events: a plan created by ops-alice;
// ops-carol cordons node-1; maintd cordons node-2, its evictions of db-0
// and db-1 refused, ops-bob's override, maintd's ledger writes and
// DELETEs of db-0 (line 8) and db-1 (line 11), a dry-run DELETE by ops-bob,
// ops-carol's uncordon of node-1, maintd's uncordon of node-2) and
// testdata/plans.yaml (plan node-2-x7k2p: db-0 and db-1 deleted, cache-0
// gone).
func fixture(t *testing.T) ([]string, []api.MaintenancePlan) {
	t.Helper()
	data, err := os.ReadFile("testdata/audit.log")
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile("testdata/plans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plans, err := ParsePlans(y)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), plans
}

func replay(t *testing.T, lines []string, plans []api.MaintenancePlan) Result {
	t.Helper()
	events, err := auditlog.Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return Replay(events, plans, md)
}

func messages(r Result) []string {
	var out []string
	for _, m := range r.Mismatches {
		out = append(out, m.String())
	}
	return out
}

// TestConsistent: the fixture as it is matches, every check counted.
func TestConsistent(t *testing.T) {
	lines, plans := fixture(t)
	r := replay(t, lines, plans)
	want := Result{Entries: 3, Deletes: 2, Creates: 3, NodeWrites: 2}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Replay (-want +got):\n%s", diff)
	}
	if cordon.OwnerAnnotation != auditlog.CordonOwnerAnnotation || plan.CreatedByAnnotation != CreatedByAnnotation {
		t.Errorf("annotation names drifted: %s %s, %s %s", cordon.OwnerAnnotation, auditlog.CordonOwnerAnnotation, plan.CreatedByAnnotation, CreatedByAnnotation)
	}
}

// TestMismatches: each hand edit of the ledger or the log is found,
// naming the entry and the line.
func TestMismatches(t *testing.T) {
	const (
		db0 = "0b6c2a55-1f0e-4d7a-9c3b-6a1e2d3c4b5a"
		db1 = "1c7d3b66-2a1f-4e8b-8d4c-7b2f3e4d5c6b"
	)
	at := func(s string) metav1.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.NewTime(tm)
	}
	for _, tc := range []struct {
		name  string
		edit  func(lines []string, p *api.MaintenancePlan) []string
		want  []string
		check func(t *testing.T, r Result)
	}{
		{"uid changed in the ledger", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[0].UID = "99999999-1f0e-4d7a-9c3b-6a1e2d3c4b5a"
			return l
		}, []string{
			"entry: plan node-2-x7k2p entry shop/db-0: entry without its DELETE: outcome deleted, recorded 2026-12-05T10:31:00.000000Z, but no DELETE of uid 99999999-1f0e-4d7a-9c3b-6a1e2d3c4b5a by maintd in the log",
			"delete: audit log line 8: DELETE of pod shop/db-0 at 2026-12-05T10:31:00.120000Z: its UID precondition " + db0 + " is in no ledger entry of the pod (the ledger has uid 99999999-1f0e-4d7a-9c3b-6a1e2d3c4b5a)",
		}, nil},
		{"a DELETE removed from the log", func(l []string, p *api.MaintenancePlan) []string {
			return append(l[:10:10], l[11:]...)
		}, []string{
			"entry: plan node-2-x7k2p entry shop/db-1: entry without its DELETE: outcome deleted, recorded 2026-12-05T10:31:30.000000Z, but no DELETE of uid " + db1 + " by maintd in the log",
		}, nil},
		{"a DELETE sent twice", func(l []string, p *api.MaintenancePlan) []string {
			return append(l, strings.Replace(l[10], "10:31:30.020000", "10:31:40.000000", 1))
		}, []string{
			"entry: plan node-2-x7k2p entry shop/db-1, audit log line 14: deleted twice: 2 DELETEs of uid " + db1 + " (audit log lines [11 14])",
		}, nil},
		{"a gone pod deleted twice", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[1].Outcome = api.ForcedGone
			return append(l, strings.Replace(l[10], "10:31:30.020000", "10:31:40.000000", 1))
		}, []string{
			"entry: plan node-2-x7k2p entry shop/db-1, audit log line 14: deleted twice: 2 DELETEs of uid " + db1 + " (audit log lines [11 14])",
		}, nil},
		{"recorded after the DELETE", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[0].RecordedAt = at("2026-12-05T10:31:02Z")
			return l
		}, []string{
			"delete: plan node-2-x7k2p entry shop/db-0, audit log line 8: DELETE at 2026-12-05T10:31:00.120000Z: the entry was recorded at 2026-12-05T10:31:02.000000Z, after the DELETE",
		}, nil},
		{"recorded within the clock skew", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[0].RecordedAt = at("2026-12-05T10:31:01Z")
			return l
		}, nil, nil},
		{"the override expired", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[1].ExpiresAt = at("2026-12-05T10:31:30Z")
			return l
		}, []string{
			"delete: plan node-2-x7k2p entry shop/db-1, audit log line 11: DELETE at 2026-12-05T10:31:30.020000Z: override node-2-x7k2p-override-4kq9z was not in force (approved 2026-12-05T10:29:00.000000Z, expires 2026-12-05T10:31:30.000000Z)",
		}, nil},
		{"approved by the requester", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[0].ApprovedBy = "ops-alice"
			return l
		}, []string{
			"approver: plan node-2-x7k2p entry shop/db-0, audit log line 6: override node-2-x7k2p-override-4kq9z was created by ops-bob, but the entry says it was approved by ops-alice",
			"delete: plan node-2-x7k2p entry shop/db-0, audit log line 8: DELETE at 2026-12-05T10:31:00.120000Z: approved by ops-alice, who requested the plan",
		}, nil},
		{"another grace period", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced[0].GracePeriodSeconds = 30
			return l
		}, []string{
			"delete: plan node-2-x7k2p entry shop/db-0, audit log line 8: DELETE at 2026-12-05T10:31:00.120000Z: grace period 45s, the entry says 30s",
		}, nil},
		{"a DELETE without its UID precondition", func(l []string, p *api.MaintenancePlan) []string {
			l[7] = strings.Replace(l[7], `,"preconditions":{"uid":"`+db0+`"}`, "", 1)
			return l
		}, []string{
			"entry: plan node-2-x7k2p entry shop/db-0: entry without its DELETE: outcome deleted, recorded 2026-12-05T10:31:00.000000Z, but no DELETE of uid " + db0 + " by maintd in the log",
			"delete: audit log line 8: DELETE of pod shop/db-0 at 2026-12-05T10:31:00.120000Z: sent without a UID precondition (the ledger has uid " + db0 + ")",
		}, nil},
		{"a DELETE without a ledger", func(l []string, p *api.MaintenancePlan) []string {
			p.Status.Forced = nil
			return l
		}, []string{
			"delete: audit log line 8: DELETE of pod shop/db-0 at 2026-12-05T10:31:00.120000Z: no ledger entry for the pod",
			"delete: audit log line 11: DELETE of pod shop/db-1 at 2026-12-05T10:31:30.020000Z: no ledger entry for the pod",
		}, nil},
		{"maintd writes a node another user cordoned", func(l []string, p *api.MaintenancePlan) []string {
			// maintd's uncordon of node-2 made a write of node-1, before
			// ops-carol's uncordon, and again after it.
			w := strings.ReplaceAll(l[12], "node-2", "node-1")
			return append(append(l[:11:11], w, l[11]), strings.Replace(w, "10:40:00.000000", "10:41:00.000000", 1))
		}, []string{
			`node: audit log line 12: node node-1 written by system:serviceaccount:maintd-system:maintd (uncordon (owner "")) while cordoned by ops-carol at audit log line 2`,
		}, nil},
		{"node writes logged at Metadata", func(l []string, p *api.MaintenancePlan) []string {
			for i, s := range l {
				if strings.Contains(s, `"resource":"nodes"`) {
					s = strings.Replace(s, `"level":"Request"`, `"level":"Metadata"`, 1)
					l[i] = s[:strings.Index(s, `,"requestObject"`)] + s[strings.Index(s, `,"requestReceivedTimestamp"`):]
				}
			}
			return l
		}, nil, func(t *testing.T, r Result) {
			if r.NodesUnchecked != 4 || r.NodeWrites != 0 {
				t.Errorf("node writes: %d checked, %d unchecked; want 0, 4", r.NodeWrites, r.NodesUnchecked)
			}
		}},
		{"an entry before the log", func(l []string, p *api.MaintenancePlan) []string {
			f := p.Status.Forced[0]
			f.Pod, f.UID, f.RecordedAt = "old-0", "77777777-0000-4000-8000-000000000000", at("2026-12-05T09:00:00Z")
			p.Status.Forced = append(p.Status.Forced, f)
			return l
		}, nil, func(t *testing.T, r Result) {
			if r.Entries != 4 || r.Outside != 1 {
				t.Errorf("entries %d, outside %d; want 4, 1", r.Entries, r.Outside)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, plans := fixture(t)
			lines = tc.edit(lines, &plans[0])
			r := replay(t, lines, plans)
			if diff := cmp.Diff(tc.want, messages(r)); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}
