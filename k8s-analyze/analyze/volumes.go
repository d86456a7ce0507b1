package analyze

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Attachment is one volume attached to a node: a VolumeAttachment naming it,
// or an entry of node.status.volumesAttached with no VolumeAttachment.
type Attachment struct {
	VolumeAttachment string // name; "" for a volumesAttached entry alone
	// Volume is the node's status.volumesAttached name of the volume
	// ("kubernetes.io/csi/<driver>^<volumeHandle>"), "" when the node does
	// not list it (a VolumeAttachment alone).
	Volume      string
	PV          string // the PersistentVolume; "" when unknown
	Claim       string // namespace/name of the PV's claim, "" when none
	Driver      string // CSI driver (VA spec.attacher), or the in-tree plugin
	Attached    bool   // VA status.attached (true for a volumesAttached entry)
	Detaching   bool   // the VA is being deleted (deletionTimestamp set)
	DetachError string // VA status.detachError.message, when set
	// Pods are namespace/name of the pods on the node that use it (those
	// terminating too: all that still exist), sorted.
	Pods []string
	// Leaked is why it is leaked, "" when not: LeakPVGone (its PV does not
	// exist), LeakClaimGone (the PV's claimRef names a claim that does not
	// exist, or one of another UID).
	Leaked string
}

// Why an attachment is leaked (Attachment.Leaked).
const (
	LeakPVGone    = "pv-gone"
	LeakClaimGone = "claim-gone"
)

// NodeAttachments is the one definition of which volumes are attached to
// node and whose they are, sorted by VolumeAttachment, then PV, then
// Volume:
//
//   - every VolumeAttachment whose spec.nodeName is node, matched to its PV
//     by spec.source.persistentVolumeName;
//   - every entry of the node's status.volumesAttached that no such
//     VolumeAttachment stands for: a CSI entry
//     ("kubernetes.io/csi/<driver>^<volumeHandle>") is matched to the PV of
//     that driver and volume handle, and when a VolumeAttachment of the node
//     names that PV the two are one attachment (the VolumeAttachment's,
//     with Volume set). An in-tree entry's Driver is its plugin
//     ("kubernetes.io/aws-ebs") and its PV is unknown.
//
// A pod uses a PV when one of its volumes claims it: a persistentVolumeClaim
// volume, or a generic ephemeral volume (its claim is named
// <pod>-<volume>), whose claim is bound to the PV (the claim's
// spec.volumeName, or the PV's claimRef naming the claim). Every pod on the
// node that still exists counts, terminating or terminal: the
// attach-detach controller detaches a volume only once no pod needs it.
//
// A node not in s has no attachments.
func NodeAttachments(s *snapshot.Snapshot, node string) []Attachment {
	return newVolumeIndex(view.Of(s)).attachments(node)
}

// volumeIndex holds what judging a node's volumes and its drain order
// reads, keyed once for every node.
type volumeIndex struct {
	nodes      map[string]*view.Node
	podsByNode map[string][]*view.Pod
	pvs        map[string]*view.PersistentVolume
	// pvByHandle is the PV of a CSI driver and volume handle.
	pvByHandle map[[2]string]string
	// claims are the claims by namespace/name; pvByClaimRef the PV whose
	// claimRef names one.
	claims       map[string]*view.PersistentVolumeClaim
	pvByClaimRef map[string]string
	vasByNode    map[string][]*view.VolumeAttachment
	// pluginNamespaces are, per CSI driver, the namespaces of the
	// DaemonSet pods (on any node) that are its node plugin.
	pluginNamespaces map[string]map[string]bool
	// drivers are the CSIDrivers by name.
	drivers  map[string]*view.CSIDriver
	nsLabels map[string]map[string]string
}

func newVolumeIndex(s *view.Snapshot) *volumeIndex {
	x := &volumeIndex{
		nodes: map[string]*view.Node{}, podsByNode: map[string][]*view.Pod{},
		pvs: map[string]*view.PersistentVolume{}, pvByHandle: map[[2]string]string{},
		claims: map[string]*view.PersistentVolumeClaim{}, pvByClaimRef: map[string]string{},
		vasByNode: map[string][]*view.VolumeAttachment{}, pluginNamespaces: map[string]map[string]bool{},
		drivers: map[string]*view.CSIDriver{}, nsLabels: map[string]map[string]string{},
	}
	for i := range s.Nodes {
		x.nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		x.podsByNode[p.Spec.NodeName] = append(x.podsByNode[p.Spec.NodeName], p)
		if !daemonSetPod(p) {
			continue
		}
		for _, d := range pluginDrivers(p.Spec.PluginPaths) {
			if x.pluginNamespaces[d] == nil {
				x.pluginNamespaces[d] = map[string]bool{}
			}
			x.pluginNamespaces[d][p.Namespace] = true
		}
	}
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		x.pvs[pv.Name] = pv
		if c := pv.Spec.CSI; c != nil {
			x.pvByHandle[[2]string{c.Driver, c.VolumeHandle}] = pv.Name
		}
		if r := pv.Spec.ClaimRef; r != nil {
			x.pvByClaimRef[r.Namespace+"/"+r.Name] = pv.Name
		}
	}
	for i := range s.PersistentVolumeClaims {
		c := &s.PersistentVolumeClaims[i]
		x.claims[c.Namespace+"/"+c.Name] = c
	}
	for i := range s.VolumeAttachments {
		va := &s.VolumeAttachments[i]
		x.vasByNode[va.Spec.NodeName] = append(x.vasByNode[va.Spec.NodeName], va)
	}
	for i := range s.CSIDrivers {
		x.drivers[s.CSIDrivers[i].Name] = &s.CSIDrivers[i]
	}
	for i := range s.Namespaces {
		x.nsLabels[s.Namespaces[i].Name] = s.Namespaces[i].Labels
	}
	return x
}

// daemonSetPod reports whether a DaemonSet controls p.
func daemonSetPod(p *view.Pod) bool {
	ctrl := controllerOf(p.OwnerReferences)
	return ctrl != nil && ctrl.Kind == "DaemonSet"
}

// pvOf is the PV claim (namespace/name) is bound to: the claim's
// spec.volumeName, else the PV whose claimRef names it; "" when none.
func (x *volumeIndex) pvOf(claim string) string {
	if c := x.claims[claim]; c != nil && c.Spec.VolumeName != "" {
		return c.Spec.VolumeName
	}
	return x.pvByClaimRef[claim]
}

// attachments is NodeAttachments of node.
func (x *volumeIndex) attachments(node string) []Attachment {
	var out []Attachment
	withVA := map[string]int{} // PV -> index in out
	for _, va := range x.vasByNode[node] {
		a := Attachment{
			VolumeAttachment: va.Name, PV: va.Spec.PersistentVolumeName, Driver: va.Spec.Attacher,
			Attached: va.Status.Attached, Detaching: va.DeletionTimestamp != nil, DetachError: va.Status.DetachError,
		}
		if a.PV != "" {
			withVA[a.PV] = len(out)
		}
		out = append(out, a)
	}
	if n := x.nodes[node]; n != nil {
		for _, v := range n.Status.VolumesAttached {
			name := string(v.Name)
			a := Attachment{Volume: name, Driver: pluginOf(name), Attached: true}
			if driver, handle, ok := snapshot.CSIVolumeName(name); ok {
				a.Driver, a.PV = driver, x.pvByHandle[[2]string{driver, handle}]
			}
			if i, ok := withVA[a.PV]; ok && a.PV != "" {
				out[i].Volume = name
				continue
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil
	}
	users := x.podsByPV(node)
	for i := range out {
		a := &out[i]
		if a.PV == "" {
			continue
		}
		a.Pods = users[a.PV]
		pv := x.pvs[a.PV]
		switch {
		case pv == nil:
			a.Leaked = LeakPVGone
		case pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Name != "":
			r := pv.Spec.ClaimRef
			a.Claim = r.Namespace + "/" + r.Name
			if c := x.claims[a.Claim]; c == nil || r.UID != "" && c.UID != "" && r.UID != c.UID {
				a.Leaked = LeakClaimGone
			}
		}
	}
	slices.SortFunc(out, func(a, b Attachment) int {
		return cmp.Or(cmp.Compare(a.VolumeAttachment, b.VolumeAttachment), cmp.Compare(a.PV, b.PV), cmp.Compare(a.Volume, b.Volume))
	})
	return out
}

// podsByPV is, for each PV, the pods on node that use it (see
// NodeAttachments), namespace/name, sorted.
func (x *volumeIndex) podsByPV(node string) map[string][]string {
	out := map[string][]string{}
	for _, p := range x.podsByNode[node] {
		for _, claim := range podClaims(p) {
			if pv := x.pvOf(claim); pv != "" {
				out[pv] = append(out[pv], p.Namespace+"/"+p.Name)
			}
		}
	}
	for pv, pods := range out {
		slices.Sort(pods)
		out[pv] = slices.Compact(pods)
	}
	return out
}

// podClaims are the namespace/name of the claims p's volumes use: a
// persistentVolumeClaim volume's, and a generic ephemeral volume's
// (<pod>-<volume>).
func podClaims(p *view.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, p.Namespace+"/"+p.Name+"-"+v.Name)
		}
	}
	return out
}

// pluginOf is the volume plugin of a volumesAttached name
// ("kubernetes.io/aws-ebs/aws://..." is of "kubernetes.io/aws-ebs"): its
// first two segments.
func pluginOf(name string) string {
	first, rest, ok := strings.Cut(name, "/")
	if !ok {
		return name
	}
	second, _, _ := strings.Cut(rest, "/")
	return first + "/" + second
}

// volumeFindings are the node's findings about its attachments (atts) and
// its storage providers (the groups of order with Drivers).
func (a *analyzer) volumeFindings(node string, atts []Attachment, order []DrainGroup) []Finding {
	var fs []Finding
	for _, at := range atts {
		if at.Leaked == "" || at.VolumeAttachment == "" {
			continue
		}
		why := "its PersistentVolume " + at.PV + " is gone"
		if at.Leaked == LeakClaimGone {
			why = "the claim " + at.Claim + " of its PersistentVolume " + at.PV + " is gone"
		}
		ev := map[string]string{"volumeAttachment": at.VolumeAttachment, "pv": at.PV, "driver": at.Driver, "reason": at.Leaked}
		if at.Claim != "" {
			ev["claim"] = at.Claim
		}
		if at.DetachError != "" {
			ev["detachError"] = at.DetachError
		}
		fs = append(fs, a.finding(VolumeAttachmentLeaked, Subject{Kind: "VolumeAttachment", Name: at.VolumeAttachment}, ev,
			"VolumeAttachment %s (driver %s) is leaked: %s; the node is never free of it by itself", at.VolumeAttachment, at.Driver, why))
	}
	var pods map[string]*view.Pod // of the node, by namespace/name, once a group needs them
	for _, g := range order {
		if g.Drivers == nil {
			continue
		}
		if pods == nil {
			pods = map[string]*view.Pod{}
			for _, p := range a.vx.podsByNode[node] {
				pods[p.Namespace+"/"+p.Name] = p
			}
		}
		for _, pod := range g.Pods {
			p := pods[pod]
			ev := map[string]string{"drivers": strings.Join(g.Drivers, ","), "order": strconv.Itoa(int(g.Order))}
			fs = append(fs, a.finding(StorageProvider, podSubject(p), ev, "pod %s is evicted last, in order %d, after its consumers: %s", p.Name, g.Order, g.Why))
		}
	}
	return fs
}

// volumesOf says whether p uses an attachable volume (attached: the node is
// not free of it until it detaches), and whether one of those must move
// with p: it is ReadWriteOnce or ReadWriteOncePod (by its PV's access
// modes, else its claim's). A volume is attachable when its PV is a CSI
// volume whose CSIDriver requires attaching (attachRequired true or unset)
// or is not known (assumed to); a volume of another source is taken as not
// attached.
func (x *volumeIndex) volumesOf(p *view.Pod) (attached, moves bool) {
	for _, claim := range podClaims(p) {
		pv := x.pvs[x.pvOf(claim)]
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		if d := x.drivers[pv.Spec.CSI.Driver]; d != nil && d.Spec.AttachRequired != nil && !*d.Spec.AttachRequired {
			continue
		}
		attached = true
		modes := pv.Spec.AccessModes
		if c := x.claims[claim]; len(modes) == 0 && c != nil {
			modes = c.Spec.AccessModes
		}
		moves = moves || slices.Contains(modes, corev1.ReadWriteOnce) || slices.Contains(modes, corev1.ReadWriteOncePod)
	}
	return attached, moves
}
