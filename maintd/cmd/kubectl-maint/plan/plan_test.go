package plan

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func TestParseWorkloads(t *testing.T) {
	got, err := ParseWorkloads([]string{"deployment/shop/web,sts/shop/db", "Deploy/shop/web", " job.batch/ops/backup "})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.WorkloadRef{{Kind: "Deployment", Namespace: "shop", Name: "web"}, {Kind: "StatefulSet", Namespace: "shop", Name: "db"}, {Kind: "Job", Namespace: "ops", Name: "backup"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for in, wantErr := range map[string]string{
		"web":                    `invalid --workloads "web": want KIND/NAMESPACE/NAME, e.g. deployment/shop/web`,
		"daemonset/kube/proxy":   `unknown kind "daemonset"`,
		"deployment/Shop/web":    `namespace "Shop"`,
		"deployment/shop/Web_1":  `name "Web_1"`,
		"deployment/shop/web/x":  "want KIND/NAMESPACE/NAME",
		"deployment/shop/web,,":  `invalid --workloads ""`,
		"deployment//web":        `namespace ""`,
		"pod/shop/web-7d9-abcde": `unknown kind "pod"`,
	} {
		if _, err := ParseWorkloads([]string{in}); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one containing %q", in, err, wantErr)
		}
	}
}

func TestParseAccept(t *testing.T) {
	got, err := ParseAccept([]string{"rwo-reattach,pdb-overlap", "rwo-reattach"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"rwo-reattach", "pdb-overlap"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The causes of a drain forecast of never: a plan accepts them too
	// (maintd/drain.neverCompletes), and its Blocked message invites it.
	never := []string{"replacement-unschedulable", "insufficient-capacity", "pdb-never-allows", "pdb-never-refills"}
	got, err = ParseAccept([]string{strings.Join(never, ","), "insufficient-capacity"})
	if err != nil {
		t.Fatalf("the causes of a never forecast: %v", err)
	}
	if diff := cmp.Diff(never, got); diff != "" {
		t.Errorf("never causes (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"RWO-reattach", "pdb-exhausted", "", "no-such-check", "first-fit"} {
		_, err := ParseAccept([]string{bad})
		if err == nil {
			t.Errorf("%q: accepted", bad)
			continue
		}
		for _, want := range []string{fmt.Sprintf("invalid --accept %q: ", bad), "high-risk findings: pdb-overlap, ", "never causes: pdb-overlap, pdb-never-allows, "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %q lacks %q", bad, err, want)
			}
		}
	}
}

func TestParseDeadline(t *testing.T) {
	if d, err := ParseDeadline("1h30m"); err != nil || d != 90*time.Minute {
		t.Errorf("1h30m: %v %v", d, err)
	}
	for in, want := range map[string]string{"0s": "must be positive", "-5m": "must be positive", "1 hour": "a duration such as", "": "a duration such as"} {
		if _, err := ParseDeadline(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"admin":                           "admin",
		"system:serviceaccount:ops:drain": "system_serviceaccount_ops_drain",
		"alice@example.com":               "alice_example.com",
		"":                                "unknown",
		"::":                              "unknown",
		"-x-":                             "x",
		strings.Repeat("a", 70):           strings.Repeat("a", 63),
	} {
		if got := LabelValue(in); got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"admin", "system:serviceaccount:a:b", "ü@x", "-_.", strings.Repeat("é", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, user string) {
		if v := LabelValue(user); len(validation.IsValidLabelValue(v)) > 0 || v == "" {
			t.Fatalf("LabelValue(%q) = %q: not a label value: %v", user, v, validation.IsValidLabelValue(v))
		}
	})
}

// FuzzParseWorkloads: whatever is accepted passes the CRD's validation.
func FuzzParseWorkloads(f *testing.F) {
	for _, s := range []string{"deployment/shop/web", "sts/a/b,rs/c/d", "job.batch/x/y", "//", "deploy/a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := ParseWorkloads([]string{s})
		if err != nil {
			return
		}
		for _, r := range refs {
			if kinds[strings.ToLower(r.Kind)] != r.Kind || len(validation.IsDNS1123Label(r.Namespace)) > 0 || len(validation.IsDNS1123Subdomain(r.Name)) > 0 {
				t.Fatalf("%q: accepted %+v", s, r)
			}
		}
	})
}

// FuzzParseDeadline: an accepted deadline is positive and its text matches
// the CRD's pattern once stored.
func FuzzParseDeadline(f *testing.F) {
	for _, s := range []string{"1h", "90m", "1.5h", "-1h", "0", "1h-1m"} {
		f.Add(s)
	}
	pattern := `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDeadline(s)
		if err != nil {
			return
		}
		stored := metav1.Duration{Duration: d}.Duration.String()
		if d <= 0 || !regexp.MustCompile(pattern).MatchString(stored) {
			t.Fatalf("%q: accepted as %v, stored as %q", s, d, stored)
		}
	})
}

func TestNew(t *testing.T) {
	p := New(Request{Node: "node-1", Reason: "kernel", AllWorkloads: true, Accept: []string{"rwo-reattach"}, Deadline: 30 * time.Minute}, "system:serviceaccount:ops:drain")
	if p.Name != "" || p.GenerateName != "node-1-" {
		t.Errorf("name %q generateName %q, want a name the API server derives from node-1-", p.Name, p.GenerateName)
	}
	if diff := cmp.Diff(map[string]string{CreatedByLabel: "system_serviceaccount_ops_drain", ManagedByLabel: "kubectl-maint"}, p.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if p.Annotations[CreatedByAnnotation] != "system:serviceaccount:ops:drain" || p.Spec.Deadline.Duration != 30*time.Minute || !p.Spec.AllowAllWorkloads || p.Spec.Reason != "kernel" {
		t.Errorf("plan %+v", p)
	}
	if p := New(Request{Node: "n", Name: "chg-1"}, ""); p.Name != "chg-1" || p.GenerateName != "" || p.Spec.Deadline != nil || p.Labels[CreatedByLabel] != "unknown" {
		t.Errorf("named plan %+v", p.ObjectMeta)
	}
	if p := New(Request{Node: "n", Surge: true}, ""); p.Spec.Surge != api.SurgeIfNeeded {
		t.Errorf("--surge: spec.surge %q, want IfNeeded", p.Spec.Surge)
	}
	if p := New(Request{Node: "n"}, ""); p.Spec.Surge != "" {
		t.Errorf("without --surge: spec.surge %q, want the default (unset)", p.Spec.Surge)
	}
}

func TestOfNode(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC)) }
	plans := []api.MaintenancePlan{
		{ObjectMeta: metav1.ObjectMeta{Name: "old-done", CreationTimestamp: at(1)}, Spec: api.MaintenancePlanSpec{NodeName: "n1"}, Status: api.MaintenancePlanStatus{Phase: api.Completed}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", CreationTimestamp: at(2)}, Spec: api.MaintenancePlanSpec{NodeName: "n2"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "live", CreationTimestamp: at(3)}, Spec: api.MaintenancePlanSpec{NodeName: "n1"}, Status: api.MaintenancePlanStatus{Phase: api.Failed}},
		{ObjectMeta: metav1.ObjectMeta{Name: "new-done", CreationTimestamp: at(4)}, Spec: api.MaintenancePlanSpec{NodeName: "n1"}, Status: api.MaintenancePlanStatus{Phase: api.Completed}},
	}
	var got []string
	for _, p := range OfNode(plans, "n1") {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"live", "new-done", "old-done"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReleasable(t *testing.T) {
	for name, tc := range map[string]struct {
		phase  api.Phase
		reason api.Reason
		want   bool
	}{
		"pending":                         {api.Pending, "", true},
		"draining":                        {api.Draining, api.EvictionAccepted, true},
		"drained":                         {api.Drained, api.ReasonDrained, true},
		"blocked before its start":        {api.Blocked, api.NodeOccupied, true},
		"blocked, unknown pods":           {api.Blocked, api.UnknownPodsOnNode, true},
		"failed: the deadline":            {api.Failed, api.DeadlineExceeded, false},
		"blocked for good: spec changed":  {api.Blocked, api.PlanSpecChanged, false},
		"blocked for good: node replaced": {api.Blocked, api.TargetReplaced, false},
	} {
		p := &api.MaintenancePlan{Status: api.MaintenancePlanStatus{Phase: tc.phase, Reason: tc.reason}}
		if got := Releasable(p); got != tc.want {
			t.Errorf("%s: Releasable %v, want %v", name, got, tc.want)
		}
	}
}

// FuzzParseAccept: only high-risk finding codes and never causes are
// accepted, each once.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"rwo-reattach", "pdb-overlap,rwo-reattach", ",", "pdb-exhausted", "insufficient-capacity,replacement-unschedulable"} {
		f.Add(s)
	}
	acceptable := map[string]bool{}
	for _, c := range analyze.Checks() {
		acceptable[string(c.Code)] = c.Severity == analyze.High
	}
	for _, r := range analyze.NeverReasons() {
		acceptable[r] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		codes, err := ParseAccept([]string{s})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range codes {
			if !acceptable[c] || seen[c] {
				t.Fatalf("%q: accepted %q", s, codes)
			}
			seen[c] = true
		}
	})
}
