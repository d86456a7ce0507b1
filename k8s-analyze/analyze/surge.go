package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The surge (CHECKS.md, "Surge"): a pod whose budget never allows its
// eviction still moves with no downtime when one more replica of its owner
// makes the budget allow one. The drain scales the owner up by one, waits
// until the new pod is Ready, evicts the pod (the disruption controller now
// counts one healthy pod more than the budget needs) and scales back.

// pdbSurge is what the node pass learned of the surges of one budget that
// never allows: whether a surge moves every pod of the node it governs,
// and why not (the first such pod's NoSurge).
type pdbSurge struct {
	all bool
	why string
}

// surgeVerdict judges the surge of st's pod, whose eviction info's budget
// governs and never allows: it sets the verdict's Surge or NoSurge, notes
// the outcome in surges, and returns the finding of a pod a surge moves
// (nil for one it does not).
func (a *analyzer) surgeVerdict(st *podState, info *pdbInfo, surges map[*pdbInfo]pdbSurge) *Finding {
	move, why := a.x.surge(st.pod, st.chain, st.matching, info)
	st.verdict.Surge, st.verdict.NoSurge = move, why
	s, seen := surges[info]
	if !seen {
		s.all = true
	}
	if move == nil {
		s.all = false
		s.why = cmp.Or(s.why, why)
	}
	surges[info] = s
	if move == nil {
		return nil
	}
	p := st.pod
	owner := move.Kind + " " + name(p.Namespace, move.Name)
	replicas := fmt.Sprintf("%d→%d", move.Replicas, move.Replicas+1)
	f := a.finding(SurgeMovable, podSubject(p), map[string]string{"owner": move.Kind + " " + move.Name, "replicas": replicas, "pdb": move.PDB},
		"one more replica of %s (%s) lets pod %s go with no downtime: a drain with a surge (maintd spec.surge: IfNeeded, k8s-analyze --surge) moves it",
		owner, replicas, name(p.Namespace, p.Name))
	return &f
}

// surge judges whether a surge moves pod p (owner chain c, selected by
// matching), whose eviction info's budget governs and never allows: the
// owner it scales, or why none can, in a sentence that names the pod's
// owner. The checks go in a fixed order and the first that fails is told.
func (x *index) surge(p *view.Pod, c chain, matching []*pdbInfo, info *pdbInfo) (*SurgeMove, string) {
	whose := "pod " + name(p.Namespace, p.Name)
	switch {
	case c.top != nil:
		whose += ", owned by " + c.top.kind + " " + name(p.Namespace, c.top.meta.Name)
	case len(c.hops) > 0:
		whose += ", owned by " + c.hops[0].Kind + " " + name(p.Namespace, c.hops[0].Name)
	}
	if len(matching) != 1 {
		// Not reached through pdb-zero-spec (a pod more PDBs select has no
		// governing budget), but overlap has its own check: say so.
		return nil, fmt.Sprintf("%s: %d PodDisruptionBudgets select it, and the Eviction API refuses it whatever the replicas", whose, len(matching))
	}
	if why := surgeSpec(info.pdb, x.wholePods(info)); why != "" {
		return nil, whose + ": " + why
	}
	o, why := x.surgeOwner(p.Namespace, c)
	if o == nil {
		return nil, whose + ": " + why
	}
	if h := x.hpaOf(o); h != nil {
		return nil, fmt.Sprintf("%s: HorizontalPodAutoscaler %s scales %s %s: a replica count maintd changed would fight it",
			whose, name(h.Namespace, h.Name), o.kind, o.meta.Name)
	}
	return &SurgeMove{Kind: o.kind, Name: o.meta.Name, UID: o.meta.UID, Replicas: o.replicas, PDB: info.pdb.Name}, ""
}

// surgeSpec says why one more replica cannot make pdb allow an eviction
// ("" when it does), whole being the pods it selects once their workloads
// are whole. The disruption controller needs minAvailable healthy pods (a
// percentage of the controllers' replicas, rounded up) and counts the Ready
// ones: with the surge's whole+1 pods Ready it allows one when it needs at
// most whole. maxUnavailable, and minAvailable 100%, are counted from the
// replicas themselves: more of them never help.
func surgeSpec(pdb *view.PodDisruptionBudget, whole int) string {
	if mu := pdb.Spec.MaxUnavailable; mu != nil {
		return fmt.Sprintf("PDB %s has maxUnavailable %s: more replicas never help", pdb.Name, mu.String())
	}
	ma := pdb.Spec.MinAvailable
	switch {
	case ma == nil:
		return fmt.Sprintf("PDB %s sets neither minAvailable nor maxUnavailable", pdb.Name)
	case ma.Type == intstr.String && ma.StrVal == "100%":
		return fmt.Sprintf("PDB %s has minAvailable 100%%: more replicas never help", pdb.Name)
	}
	need, err := intstr.GetScaledValueFromIntOrPercent(ma, whole+1, true)
	switch {
	case err != nil:
		return fmt.Sprintf("PDB %s's minAvailable %s does not parse: %v", pdb.Name, ma.String(), err)
	case need > whole:
		return fmt.Sprintf("PDB %s needs %d healthy of %d: one more replica is not enough", pdb.Name, need, whole+1)
	}
	return ""
}

// surgeOwner is the object a surge scales for a pod of namespace with
// owner chain c: the Deployment of its ReplicaSet, or its ReplicaSet when
// no controller owns that. Nothing else qualifies: a StatefulSet's pods
// have fixed names, a Job's run to completion, and an owner the snapshot
// cannot verify, that another controller manages or that is being deleted
// is not one to scale.
func (x *index) surgeOwner(namespace string, c chain) (*owner, string) {
	hops := c.hops
	if len(hops) == 0 {
		return nil, "no controller owns it: nothing to add a replica to"
	}
	for _, h := range hops {
		hop := h.Kind + " " + name(namespace, h.Name)
		switch h.Problem {
		case "missing":
			return nil, hop + " is not in the snapshot: there is no verified owner to scale"
		case "uid-mismatch":
			return nil, hop + " exists with another uid than the owner reference's: the pod is orphaned, there is no owner to scale"
		case "unknown-kind":
			return nil, hop + " is a kind the snapshot does not hold: whether one more replica runs cannot be judged"
		}
	}
	switch first := hops[0]; first.Kind {
	case "ReplicaSet":
	case "StatefulSet":
		return nil, "its pods have fixed identities, so a second copy cannot run"
	case "Job":
		return nil, "a Job's pods run to completion: it has no replicas to add"
	default:
		return nil, first.Kind + " " + name(namespace, first.Name) + " has no replicas to add"
	}
	switch {
	case len(hops) == 1:
	case len(hops) == 2 && hops[1].Kind == "Deployment":
	default:
		// A Deployment (or ReplicaSet) that another controller owns gets
		// its replicas from that controller, which would undo the surge.
		under, above := hops[0], hops[1]
		if above.Kind == "Deployment" {
			under, above = hops[1], hops[2]
		}
		return nil, fmt.Sprintf("%s %s is controlled by %s %s: a surge scales only a Deployment, or a ReplicaSet no controller owns",
			under.Kind, name(namespace, under.Name), above.Kind, name(namespace, above.Name))
	}
	for _, h := range hops {
		if o := x.owners[objKey{h.Kind, namespace, h.Name}]; o != nil && o.meta.DeletionTimestamp != nil {
			return nil, fmt.Sprintf("%s %s is being deleted", h.Kind, name(namespace, h.Name))
		}
	}
	return c.top, ""
}

// hpaOf is the HorizontalPodAutoscaler that scales o (the first by name
// when several do), or nil.
func (x *index) hpaOf(o *owner) *view.HorizontalPodAutoscaler {
	hs := x.hpas[objKey{o.kind, o.meta.Namespace, o.meta.Name}]
	if len(hs) == 0 {
		return nil
	}
	return slices.MinFunc(hs, func(a, b *view.HorizontalPodAutoscaler) int { return strings.Compare(a.Name, b.Name) })
}
