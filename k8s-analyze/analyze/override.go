package analyze

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Break-glass (CHECKS.md, "Checks", needs-override): a pod whose governing
// budget never allows its eviction (pdb-zero-spec) and for which no surge
// makes room (its verdict's noSurge) leaves the node only when someone
// deletes it, under a MaintenanceOverride another person approves. The
// finding says what that costs: the pod is down from the delete until its
// replacement is Ready, timed as the forecast times an eviction's unit of
// budget (timing, item.replacementStarts).

// needsOverride is the needs-override finding of st's pod, whose eviction
// info's budget governs and never allows, and which no surge moves (the
// node pass set st's NoSurge), and its entry of the forecast's list.
func (a *analyzer) needsOverride(st *podState, info *pdbInfo) (Finding, OverrideNeed) {
	t := a.timingOf()
	it := a.timed(t, st)
	p, pdb := st.pod, info.pdb
	spec := zeroSpec(pdb, func() int { return a.x.wholePods(info) })
	need := OverrideNeed{Namespace: p.Namespace, Name: p.Name, UID: p.UID, PDB: pdb.Name, Spec: spec, NoSurge: st.verdict.NoSurge,
		Ready: podReady(p), Grace: metav1.Duration{Duration: it.grace}, VolumeMove: metav1.Duration{Duration: it.move}}
	ev := map[string]string{"pdb": pdb.Name, "spec": spec, "grace": it.grace.String(), "ready": strconv.FormatBool(need.Ready)}
	who := name(p.Namespace, p.Name)
	msg := fmt.Sprintf("PDB %s can never allow the eviction of pod %s (%s) and no surge makes room (%s): only a delete moves it, under a MaintenanceOverride that someone other than the plan's requester approves (kubectl maint override)",
		pdb.Name, who, spec, st.verdict.NoSurge)
	if !it.refills {
		ev["replacement"] = "none"
		msg += fmt.Sprintf("; nothing re-creates it (%s): the delete removes the pod for good", orphaned(st.chain, p.Namespace))
	} else {
		first := st.chain.hops[0]
		need.Replacement = first.Kind + " " + name(p.Namespace, first.Name)
		rd := it.ready
		need.ReplacementReady = &ReadyTime{Workload: rd.workload, P50: metav1.Duration{Duration: rd.p50}, P90: metav1.Duration{Duration: rd.p90}, Samples: rd.samples}
		if need.ReplacementReady.Workload == "" {
			need.ReplacementReady.Workload = "Pod " + who
		}
		need.Downtime = &Downtime{P50: metav1.Duration{Duration: later(it.replacementStarts(it.exit50), t.readyP50(rd))},
			P90: metav1.Duration{Duration: later(it.replacementStarts(it.exit90), t.readyP90(rd))}}
		ev["replacement"] = need.Replacement
		ev["downtimeP50"], ev["downtimeP90"] = need.Downtime.P50.Duration.String(), need.Downtime.P90.Duration.String()
		if it.move > 0 {
			ev["volumeMove"] = it.move.String()
		}
		msg += fmt.Sprintf("; the pod is then down about %s (p90 %s): %s", need.Downtime.P50.Duration, need.Downtime.P90.Duration, comesBack(&it, need.Replacement, t))
	}
	if !need.Ready {
		msg += "; it is not Ready now, so the delete takes nothing that serves"
	}
	return a.finding(NeedsOverride, podSubject(p), ev, "%s", msg), need
}

// comesBack tells how a deleted pod's replacement comes (it.refills):
// when it starts (replacementStarts) and its time to Ready.
func comesBack(it *item, replacement string, t *timing) string {
	rd := it.ready
	ready := fmt.Sprintf("Ready in %s (p90 %s", t.readyP50(rd), t.readyP90(rd))
	if rd.samples > 0 {
		ready += fmt.Sprintf(", learned from %d %s of %s)", rd.samples, plural(rd.samples, "pod", "pods"), rd.workload)
	} else {
		ready += ", the default: no pod of the workload shows its times)"
	}
	switch {
	case it.move > 0:
		return fmt.Sprintf("its exit, up to its grace %s, then its ReadWriteOnce volume's move %s, then %s re-creates it, %s", it.grace, it.move, replacement, ready)
	case it.afterExit:
		return fmt.Sprintf("its exit, up to its grace %s, then %s re-creates it under the same name, %s", it.grace, replacement, ready)
	}
	return fmt.Sprintf("%s starts a replacement at once, %s, while the pod takes up to its grace %s to exit", replacement, ready, it.grace)
}

// orphaned says why nothing re-creates a pod with owner chain c (the
// forecast's item.refills false).
func orphaned(c chain, namespace string) string {
	if len(c.hops) == 0 {
		return "no controller owns it"
	}
	first := c.hops[0]
	if first.Problem == "uid-mismatch" {
		return fmt.Sprintf("its owner %s %s was replaced by another of the same name", first.Kind, name(namespace, first.Name))
	}
	return fmt.Sprintf("its owner %s %s is not in the snapshot", first.Kind, name(namespace, first.Name))
}

// evicted are the needs of the pods the drain evicts: those the drain
// order (pods) neither skips nor waits for.
func evicted(needs []OverrideNeed, pods []placed) []OverrideNeed {
	if len(needs) == 0 {
		return nil
	}
	left := map[string]bool{}
	for _, pl := range pods {
		if pl.behavior == BehaviorSkip || pl.behavior == BehaviorWaitCompleted {
			left[name(pl.pod.Namespace, pl.pod.Name)] = true
		}
	}
	var out []OverrideNeed
	for _, n := range needs {
		if !left[name(n.Namespace, n.Name)] {
			out = append(out, n)
		}
	}
	return out
}
