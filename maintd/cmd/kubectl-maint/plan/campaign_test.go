package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func TestParseDryRun(t *testing.T) {
	for in, want := range map[string]string{"true": "server", "false": "none", "none": "none", "Client": "client", "server": "server"} {
		if got, err := ParseDryRun(in); err != nil || got != want {
			t.Errorf("ParseDryRun(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "all", "unchanged", "yes"} {
		if _, err := ParseDryRun(in); err == nil || !strings.Contains(err.Error(), "none, client or server") {
			t.Errorf("ParseDryRun(%q): %v, want an error naming the modes", in, err)
		}
	}
}

func TestParseNodeSelector(t *testing.T) {
	sel, err := ParseNodeSelector("pool=blue,zone in (a,b)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := metav1.FormatLabelSelector(sel), "pool=blue,zone in (a,b)"; got != want {
		t.Errorf("selector %q, want %q", got, want)
	}
	for in, want := range map[string]string{"": "selects every node", "pool=(x": "invalid --selector", "a b": "invalid --selector"} {
		if _, err := ParseNodeSelector(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseNodeSelector(%q): %v, want %q", in, err, want)
		}
	}
}

func TestNewCampaign(t *testing.T) {
	r := Request{Reason: "kernel", AllWorkloads: true, Accept: []string{"rwo-reattach"}, Deadline: 2 * time.Hour, Surge: true}
	m := NewCampaign(r, []string{"n2", "n1", "n2"}, nil, "alice@example.com")
	want := api.MaintenanceCampaignSpec{Nodes: []string{"n1", "n2"}, Reason: "kernel", AllowAllWorkloads: true, AcceptedRisks: []string{"rwo-reattach"},
		Deadline: &metav1.Duration{Duration: 2 * time.Hour}, Surge: api.SurgeIfNeeded}
	if d := cmp.Diff(want, m.Spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	if m.GenerateName != "drain-" || m.Labels[CreatedByLabel] != "alice_example.com" || m.Annotations[CreatedByAnnotation] != "alice@example.com" {
		t.Errorf("meta %+v", m.ObjectMeta)
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "blue"}}
	m = NewCampaign(Request{Name: "c1"}, []string{"ignored"}, sel, "bob")
	if m.Spec.Nodes != nil || m.Spec.NodeSelector != sel || m.Name != "c1" || m.GenerateName != "" {
		t.Errorf("by selector: %+v", m)
	}
}

// FuzzParseDryRun: a value is refused or is one of the three modes.
func FuzzParseDryRun(f *testing.F) {
	for _, s := range []string{"none", "client", "server", "true", "false", "", "SERVER", "all"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseDryRun(s)
		if err == nil && m != DryRunNone && m != DryRunClient && m != DryRunServer {
			t.Fatalf("ParseDryRun(%q) = %q", s, m)
		}
	})
}

// FuzzParseNodeSelector: a selector accepted is not empty and reads back
// to an equal selector.
func FuzzParseNodeSelector(f *testing.F) {
	for _, s := range []string{"pool=blue", "pool in (a,b),!gpu", "zone!=a", "", "=", "a,,b", "x notin ()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseNodeSelector(s)
		if err != nil {
			return
		}
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			t.Fatalf("%q: an empty selector accepted", s)
		}
		again, err := ParseNodeSelector(metav1.FormatLabelSelector(sel))
		if err != nil {
			t.Fatalf("%q: %q read back: %v", s, metav1.FormatLabelSelector(sel), err)
		}
		if metav1.FormatLabelSelector(again) != metav1.FormatLabelSelector(sel) {
			t.Fatalf("%q: %q read back as %q", s, metav1.FormatLabelSelector(sel), metav1.FormatLabelSelector(again))
		}
	})
}
