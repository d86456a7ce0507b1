package analyze

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The storage checks of a pod: what its volumes keep on the node or need
// to move (CHECKS.md, "Checks").

func (a *analyzer) storage(p *view.Pod, subj Subject) []Finding {
	var fs []Finding
	for _, v := range p.Spec.Volumes {
		ev := func(kv ...string) map[string]string {
			m := map[string]string{"volume": v.Name}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		switch {
		case v.EmptyDir != nil:
			if v.EmptyDir.Medium == corev1.StorageMediumMemory {
				fs = append(fs, a.finding(EmptyDirDataLoss, subj, ev("medium", "Memory"), "pod %s: emptyDir volume %s is tmpfs (medium Memory); its data is lost with the pod", p.Name, v.Name))
			} else {
				fs = append(fs, a.finding(EmptyDirDataLoss, subj, ev(), "pod %s: emptyDir volume %s is deleted with the pod", p.Name, v.Name))
			}
		case v.Ephemeral != nil:
			fs = append(fs, a.finding(EmptyDirDataLoss, subj, ev("type", "ephemeral"), "pod %s: generic ephemeral volume %s is deleted with the pod", p.Name, v.Name))
		case v.HostPath != nil:
			fs = append(fs, a.finding(HostPath, subj, ev("path", v.HostPath.Path), "pod %s: hostPath volume %s (%s) stays on this node", p.Name, v.Name, v.HostPath.Path))
		case v.PersistentVolumeClaim != nil:
			fs = append(fs, a.claim(p, subj, v.Name, v.PersistentVolumeClaim.ClaimName)...)
		}
	}
	return fs
}

func (a *analyzer) claim(p *view.Pod, subj Subject, volume, claim string) []Finding {
	ev := map[string]string{"volume": volume, "claim": claim}
	pvc := a.x.pvcs[objKey{"PersistentVolumeClaim", p.Namespace, claim}]
	if pvc == nil {
		return []Finding{a.finding(PVCMissing, subj, ev, "pod %s mounts PersistentVolumeClaim %s, which is not in the snapshot", p.Name, claim)}
	}
	modes := pvc.Spec.AccessModes
	pv := a.x.pvs[pvc.Spec.VolumeName]
	if pv != nil {
		ev["persistentVolume"] = pv.Name
		modes = pv.Spec.AccessModes
		if why := pinned(pv, a.x.nodes[p.Spec.NodeName]); why != "" {
			ev["pinnedBy"] = why
			return []Finding{a.finding(LocalPVPinned, subj, ev, "pod %s: volume %s (PersistentVolume %s) is pinned to node %s by %s: the pod cannot run elsewhere", p.Name, volume, pv.Name, p.Spec.NodeName, why)}
		}
	}
	for _, m := range modes {
		if m == corev1.ReadWriteOnce || m == corev1.ReadWriteOncePod {
			ev["accessMode"] = string(m)
			return []Finding{a.finding(RWOReattach, subj, ev, "pod %s: volume %s (claim %s) is %s: it must detach here and attach where the pod goes", p.Name, volume, claim, m)}
		}
	}
	return nil
}

// pinned says why pv can only be used on node n ("" when it is not): a local
// or hostPath volume, or required node affinity that only n satisfies by
// its name or hostname label.
func pinned(pv *view.PersistentVolume, n *view.Node) string {
	switch {
	case pv.Spec.Local != nil:
		return "spec.local"
	case pv.Spec.HostPath != nil:
		return "spec.hostPath"
	}
	if n == nil || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) == 0 {
		return ""
	}
	hostname := n.Labels[corev1.LabelHostname]
	for _, t := range terms {
		if !termPins(t, n.Name, hostname) {
			return ""
		}
	}
	return "spec.nodeAffinity"
}

// termPins: the term requires the node's name or hostname to be one of a set
// that holds only this node.
func termPins(t corev1.NodeSelectorTerm, nodeName, hostname string) bool {
	only := func(values []string, want string) bool {
		return want != "" && len(values) == 1 && values[0] == want
	}
	for _, r := range t.MatchExpressions {
		if r.Key == corev1.LabelHostname && r.Operator == corev1.NodeSelectorOpIn && only(r.Values, hostname) {
			return true
		}
	}
	for _, r := range t.MatchFields {
		if r.Key == "metadata.name" && r.Operator == corev1.NodeSelectorOpIn && only(r.Values, nodeName) {
			return true
		}
	}
	return false
}
