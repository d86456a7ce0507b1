package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// The annotations a surge puts on the owner it scales, in the same write as
// the new replica count: SurgeAnnotation names the plan (its cordon owner
// value, which carries its UID) and SurgeFromAnnotation the count before
// the surge. The first is what makes the scale-up and the restore happen
// once: the restore removes both in the write that sets the count back.
const (
	SurgeAnnotation     = "maintenance.sentinel.dev/surge"
	SurgeFromAnnotation = "maintenance.sentinel.dev/surge-from"
)

// The states of a surge (api.Surge.State).
const (
	SurgeIntended  = "intended"
	SurgeScaled    = "scaled"
	SurgeRestoring = "restoring"
	SurgeRestored  = "restored"
)

// SurgeOwner is an owner a surge scales (a Deployment or a ReplicaSet) as the
// caches show it.
type SurgeOwner struct {
	UID      types.UID
	Replicas int32
	// SurgedBy is its SurgeAnnotation: the plan whose surge it carries.
	SurgedBy string
	// Elsewhere are its pods on other nodes that are not terminating, by
	// state: Ready, running but not Ready, and not scheduled.
	Ready, Unready, Unscheduled int
}

// OwnerKey is the key of an owner in Facts.Owners.
func OwnerKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// OwnerScale is one write to an owner's replica count: a surge's scale-up, or
// its restore.
type OwnerScale struct {
	Surge   api.Surge
	Restore bool
}

// ScaleOutcome is what the controller's live write of an OwnerScale did.
type ScaleOutcome string

// The outcomes of an OwnerScale.
const (
	// Scaled: the owner carries this plan's surge (written now, or found).
	Scaled ScaleOutcome = "scaled"
	// Restored: the owner no longer carries this plan's surge (restored
	// now, or never scaled, or gone).
	Restored ScaleOutcome = "restored"
	// OwnerGone: the owner to scale up is gone or was replaced.
	OwnerGone ScaleOutcome = "owner-gone"
	// Forbidden: maintd may not write the owner.
	Forbidden ScaleOutcome = "forbidden"
	// Busy: the owner carries another plan's surge, which the caches did
	// not show yet: the surge is withdrawn, and decided again once that
	// one is restored (the owner's change wakes the plan).
	Busy ScaleOutcome = "busy"
)

// ScaleAnswer is the outcome of one OwnerScale and what it says, for the
// status and the events.
type ScaleAnswer struct {
	Scale   OwnerScale
	Outcome ScaleOutcome
	Message string
}

// RestoreTo is the replica count a restore sets on an owner a surge took
// from from to from+1 and that has current now: from when nobody else
// changed it; current-1 when someone added replicas meanwhile (theirs are
// kept, the surge's one is taken back); and current, left as it is, when
// someone lowered it below the surge (taking one more could leave the
// workload with none). write is false when the count stays.
func RestoreTo(from, current int32) (to int32, write bool, msg string) {
	switch {
	case current == from+1:
		return from, true, fmt.Sprintf("replicas restored from %d to %d", current, from)
	case current > from+1:
		return current - 1, true, fmt.Sprintf("replicas were changed to %d during the surge (%d to %d): took back the surge's one replica, %d", current, from, from+1, current-1)
	default:
		return current, false, fmt.Sprintf("replicas were changed to %d during the surge (%d to %d): left as they are", current, from, from+1)
	}
}

func (d *decider) surgeOf(kind, namespace, name string) *api.Surge {
	ep := d.st.EvictionProgress
	for i := range ep.Surges {
		if s := &ep.Surges[i]; s.Kind == kind && s.Namespace == namespace && s.Name == name {
			return s
		}
	}
	return nil
}

// surged reports whether v's owner carries (or is about to carry) one of
// the plan's surges: the surge answers the findings about its replicas.
func (d *decider) surged(v analyze.PodVerdict) bool {
	for _, s := range outstanding(d.st.EvictionProgress) {
		if owns(&s, v) {
			return true
		}
	}
	return false
}

// owns reports whether s's owner is in v's owner chain.
func owns(s *api.Surge, v analyze.PodVerdict) bool {
	return v.Namespace == s.Namespace && slices.ContainsFunc(v.Owners, func(h analyze.OwnerHop) bool { return h.UID == s.UID })
}

// covers reports whether a scaled surge still has a pod of its owner on the
// node to move: one that is not gone, not terminating and whose eviction
// was not accepted.
func (d *decider) covers(s *api.Surge, pods []analyze.PodVerdict) bool {
	for _, v := range pods {
		if !owns(s, v) {
			continue
		}
		if pod, ok := d.f.Pods[v.UID]; !ok || pod.Terminating {
			continue
		}
		i := slices.IndexFunc(d.st.EvictionProgress.ActivePods, func(a api.ActivePod) bool { return a.UID == v.UID })
		if i >= 0 && d.st.EvictionProgress.ActivePods[i].Outcome == Accepted {
			continue
		}
		return true
	}
	return false
}

// surge decides the scale-ups of the drain: a surge for each owner of a
// pod that needs one (analysis action Surge), and again each one written
// whose answer was not recorded. It reports whether it acts; the
// evictions wait for the next decision: the sooner the new pods start, the
// sooner the budgets allow.
func (d *decider) surge(pods []analyze.PodVerdict) bool {
	ep := d.st.EvictionProgress
	var scales []OwnerScale
	for i := range ep.Surges {
		if s := &ep.Surges[i]; s.State == SurgeIntended {
			// Written, and the scale-up's answer not recorded: it is
			// written again (the annotation makes it once). Until it
			// carries this plan's surge, the count it starts from is the
			// owner's as the caches show it now.
			if o, ok := d.f.Owners[OwnerKey(s.Kind, s.Namespace, s.Name)]; ok && o.SurgedBy != d.dec.Owner && o.UID == s.UID {
				s.From = o.Replicas
			}
			scales = append(scales, OwnerScale{Surge: *s})
		}
	}
	var busy []string
	for _, v := range pods {
		m := v.Surge
		if v.Action != analyze.Surge || m == nil {
			continue
		}
		if pod, ok := d.f.Pods[v.UID]; !ok || pod.Terminating {
			continue
		}
		if s := d.surgeOf(m.Kind, v.Namespace, m.Name); s != nil && s.State != SurgeRestored {
			continue
		}
		o := d.f.Owners[OwnerKey(m.Kind, v.Namespace, m.Name)]
		if o.SurgedBy != "" && o.SurgedBy != d.dec.Owner {
			busy = append(busy, fmt.Sprintf("%s %s/%s carries the surge of %s", m.Kind, v.Namespace, m.Name, o.SurgedBy))
			continue
		}
		s := api.Surge{Kind: m.Kind, Namespace: v.Namespace, Name: m.Name, UID: m.UID, PDB: m.PDB, From: m.Replicas, State: SurgeIntended}
		if old := d.surgeOf(m.Kind, v.Namespace, m.Name); old != nil {
			*old = s // a restored surge of the same owner: a new one
		} else {
			ep.Surges = append(ep.Surges, s)
		}
		scales = append(scales, OwnerScale{Surge: s})
	}
	d.surgeBusy = busy
	if len(scales) == 0 {
		return false
	}
	d.scale(scales)
	return true
}

// restores decides the restore of each surge whose pods have all gone or
// are going (and again of each one written whose answer was not
// recorded), and reports whether it acts. The drain asks for it when it has
// no eviction to send: a restore needs only to come before Drained, and an
// eviction the budget allows now shortens the drain.
func (d *decider) restores(pods []analyze.PodVerdict) bool {
	var scales []OwnerScale
	ep := d.st.EvictionProgress
	for i := range ep.Surges {
		s := &ep.Surges[i]
		switch {
		case s.State == SurgeScaled && !d.covers(s, pods):
			s.State = SurgeRestoring
			scales = append(scales, OwnerScale{Surge: *s, Restore: true})
		case s.State == SurgeRestoring:
			scales = append(scales, OwnerScale{Surge: *s, Restore: true})
		}
	}
	if len(scales) == 0 {
		return false
	}
	d.scale(scales)
	return true
}

// scale sets the decision to write scales, and the status to say so.
func (d *decider) scale(scales []OwnerScale) {
	var up, down []string
	for _, s := range scales {
		name := fmt.Sprintf("%s %s/%s", s.Surge.Kind, s.Surge.Namespace, s.Surge.Name)
		if s.Restore {
			down = append(down, name)
		} else {
			up = append(up, fmt.Sprintf("%s (%d to %d)", name, s.Surge.From, s.Surge.From+1))
		}
	}
	d.dec.Action, d.dec.Scales = Scale, scales
	d.dec.Requeue = time.Nanosecond
	if len(up) > 0 {
		msg := "surge: adding one replica to " + strings.Join(up, ", ") + " so that their pods on the node can go with no downtime"
		if len(down) > 0 {
			msg += "; restoring " + strings.Join(down, ", ")
		}
		d.set(api.Draining, api.SurgeRequested, "%s", msg)
		return
	}
	d.set(api.Draining, api.SurgeRestoring, "restoring the replicas of %s: their pods left the node", strings.Join(down, ", "))
}

// outstanding are the surges not yet restored.
func outstanding(ep *api.EvictionProgress) []api.Surge {
	if ep == nil {
		return nil
	}
	var out []api.Surge
	for _, s := range ep.Surges {
		if s.State != SurgeRestored {
			out = append(out, s)
		}
	}
	return out
}

// restoreOnStop restores the surges of a plan that stops: final, Blocked,
// Failed, or released (the uncordon waits for the restores). The phase and
// reason stay; the message says what is restored.
func (d *decider) restoreOnStop() {
	ep := d.st.EvictionProgress
	open := outstanding(ep)
	if len(open) == 0 {
		return
	}
	switch {
	case Final(&d.st), d.st.Phase == api.Blocked, d.st.Phase == api.Failed, d.dec.Action == Uncordon:
	default:
		return
	}
	var scales []OwnerScale
	var names []string
	for i := range ep.Surges {
		if s := &ep.Surges[i]; s.State != SurgeRestored {
			s.State = SurgeRestoring
			scales = append(scales, OwnerScale{Surge: *s, Restore: true})
			names = append(names, fmt.Sprintf("%s %s/%s", s.Kind, s.Namespace, s.Name))
		}
	}
	d.dec.Action, d.dec.Scales, d.dec.Targets = Scale, scales, nil
	d.dec.Requeue = time.Nanosecond
	if !strings.Contains(d.st.Message, restoringNote) {
		d.st.Message += restoringNote + strings.Join(names, ", ")
	}
}

// restoringNote starts what restoreOnStop adds to a stopped plan's message;
// it goes once the restores are recorded, as the next decision would make
// the message again without it.
const restoringNote = "; restoring the replicas of "

// RecordScales applies the answers of the scales Decide asked for to the
// status the controller persisted.
func RecordScales(p *api.MaintenancePlan, st api.MaintenancePlanStatus, answers []ScaleAnswer, now time.Time) api.MaintenancePlanStatus {
	now = now.UTC().Truncate(time.Second)
	st = *st.DeepCopy()
	ep := st.EvictionProgress
	if ep == nil {
		return st
	}
	at := metav1.NewTime(now)
	var blocked []string
	for _, a := range answers {
		i := slices.IndexFunc(ep.Surges, func(s api.Surge) bool { return s.UID == a.Scale.Surge.UID })
		if i < 0 {
			continue
		}
		s := &ep.Surges[i]
		switch a.Outcome {
		case Scaled:
			if s.State == SurgeIntended {
				s.State, s.ScaledAt = SurgeScaled, &at
			}
		case Restored:
			s.State, s.RestoredAt, s.Message = SurgeRestored, &at, a.Message
		case OwnerGone, Busy:
			ep.Surges = slices.Delete(ep.Surges, i, i+1)
		case Forbidden:
			ep.Surges = slices.Delete(ep.Surges, i, i+1)
			blocked = append(blocked, a.Message)
		}
	}
	if i := strings.Index(st.Message, restoringNote); i >= 0 && len(outstanding(ep)) == 0 {
		st.Message = st.Message[:i]
	}
	if len(blocked) > 0 {
		r := newRecorder(&st, Defaulted(p.Spec), now)
		r.block(api.SurgeImpossible, strings.Join(blocked, "; "))
		st.Phase, st.Reason, st.Message = api.Blocked, api.SurgeImpossible, r.blocked.Message
	}
	SetConditions(&st, p.Generation, now)
	Remember(&st, now)
	return st
}

// surgePending names the scaled surges whose budgets the picks waited for
// (keys): the pod each added is not Ready yet.
func (d *decider) surgePending(keys map[string]bool) string {
	var parts []string
	for _, s := range d.st.EvictionProgress.Surges {
		if s.State != SurgeScaled || !keys[s.Namespace+"/"+s.PDB] {
			continue
		}
		o := d.f.Owners[OwnerKey(s.Kind, s.Namespace, s.Name)]
		state := fmt.Sprintf("%d Ready, %d not Ready", o.Ready, o.Unready)
		if o.Unscheduled > 0 {
			state += fmt.Sprintf(", %d not scheduled: no node takes it yet", o.Unscheduled)
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s (%d to %d; its pods elsewhere: %s)", s.Kind, s.Namespace, s.Name, s.From, s.From+1, state))
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, "waiting for the pods the surges added to be Ready before evicting: "+strings.Join(parts, "; "))
	}
	if len(d.surgeBusy) > 0 {
		out = append(out, "waiting for other plans' surges to be restored: "+strings.Join(d.surgeBusy, "; "))
	}
	return strings.Join(out, "; ")
}
