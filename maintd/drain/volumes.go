package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// DefaultVolumeDetachTimeout is spec.volumeDetachTimeout's default: under
// the 6 minutes after which the attach-detach controller forces a detach.
const DefaultVolumeDetachTimeout = 5 * time.Minute

// Rules are the plan's drain rules as analyze.DrainOrder reads them.
func Rules(rules []api.DrainRule) []analyze.DrainRule {
	out := make([]analyze.DrainRule, 0, len(rules))
	for _, r := range rules {
		a := analyze.DrainRule{Name: r.Name, Behavior: analyze.DrainBehavior(r.Drain.Behavior)}
		if r.Drain.Order != nil {
			a.Order = *r.Drain.Order
		}
		for _, p := range r.Pods {
			a.Pods = append(a.Pods, analyze.DrainRulePods{Selector: p.Selector, NamespaceSelector: p.NamespaceSelector})
		}
		out = append(out, a)
	}
	return out
}

// groupOf maps each pod (namespace/name) to its drain group's index in
// Facts.Groups.
func (d *decider) groupOf() map[string]int {
	out := map[string]int{}
	for i, g := range d.f.Groups {
		for _, p := range g.Pods {
			out[p] = i
		}
	}
	return out
}

// unskipped drops the pods a drain rule or their annotation keeps out of
// the drain (Skip): never evicted, never waited for.
func (d *decider) unskipped(pods []analyze.PodVerdict) []analyze.PodVerdict {
	of := d.groupOf()
	return slices.DeleteFunc(pods, func(v analyze.PodVerdict) bool {
		i, ok := of[v.Namespace+"/"+v.Name]
		return ok && d.f.Groups[i].Behavior == analyze.BehaviorSkip
	})
}

// ordered is the pods that may be evicted now: those of the drain groups
// of the lowest order that still has pods (analyze.DrainOrder); a group of
// a higher order starts only once every pod of the lower ones is gone, and
// a group of storage providers once the volumes it serves are detached
// from the node (its WaitsFor). WaitCompleted pods are never evicted: the
// groups after them wait for them to complete. why and gate say what the
// pods left wait for (gate "" when nothing waits but the pods picked).
func (d *decider) ordered(pods []analyze.PodVerdict) (now []analyze.PodVerdict, why api.Reason, gate string) {
	ep := d.st.EvictionProgress
	ep.Groups = nil
	if len(d.f.Groups) == 0 {
		return pods, "", ""
	}
	of := d.groupOf()
	// A pod counts until it is gone: evicted and Terminating (no longer
	// among pods), it still holds back the groups after its own.
	there := make(map[string]bool, len(d.f.Pods))
	for _, p := range d.f.Pods {
		there[p.Namespace+"/"+p.Name] = true
	}
	present := make([]int32, len(d.f.Groups))
	for i, g := range d.f.Groups {
		for _, p := range g.Pods {
			if there[p] {
				present[i]++
			}
		}
	}
	open := int32(0)
	opened := false
	for i, g := range d.f.Groups {
		ep.Groups = append(ep.Groups, api.DrainGroup{Order: g.Order, Behavior: string(g.Behavior), Why: g.Why, Pods: int32(len(g.Pods)), Remaining: present[i]})
		if g.Behavior != analyze.BehaviorSkip && present[i] > 0 && (!opened || g.Order < open) {
			open, opened = g.Order, true
		}
	}
	var completing, held []string
	for _, v := range pods {
		i, ok := of[v.Namespace+"/"+v.Name]
		if !ok {
			// Not in any group (the order was read before it came): it
			// goes once every group has gone, never before one.
			if !opened {
				now = append(now, v)
			}
			continue
		}
		g := d.f.Groups[i]
		switch {
		case g.Order != open:
		case g.Behavior == analyze.BehaviorWaitCompleted:
			completing = append(completing, v.Namespace+"/"+v.Name)
		case len(g.WaitsFor) > 0:
			held = append(held, v.Namespace+"/"+v.Name)
		default:
			now = append(now, v)
		}
	}
	var later []string
	for _, g := range d.f.Groups {
		if g.Order > open && g.Behavior != analyze.BehaviorSkip {
			later = append(later, fmt.Sprintf("%s (order %d, %d pods)", g.Why, g.Order, len(g.Pods)))
		}
	}
	after := ""
	if len(later) > 0 {
		after = "; after them: " + strings.Join(slices.Compact(later), ", ")
	}
	switch {
	case len(held) > 0:
		var waits []string
		for _, g := range d.f.Groups {
			if g.Order == open {
				waits = append(waits, g.WaitsFor...)
			}
		}
		return now, api.WaitingForDrainGroup, fmt.Sprintf("storage providers %s wait for the volumes they serve to detach from node %s: %s%s",
			strings.Join(held, ", "), d.spec.NodeName, strings.Join(slices.Compact(slices.Sorted(slices.Values(waits))), ", "), after)
	case len(completing) > 0 && len(now) == 0:
		return now, api.WaitingForCompletion, fmt.Sprintf("waiting for %s to complete (WaitCompleted: never evicted)%s", strings.Join(completing, ", "), after)
	case after != "":
		return now, api.WaitingForDrainGroup, fmt.Sprintf("drain group order %d goes first%s", open, after)
	}
	return now, "", ""
}

// drained ends the drain once the pods are gone: Drained when no volume
// of the evicted pods is attached to the node any more, else waiting for
// the detach (named), Blocked when it is stuck past
// spec.volumeDetachTimeout or leaked (nothing will detach it).
func (d *decider) drained() {
	ep := d.st.EvictionProgress
	var left []analyze.Attachment
	for _, a := range d.f.Attachments {
		if len(a.Pods) == 0 {
			left = append(left, a)
		}
	}
	if len(left) == 0 {
		ep.Cooldowns, ep.Detaches = nil, nil
		d.set(api.Drained, api.ReasonDrained, "node %s is drained: %d pods evicted, their volumes detached; it stays cordoned until spec.release is set", d.spec.NodeName, d.st.Pods.Evicted)
		return
	}
	since := map[string]metav1.Time{}
	for _, x := range ep.Detaches {
		since[x.VolumeAttachment+"|"+x.PersistentVolume] = x.Since
	}
	ep.Detaches = ep.Detaches[:0]
	var leaked, stuck []string
	first := time.Time{}
	for _, a := range left {
		s, ok := since[a.VolumeAttachment+"|"+a.PV]
		if !ok {
			s = metav1.NewTime(d.now)
		}
		ep.Detaches = append(ep.Detaches, api.Detach{VolumeAttachment: a.VolumeAttachment, PersistentVolume: a.PV, Driver: a.Driver, Since: s, Leaked: a.Leaked, DetachError: a.DetachError})
		switch until := s.Add(d.spec.VolumeDetachTimeout); {
		case a.Leaked != "":
			leaked = append(leaked, fmt.Sprintf("%s (%s)", describe(a), a.Leaked))
		case !d.now.Before(until):
			why := "no detach error reported"
			if a.DetachError != "" {
				why = "detach error: " + a.DetachError
			}
			stuck = append(stuck, fmt.Sprintf("%s, waiting since %s: %s", describe(a), s.UTC().Format(time.RFC3339), why))
		case first.IsZero() || until.Before(first):
			first = until
		}
	}
	if !first.IsZero() {
		d.requeueAt(first)
	}
	switch {
	case len(leaked) > 0:
		d.set(api.Blocked, api.VolumeAttachmentLeaked, "node %s: its pods are gone, and %s: nothing detaches a leaked attachment by itself; check that the volume is not in use, then delete the VolumeAttachment (the plan is Drained once it is gone)",
			d.spec.NodeName, strings.Join(leaked, "; "))
	case len(stuck) > 0:
		d.set(api.Blocked, api.VolumeDetachStuck, "node %s: its pods are gone, and a volume did not detach within spec.volumeDetachTimeout %s: %s (the plan is Drained once it detaches)",
			d.spec.NodeName, d.spec.VolumeDetachTimeout, strings.Join(stuck, "; "))
	default:
		d.set(api.Draining, api.WaitingForVolumeDetach, "%d pods evicted and gone; waiting for their volumes to detach from node %s: %s", d.st.Pods.Evicted, d.spec.NodeName, attachmentList(left))
	}
}

// describe names an attachment: its VolumeAttachment, volume and driver.
func describe(a analyze.Attachment) string {
	name := "VolumeAttachment " + a.VolumeAttachment
	if a.VolumeAttachment == "" {
		name = "node.status.volumesAttached entry"
	}
	pv := a.PV
	if pv == "" {
		pv = "unknown"
	}
	return fmt.Sprintf("%s (PV %s, driver %s)", name, pv, a.Driver)
}

// attachmentList names attachments, the first few.
func attachmentList(as []analyze.Attachment) string {
	const show = 5
	names := make([]string, 0, show)
	for _, a := range as[:min(len(as), show)] {
		names = append(names, describe(a))
	}
	if len(as) > show {
		names = append(names, fmt.Sprintf("and %d more", len(as)-show))
	}
	return strings.Join(names, ", ")
}
