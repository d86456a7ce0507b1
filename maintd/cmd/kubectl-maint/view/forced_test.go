package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// TestForced: the detail lists each ledger entry (pod, budget before,
// override and approver, times, outcome; one in flight without outcome),
// and the table counts them next to the evicted pods, only when there are
// any.
func TestForced(t *testing.T) {
	p := cooling()
	deleted := at(50)
	p.Status.Forced = []api.ForcedDelete{
		{Namespace: "shop", Pod: "db-0", UID: "u-0", PDB: "db", PDBBefore: api.PDBStatus{CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2},
			Override: "node-1-abcde-override-x1", ApprovedBy: "ops-bob", ApprovedAt: at(10), ExpiresAt: at(1810), GracePeriodSeconds: 30,
			RecordedAt: at(45), Deleted: &deleted, Outcome: api.ForcedDeleted},
		{Namespace: "shop", Pod: "db-1", UID: "u-1", PDB: "db", PDBBefore: api.PDBStatus{CurrentHealthy: 1, DesiredHealthy: 2, ExpectedPods: 2},
			Override: "node-1-abcde-override-x1", ApprovedBy: "ops-bob", ApprovedAt: at(10), ExpiresAt: at(1810), RecordedAt: at(55)},
	}
	var b bytes.Buffer
	if err := Detail(&b, p, func(*api.MaintenancePlan) string { return "ops-alice" }, nil, nil, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	tm := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(time.TimeOnly) }
	for _, want := range []string{
		"Forced:       pod shop/db-0 (uid u-0), PDB db (before: 2 healthy of 2 needed, 2 expected, 0 disruptions allowed); override node-1-abcde-override-x1 approved by ops-bob (in force " + tm(10) + " to " + tm(1810) + "); recorded " + tm(45) + ", deleted " + tm(50) + ": deleted\n",
		"Forced:       pod shop/db-1 (uid u-1), PDB db (before: 1 healthy of 2 needed, 2 expected, 0 disruptions allowed); override node-1-abcde-override-x1 approved by ops-bob (in force " + tm(10) + " to " + tm(1810) + "); recorded " + tm(55) + ": DELETE in flight (5s)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
	var tb bytes.Buffer
	plain := cooling()
	if err := Table(&tb, []api.MaintenancePlan{*p, *plain}, func(*api.MaintenancePlan) string { return "" }, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(tb.String(), "\n")
	if !strings.Contains(lines[1], "  1/4 +2 forced  ") || strings.Contains(lines[2], "forced") {
		t.Errorf("table:\n%s", tb.String())
	}
}
