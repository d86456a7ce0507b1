// The faults the world injects, and the people and nodes that act in it.

package sim

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// arm injects a fault into the next request it fits.
func (w *World) arm(k faultKind) {
	w.armed = append(w.armed, armedFault{kind: k})
	w.logf("arm fault %s", k)
}

type faultKind string

const (
	none       faultKind = ""
	killBefore faultKind = "kill-before-request"
	// killBeforeEviction kills before the next eviction only (a script's).
	killBeforeEviction faultKind = "kill-before-eviction"
	killAfter          faultKind = "kill-after-request"
	// killAfterScale kills after the next write to an owner is applied (a
	// script's).
	killAfterScale faultKind = "kill-after-scale"
	conflict       faultKind = "409-on-status-write"
	throttle       faultKind = "429-throttle-eviction"
	lost           faultKind = "eviction-answer-lost"
	timeoutApplied faultKind = "eviction-timeout-applied"
	timeoutNotSent faultKind = "eviction-timeout-not-applied"
	// conflictWrite is a 409 on a write of maintd to a node, an owner, a
	// campaign (its status or itself) or a plan itself (not its status).
	conflictWrite faultKind = "409-on-write"
	// readFail and readTimeout fail a live read (a get, or a list that is
	// not an informer's) of a leader that caught up: the API server's 500,
	// or no answer before the request's timeout.
	readFail    faultKind = "live-read-error"
	readTimeout faultKind = "live-read-timeout"
)

var faultKinds = []faultKind{killBefore, killAfter, conflict, throttle, lost, timeoutApplied, timeoutNotSent}

// moreFaults are the faults that the seeds drawing them (World.faulty)
// arm besides faultKinds, from a stream of their own.
var moreFaults = []faultKind{conflictWrite, conflictWrite, readFail, readTimeout}

type armedFault struct{ kind faultKind }

// fault is the fault the next request of in meets, if one is armed for
// it; w.mu is held.
func (w *World) fault(in *instance, a k8stesting.Action) faultKind {
	if in != w.leader() {
		return none
	}
	read := a.GetVerb() == "get" || a.GetVerb() == "list"
	if l, ok := a.(k8stesting.ListActionImpl); read && (!in.caughtUp || ok && l.ListOptions.ResourceVersion != "") {
		return none // an informer's list, or the catch-up's reads
	}
	eviction := a.GetSubresource() == "eviction"
	for i, f := range w.armed {
		fits := false
		switch f.kind {
		case readFail, readTimeout:
			fits = read
		case conflictWrite:
			switch r := a.GetResource(); {
			case read || a.GetVerb() == "create" || a.GetVerb() == "delete":
			case r == nodesR || r == depsR || r == rsR || r == campsR:
				fits = true
			case r == plansR:
				fits = a.GetSubresource() != "status"
			}
		case killBefore, killAfter:
			fits = !read
		case conflict:
			fits = a.GetResource() == plansR && a.GetSubresource() == "status"
		case killBeforeEviction:
			fits = eviction
		case killAfterLedger:
			fits = w.ledgerWrite(a)
		case killBeforeDelete, killAfterDelete, deleteLost:
			fits = podDelete(a)
		case killAfterScale:
			fits = a.GetResource() == depsR || a.GetResource() == rsR
		default:
			fits = eviction
		}
		fits = fits && (!read || f.kind == readFail || f.kind == readTimeout)
		if fits {
			w.armed = slices.Delete(w.armed, i, i+1)
			return f.kind
		}
	}
	return none
}

// actor plays another actor: a person, another drainer.
func (w *World) actor() {
	r := w.rng
	w.mu.Lock()
	defer w.mu.Unlock()
	nodes := w.s.list(nodesR, "", nil)
	plans := w.s.list(plansR, "", nil)
	if w.pauses && w.pausing.IntN(4) == 0 {
		w.togglePause()
		return
	}
	if w.campaign && w.campaigning.IntN(4) == 0 {
		w.campaignActor()
		return
	}
	if w.hpa && w.autoscaling.IntN(5) == 0 {
		w.autoscale()
		return
	}
	if w.placed && w.placing.IntN(10) == 0 {
		w.makeRoom()
		return
	}
	if w.kinds && w.kinding.IntN(10) == 0 {
		w.deleteBare()
		return
	}
	if w.surge && w.orphaning.IntN(12) == 0 && w.orphanSurge() {
		return
	}
	if w.surge && w.surging.IntN(8) == 0 {
		// A person adds a replica to an app, maybe while a surge holds it.
		deps := w.s.list(depsR, Namespace, nil)
		d := deps[w.surging.IntN(len(deps))].(*appsv1.Deployment)
		n := ptrOr(d.Spec.Replicas, 1) + 1
		_, err := w.s.patch(depsR, Namespace, d.Name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
		if err == nil {
			w.replicas[d.Name]++
			w.peopleScaled(d, n)
		}
		w.logf("person: scale %s to %d (surge %q) -> %s", d.Name, n, d.Annotations[drain.SurgeAnnotation], errText(err))
		return
	}
	if w.surge && w.lowering.IntN(10) == 0 {
		// A person takes a replica away from an app with more than one,
		// maybe while a surge holds it (below the surge's count, or back
		// to it after someone added one).
		var deps []*appsv1.Deployment
		for _, o := range w.s.list(depsR, Namespace, nil) {
			if d := o.(*appsv1.Deployment); ptrOr(d.Spec.Replicas, 1) > 1 {
				deps = append(deps, d)
			}
		}
		if len(deps) == 0 {
			return
		}
		d := deps[w.lowering.IntN(len(deps))]
		n := ptrOr(d.Spec.Replicas, 1) - 1
		_, err := w.s.patch(depsR, Namespace, d.Name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
		if err == nil {
			w.replicas[d.Name]--
			w.peopleScaled(d, n)
		}
		w.logf("person: scale %s down to %d (surge %q) -> %s", d.Name, n, d.Annotations[drain.SurgeAnnotation], errText(err))
		return
	}
	if w.pinned && w.pinning.IntN(10) == 0 {
		if len(plans) > 0 && w.pinning.IntN(3) == 0 {
			// A person accepts replacements that fit nowhere now (an
			// autoscaler would add the room).
			p := plans[w.pinning.IntN(len(plans))].(*api.MaintenancePlan)
			p.Spec.AcceptedRisks = append(p.Spec.AcceptedRisks, "replacement-unschedulable")
			_, err := w.s.update(plansR, p, false)
			w.logf("person: accept replacement-unschedulable on %s -> %s", p.Name, errText(err))
			return
		}
		// A person labels a node for the pinned workload: labels are only
		// added, so a replacement that fits in the caches fits for real.
		node := nodes[w.pinning.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"metadata":{"labels":{"disk":"ssd"}}}`))
		w.logf("person: label %s disk=ssd -> %s", node.Name, errText(err))
		return
	}
	switch r.IntN(7) {
	case 0: // a person cordons a node (kubectl cordon: no owner annotation)
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"spec":{"unschedulable":true}}`))
		w.logf("person: cordon %s -> %s", node.Name, errText(err))
	case 1: // a person uncordons a node (kubectl uncordon)
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"spec":{"unschedulable":null}}`))
		if err == nil {
			w.uncordoned[node.Name] = w.clock.Now()
		}
		w.logf("person: uncordon %s -> %s", node.Name, errText(err))
	case 2: // another drainer evicts a pod
		pods := w.s.list(podsR, Namespace, nil)
		if w.s.csi != nil && w.s.csi.providers != "" {
			// A storage provider too (kubectl drain does not order them:
			// their consumers deleted later hang while none runs on
			// their node).
			for _, o := range w.s.list(podsR, w.s.csi.providers, nil) {
				if w.s.provider(o.(*corev1.Pod)) {
					pods = append(pods, o)
				}
			}
		}
		if len(pods) == 0 {
			return
		}
		pod := pods[r.IntN(len(pods))].(*corev1.Pod)
		v := w.s.evict(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}})
		w.logf("another drainer: evict %s -> %d", pod.Name, v.Code)
	case 3, 4: // a person releases, deletes or edits a plan
		if len(plans) == 0 {
			return
		}
		p := plans[r.IntN(len(plans))].(*api.MaintenancePlan)
		switch r.IntN(4) {
		case 0:
			p.Spec.Release = true
			_, err := w.s.update(plansR, p, false)
			w.logf("person: release %s -> %s", p.Name, errText(err))
		case 1:
			_, err := w.s.remove(plansR, "", p.Name, "", false)
			w.logf("person: delete %s -> %s", p.Name, errText(err))
		case 2:
			p.Spec.DryRun = !p.Spec.DryRun
			_, err := w.s.update(plansR, p, false)
			w.logf("person: dryRun=%t on %s -> %s", p.Spec.DryRun, p.Name, errText(err))
		case 3:
			p.Spec.AcceptedRisks = append(p.Spec.AcceptedRisks, "single-replica")
			_, err := w.s.update(plansR, p, false)
			w.logf("person: edit acceptedRisks of %s -> %s", p.Name, errText(err))
		}
	case 5: // a person creates another plan
		node := nodes[r.IntN(len(nodes))].(*corev1.Node)
		name := fmt.Sprintf("late-%d", len(w.trace))
		spec := api.MaintenancePlanSpec{NodeName: node.Name, AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 20 * time.Minute}}
		if w.starting.IntN(3) == 0 {
			spec.StartWithin = &metav1.Duration{Duration: time.Duration(20+w.starting.IntN(161)) * time.Second}
		}
		if w.volumes && w.storing.IntN(5) != 0 {
			spec.AcceptedRisks = []string{string(analyze.RWOReattach)}
		}
		_, err := w.s.create(plansR, &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		within := "default"
		if spec.StartWithin != nil {
			within = spec.StartWithin.Duration.String()
		}
		w.logf("person: create plan %s for %s (startWithin %s) -> %s", name, node.Name, within, errText(err))
	case 6: // a budget changes
		pdbs := w.s.list(pdbsR, Namespace, nil)
		if len(pdbs) == 0 {
			return
		}
		pdb := pdbs[r.IntN(len(pdbs))].(*policyv1.PodDisruptionBudget)
		if w.budgets && w.budgeting.IntN(2) == 0 {
			w.editBudget(pdb)
			return
		}
		if pdb.Spec.MaxUnavailable != nil {
			v := intstr.FromInt32(pdb.Spec.MaxUnavailable.IntVal%2 + 1)
			pdb.Spec.MaxUnavailable = &v
		}
		_, err := w.s.update(pdbsR, pdb, false)
		w.logf("person: edit PDB %s -> %s", pdb.Name, errText(err))
	}
}

// editBudget plays a person who edits a budget beyond its
// maxUnavailable: its selector moves to another app's pods or spans two
// apps (the budgets then overlap), or its minAvailable goes up or down
// (a maxUnavailable budget becomes minAvailable 1); w.mu is held.
func (w *World) editBudget(pdb *policyv1.PodDisruptionBudget) {
	br := w.budgeting
	var apps []string
	for _, o := range w.s.list(depsR, Namespace, nil) {
		apps = append(apps, o.(*appsv1.Deployment).Name)
	}
	what := ""
	switch br.IntN(3) {
	case 0:
		app := apps[br.IntN(len(apps))]
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		what = "selector app=" + app
	case 1:
		a, b := apps[br.IntN(len(apps))], apps[br.IntN(len(apps))]
		pdb.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{a, b}}}}
		what = fmt.Sprintf("selector app in (%s, %s)", a, b)
	default:
		n := int32(1)
		if pdb.Spec.MinAvailable != nil {
			n = max(0, pdb.Spec.MinAvailable.IntVal+int32(br.IntN(3))-1)
		}
		v := intstr.FromInt32(n)
		pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable = &v, nil
		what = fmt.Sprintf("minAvailable %d", n)
	}
	_, err := w.s.update(pdbsR, pdb, false)
	w.logf("person: edit PDB %s: %s -> %s", pdb.Name, what, errText(err))
}

// autoscale plays the HorizontalPodAutoscaler controller: it sets the
// replicas of one autoscaled Deployment to what its metrics ask (drawn,
// 1 to 4) and writes the autoscaler's status. The count it sets is the
// one the Deployment must keep (w.replicas); w.mu is held.
func (w *World) autoscale() {
	hpas := w.s.list(hpasR, Namespace, nil)
	if len(hpas) == 0 {
		return
	}
	h := hpas[w.autoscaling.IntN(len(hpas))].(*autoscalingv2.HorizontalPodAutoscaler)
	n := int32(1 + w.autoscaling.IntN(4))
	_, err := w.s.patch(depsR, Namespace, h.Spec.ScaleTargetRef.Name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
	if err == nil {
		w.replicas[h.Spec.ScaleTargetRef.Name] = n
		h.Status.CurrentReplicas, h.Status.DesiredReplicas = h.Status.DesiredReplicas, n
		_, err = w.s.update(hpasR, h, true)
	}
	w.logf("autoscaler %s: scale %s to %d -> %s", h.Name, h.Spec.ScaleTargetRef.Name, n, errText(err))
}

// peopleScaled records a person's write of n replicas to d (as read
// before it) while a surge of maintd holds it; w.mu is held.
func (w *World) peopleScaled(d *appsv1.Deployment, n int32) {
	if sr := w.surges["deployments/"+d.Name]; sr != nil && d.Annotations[drain.SurgeAnnotation] != "" {
		sr.people, sr.set = n, true
	}
}

// orphanSurge plays a person who deletes a plan whose surge holds an owner
// and removes its finalizer, so that maintd never restores the surge as
// the plan goes; false when no owner carries a surge. w.mu is held.
func (w *World) orphanSurge() bool {
	for _, o := range w.s.list(depsR, Namespace, nil) {
		name, _, ok := drain.ParseOwner(o.(*appsv1.Deployment).Annotations[drain.SurgeAnnotation])
		if !ok {
			continue
		}
		if _, err := w.s.remove(plansR, "", name, "", false); err != nil {
			return false
		}
		p, err := w.s.get(plansR, "", name)
		if err == nil {
			pl := p.(*api.MaintenancePlan)
			pl.Finalizers = nil
			if _, err = w.s.update(plansR, pl, false); err == nil {
				w.forced[pl.UID] = true
			}
		}
		w.logf("person: delete plan %s and remove its finalizer (its surge of %s left behind) -> %s", name, o.(*appsv1.Deployment).Name, errText(err))
		return true
	}
	return false
}

// campaignActor plays a campaign's people and the cluster's sickness: a
// node goes NotReady or comes back, a person releases the campaign, or
// (rarely) deletes it; w.mu is held.
func (w *World) campaignActor() {
	cr := w.campaigning
	switch n := cr.IntN(10); {
	case n < 5:
		nodes := w.s.list(nodesR, "", nil)
		node := nodes[cr.IntN(len(nodes))].(*corev1.Node)
		ready := corev1.ConditionFalse
		if !nodeIsReady(node) {
			ready = corev1.ConditionTrue
		}
		w.setReady(node.Name, ready)
	case n < 8:
		_, err := w.s.patch(campsR, "", "fleet", []byte(`{"spec":{"release":true}}`))
		w.logf("person: release campaign fleet -> %s", errText(err))
	case n < 9:
		w.retry()
	default:
		_, err := w.s.remove(campsR, "", "fleet", "", false)
		w.logf("person: delete campaign fleet -> %s", errText(err))
	}
}

// retry plays a person who reads the campaign's status and lists in its
// spec.retry the nodes that did not complete and have no plan; w.mu is
// held.
func (w *World) retry() {
	o, err := w.s.get(campsR, "", "fleet")
	if err != nil {
		return
	}
	c := o.(*api.MaintenanceCampaign)
	var nodes []string
	for _, n := range c.Status.NodeStatus {
		if _, err := w.s.get(plansR, "", n.Plan); n.Outcome != api.NodeCompleted && n.Outcome != api.NodePending && n.Plan != "" && err != nil && !slices.Contains(c.Spec.Retry, n.Name) {
			nodes = append(nodes, n.Name)
		}
	}
	if len(nodes) == 0 {
		return
	}
	c.Spec.Retry = append(c.Spec.Retry, nodes...)
	_, err = w.s.update(campsR, c, false)
	if err == nil {
		for _, n := range nodes {
			w.retried[string(c.UID)+"/"+n] = true
		}
	}
	w.logf("person: retry nodes %v of campaign fleet -> %s", nodes, errText(err))
}

// setReady sets a node's Ready condition, as its kubelet (or the node
// lifecycle controller, once the kubelet is silent) does; w.mu is held.
func (w *World) setReady(name string, ready corev1.ConditionStatus) {
	o, err := w.s.get(nodesR, "", name)
	if err != nil {
		return
	}
	node := o.(*corev1.Node)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	_, err = w.s.update(nodesR, node, true)
	w.logf("node %s: Ready %s -> %s", name, ready, errText(err))
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pauseSwitch is the simulated maintd's pause switch.
var pauseSwitch = types.NamespacedName{Namespace: "maintd-system", Name: "maintd-pause"}

// togglePause creates the pause switch, or deletes it, as a person does;
// w.mu is held.
func (w *World) togglePause() {
	if _, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name); err == nil {
		_, err := w.s.remove(cmsR, pauseSwitch.Namespace, pauseSwitch.Name, "", false)
		w.logf("person: resume maintenance (delete the pause switch) -> %s", errText(err))
		return
	}
	_, err := w.s.create(cmsR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pauseSwitch.Namespace, Name: pauseSwitch.Name},
		Data: map[string]string{"reason": "incident"}})
	if err == nil {
		w.switches++
	}
	w.logf("person: pause maintenance (create the pause switch) -> %s", errText(err))
}

// switchOn is the pause switch the server holds (w.switches), 0 for none;
// w.mu is held.
func (w *World) switchOn() int {
	if _, err := w.s.get(cmsR, pauseSwitch.Namespace, pauseSwitch.Name); err != nil {
		return 0
	}
	return w.switches
}

// pausedSinceCatchUp reports whether the server has held the same pause
// switch since in caught up (read it live), as people's records say: in
// knew of it whatever its caches show; w.mu is held.
func (w *World) pausedSinceCatchUp(in *instance) bool {
	on := w.switchOn()
	if in.deposed {
		on = in.switchAtDepose // what its requests in flight were sent under
	}
	return in.pausedAtCatchUp != 0 && in.pausedAtCatchUp == on
}

// pausedFor reports whether in's caches show the pause switch, or the
// server has held it since in caught up; w.mu is held.
func (w *World) pausedFor(in *instance) bool {
	_, ok := in.mirror[cmsR][pauseSwitch.String()]
	return ok || w.pausedSinceCatchUp(in)
}
