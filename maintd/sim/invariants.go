// The promises maintd keeps, checked as the world runs and once it settled.

package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// --- the invariants -------------------------------------------------------

// checkEviction checks, before the endpoint answers, that an eviction in
// sends is one its caches (what was sent to its watches) predict the API
// accepts, counting the evictions maintd made that those caches do not
// show yet; and that no 429 is sent again before a newer status of its
// budget. w.mu is held.
func (w *World) checkEviction(in *instance, ev *policyv1.Eviction) {
	if ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
		return
	}
	if w.pausedFor(in) {
		w.violate("%s evicted %s/%s while maintenance was paused (its caches showed the switch, or the server has held the switch it read when it took over)", in.name, ev.Namespace, ev.Name)
	}
	throttled := w.throttled
	switch {
	case in.deposed:
		throttled = in.throttledAtDepose // what it was sent under
	case w.throttledLate && w.throttledBy != in.id:
		throttled = time.Time{}
	}
	if now := w.clock.Now(); now.Before(throttled) {
		w.violate("%s evicted %s/%s %s before the Retry-After of a throttling 429 ended", in.name, ev.Namespace, ev.Name, throttled.Sub(now))
	}
	o, ok := in.mirror[podsR][key(ev.Namespace, ev.Name)]
	if !ok {
		w.violate("%s evicted %s/%s, which its cache does not hold", in.name, ev.Namespace, ev.Name)
		return
	}
	pod := o.(*corev1.Pod)
	w.evictsInWindow(in, ev, pod)
	w.checkWave(in, pod)
	if live, err := w.s.get(podsR, ev.Namespace, ev.Name); err == nil {
		w.checkAllowed(in, live.(*corev1.Pod))
	}
	if uid := ev.DeleteOptions; uid == nil || uid.Preconditions == nil || uid.Preconditions.UID == nil || *uid.Preconditions.UID != pod.UID {
		w.violate("%s evicted %s/%s without the cached pod's UID as precondition", in.name, ev.Namespace, ev.Name)
	}
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for _, k := range sortedKeys(in.mirror[pdbsR]) {
		pdb := in.mirror[pdbsR][k].(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && pdb.Spec.Selector != nil && pdb.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels)) {
			pdbs = append(pdbs, pdb)
		}
	}
	switch {
	case len(pdbs) > 1:
		w.violate("%s evicted %s/%s, which its cache shows under %d PDBs (the API answers 500)", in.name, ev.Namespace, ev.Name, len(pdbs))
		return
	case len(pdbs) == 0:
		return
	}
	pdb := pdbs[0]
	if !ready(pod) {
		return // the unhealthy-pod policy decides; maintd's analysis predicts it
	}
	if w.forcible(in, pod) {
		return // break-glass asks the Eviction API first (breakglass.go)
	}
	rv, _ := parseRV(pdb.ResourceVersion)
	pk := key(pdb.Namespace, pdb.Name)
	if at, ok := w.refused[pk]; ok && rv <= at && !(in.deposed && !w.refusedAt[pk].Before(in.deposedAt)) {
		w.violate("%s evicted %s/%s under PDB %s again before a newer status of it (429 at version %d, cache at %d)", in.name, ev.Namespace, ev.Name, pk, at, rv)
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		w.violate("%s evicted %s/%s while its cache shows PDB %s not yet processed", in.name, ev.Namespace, ev.Name, pk)
		return
	}
	// The evictions of maintd that its caches do not show yet, but those
	// of another process it could not know of: an old leader's in flight
	// (sent while deposed), or, for an old leader, the new one's since.
	unseen := 0
	for _, e := range w.spent[pk] {
		if e.rv > rv && (e.by == in.id || !e.deposed && !(in.deposed && !e.at.Before(in.deposedAt))) {
			unseen++
		}
	}
	if int(pdb.Status.DisruptionsAllowed)-unseen <= 0 {
		w.violate("%s evicted %s/%s while its cache shows PDB %s allowing %d disruptions and %d evictions of maintd not yet in it", in.name, ev.Namespace, ev.Name, pk, pdb.Status.DisruptionsAllowed, unseen)
	}
}

// campaignOf is the campaign that owns plan p in objs (by name), nil for
// none.
func campaignOf(p *api.MaintenancePlan, camps map[string]runtime.Object) *api.MaintenanceCampaign {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "MaintenanceCampaign" {
		return nil
	}
	if o, ok := camps[ref.Name]; ok && o.(*api.MaintenanceCampaign).UID == ref.UID {
		return o.(*api.MaintenanceCampaign)
	}
	return nil
}

func breakerOpen(c *api.MaintenanceCampaign) bool {
	return c != nil && c.Status.Breaker != nil && c.Status.Breaker.Open
}

// checkWave checks an eviction of a pod on the node of a campaign's plan:
// its campaign's breaker is not open in the instance's caches, and no plan
// of its wave is still about to cordon, in those caches and on the server
// (the plans of a wave cordon before any of them evicts, so that no
// evicted pod lands on a node of the wave). This is the wave's gate as
// maintd states it (campaign.AboutToCordon), kept beside movedOnce, the
// promise by the world's history, because it flags the gate opened early
// even when no pod then lands on the wave's node (fixed seed 147).
// The gate opens once, at the plan's first eviction: a plan of the wave
// that could not cordon then (Blocked, Failed, waiting for a slot) and is
// about to cordon later (its cause cleared, or a pause reported over its
// block: Pending/paused) holds back none of the plan's next evictions, as
// movedOnce lets be a pod moved again onto its node (TestSchedules/22: a
// Blocked plan paused by the breaker and resumed).
// w.mu is held.
func (w *World) checkWave(in *instance, pod *corev1.Pod) {
	var mine *api.MaintenancePlan
	for _, o := range w.s.list(plansR, "", nil) {
		if p := o.(*api.MaintenancePlan); p.Spec.NodeName == pod.Spec.NodeName && p.Labels[api.CampaignLabel] != "" && p.DeletionTimestamp == nil && drain.HoldsCordon(&p.Status) {
			mine = p
		}
	}
	if mine == nil {
		return
	}
	if c := campaignOf(mine, in.mirror[campsR]); breakerOpen(c) {
		w.violate("%s evicted %s/%s for plan %s while its caches showed campaign %s's breaker open (%s)", in.name, pod.Namespace, pod.Name, mine.Name, c.Name, c.Status.Breaker.Reason)
	}
	opened, evicted := w.opened[mine.UID] // evicted: the plan sent one before
	if !evicted {
		opened = map[string]bool{}
		w.opened[mine.UID] = opened
	}
	for _, o := range w.s.list(plansR, "", nil) {
		q := o.(*api.MaintenancePlan)
		if q.UID == mine.UID || q.Labels[api.CampaignLabel] != mine.Labels[api.CampaignLabel] || q.Labels[api.WaveLabel] != mine.Labels[api.WaveLabel] || q.DeletionTimestamp != nil || opened[q.Name] {
			continue
		}
		if !evicted && !campaign.AboutToCordon(&q.Status) {
			opened[q.Name] = true
		}
		if n, err := w.s.get(nodesR, "", q.Spec.NodeName); err == nil && n.(*corev1.Node).Spec.Unschedulable &&
			n.(*corev1.Node).Annotations[cordon.OwnerAnnotation] == drain.Owner(q) {
			continue // its cordon landed: no pod lands there, whatever its status says yet
		}
		cached, ok := in.mirror[plansR][q.Name]
		if ok && campaign.AboutToCordon(&q.Status) && campaign.AboutToCordon(&cached.(*api.MaintenancePlan).Status) {
			w.violate("%s evicted %s/%s for plan %s while plan %s of its wave %s was still %s/%s (not yet cordoned)", in.name, pod.Namespace, pod.Name, mine.Name, q.Name, q.Labels[api.WaveLabel], q.Status.Phase, q.Status.Reason)
		}
	}
}

// movedOnce checks an eviction of maintd against the world's history of
// pods (store.lineage: which replacement replaces which evicted pod): no
// pod lineage is evicted twice by the plans of one wave of a campaign (a
// campaign in one wave moves each pod once). The plan is the one whose
// cordon the pod's node carries on the server. Between waves a pod is
// moved again when it landed on a later wave's node (docs/maintd.md,
// "Waves and slots": allowed, and counted in status.counts.evicted), so
// the promise is per wave; within a wave, a second eviction is let be
// where maintd could not have kept the pod off that node: a person
// uncordoned the node since its plan was made, or the node's plan could
// not cordon when the first eviction was made (gone or going, Blocked,
// Failed or waiting for a slot on the server, its node not cordoned by
// it). w.mu is held.
func (w *World) movedOnce(pod *corev1.Pod) {
	p := w.cordonPlan(pod.Spec.NodeName)
	if p == nil {
		return
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "MaintenanceCampaign" {
		return
	}
	lineage := w.s.lineageOf(pod.UID)
	k := string(ref.UID) + "/" + p.Labels[api.WaveLabel] + "/" + string(lineage)
	now := w.clock.Now()
	if m := w.moved[k]; m != nil {
		if !m.excused[pod.Spec.NodeName] && w.uncordoned[pod.Spec.NodeName].Before(p.CreationTimestamp.Time) {
			w.violate("campaign %s's wave %s moved a pod twice: lineage %s evicted from %s for plan %s at %s, and again, as %s, from %s for plan %s: its replacement landed on a node of the wave before that node's plan cordoned",
				ref.Name, p.Labels[api.WaveLabel], lineage, m.node, m.plan, m.at.Sub(epoch), pod.Name, pod.Spec.NodeName, p.Name)
		}
		return
	}
	m := &move{plan: p.Name, node: pod.Spec.NodeName, at: now, excused: map[string]bool{}}
	for _, o := range w.s.list(plansR, "", nil) {
		q := o.(*api.MaintenancePlan)
		if qr := metav1.GetControllerOf(q); qr == nil || qr.UID != ref.UID || q.Labels[api.WaveLabel] != p.Labels[api.WaveLabel] {
			continue
		}
		if n, err := w.s.get(nodesR, "", q.Spec.NodeName); err == nil && n.(*corev1.Node).Spec.Unschedulable && n.(*corev1.Node).Annotations[cordon.OwnerAnnotation] == drain.Owner(q) {
			continue // cordoned by its plan: no pod lands there
		}
		if st := q.Status; q.DeletionTimestamp != nil || st.Phase == api.Blocked || st.Phase == api.Failed || st.Reason == api.WaitingForSlot {
			m.excused[q.Spec.NodeName] = true
		}
	}
	w.moved[k] = m
}

// madePlan checks a plan a campaign made: not while its caches show the
// pause switch or the campaign's breaker open, and not before every plan
// of the waves before it is done. w.mu is held.
func (w *World) madePlan(in *instance, p *api.MaintenancePlan) {
	// The switch as the instance's caches show it; the breaker as the
	// campaign's status says, which maintd writes before it makes a wave
	// (the decision that closes the breaker may make the wave).
	camps := map[string]runtime.Object{}
	for _, o := range w.s.list(campsR, "", nil) {
		camps[keyOf(o)] = o
	}
	if in.deposed {
		camps = in.mirror[campsR] // what its decision, in flight, was made on
	}
	if w.pausedFor(in) || breakerOpen(campaignOf(p, camps)) {
		w.violate("%s made plan %s while maintenance was paused (its caches, or the switch it read when it took over), or its campaign's breaker open", in.name, p.Name)
	}
	wave := campaign.WaveOf(p)
	for _, o := range w.s.list(plansR, "", nil) {
		q := o.(*api.MaintenancePlan)
		if q.Labels[api.CampaignLabel] == p.Labels[api.CampaignLabel] && campaign.WaveOf(q) < wave && !drain.Final(&q.Status) && q.DeletionTimestamp == nil {
			w.violate("%s made plan %s of wave %d while plan %s of wave %d is %s/%s", in.name, p.Name, wave, q.Name, campaign.WaveOf(q), q.Status.Phase, q.Status.Reason)
		}
	}
	w.budgetPlan(p)
	w.logf("%s: made plan %s for %s, wave %d", in.name, p.Name, p.Spec.NodeName, wave)
}

// evicted records what an eviction of maintd did; w.mu is held.
func (w *World) evicted(in *instance, ev *policyv1.Eviction, v Verdict) {
	if ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
		return
	}
	w.logf("%s: evict %s/%s -> %d %s", in.name, ev.Namespace, ev.Name, v.Code, statusText(v.Status))
	if v.PDB != "" {
		pk := key(ev.Namespace, v.PDB)
		w.spent[pk] = append(w.spent[pk], spend{rv: v.PDBVersion, by: in.id, deposed: in.deposed, at: w.clock.Now()})
	}
	if v.Applied {
		uid := *ev.DeleteOptions.Preconditions.UID
		w.evictions[uid]++
		if w.evictions[uid] > 1 {
			w.violate("pod %s/%s (uid %s) evicted %d times", ev.Namespace, ev.Name, uid, w.evictions[uid])
		}
		if o, err := w.s.get(podsR, ev.Namespace, ev.Name); err == nil && o.(*corev1.Pod).UID == uid {
			w.movedOnce(o.(*corev1.Pod))
			w.checkProvider(in, o.(*corev1.Pod))
			w.checkRules(in, o.(*corev1.Pod))
			w.evictedVolumes(o.(*corev1.Pod))
		}
	}
	res := evict.Classify(v.Code, v.Status, nil)
	w.refusals(ev, &res)
	if res.Outcome == evict.Throttled {
		w.throttle, w.throttleBy = w.clock.Now().Add(time.Duration(res.RetryAfterSeconds)*time.Second), in.id
	}
	if res.Outcome == evict.BudgetExhausted && res.PDB != nil {
		pk := key(ev.Namespace, res.PDB.Name)
		if o, ok := in.mirror[pdbsR][pk]; ok {
			rv, _ := parseRV(o.(*policyv1.PodDisruptionBudget).ResourceVersion)
			w.refused[pk] = max(w.refused[pk], rv)
			w.refusedAt[pk] = w.clock.Now()
		}
	}
}

func statusText(st *metav1.Status) string {
	if st == nil {
		return ""
	}
	msg := st.Message
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			msg += " (" + c.Message + ")"
		}
	}
	return msg
}

// wrote records a write of maintd that the invariants follow: a plan's
// status (silence, the drain's start) and a node's cordon. w.mu is held.
func (w *World) wrote(in *instance, a k8stesting.Action, before, out runtime.Object) {
	if a.GetResource() == depsR || a.GetResource() == rsR {
		w.scaled(in, before, out)
		return
	}
	if a.GetResource() == nodesR {
		if b, ok := before.(*corev1.Node); ok {
			if n, ok := out.(*corev1.Node); ok {
				w.uncordonsHealthy(in, b, n)
			}
		}
		if b, ok := before.(*corev1.Node); ok && w.pausedFor(in) {
			n := out.(*corev1.Node)
			if owner := n.Annotations[cordon.OwnerAnnotation]; owner != "" && owner != b.Annotations[cordon.OwnerAnnotation] {
				w.violate("%s cordoned %s for %s while maintenance was paused (its caches showed the switch, or the server has held the switch it read when it took over)", in.name, n.Name, owner)
			}
		}
		return
	}
	p, ok := out.(*api.MaintenancePlan)
	if ok && a.GetVerb() == "create" {
		w.madePlan(in, p)
	}
	if !ok || a.GetSubresource() != "status" {
		return
	}
	if b, _ := before.(*api.MaintenancePlan); p.Status.Phase == api.Drained && (b == nil || b.Status.Phase != api.Drained) {
		w.checkDetached(in, p)
	}
	if !w.throttle.IsZero() && w.throttleBy == in.id {
		// Recorded by the instance that got it: in force for every
		// instance, but an old leader's record in flight, which the new
		// one (caught up before it landed) cannot know of.
		w.throttled, w.throttle, w.throttledBy, w.throttledLate = w.throttle, time.Time{}, in.id, in.deposed
	}
	if in.deposed && p.Status.Phase == api.Cordoning {
		w.late[p.UID] = true
	}
	switch ep := p.Status.EvictionProgress; {
	case p.Status.Phase == api.Cordoning:
		if _, ok := w.drainStart[p.UID]; !ok {
			w.startsInTime(in, p)
			w.startsInWindow(in, p)
			w.drainsOnce(p)
			// The second the status records: the API keeps times to the
			// second, and the deadline counts from startedAt.
			w.drainStart[p.UID] = w.sentAt(in).Truncate(time.Second)
			w.replaceable(in, p)
		}
	case ep == nil || ep.Scope == "":
		delete(w.drainStart, p.UID) // the cordon did not happen: back to waiting
	}
	// What the instance read: events of other kinds and of other plans,
	// its own answers and actions; a restart reads everything anew.
	// The instance's own writes of other plans count too: it reads them
	// before their events come (Controller.newest).
	in.wrotePlans++
	in.wrotePlan[p.Name]++
	// The generation it observed counts: a record written over a spec
	// read live after a conflict does not observe it, the decision after
	// it does.
	facts := fmt.Sprintf("%d/%d/%d/%d/%d/%d/%d", in.id, in.facts, in.planEvents-in.perPlan[p.Name], in.wrotePlans-in.wrotePlan[p.Name], w.actions, p.Generation, p.Status.ObservedGeneration)
	pr := string(p.Status.Phase) + "/" + string(p.Status.Reason)
	sl := w.silence[p.UID]
	// A request without an answer waits evictionTimeout, then is tried
	// again: a wait on time, not on a fact.
	timed := false
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, a := range ep.ActivePods {
			timed = timed || a.Outcome == drain.Unknown || a.Outcome == drain.Requested || a.Outcome == drain.Gone
		}
	}
	// A request of an act that failed (a 409, a failed or timed-out read)
	// is tried again at once: the status written after it may be written
	// once more, as after a wait on time.
	timed = timed || w.erred[in.id]
	delete(w.erred, in.id)
	if sl == nil || sl.facts != facts || retries(sl.last) || sl.timed {
		w.silence[p.UID] = &silence{facts: facts, last: pr, seen: map[string]bool{pr: true}, timed: timed}
		return
	}
	sl.timed = timed
	switch {
	case sl.last == pr:
		diff := ""
		if b, ok := before.(*api.MaintenancePlan); ok {
			diff = cmp.Diff(b.Status, p.Status)
		}
		w.violate("%s wrote plan %s's status again (%s) while nothing it reads changed: %s", in.name, p.Name, pr, diff)
	case sl.seen[pr]:
		w.violate("plan %s flapped back to %s while nothing it reads changed", p.Name, pr)
	}
	sl.last, sl.seen[pr] = pr, true
}

// startsInTime checks a plan's decision to start its drain (its first
// Cordoning) against what people wrote and the server recorded: not past
// its creation plus spec.startWithin (an hour when unset, as the CRD
// defaults it), to the second the API keeps; and not once its campaign
// has failed. w.mu is held.
func (w *World) startsInTime(in *instance, p *api.MaintenancePlan) {
	within := time.Hour
	if p.Spec.StartWithin != nil {
		within = p.Spec.StartWithin.Duration
	}
	now := w.sentAt(in)
	if by := p.CreationTimestamp.Add(within); now.Sub(by) >= time.Second {
		w.violate("plan %s started its drain at %s, past its start-by %s (created %s, startWithin %s)", p.Name, now.Format(time.RFC3339), by.Format(time.RFC3339), p.CreationTimestamp.Format(time.RFC3339), within)
	}
	if name := p.Labels[api.CampaignLabel]; name != "" {
		if o, err := w.s.get(campsR, "", name); err == nil {
			if c := o.(*api.MaintenanceCampaign); c.Status.Phase == api.Failed {
				w.violate("plan %s started its drain while its campaign %s is Failed (%s)", p.Name, name, c.Status.Reason)
			}
		}
	}
}

// sentAt is when in sent the request being served: now, or for a deposed
// instance (its request in flight) when it lost its lease at the latest.
func (w *World) sentAt(in *instance) time.Time {
	if in.deposed {
		return in.deposedAt
	}
	return w.clock.Now()
}

// drainsOnce checks a plan's start of its drain against the campaign that
// made it, by the plan's owner reference: no campaign drains a node twice
// unless a person listed the node in its spec.retry. w.mu is held.
func (w *World) drainsOnce(p *api.MaintenancePlan) {
	for _, ref := range p.OwnerReferences {
		if ref.Kind != "MaintenanceCampaign" {
			continue
		}
		k := string(ref.UID) + "/" + p.Spec.NodeName
		if !slices.Contains(w.drains[k], p.UID) {
			w.drains[k] = append(w.drains[k], p.UID)
		}
		if n := len(w.drains[k]); n > 1 && !w.retried[k] {
			w.violate("campaign %s drains node %s again (plans %v), and no person listed it in spec.retry", ref.Name, p.Spec.NodeName, w.drains[k])
		}
	}
}

// scaled checks a write of maintd to an owner against the world's records:
// a surge's scale-up adds one replica, to the count people set, and the
// annotation naming its plan, to an owner without one; its restore removes
// the annotation and sets the count people set (w.replicas), or leaves the
// count a person lowered below the surge's meanwhile as that person wrote
// it; no other write changes a replica count. The expected count is the
// world's, never maintd's own function (drain.RestoreTo). w.mu is held.
func (w *World) scaled(in *instance, before, out runtime.Object) {
	if before == nil {
		w.violate("%s wrote an owner that did not exist", in.name)
		return
	}
	bm, _ := meta.Accessor(before)
	om, _ := meta.Accessor(out)
	replicas := func(o runtime.Object) int32 {
		switch o := o.(type) {
		case *appsv1.Deployment:
			return ptrOr(o.Spec.Replicas, 1)
		case *appsv1.ReplicaSet:
			return ptrOr(o.Spec.Replicas, 1)
		}
		return 0
	}
	was, is := bm.GetAnnotations()[drain.SurgeAnnotation], om.GetAnnotations()[drain.SurgeAnnotation]
	rb, ro := replicas(before), replicas(out)
	name := om.GetName()
	r := depsR
	if _, ok := out.(*appsv1.ReplicaSet); ok {
		r = rsR
	}
	k := r.Resource + "/" + name
	switch {
	case was == "" && is != "":
		if w.pausedFor(in) {
			w.violate("%s surged %s while maintenance was paused (its caches showed the switch, or the server has held the switch it read when it took over)", in.name, name)
		}
		if ro != rb+1 {
			w.violate("%s surged %s from %d to %d replicas, not one more", in.name, name, rb, ro)
		}
		if want, ok := w.replicas[name]; ok && r == depsR && rb != want {
			w.violate("%s surged %s from %d replicas, not the %d people set", in.name, name, rb, want)
		}
		for _, o := range w.s.list(hpasR, om.GetNamespace(), nil) {
			if t := o.(*autoscalingv2.HorizontalPodAutoscaler).Spec.ScaleTargetRef; t.Name == name && (t.Kind == "Deployment" && r == depsR || t.Kind == "ReplicaSet" && r == rsR) {
				w.violate("%s surged %s, which the HorizontalPodAutoscaler %s scales", in.name, name, o.(*autoscalingv2.HorizontalPodAutoscaler).Name)
			}
		}
		w.surges[k] = &surgeRecord{from: rb, to: ro}
		w.logf("%s: surge %s %d -> %d for %s", in.name, name, rb, ro, is)
	case was != "" && is != "":
		w.violate("%s wrote %s again while it carries the surge of %s (now %s; replicas %d -> %d)", in.name, name, was, is, rb, ro)
	case was != "" && is == "":
		// People's records say what the count must be: the count people
		// set (before the surge, and one more or one fewer for each change
		// of theirs meanwhile); but a count a person lowered below the
		// surge's is left as that person set it.
		sr := w.surges[k]
		if sr == nil {
			w.violate("%s restored %s, which carries a surge (%s) the world never saw made", in.name, name, was)
			return
		}
		delete(w.surges, k)
		want, why := sr.from, "its count before the surge"
		if r == depsR {
			want, why = w.replicas[name], "the count people set"
		}
		if sr.set && sr.people < sr.to {
			want, why = sr.people, fmt.Sprintf("left as a person lowered it during the surge (%d to %d)", sr.from, sr.to)
			if r == depsR {
				w.replicas[name] = sr.people
			}
		}
		if ro != want {
			w.violate("%s restored %s to %d replicas (it had %d, %d before the surge); people's records say %d: %s", in.name, name, ro, rb, sr.from, want, why)
		}
		w.logf("%s: restore %s %d -> %d", in.name, name, rb, ro)
	case rb != ro:
		w.violate("%s changed %s's replicas from %d to %d without a surge", in.name, name, rb, ro)
	}
}

// surged checks that no owner carries the surge of a plan that is gone or
// stopped (terminal, Blocked, Failed, released or being deleted), unless
// the controller will look at that plan again (scheduled). w.mu is held.
func (w *World) surged(scheduled map[string]bool) {
	plans := map[string]*api.MaintenancePlan{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		plans[p.Name] = p
	}
	for _, r := range []schema.GroupVersionResource{depsR, rsR} {
		for _, o := range w.s.list(r, Namespace, nil) {
			m, _ := meta.Accessor(o)
			mark := m.GetAnnotations()[drain.SurgeAnnotation]
			if mark == "" {
				continue
			}
			name, uid, _ := drain.ParseOwner(mark)
			p := plans[name]
			switch {
			case scheduled[name]:
			case p == nil || p.UID != uid:
				w.violate("%s %s stays scaled up by the surge of plan %s, which is gone", r.Resource, m.GetName(), name)
			case drain.Final(&p.Status) || p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed || p.Spec.Release || p.DeletionTimestamp != nil:
				w.violate("%s %s stays scaled up by the surge of plan %s, which is %s/%s (release %t, deleting %t)", r.Resource, m.GetName(), name, p.Status.Phase, p.Status.Reason, p.Spec.Release, p.DeletionTimestamp != nil)
			}
		}
	}
}

// pausedPlans checks, when the world is idle, that the plans follow the
// pause switch: while it exists every plan that can act says paused, and
// once it is gone none does (unless the controller will look at the plan
// again). w.mu is held.
func (w *World) pausedPlans(scheduled map[string]bool) {
	_, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name)
	camps := map[string]runtime.Object{}
	for _, o := range w.s.list(campsR, "", nil) {
		camps[keyOf(o)] = o
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		if scheduled[p.Name] || p.DeletionTimestamp != nil || p.Spec.Release || drain.Final(&st) || st.Phase == api.Drained || st.Phase == "" {
			continue
		}
		on := err == nil || breakerOpen(campaignOf(p, camps))
		switch paused := st.Reason == api.Paused; {
		case on && !paused:
			w.violate("plan %s is %s/%s while maintenance is paused", p.Name, st.Phase, st.Reason)
		case !on && paused:
			w.violate("plan %s is still paused after the pause switch was deleted", p.Name)
		}
	}
}

// replaceable checks, when plan p starts its drain, that every pod on its
// node that a controller makes again has another node it could ever run on
// as the world's scheduler judges it (fitsNode: node selector, required
// affinity, taints, requests within allocatable; cordons and what runs
// there aside, as they change): a drain that can never complete blocks
// before any write. People only ever give pods more room (labels added,
// taints taken off, CPU raised), so a replacement that fits in the caches
// fits on the server. The pods are those on the node that in's caches
// showed when it decided (and still there): one bound there since is
// news its watch had not brought. w.mu is held.
func (w *World) replaceable(in *instance, p *api.MaintenancePlan) {
	if f := p.Status.Forecast; f != nil && f.Verdict == "never" {
		for _, c := range f.Causes {
			if c.Verdict == "never" && !slices.Contains(p.Spec.AcceptedRisks, c.Reason) {
				w.violate("plan %s started its drain with a forecast that says never (%s), not accepted: %+v", p.Name, c.Reason, f.Causes)
				break
			}
		}
	}
	if slices.Contains(p.Spec.AcceptedRisks, "replacement-unschedulable") {
		return // a person accepts pods whose replacements fit nowhere now
	}
	nodes := w.s.list(nodesR, "", nil)
	for _, pod := range w.seen(in, p.Spec.NodeName) {
		var why []string
		for _, no := range nodes {
			if node := no.(*corev1.Node); node.Name != p.Spec.NodeName {
				if no := fitsNode(pod, node); no == "" {
					why = nil
					break
				} else {
					why = append(why, node.Name+": "+no)
				}
			}
		}
		if len(why) > 0 {
			w.violate("plan %s started draining node %s, where pod %s's replacement can run on no other node (%s)", p.Name, p.Spec.NodeName, pod.Name, strings.Join(why, "; "))
		}
	}
}

// stranded is a pod on node that the world's scheduler cannot place
// elsewhere once the drain moves it, or "": the node's pods placed one
// after the other (by name) on the other schedulable nodes, by the
// scheduler's filters and choice, the node's own pods no longer counted
// (going) and the node itself cordoned. w.mu is held.
func (w *World) stranded(node string) string {
	c := w.s.readCluster()
	c.unbind(node)
	for _, pod := range w.moves(node) {
		if best, _ := c.place(pod, node); best == "" {
			return pod.Name
		}
	}
	return ""
}

// event records an Event of maintd; w.mu is held.
func (w *World) event(in *instance, regarding runtime.Object, typ, reason, action, note string) {
	m, _ := meta.Accessor(regarding)
	w.logf("%s: event %s %s on %s: %s", in.name, typ, reason, m.GetName(), note)
}

// forcedReleased checks, at an idle point, that no node carries the
// cordon of a plan a person deleted removing its finalizer: maintd lifted
// what the plan left behind (its surges: surged), unless the controller
// will look at that plan again (scheduled: a retry after a 409 on the
// owner's restore). w.mu is held.
func (w *World) forcedReleased(scheduled map[string]bool) {
	for _, o := range w.s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		if name, uid, ok := drain.ParseOwner(node.Annotations[cordon.OwnerAnnotation]); ok && w.forced[uid] && !scheduled[name] {
			w.violate("node %s still carries the cordon of plan %s, which a person deleted removing its finalizer", node.Name, node.Annotations[cordon.OwnerAnnotation])
		}
	}
}

// cordonPlan is the plan whose cordon node carries on the server (its owner
// annotation names the plan and its UID), nil when none does. w.mu is held.
func (w *World) cordonPlan(node string) *api.MaintenancePlan {
	no, err := w.s.get(nodesR, "", node)
	if err != nil {
		return nil
	}
	name, uid, ok := drain.ParseOwner(no.(*corev1.Node).Annotations[cordon.OwnerAnnotation])
	if !ok {
		return nil
	}
	o, err := w.s.get(plansR, "", name)
	if err != nil || o.(*api.MaintenancePlan).UID != uid {
		return nil
	}
	return o.(*api.MaintenancePlan)
}
