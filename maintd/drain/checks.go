// The checks before a drain moves pods: the analysis copied into the
// status, the pods the plan allows, and the findings that block it.

package drain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// preflight copies the analysis into status.preflight.
func (d *decider) preflight() {
	a := d.f.Analysis
	if a == nil {
		d.st.Preflight = nil
		return
	}
	pf := &api.Preflight{Risk: string(a.Risk)}
	for _, f := range a.Findings {
		if len(pf.Findings) == 10 {
			break
		}
		if f.Subject.Kind == "Snapshot" {
			// About the snapshot itself, named by its capture time: the
			// caches are never one cut, and a finding that names each
			// reconcile's time would rewrite the status on every re-check.
			continue
		}
		pf.Findings = append(pf.Findings, api.Finding{Code: string(f.Code), Severity: string(f.Severity), Object: objectText(f.Subject), Message: f.Message})
	}
	d.st.Preflight = pf
	active := map[string]bool{}
	if ep := d.st.EvictionProgress; ep != nil {
		for _, p := range ep.ActivePods {
			active[string(p.UID)] = true
		}
	}
	skipped := 0
	for _, v := range a.Pods {
		if v.Action == analyze.Skip && !active[string(v.UID)] {
			skipped++
		}
	}
	d.st.Pods.Skipped = int32(skipped)
}

// Moves reports whether a drain moves the pod of verdict v (evicts it, or
// is blocked by it): every pod the analysis does not skip (DaemonSet,
// mirror, finished pods). A campaign counts the pods to move by it too.
func Moves(v analyze.PodVerdict) bool { return v.Action != analyze.Skip }

// classify splits the node's pods the drain must move (evict or block
// verdicts) into those the plan allows and the unknown ones.
func (d *decider) classify() (allowed, unknown []analyze.PodVerdict) {
	if d.f.Analysis == nil {
		return nil, nil
	}
	for _, v := range d.f.Analysis.Pods {
		if !Moves(v) {
			continue
		}
		if d.allows(v) {
			allowed = append(allowed, v)
		} else {
			unknown = append(unknown, v)
		}
	}
	return allowed, unknown
}

// allows reports whether the plan allows evicting the pod: one of its
// verified owners is a listed workload with the UID the drain recorded (or,
// before the drain, the current one).
func (d *decider) allows(v analyze.PodVerdict) bool {
	if d.spec.AllowAllWorkloads {
		return len(v.Owners) > 0 && v.Owners[0].Verified
	}
	for _, h := range v.Owners {
		if !h.Verified {
			return false
		}
		ref := api.WorkloadRef{Kind: h.Kind, Namespace: v.Namespace, Name: h.Name}
		if !slices.Contains(d.spec.Workloads, ref) {
			continue
		}
		want := d.f.Workloads[ref]
		if ep := d.st.EvictionProgress; ep != nil {
			for _, w := range ep.WorkloadUIDs {
				if w.WorkloadRef == ref {
					want = w.UID
				}
			}
		}
		return want != "" && h.UID == want
	}
	return false
}

func (d *decider) unknownPods(unknown []analyze.PodVerdict) {
	names := make([]string, 0, len(unknown))
	for _, v := range unknown {
		owner := "no owner"
		if len(v.Owners) > 0 {
			top := v.Owners[len(v.Owners)-1]
			owner = top.Kind + " " + top.Name
		}
		names = append(names, fmt.Sprintf("%s/%s (%s)", v.Namespace, v.Name, owner))
	}
	const show = 10
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	d.set(api.Blocked, api.UnknownPodsOnNode, "%d pods on node %s belong to no workload this plan allows: %s%s; add their workloads to spec.workloads or move them first",
		len(unknown), d.spec.NodeName, strings.Join(names, ", "), more)
}

// highRisk blocks the plan when a pod to evict has a High finding the plan
// does not accept, and reports whether it did.
func (d *decider) highRisk(pods []analyze.PodVerdict) bool {
	checks := map[analyze.Code]analyze.Severity{}
	for _, c := range analyze.Checks() {
		checks[c.Code] = c.Severity
	}
	accepted := map[string]bool{}
	for _, r := range d.spec.AcceptedRisks {
		accepted[r] = true
	}
	type hit struct {
		pod  analyze.PodVerdict
		code analyze.Code
	}
	var overlap, noSurge, misconfigured, other []hit
	surge := d.spec.Surge == api.SurgeIfNeeded
	for _, v := range pods {
		for _, c := range v.Reasons {
			if checks[c] != analyze.High || accepted[string(c)] {
				continue
			}
			switch {
			case (c == analyze.PDBZeroSpec || c == analyze.AllReplicasOnNode) && surge && (v.Action == analyze.Surge || d.surged(v)):
				// A surge of this plan adds the replica elsewhere first.
				continue
			case c == analyze.PDBZeroSpec && surge && v.NoSurge != "":
				noSurge = append(noSurge, hit{v, c})
				continue
			}
			switch c {
			case analyze.PDBOverlap:
				overlap = append(overlap, hit{v, c})
			case analyze.PDBZeroSpec, analyze.PDBSyncFailed, analyze.PDBForbidden:
				misconfigured = append(misconfigured, hit{v, c})
			default:
				other = append(other, hit{v, c})
			}
		}
	}
	// A finding may clear as the pods of its namespace move or become
	// Ready elsewhere, and their budgets follow.
	for _, hits := range [][]hit{overlap, noSurge, misconfigured, other} {
		for _, h := range hits {
			d.waits.Add(waits.Pods, h.pod.Namespace)
			d.waits.Add(waits.PDBs, h.pod.Namespace)
		}
	}
	switch {
	case len(overlap) > 0:
		v := overlap[0].pod
		names := make([]string, len(v.PDBs))
		for i, r := range v.PDBs {
			names[i] = r.Namespace + "/" + r.Name
		}
		d.set(api.Blocked, api.PDBOverlap, "pod %s/%s is selected by %d PodDisruptionBudgets (%s): the Eviction API refuses it (500); make the PDBs disjoint",
			v.Namespace, v.Name, len(names), strings.Join(names, ", "))
	case len(noSurge) > 0:
		v := noSurge[0].pod
		d.set(api.Blocked, api.SurgeImpossible, "%s; pod %s/%s can never be evicted while it is healthy (%s) and no surge can move it: %s", d.pdbText(v), v.Namespace, v.Name, noSurge[0].code, v.NoSurge)
	case len(misconfigured) > 0:
		v := misconfigured[0].pod
		fix := "fix the PDB"
		if v.Surge != nil && misconfigured[0].code == analyze.PDBZeroSpec {
			fix = fmt.Sprintf("fix the PDB, or set spec.surge: IfNeeded to move it with one more replica of %s %s (%d to %d)", v.Surge.Kind, v.Surge.Name, v.Surge.Replicas, v.Surge.Replicas+1)
		}
		d.set(api.Blocked, api.PDBMisconfigured, "%s; pod %s/%s can never be evicted while it is healthy (%s): %s", d.pdbText(v), v.Namespace, v.Name, misconfigured[0].code, fix)
	case len(other) > 0:
		var parts []string
		for i, h := range other {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", len(other)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%s/%s: %s", h.pod.Namespace, h.pod.Name, h.code))
		}
		d.set(api.Blocked, api.PreflightHighRisk, "high-risk findings on pods to evict: %s; fix them or list the codes in spec.acceptedRisks", strings.Join(parts, "; "))
	default:
		return false
	}
	return true
}

// pdbText names the PDB governing v with its numbers.
func (d *decider) pdbText(v analyze.PodVerdict) string {
	if len(v.PDBs) == 0 || d.f.Analysis == nil {
		return "no PDB"
	}
	r := v.PDBs[0]
	for _, b := range d.f.Analysis.PDBs {
		if b.Namespace == r.Namespace && b.Name == r.Name {
			return fmt.Sprintf("PDB %s/%s needs %d healthy, has %d (%d disruptions allowed)", b.Namespace, b.Name, b.DesiredHealthy, b.CurrentHealthy, b.DisruptionsAllowed)
		}
	}
	return "PDB " + r.Namespace + "/" + r.Name
}
