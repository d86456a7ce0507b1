// The checks made after every step (check) and once the world is idle:
// what nothing may wait on, and how the world must end.

package sim

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/slots"
)

// check checks the invariants that hold after every step.
func (w *World) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	plans := map[string]*api.MaintenancePlan{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		plans[p.Name] = p
	}
	for _, o := range w.s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		owner := node.Annotations[cordon.OwnerAnnotation]
		if !drain.IsOwner(owner) {
			continue
		}
		parts := strings.Split(owner, "/")
		p := plans[parts[1]]
		switch {
		case p == nil || string(p.UID) != parts[2]:
			if !w.forced[types.UID(parts[2])] { // forcedReleased checks those
				w.violate("node %s carries the cordon of plan %s, which no longer exists", node.Name, parts[1])
			}
		case p.Status.Phase == api.Completed:
			w.violate("node %s carries the cordon of plan %s, which is Completed", node.Name, parts[1])
		}
	}
	held := w.held()
	for _, p := range plans {
		if p.Status.Phase == api.Failed && p.Status.Reason == api.DeadlineExceeded {
			start, ok := w.drainStart[p.UID]
			deadline := drain.Defaulted(p.Spec).Deadline
			if !ok {
				w.violate("plan %s failed its deadline before its drain started", p.Name)
			} else if w.clock.Now().Before(start.Add(deadline)) {
				w.violate("plan %s failed its deadline %s after %s of drain", p.Name, deadline, w.clock.Now().Sub(start))
			}
		}
	}
	// An old leader's cordon intent written in flight, after the new
	// leader counted the slots, explains one node more each.
	late := 0
	for _, uid := range held {
		if w.late[uid] {
			late++
		}
	}
	if len(held) > w.MaxNodes+late {
		w.violate("%d nodes in maintenance (%s), more than %d (and %d an old leader's writes in flight explain)", len(held), strings.Join(sortedKeys(held), ", "), w.MaxNodes, late)
	}
}

// held is the nodes in maintenance on the server (slots.Held, the
// definition maintd decides by, over the server's objects); w.mu is held.
func (w *World) held() map[string]types.UID {
	var plans []*api.MaintenancePlan
	for _, o := range w.s.list(plansR, "", nil) {
		plans = append(plans, o.(*api.MaintenancePlan))
	}
	owners := map[string]string{}
	for _, o := range w.s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		owners[node.Name] = node.Annotations[cordon.OwnerAnnotation]
	}
	held := map[string]types.UID{}
	for _, h := range slots.Held(plans, owners) {
		held[h.Node] = h.Plan.UID
	}
	return held
}

// idle checks, when the world is idle (every event sent, nothing ready to
// reconcile, the cluster's controllers done), that no plan waits for what
// is there: a slot that is free, or a PDB that allows a disruption; w.mu is
// held.
func (w *World) idle() { w.stuck(false) }

// stuck checks that no plan waits for what is there; at idle points a plan
// the controller will look at again (a queued delay) is let be, at the end
// (strict) none is. w.mu is held.
func (w *World) stuck(strict bool) {
	scheduled := map[string]bool{}
	if in := w.leader(); in != nil && !strict {
		in.queue.mu.Lock()
		for k := range in.queue.waiting {
			scheduled[k] = true
		}
		in.queue.mu.Unlock()
		in.campaigns.mu.Lock()
		for k := range in.campaigns.waiting {
			scheduled["campaign/"+k] = true
		}
		in.campaigns.mu.Unlock()
	}
	w.surged(scheduled)
	w.pausedPlans(scheduled)
	w.forcedReleased(scheduled)
	w.budgetStuck(scheduled)
	if !strict {
		w.woken()
	}
	held := w.held()
	// The PDBs under which a live plan has a request whose answer may
	// still come (or be tried again): waiting on them is right.
	asking := map[string]bool{}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		if ep := p.Status.EvictionProgress; ep != nil && !drain.Final(&p.Status) {
			for _, a := range ep.ActivePods {
				if a.Outcome == drain.Requested || a.Outcome == drain.Unknown {
					asking[a.Namespace+"/"+a.PDB] = true
				}
			}
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		if m := o.(*api.MaintenanceCampaign); m.Status.Reason == api.WaitingForSlot && m.DeletionTimestamp == nil && len(held) < w.MaxNodes && !scheduled["campaign/"+m.Name] {
			w.violate("campaign %s waits for a slot while %d of %d nodes are in maintenance", m.Name, len(held), w.MaxNodes)
		}
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		if st.Reason == api.WaitingForSlot && len(held) < w.MaxNodes && p.DeletionTimestamp == nil && !scheduled[p.Name] {
			w.violate("plan %s waits for a slot while %d of %d nodes are in maintenance", p.Name, len(held), w.MaxNodes)
		}
		if st.Reason == api.DrainNeverCompletes && p.DeletionTimestamp == nil && !scheduled[p.Name] {
			if pod := w.stranded(p.Spec.NodeName); pod == "" {
				w.violate("plan %s is blocked as never completing, while every pod on node %s has another node to go to", p.Name, p.Spec.NodeName)
			}
		}
		ep := st.EvictionProgress
		if ep == nil || st.Phase != api.CoolingDown || p.DeletionTimestamp != nil || scheduled[p.Name] {
			continue
		}
		for _, c := range ep.Cooldowns {
			if (c.Reason != api.BudgetExhausted && c.Reason != api.PDBStale) || asking[c.PDB] {
				continue
			}
			ns, name, _ := strings.Cut(c.PDB, "/")
			if o, err := w.s.get(pdbsR, ns, name); err == nil {
				pdb := o.(*policyv1.PodDisruptionBudget)
				if pdb.Status.DisruptionsAllowed > 0 && pdb.Status.ObservedGeneration >= pdb.Generation {
					w.violate("plan %s waits on PDB %s, which allows %d disruptions (version %s; the wait is from version %s; %d evictions in flight)",
						p.Name, c.PDB, pdb.Status.DisruptionsAllowed, pdb.ResourceVersion, c.ResourceVersion, len(ep.ActivePods))
					w.logf("  its evictions in flight: %+v; the PDB's status: %+v", ep.ActivePods, pdb.Status)
				}
			}
		}
	}
}

// woken checks, at an idle point, that every plan and campaign at rest
// would decide what its status says if it decided now: otherwise something
// it waits on changed and no event woke it (a wait it did not declare, or a
// wake-up lost). A delay queued for it does not excuse it (a deadline's is
// hours away), but a retry after an error does. The decision is the
// leader's own, made from its caches without acting; w.mu is held.
func (w *World) woken() {
	in := w.leader()
	if in == nil || !in.caughtUp || !in.ctrl.HasSynced() {
		return
	}
	retrying := func(kind int, name string) bool { return in.retrying[kind].NumRequeues(name) > 0 }
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		// A plan waiting for a slot rests on the slot alone: its checks
		// are made again when one is free (and a free slot it waits for
		// is flagged by stuck).
		// A verdict recorded and not yet written is written by the plan's
		// next decision, due within controller.RecordDelay: the plan is
		// not at rest.
		if retrying(0, p.Name) || p.DeletionTimestamp != nil || drain.Final(&p.Status) || p.Status.Reason == api.WaitingForSlot || in.ctrl.Unwritten(p.Name) {
			continue
		}
		cached, dec, ok, err := in.ctrl.Would(p.Name)
		if err != nil {
			w.failf("%s: decide plan %s: %v", in.name, p.Name, err)
			return
		}
		if !ok || cached.ResourceVersion != p.ResourceVersion {
			continue
		}
		if st := dec.Status; dec.Action != drain.None || st.Phase != p.Status.Phase || st.Reason != p.Status.Reason {
			w.violate("plan %s rests as %s/%s and would now decide %s/%s (action %q): nothing woke it; its last decision waited on %v",
				p.Name, p.Status.Phase, p.Status.Reason, st.Phase, st.Reason, dec.Action, in.ctrl.Waits(p.Name, false))
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		m := o.(*api.MaintenanceCampaign)
		if retrying(1, m.Name) || m.DeletionTimestamp != nil || campaign.Final(&m.Status) {
			continue
		}
		cached, dec, ok, err := in.ctrl.WouldCampaign(m.Name)
		if err != nil {
			w.failf("%s: decide campaign %s: %v", in.name, m.Name, err)
			return
		}
		if !ok || cached.ResourceVersion != m.ResourceVersion {
			continue
		}
		if st := dec.Status; len(dec.Create) > 0 || len(dec.Release) > 0 || st.Phase != m.Status.Phase || st.Reason != m.Status.Reason {
			w.violate("campaign %s rests as %s/%s and would now decide %s/%s (%d plans to make, %d to release): nothing woke it; its last decision waited on %v",
				m.Name, m.Status.Phase, m.Status.Reason, st.Phase, st.Reason, len(dec.Create), len(dec.Release), in.ctrl.Waits(m.Name, true))
		}
	}
}

// final checks how the plans ended once the world settled: each is done,
// failed, or blocked or waiting with a reason and a message that names the
// cause; none is left in a step of its drain or past its deadline.
func (w *World) final() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stuck(true)
	w.budgetEnd()
	w.tallyGates()
	for _, o := range w.s.list(depsR, Namespace, nil) {
		d := o.(*appsv1.Deployment)
		if got, want := ptrOr(d.Spec.Replicas, 1), w.replicas[d.Name]; d.Annotations[drain.SurgeAnnotation] == "" && got != want {
			w.violate("Deployment %s has %d replicas once its surges are restored, not %d as people set it", d.Name, got, want)
		}
	}
	for _, o := range w.s.list(campsR, "", nil) {
		c := o.(*api.MaintenanceCampaign)
		st := c.Status
		if st.Reason == "" || st.Message == "" {
			w.violate("campaign %s ended %s without a reason or message", c.Name, st.Phase)
		}
		done := len(st.Nodes) > 0
		for _, n := range st.Nodes {
			p, err := w.s.get(plansR, "", campaign.PlanName(c.Name, n))
			done = done && err == nil && p.(*api.MaintenancePlan).Status.Phase == api.Completed
		}
		if done && st.Phase != api.Completed && st.Phase != api.Failed { // Failed: its deadline passed first
			w.violate("campaign %s is %s/%s while every plan of it is Completed", c.Name, st.Phase, st.Reason)
		}
		if c.Spec.Release && st.Phase == api.Drained && !w.gates.neverBack(st.Nodes) {
			w.violate("campaign %s is released and still Drained: %s", c.Name, st.Message)
		}
	}
	for _, o := range w.s.list(plansR, "", nil) {
		p := o.(*api.MaintenancePlan)
		st := p.Status
		switch st.Phase {
		case api.Drained, api.Completed, api.Failed:
		case api.Blocked, api.CoolingDown, api.Pending:
			if st.Reason == "" || st.Message == "" {
				w.violate("plan %s ended %s without a reason or message", p.Name, st.Phase)
			}
		default:
			w.violate("plan %s is still %s/%s after the world settled", p.Name, st.Phase, st.Reason)
		}
		if start, ok := w.drainStart[p.UID]; ok && st.Phase != api.Drained && st.Phase != api.Completed && st.Phase != api.Failed && st.Phase != api.Blocked &&
			w.clock.Now().After(start.Add(drain.Defaulted(p.Spec).Deadline+time.Minute)) {
			w.violate("plan %s is still %s/%s %s after its drain started, past its deadline %s", p.Name, st.Phase, st.Reason, w.clock.Now().Sub(start), drain.Defaulted(p.Spec).Deadline)
		}
	}
}
