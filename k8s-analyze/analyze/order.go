package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Annotations a person puts on a pod to order its drain.
const (
	// DrainAnnotation is one pod's drain rule: "skip", "wait-completed"
	// or "order=N" (Drain, order N). It wins over every rule and over
	// storage-provider recognition. Any other value is ignored.
	DrainAnnotation = "maintenance.sentinel.dev/drain"
	// StorageProviderAnnotation names the CSI drivers a pod serves the
	// volumes of, "<driver>[,<driver>...]", where recognition cannot tell.
	StorageProviderAnnotation = "maintenance.sentinel.dev/storage-provider"
)

// DrainBehavior is what a drain does with a pod, with Cluster API's
// MachineDrainRule meanings.
type DrainBehavior string

const (
	// BehaviorDrain evicts the pod, in its order.
	BehaviorDrain DrainBehavior = "Drain"
	// BehaviorSkip leaves the pod alone: not evicted, not waited for.
	BehaviorSkip DrainBehavior = "Skip"
	// BehaviorWaitCompleted does not evict the pod but waits for it to complete.
	BehaviorWaitCompleted DrainBehavior = "WaitCompleted"
)

// DrainRule is the matching part of a rule, with the same meaning as
// Cluster API's MachineDrainRule spec.
type DrainRule struct {
	Name     string
	Behavior DrainBehavior // "" is Drain
	Order    int32         // only for Drain; lower first; default 0
	// Pods selects the pods the rule is for: empty, every pod; otherwise an
	// entry matches when both its selectors match (nil selector = all).
	Pods []DrainRulePods
}

// DrainRulePods selects pods by their labels and their namespace's labels.
// A selector that does not parse matches nothing.
type DrainRulePods struct {
	Selector, NamespaceSelector *metav1.LabelSelector
}

// DrainGroup is pods that go together.
type DrainGroup struct {
	Order    int32         `json:"order"`
	Behavior DrainBehavior `json:"behavior"`
	// Why names what put the pods here, "; "-separated when several did:
	// "annotation", "rule NAME", "storage provider of driver D for N
	// pods", "default".
	Why  string   `json:"why"`
	Pods []string `json:"pods"` // namespace/name, sorted
	// Drivers are, for a group of storage providers, the CSI drivers they
	// serve, sorted; nil otherwise.
	Drivers []string `json:"drivers,omitempty"`
	// WaitsFor are, for a group of storage providers, the attachments of
	// Drivers still on the node (NodeAttachments) that are not leaked and
	// not only the group's own: by VolumeAttachment name, or the
	// volumesAttached name of an entry without one; sorted. The group
	// starts only when it is empty.
	WaitsFor []string `json:"waitsFor,omitempty"`
}

// DrainOrder groups the node's pods to evict into groups in the order they
// may go: each group only after every pod of the groups of lower Order is
// gone and, for storage providers, its WaitsFor is empty (the volumes of
// their consumers are detached). Groups of one Order go together (a Drain
// and a WaitCompleted group, as in Cluster API); the Skip group comes
// last and holds nothing back.
//
// The pods are those a drain must see gone: not DaemonSet pods, not mirror
// pods, not terminal; terminating pods stay in their group until they are
// gone. Each pod's behaviour and order, first that applies:
//
//  1. its DrainAnnotation;
//  2. the rules that match it: the one of the lowest Name wins (as
//     Cluster API: the first in alphabetical order);
//  3. storage-provider recognition (see isProvider): the pod goes after
//     every other Drain or WaitCompleted group of the node, at one more than
//     their highest order (at least 1), and after the providers whose
//     volumes it uses itself;
//  4. Drain, order 0 ("default").
//
// A node not in s has no groups.
func DrainOrder(s *snapshot.Snapshot, node string, rules []DrainRule) []DrainGroup {
	_, groups := NodeVolumes(s, node, rules)
	return groups
}

// NodeVolumes is NodeAttachments and DrainOrder of node at once, from one
// index of s: what a drain of the node waits on.
func NodeVolumes(s *snapshot.Snapshot, node string, rules []DrainRule) ([]Attachment, []DrainGroup) {
	x := newVolumeIndex(view.Of(s))
	atts := x.attachments(node)
	return atts, x.drainOrder(node, compileRules(rules), atts).groups
}

// nodeOrder is a node's drain order: its groups, and each pod's place.
type nodeOrder struct {
	groups []DrainGroup
	pods   []placed
}

// placed is one pod's place in the drain order.
type placed struct {
	pod      *view.Pod
	behavior DrainBehavior
	order    int32
	why      string
	drivers  []string // a recognised storage provider's
}

// drainOrder is DrainOrder of node, whose attachments are atts.
func (x *volumeIndex) drainOrder(node string, rules []drainRule, atts []Attachment) nodeOrder {
	st := x.storage(node, atts)
	on := x.podsByNode[node]
	all := make([]placed, 0, len(on))
	for _, p := range on {
		if !drained(p) {
			continue
		}
		all = append(all, placed{pod: p, behavior: BehaviorDrain, why: "default"})
		pl := &all[len(all)-1]
		if !annotated(pl) && !ruled(pl, rules, x.nsLabels) && len(st.needed) > 0 {
			pl.drivers = st.provides(p)
		}
	}
	pods := make([]*placed, len(all))
	for i := range all {
		pods[i] = &all[i]
	}
	st.order(pods)
	return nodeOrder{groups: groups(pods, atts), pods: all}
}

// drained reports whether a drain must see p gone: not a mirror or
// DaemonSet pod, not terminal.
func drained(p *view.Pod) bool {
	return p.Annotations[corev1.MirrorPodAnnotationKey] == "" && !daemonSetPod(p) && !terminal(p)
}

// annotated applies pl's DrainAnnotation, reporting whether it had a valid one.
func annotated(pl *placed) bool {
	v, ok := pl.pod.Annotations[DrainAnnotation]
	if !ok {
		return false
	}
	switch {
	case v == "skip":
		pl.behavior = BehaviorSkip
	case v == "wait-completed":
		pl.behavior = BehaviorWaitCompleted
	case strings.HasPrefix(v, "order="):
		n, err := strconv.ParseInt(strings.TrimPrefix(v, "order="), 10, 32)
		if err != nil {
			return false
		}
		pl.order = int32(n)
	default:
		return false
	}
	pl.why = "annotation"
	return true
}

// drainRule is a DrainRule with its selectors parsed once.
type drainRule struct {
	DrainRule
	// pods are the parsed Pods, nil for a selector that matches all; a
	// selector that does not parse is labels.Nothing().
	pods [][2]labels.Selector
}

// compileRules are rules parsed, sorted by name (stable).
func compileRules(rules []DrainRule) []drainRule {
	out := make([]drainRule, len(rules))
	for i, r := range rules {
		out[i].DrainRule = r
		for _, p := range r.Pods {
			out[i].pods = append(out[i].pods, [2]labels.Selector{selectorOf(p.Selector), selectorOf(p.NamespaceSelector)})
		}
	}
	slices.SortStableFunc(out, func(a, b drainRule) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// selectorOf is sel parsed: labels.Everything() for nil, labels.Nothing()
// when it does not parse.
func selectorOf(sel *metav1.LabelSelector) labels.Selector {
	if sel == nil {
		return labels.Everything()
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

// ruled applies the first of rules (sorted by name) that matches pl's pod,
// reporting whether one did.
func ruled(pl *placed, rules []drainRule, nsLabels map[string]map[string]string) bool {
	if len(rules) == 0 {
		return false
	}
	p := pl.pod
	ns, ok := nsLabels[p.Namespace]
	if !ok {
		// Not in the snapshot: the label every namespace has.
		ns = map[string]string{corev1.LabelMetadataName: p.Namespace}
	}
	for _, r := range rules {
		if !r.matches(p.Labels, ns) {
			continue
		}
		pl.behavior = cmp.Or(r.Behavior, BehaviorDrain)
		if pl.behavior == BehaviorDrain {
			pl.order = r.Order
		}
		pl.why = "rule " + r.Name
		return true
	}
	return false
}

// matches reports whether r is for a pod of these labels in a namespace of
// these: r has no Pods, or both selectors of one entry match.
func (r *drainRule) matches(pod, namespace map[string]string) bool {
	if len(r.pods) == 0 {
		return true
	}
	return slices.ContainsFunc(r.pods, func(sels [2]labels.Selector) bool {
		return sels[0].Matches(labels.Set(pod)) && sels[1].Matches(labels.Set(namespace))
	})
}

// groups gathers the placed pods into groups and sorts them.
func groups(pods []*placed, atts []Attachment) []DrainGroup {
	type key struct {
		behavior DrainBehavior
		order    int32
	}
	byKey := map[key]*DrainGroup{}
	whys := map[key]map[string]bool{}
	for _, pl := range pods {
		k := key{pl.behavior, pl.order}
		g := byKey[k]
		if g == nil {
			g = &DrainGroup{Order: pl.order, Behavior: pl.behavior}
			byKey[k], whys[k] = g, map[string]bool{}
		}
		g.Pods = append(g.Pods, pl.pod.Namespace+"/"+pl.pod.Name)
		whys[k][pl.why] = true
		g.Drivers = append(g.Drivers, pl.drivers...)
	}
	out := make([]DrainGroup, 0, len(byKey))
	for k, g := range byKey {
		g.Why = strings.Join(slices.Sorted(maps.Keys(whys[k])), "; ")
		slices.Sort(g.Pods)
		if g.Drivers != nil {
			g.Drivers = slices.Compact(slices.Sorted(slices.Values(g.Drivers)))
			g.WaitsFor = waitsFor(g, atts)
		}
		out = append(out, *g)
	}
	rank := map[DrainBehavior]int{BehaviorDrain: 0, BehaviorWaitCompleted: 1, BehaviorSkip: 2}
	slices.SortFunc(out, func(a, b DrainGroup) int {
		if a.Behavior == BehaviorSkip || b.Behavior == BehaviorSkip {
			return cmp.Compare(rank[a.Behavior], rank[b.Behavior])
		}
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(rank[a.Behavior], rank[b.Behavior]))
	})
	return out
}

// waitsFor are the attachments a storage group waits for: of its drivers,
// not leaked, used by a pod outside the group or by none.
func waitsFor(g *DrainGroup, atts []Attachment) []string {
	var out []string
	for _, a := range atts {
		own := len(a.Pods) > 0 && !slices.ContainsFunc(a.Pods, func(p string) bool { return !slices.Contains(g.Pods, p) })
		if a.Leaked != "" || own || !slices.Contains(g.Drivers, a.Driver) {
			continue
		}
		out = append(out, cmp.Or(a.VolumeAttachment, a.Volume, a.PV))
	}
	slices.Sort(out)
	return out
}

// storage is what recognising the node's storage providers needs.
type storage struct {
	pluginNamespaces map[string]map[string]bool // volumeIndex's
	// consumers are, per CSI driver, the pods on the node that use a
	// volume of it and have not finished, namespace/name.
	consumers map[string][]string
	// attached are the CSI drivers with an attachment on the node that is
	// not leaked.
	attached map[string]bool
	// needed are the drivers with a consumer or an attachment, sorted.
	needed []string
}

// storage is what recognising the storage providers of node needs, whose
// attachments are atts.
func (x *volumeIndex) storage(node string, atts []Attachment) *storage {
	st := &storage{pluginNamespaces: x.pluginNamespaces, consumers: map[string][]string{}, attached: map[string]bool{}}
	for _, p := range x.podsByNode[node] {
		if terminal(p) {
			continue
		}
		for _, claim := range podClaims(p) {
			if pv := x.pvs[x.pvOf(claim)]; pv != nil && pv.Spec.CSI != nil {
				d := pv.Spec.CSI.Driver
				st.consumers[d] = append(st.consumers[d], p.Namespace+"/"+p.Name)
			}
		}
	}
	for d, pods := range st.consumers {
		slices.Sort(pods)
		st.consumers[d] = slices.Compact(pods)
	}
	for _, a := range atts {
		if a.Leaked == "" {
			st.attached[a.Driver] = true
		}
	}
	needed := maps.Clone(st.attached)
	for d := range st.consumers {
		needed[d] = true
	}
	st.needed = slices.Sorted(maps.Keys(needed))
	return st
}

// pluginDrivers are the CSI drivers whose plugin directory paths name
// (".../plugins/<driver>/..."), sorted.
func pluginDrivers(paths []string) []string {
	var out []string
	for _, path := range paths {
		for rest := path; ; {
			_, after, ok := strings.Cut(rest, "/plugins/")
			if !ok {
				break
			}
			if d, _, ok := strings.Cut(after, "/"); ok && d != "" {
				out = append(out, d)
			}
			rest = after
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// provides are the CSI drivers p is a storage provider of on its node,
// sorted: p is a provider of driver D when some other pod on the node that
// has not finished uses a volume of D (a consumer), or a volume of D is
// attached to the node (not leaked), and p
//
//   - carries StorageProviderAnnotation naming D, or
//   - runs in the namespace of D's node plugin: a DaemonSet pod, on any
//     node, whose container args or env values hold "/plugins/D/" (the
//     node-driver-registrar's --kubelet-registration-path convention), or
//   - has a well-known label: app=rook-ceph-osd or app=rook-ceph-mon for a
//     driver ending in ".csi.ceph.com" (Rook), longhorn.io/component=instance-manager
//     for driver.longhorn.io (Longhorn).
func (st *storage) provides(p *view.Pod) []string {
	me := p.Namespace + "/" + p.Name
	var out []string
	var named []string
	if v := p.Annotations[StorageProviderAnnotation]; v != "" {
		named = strings.Split(v, ",")
	}
	for _, d := range st.needed {
		if !st.attached[d] && !slices.ContainsFunc(st.consumers[d], func(c string) bool { return c != me }) {
			continue
		}
		app := p.Labels["app"]
		switch {
		case slices.ContainsFunc(named, func(n string) bool { return strings.TrimSpace(n) == d }),
			st.pluginNamespaces[d][p.Namespace],
			strings.HasSuffix(d, ".csi.ceph.com") && (app == "rook-ceph-osd" || app == "rook-ceph-mon"),
			d == "driver.longhorn.io" && p.Labels["longhorn.io/component"] == "instance-manager":
			out = append(out, d)
		}
	}
	return out
}

// order gives the recognised providers among pods their order and why:
// one more than every other Drain or WaitCompleted pod's order (at least
// 1), and one more than any provider whose volumes they use.
func (st *storage) order(pods []*placed) {
	base := int32(0)
	var providers []*placed
	for _, pl := range pods {
		switch {
		case pl.drivers != nil:
			providers = append(providers, pl)
		case pl.behavior != BehaviorSkip:
			base = max(base, pl.order)
		}
	}
	for _, pl := range providers {
		pl.order = base + 1
		var whys []string
		for _, d := range pl.drivers {
			n := len(st.others(d, pl.pod))
			whys = append(whys, fmt.Sprintf("storage provider of driver %s for %d %s", d, n, plural(n, "pod", "pods")))
		}
		pl.why = strings.Join(whys, "; ")
	}
	// A provider that uses another's volumes goes before it: as many
	// passes as providers settle every chain (a cycle stops there).
	for range providers {
		for _, pl := range providers {
			for _, other := range providers {
				if other != pl && consumesAny(st, pl.pod, other.drivers) {
					other.order = max(other.order, pl.order+1)
				}
			}
		}
	}
}

// others are the consumers of driver d on the node but p.
func (st *storage) others(d string, p *view.Pod) []string {
	me := p.Namespace + "/" + p.Name
	return slices.DeleteFunc(slices.Clone(st.consumers[d]), func(c string) bool { return c == me })
}

// consumesAny reports whether p uses a volume of one of drivers.
func consumesAny(st *storage, p *view.Pod, drivers []string) bool {
	me := p.Namespace + "/" + p.Name
	return slices.ContainsFunc(drivers, func(d string) bool { return slices.Contains(st.consumers[d], me) })
}

// phasesOf are, by pod, its phase, the rank of its Order among the Orders
// of the Drain and WaitCompleted pods (those of one Order go together), and
// its behaviour.
func phasesOf(pods []placed) map[*view.Pod]placedPhase {
	var orders []int32
	for _, pl := range pods {
		if pl.behavior != BehaviorSkip {
			orders = append(orders, pl.order)
		}
	}
	slices.Sort(orders)
	orders = slices.Compact(orders)
	out := make(map[*view.Pod]placedPhase, len(pods))
	for _, pl := range pods {
		rank, _ := slices.BinarySearch(orders, pl.order)
		out[pl.pod] = placedPhase{phase: rank, behavior: pl.behavior}
	}
	return out
}

// placedPhase is a pod's phase in the simulated drain, and its behaviour.
type placedPhase struct {
	phase    int
	behavior DrainBehavior
}
