package view

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// CreatedBy is the label value kubectl-maint's plans carry; Table and
// Detail show it.
type CreatedBy func(*api.MaintenancePlan) string

// Table writes one line per plan: name, node, phase and reason,
// evicted/total (and "+N forced": pods deleted under an override), for how long the phase has lasted, the ETA, age and who
// created it.
func Table(w io.Writer, plans []api.MaintenancePlan, by CreatedBy, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNODE\tPHASE\tREASON\tEVICTED\tFOR\tETA\tAGE\tCREATED-BY")
	for i := range plans {
		p := &plans[i]
		st := &p.Status
		since := "-"
		if st.Since != nil {
			since = Duration(now.Sub(st.Since.Time))
		}
		eta := "-"
		switch f := ForecastOf(p); {
		case f == nil, done(st):
		case f.Verdict == "never":
			eta = "never"
		case !f.ETA.IsZero():
			eta = f.ETA.Local().Format(time.TimeOnly)
		}
		evicted := fmt.Sprintf("%d/%d", st.Pods.Evicted, st.Pods.Total)
		if n := len(st.Forced); n > 0 {
			evicted += fmt.Sprintf(" +%d forced", n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Spec.NodeName, cmp.Or(string(st.Phase), "-"), cmp.Or(string(st.Reason), "-"),
			evicted, since, eta, Duration(now.Sub(p.CreationTimestamp.Time)), cmp.Or(by(p), "-"))
	}
	return tw.Flush()
}

// Detail writes one plan on one screen: phase and reason with its message,
// pods, the deadline and ETA, what it waits for (cooldowns and evictions
// in flight, with their PodDisruptionBudgets' numbers from pdbs, by
// namespace/name), the preflight's findings, the last history entries and
// the plan's Events.
func Detail(w io.Writer, p *api.MaintenancePlan, by CreatedBy, pdbs map[string]*policyv1.PodDisruptionBudget, events []eventsv1.Event, now time.Time) error {
	st := &p.Status
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(k, format string, args ...any) {
		if k != "" {
			k += ":"
		}
		fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...))
	}
	row("Plan", "%s (created %s by %s)", p.Name, Age(p.CreationTimestamp.Time, now), cmp.Or(by(p), "-"))
	row("Node", "%s", p.Spec.NodeName)
	row("Scope", "%s", scope(p.Spec.Workloads, p.Spec.AllowAllWorkloads, p.Spec.AcceptedRisks, p.Spec.Surge, p.Spec.DryRun, p.Spec.Release))
	row("Phase", "%s", phaseSince(st.Phase, st.Reason, st.Since, now))
	if st.Message != "" {
		row("Message", "%s", oneLine(st.Message))
	}
	row("Pods", "%s", podText(st))
	if ep := st.EvictionProgress; ep != nil && ep.Deadline != nil && st.Phase != api.Completed && st.Phase != api.Drained {
		row("Deadline", "%s (%s left)", ep.Deadline.Local().Format(time.DateTime), Duration(ep.Deadline.Sub(now)))
	}
	if ws := WindowsSpec(p.Spec.Windows); ws != "" {
		row("Windows", "%s", ws)
		if w := PlanWindowLine(p, now); w != "" {
			row("Window", "%s", strings.TrimPrefix(w, "window: "))
		}
	}
	if hs := HealthSpec(p.Spec.HealthGate); hs != "" {
		row("Health gate", "%s", hs)
	}
	if !done(st) {
		row("ETA", "%s", strings.TrimPrefix(ETA(ForecastOf(p), now), "ETA: "))
	}
	if ep := st.EvictionProgress; ep != nil {
		for _, c := range ep.Cooldowns {
			what := "PDB " + c.PDB + budget(pdbs[c.PDB])
			if c.PDB == "*" {
				what = "the API server"
			}
			msg := ""
			if c.Message != "" {
				msg = ": " + oneLine(c.Message)
			}
			row("Waiting for", "%s: %s until %s (refusal %d)%s", what, c.Reason, c.NextActionAt.Local().Format(time.TimeOnly), max(c.Attempts, 1), msg)
		}
		for _, a := range ep.ActivePods {
			pdb := ""
			if a.PDB != "" {
				key := a.Namespace + "/" + a.PDB
				pdb = ", PDB " + key + budget(pdbs[key])
			}
			row("Evicting", "pod %s/%s: %s %s ago%s", a.Namespace, a.Name, a.Outcome, Duration(now.Sub(a.RequestedAt.Time)), pdb)
		}
		for _, s := range ep.Surges {
			msg := ""
			if s.Message != "" {
				msg = ": " + oneLine(s.Message)
			}
			row("Surge", "%s %s/%s %d to %d replicas, %s%s", s.Kind, s.Namespace, s.Name, s.From, s.From+1, s.State, msg)
		}
		// The drain groups in their order, when there is more than the
		// default one, and the volumes the plan waits to see detached.
		if len(ep.Groups) > 1 || len(ep.Groups) == 1 && ep.Groups[0].Why != "default" {
			for _, g := range ep.Groups {
				row("Drain group", "order %d, %s: %s, %d of %d pods left", g.Order, g.Behavior, g.Why, g.Remaining, g.Pods)
			}
		}
		for _, d := range ep.Detaches {
			what := "VolumeAttachment " + cmp.Or(d.VolumeAttachment, "-") + ", PV " + cmp.Or(d.PersistentVolume, "unknown") + ", driver " + d.Driver
			why := "detaching"
			switch {
			case d.Leaked != "":
				why = "leaked (" + d.Leaked + ")"
			case d.DetachError != "":
				why = "detach error: " + oneLine(d.DetachError)
			}
			row("Detaching", "%s: %s, waiting %s", what, why, Duration(now.Sub(d.Since.Time)))
		}
	}
	for _, f := range st.Forced {
		row("Forced", "%s", forced(f, now))
	}
	for _, v := range st.DryRun {
		row("Dry run", "pod %s/%s: %s %s", v.Namespace, v.Name, v.Outcome, oneLine(v.Message))
	}
	if pf := st.Preflight; pf != nil {
		row("Preflight", "risk %s", pf.Risk)
		for _, f := range pf.Findings {
			row("", "%s %s %s: %s", f.Severity, f.Code, f.Object, oneLine(f.Message))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	const lastSteps = 8
	if h := st.History; len(h) > 0 {
		fmt.Fprintf(w, "\nHistory (last %d of %d):\n", min(lastSteps, len(h)), len(h))
		for _, t := range h[max(0, len(h)-lastSteps):] {
			fmt.Fprintf(w, "  %s\n", Step(t, ""))
		}
	}
	fmt.Fprintln(w, "\nEvents:")
	if len(events) == 0 {
		fmt.Fprintln(w, "  none")
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, e := range events {
		at := e.EventTime.Time
		if e.Series != nil {
			at = e.Series.LastObservedTime.Time
		}
		count := ""
		if e.Series != nil && e.Series.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Series.Count)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", at.Local().Format(time.TimeOnly), e.Type, e.Reason, oneLine(e.Note), count)
	}
	return tw.Flush()
}

// forced is a ledger entry: the pod, its budget as it was, the override
// and approver, when it was recorded and deleted, and the outcome.
func forced(f api.ForcedDelete, now time.Time) string {
	b := f.PDBBefore
	s := fmt.Sprintf("pod %s/%s (uid %s), PDB %s (before: %d healthy of %d needed, %d expected, %d disruptions allowed); override %s approved by %s (in force %s to %s); recorded %s",
		f.Namespace, f.Pod, f.UID, cmp.Or(f.PDB, "-"), b.CurrentHealthy, b.DesiredHealthy, b.ExpectedPods, b.DisruptionsAllowed,
		f.Override, f.ApprovedBy, f.ApprovedAt.Local().Format(time.TimeOnly), f.ExpiresAt.Local().Format(time.TimeOnly), f.RecordedAt.Local().Format(time.TimeOnly))
	if f.Deleted != nil {
		s += ", deleted " + f.Deleted.Local().Format(time.TimeOnly)
	}
	if f.Outcome == "" {
		return s + ": DELETE in flight (" + Duration(now.Sub(f.RecordedAt.Time)) + ")"
	}
	return s + ": " + f.Outcome
}

// budget is a PDB's numbers: " (2 of 3 healthy needed, 0 disruptions allowed)".
func budget(b *policyv1.PodDisruptionBudget) string {
	if b == nil {
		return ""
	}
	s := b.Status
	return fmt.Sprintf(" (%d healthy of %d needed, %d expected, %d disruptions allowed)", s.CurrentHealthy, s.DesiredHealthy, s.ExpectedPods, s.DisruptionsAllowed)
}

// scope is what a plan or campaign may evict, what it accepts, and its
// surge, dry run and release, in short.
func scope(ws []api.WorkloadRef, all bool, risks []string, surge api.SurgePolicy, dryRun, release bool) string {
	scope := "workloads " + workloads(ws)
	if all {
		scope = "all workloads"
	}
	if len(risks) > 0 {
		scope += "; accepted risks " + strings.Join(risks, ", ")
	}
	if surge == api.SurgeIfNeeded {
		scope += "; surge IfNeeded"
	}
	if dryRun {
		scope += "; dry run"
	}
	if release {
		scope += "; released"
	}
	return scope
}

// phaseSince is a plan's or campaign's phase/reason since when, for how
// long.
func phaseSince(phase api.Phase, reason api.Reason, since *metav1.Time, now time.Time) string {
	s := cmp.Or(string(phase), "(not reconciled yet)")
	if reason != "" {
		s += "/" + string(reason)
	}
	if since != nil {
		s += fmt.Sprintf(" since %s (%s)", since.Local().Format(time.TimeOnly), Duration(now.Sub(since.Time)))
	}
	return s
}

func workloads(ws []api.WorkloadRef) string {
	if len(ws) == 0 {
		return "none"
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = strings.ToLower(w.Kind) + "/" + w.Namespace + "/" + w.Name
	}
	return strings.Join(parts, ", ")
}
