package verify

import (
	"os"
	"strings"
	"testing"
)

// TestParsePlans: a List (kubectl get -o yaml), a MaintenancePlanList in
// JSON and one plan are read; anything else is refused, saying why.
func TestParsePlans(t *testing.T) {
	list, err := os.ReadFile("testdata/plans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		data  string
		names string
		err   string
	}{
		{string(list), "node-2-x7k2p", ""},
		{`{"apiVersion":"maintenance.sentinel.dev/v1alpha1","kind":"MaintenancePlanList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`, "a b", ""},
		{"apiVersion: maintenance.sentinel.dev/v1alpha1\nkind: MaintenancePlan\nmetadata: {name: one}\n", "one", ""},
		{"kind: List\nitems: []\n", "", ""},
		{"", "", "plans: empty"},
		{"kind: Pod\n", "", "plans: kind Pod: want"},
		{"items: []\n", "", "plans: no kind"},
		{"kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n", "", "plans: List item 0: kind Node, want MaintenancePlan"},
		{"kind: List\nitems:\n- kind: MaintenancePlan\n", "", "plans: List item 0: no metadata.name"},
		{"kind: MaintenancePlan\napiVersion: v2\nmetadata: {name: x}\n", "", "plans: MaintenancePlan: apiVersion v2"},
		{"kind: [", "", "plans: error converting YAML to JSON"},
		{"kind: List\nitems: 5\n", "", "plans: List:"},
	} {
		plans, err := ParsePlans([]byte(tc.data))
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParsePlans(%q): error %v, want %q...", tc.data, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePlans(%q): %v", tc.data, err)
			continue
		}
		var names []string
		for _, p := range plans {
			names = append(names, p.Name)
		}
		if got := strings.Join(names, " "); got != tc.names {
			t.Errorf("ParsePlans(%q): plans %q, want %q", tc.data, got, tc.names)
		}
	}
}

// FuzzParsePlans: any input is read or refused with an error, never a
// panic; every plan read has a name, and Replay takes them.
func FuzzParsePlans(f *testing.F) {
	if list, err := os.ReadFile("testdata/plans.yaml"); err == nil {
		f.Add(list)
	}
	f.Add([]byte(`{"kind":"MaintenancePlanList","items":[{"metadata":{"name":"a"},"status":{"forced":[{"namespace":"n","pod":"p","outcome":"deleted"}]}}]}`))
	f.Add([]byte("kind: MaintenancePlan\nmetadata: {name: one}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		plans, err := ParsePlans(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "plans: ") {
				t.Fatalf("error %q does not say plans", err)
			}
			return
		}
		for _, p := range plans {
			if p.Name == "" {
				t.Fatalf("a plan without a name: %+v", p)
			}
		}
		Replay(nil, plans, DefaultMaintdUser)
	})
}
