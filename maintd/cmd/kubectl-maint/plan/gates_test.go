package plan

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones do not depend on the machine's zoneinfo

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// TestParseWindows: the flags become spec.windows as the API holds it; a
// schedule with commas stays one window.
func TestParseWindows(t *testing.T) {
	got, err := ParseWindows(WindowFlags{
		Allow: []string{"0 2 * * 1,3,5=3h", "@weekly = 90m"}, Deny: []string{"0 12 24 12 *=12h"},
		TimeZone: "Europe/Berlin", Exclude: []string{"2026-12-31", "2026-12-24", "2026-12-31"}, MaxOverrun: "5m", Margin: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.MaintenanceWindows{
		TimeZone: "Europe/Berlin",
		Allow:    []api.MaintenanceWindow{{Schedule: "0 2 * * 1,3,5", Duration: metav1.Duration{Duration: 3 * time.Hour}}, {Schedule: "@weekly", Duration: metav1.Duration{Duration: 90 * time.Minute}}},
		Deny:     []api.MaintenanceWindow{{Schedule: "0 12 24 12 *", Duration: metav1.Duration{Duration: 12 * time.Hour}}},
		Exclude:  []string{"2026-12-24", "2026-12-31"}, MaxOverrun: dur(5 * time.Minute), Margin: dur(0),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("spec.windows (-want +got):\n%s", d)
	}
	if got, err := ParseWindows(WindowFlags{}); got != nil || err != nil {
		t.Errorf("no window flags: %v, %v; want nil, nil", got, err)
	}
}

// TestParseWindowsErrors: each error names the flag and what is wrong.
func TestParseWindowsErrors(t *testing.T) {
	for _, tc := range []struct {
		f    WindowFlags
		want string
	}{
		{WindowFlags{Allow: []string{"61 2 * * *=3h"}}, `invalid --window "61 2 * * *=3h": schedule "61 2 * * *": end of range (61) above maximum (59)`},
		{WindowFlags{Allow: []string{"0 2 * * *"}}, `invalid --window "0 2 * * *": want SCHEDULE=DURATION`},
		{WindowFlags{Allow: []string{"0 2 * * *=3 hours"}}, `invalid --window "0 2 * * *=3 hours": duration "3 hours"`},
		{WindowFlags{Allow: []string{"@daily=200h"}}, `invalid --window "@daily=200h": duration 200h0m0s: must be more than 0 and at most 168h`},
		{WindowFlags{Allow: []string{"@every 1h=1h"}}, `@every is a delay`},
		{WindowFlags{Deny: []string{"0 0 31 4 *=1h"}}, `invalid --deny-window "0 0 31 4 *=1h": schedule "0 0 31 4 *": never fires`},
		{WindowFlags{Allow: []string{"@daily=1h"}, TimeZone: "Mars/Olympus"}, `invalid --time-zone: "Mars/Olympus": not an IANA time zone`},
		{WindowFlags{Allow: []string{"@daily=1h"}, TimeZone: "Local"}, `invalid --time-zone: "Local": name an IANA zone`},
		{WindowFlags{TimeZone: "UTC"}, `--time-zone needs a window`},
		{WindowFlags{Margin: "1m"}, `--window-margin needs a window`},
		{WindowFlags{Exclude: []string{"2026-02-30"}}, `invalid windows: --exclude-date: "2026-02-30": want a date YYYY-MM-DD`},
		{WindowFlags{Allow: []string{"@daily=1h"}, MaxOverrun: "-1m"}, `invalid --max-overrun "-1m": must not be negative`},
		{WindowFlags{Allow: []string{"@daily=1h"}, Margin: "soon"}, `invalid --window-margin "soon": a duration`},
	} {
		_, err := ParseWindows(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
}

// TestParseHealthGate: TYPE alone is True; statuses in any case; labels
// checked as the API server would.
func TestParseHealthGate(t *testing.T) {
	got, err := ParseHealthGate(HealthFlags{Conditions: []string{"KernelUpgraded", "example.com/Rebooted=true", "DiskPressure=False", "KernelUpgraded=True"}, Labels: []string{"example.com/kernel=6.12"}, Timeout: "15m"})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.HealthGate{
		Conditions: []api.NodeConditionGate{{Type: "KernelUpgraded", Status: corev1.ConditionTrue}, {Type: "example.com/Rebooted", Status: corev1.ConditionTrue}, {Type: "DiskPressure", Status: corev1.ConditionFalse}},
		Labels:     map[string]string{"example.com/kernel": "6.12"}, Timeout: dur(15 * time.Minute),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("spec.healthGate (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		f    HealthFlags
		want string
	}{
		{HealthFlags{Conditions: []string{"KernelUpgraded=yes"}}, `invalid --health-condition "KernelUpgraded=yes": status "yes": want True, False or Unknown`},
		{HealthFlags{Conditions: []string{"=True"}}, `invalid --health-condition "=True": want TYPE=STATUS`},
		{HealthFlags{Conditions: []string{"Kernel Upgraded=True"}}, `type "Kernel Upgraded": a condition type has no spaces`},
		{HealthFlags{Conditions: []string{"A=True", "A=False"}}, `--health-condition A given as True and as False: choose one`},
		{HealthFlags{Labels: []string{"kernel"}}, `invalid --health-label "kernel": want KEY=VALUE`},
		{HealthFlags{Labels: []string{"bad key=1"}}, `invalid --health-label "bad key=1": key "bad key"`},
		{HealthFlags{Labels: []string{"k=a b"}}, `invalid --health-label "k=a b": value "a b"`},
		{HealthFlags{Timeout: "0s"}, `invalid --health-timeout "0s": must be positive`},
	} {
		_, err := ParseHealthGate(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
}
