package plan

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/windows"
)

// WindowFlags are the window flags of drain as typed: --window and
// --deny-window (SCHEDULE=DURATION each), --time-zone, --exclude-date,
// --max-overrun and --window-margin ("" when not given).
type WindowFlags struct {
	Allow, Deny []string
	TimeZone    string
	Exclude     []string
	MaxOverrun  string
	Margin      string
}

// ParseWindows reads the window flags into spec.windows (nil when none is
// given), checked by maintd's own parser (maintd/windows) so that a
// schedule, zone or date maintd would refuse is refused here, naming the
// flag.
func ParseWindows(f WindowFlags) (*api.MaintenanceWindows, error) {
	if len(f.Allow) == 0 && len(f.Deny) == 0 && len(f.Exclude) == 0 {
		for _, s := range []struct{ flag, v string }{{"time-zone", f.TimeZone}, {"max-overrun", f.MaxOverrun}, {"window-margin", f.Margin}} {
			if s.v != "" {
				return nil, fmt.Errorf("--%s needs a window: give --window SCHEDULE=DURATION, --deny-window or --exclude-date", s.flag)
			}
		}
		return nil, nil
	}
	if _, err := windows.LoadZone(f.TimeZone); err != nil {
		return nil, fmt.Errorf("invalid --time-zone: %v", err)
	}
	out := &api.MaintenanceWindows{TimeZone: f.TimeZone, Exclude: slices.Compact(slices.Sorted(slices.Values(f.Exclude)))}
	for _, l := range []struct {
		flag   string
		values []string
		into   *[]api.MaintenanceWindow
	}{{"window", f.Allow, &out.Allow}, {"deny-window", f.Deny, &out.Deny}} {
		if len(l.values) > windows.MaxEntries {
			return nil, fmt.Errorf("--%s given %d times, at most %d", l.flag, len(l.values), windows.MaxEntries)
		}
		for _, v := range l.values {
			e, err := parseEntry(v)
			if err != nil {
				return nil, fmt.Errorf("invalid --%s %q: %v", l.flag, v, err)
			}
			*l.into = append(*l.into, api.MaintenanceWindow{Schedule: e.Schedule, Duration: metav1.Duration{Duration: e.Duration}})
		}
	}
	for _, d := range []struct {
		flag, v string
		into    **metav1.Duration
	}{{"max-overrun", f.MaxOverrun, &out.MaxOverrun}, {"window-margin", f.Margin, &out.Margin}} {
		if d.v == "" {
			continue
		}
		v, err := nonNegative(d.flag, d.v)
		if err != nil {
			return nil, err
		}
		*d.into = &metav1.Duration{Duration: v}
	}
	// What maintd compiles, as maintd compiles it.
	if _, err := drain.WindowsOf(out); err != nil {
		return nil, flagNames(err)
	}
	return out, nil
}

// parseEntry reads SCHEDULE=DURATION: a cron schedule of 5 fields or a
// descriptor, then how long each window lasts. The last "=" splits them.
func parseEntry(v string) (windows.Entry, error) {
	i := strings.LastIndex(v, "=")
	if i < 0 {
		return windows.Entry{}, errors.New(`want SCHEDULE=DURATION, e.g. "0 2 * * 1-5=3h" (02:00 on weekdays, for 3 hours)`)
	}
	sched, dur := strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
	if _, err := windows.ParseSchedule(sched); err != nil {
		return windows.Entry{}, fmt.Errorf("schedule %v", err)
	}
	d, err := time.ParseDuration(dur)
	if err != nil {
		return windows.Entry{}, fmt.Errorf("duration %q: a duration such as 90m or 3h", dur)
	}
	if d <= 0 || d > windows.MaxDuration {
		return windows.Entry{}, fmt.Errorf("duration %s: must be more than 0 and at most %s", d, strings.TrimSuffix(windows.MaxDuration.String(), "0m0s"))
	}
	return windows.Entry{Schedule: sched, Duration: d}, nil
}

// nonNegative reads an optional duration flag that may be 0.
func nonNegative(flag, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid --%s %q: a duration such as 0, 30s or 5m", flag, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid --%s %q: must not be negative", flag, s)
	}
	return d, nil
}

var index = regexp.MustCompile(`(--[a-z-]+)\[\d+\]`)

// flagNames says windows.Parse's errors (windows.exclude[0]: ...) in the
// flags' names.
func flagNames(err error) error {
	s := err.Error()
	for _, r := range []struct{ field, flag string }{
		{"windows.exclude", "--exclude-date"}, {"windows.timeZone", "--time-zone"}, {"windows.allow", "--window"}, {"windows.deny", "--deny-window"},
		{"windows.maxOverrun", "--max-overrun"}, {"windows.margin", "--window-margin"},
	} {
		s = strings.ReplaceAll(s, r.field, r.flag)
	}
	s = index.ReplaceAllString(s, "$1")
	return fmt.Errorf("invalid windows: %s", strings.ReplaceAll(s, "\n", "; "))
}

// HealthFlags are the health gate's flags as typed: --health-condition
// TYPE[=STATUS], --health-label KEY=VALUE, --health-timeout.
type HealthFlags struct {
	Conditions []string
	Labels     []string
	Timeout    string
}

// maxHealthItems bounds conditions and labels, as the CRD does.
const maxHealthItems = 16

// ParseHealthGate reads the health gate's flags into spec.healthGate (nil
// when none is given). A condition without =STATUS is True, as kubectl
// wait --for=condition=TYPE reads it.
func ParseHealthGate(f HealthFlags) (*api.HealthGate, error) {
	if len(f.Conditions) == 0 && len(f.Labels) == 0 && f.Timeout == "" {
		return nil, nil
	}
	g := &api.HealthGate{}
	if len(f.Conditions) > maxHealthItems {
		return nil, fmt.Errorf("--health-condition given %d times, at most %d", len(f.Conditions), maxHealthItems)
	}
	for _, v := range f.Conditions {
		typ, status, found := strings.Cut(v, "=")
		if !found {
			status = string(corev1.ConditionTrue)
		}
		cond, err := conditionGate(typ, status)
		if err != nil {
			return nil, fmt.Errorf("invalid --health-condition %q: %v", v, err)
		}
		if i := slices.IndexFunc(g.Conditions, func(c api.NodeConditionGate) bool { return c.Type == cond.Type }); i >= 0 {
			if g.Conditions[i].Status != cond.Status {
				return nil, fmt.Errorf("--health-condition %s given as %s and as %s: choose one", cond.Type, g.Conditions[i].Status, cond.Status)
			}
			continue
		}
		g.Conditions = append(g.Conditions, cond)
	}
	if len(f.Labels) > maxHealthItems {
		return nil, fmt.Errorf("--health-label given %d times, at most %d", len(f.Labels), maxHealthItems)
	}
	for _, v := range f.Labels {
		key, value, found := strings.Cut(v, "=")
		if !found {
			return nil, fmt.Errorf("invalid --health-label %q: want KEY=VALUE, e.g. example.com/kernel=6.12", v)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, fmt.Errorf("invalid --health-label %q: key %q: %s", v, key, errs[0])
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, fmt.Errorf("invalid --health-label %q: value %q: %s", v, value, errs[0])
		}
		if old, ok := g.Labels[key]; ok && old != value {
			return nil, fmt.Errorf("--health-label %s given as %q and as %q: choose one", key, old, value)
		}
		if g.Labels == nil {
			g.Labels = map[string]string{}
		}
		g.Labels[key] = value
	}
	if f.Timeout != "" {
		d, err := ParseDuration("health-timeout", f.Timeout)
		if err != nil {
			return nil, err
		}
		g.Timeout = &metav1.Duration{Duration: d}
	}
	return g, nil
}

// conditionGate checks a node condition's type (a name, at most 316
// characters as the CRD allows) and status (True, False or Unknown, any
// case).
func conditionGate(typ, status string) (api.NodeConditionGate, error) {
	switch {
	case typ == "":
		return api.NodeConditionGate{}, errors.New("want TYPE=STATUS, e.g. KernelUpgraded=True")
	case len(typ) > 316:
		return api.NodeConditionGate{}, fmt.Errorf("type of %d characters, at most 316", len(typ))
	case strings.ContainsFunc(typ, func(r rune) bool { return r <= ' ' || r == '=' || r == ',' }):
		return api.NodeConditionGate{}, fmt.Errorf("type %q: a condition type has no spaces, '=' or ','", typ)
	}
	for _, s := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown} {
		if strings.EqualFold(status, string(s)) {
			return api.NodeConditionGate{Type: corev1.NodeConditionType(typ), Status: s}, nil
		}
	}
	return api.NodeConditionGate{}, fmt.Errorf("status %q: want True, False or Unknown", status)
}
