package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/slots"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// Reconcile runs one plan once: read, decide, persist, act, record. It
// returns when to run it again without an event.
func (c *Controller) reconcile(ctx context.Context, name string) (time.Duration, error) {
	cached, err := c.plans.Get(name)
	if apierrors.IsNotFound(err) {
		c.planWaits.Forget(name)
		c.mu.Lock()
		delete(c.superseded, name)
		delete(c.unwritten, name)
		delete(c.forecasts, name)
		delete(c.analyses, name)
		c.mu.Unlock()
		return 0, c.releaseOrphans(ctx, name, nil)
	}
	if err != nil {
		return 0, err
	}
	if !c.selects(cached) || c.behind(cached) {
		return 0, nil
	}
	if err := c.releaseOrphans(ctx, name, cached); err != nil {
		return 0, err
	}
	p := cached.DeepCopy()
	if p.DeletionTimestamp != nil {
		return 0, c.finalize(ctx, p)
	}
	if !hasFinalizer(p) {
		p.Finalizers = append(p.Finalizers, Finalizer)
		rv := p.ResourceVersion
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		p, err = c.cfg.Plans.Update(tctx, p, metav1.UpdateOptions{})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("add finalizer: %w", err)
		}
		c.wrote(p, rv)
	}
	// A verdict recorded and not yet written is the plan's status: this
	// decision writes it, with its own. One recorded over another version
	// is dropped: the plan changed under it, and this decision reads the
	// pods of the requests the status shows instead.
	written := p.Status
	c.mu.Lock()
	u := c.unwrittenOver(p)
	wait := c.unwrittenDue(p.Name, c.cfg.Now())
	if u == nil {
		delete(c.unwritten, p.Name)
	}
	c.mu.Unlock()
	if u != nil {
		p = u.DeepCopy()
	}
	dec, p, now, err := c.decide(ctx, p, &written, u != nil && wait == 0)
	if err != nil {
		return 0, err
	}
	requeue := dec.Requeue
	c.mu.Lock()
	if w := c.unwrittenDue(p.Name, now); c.unwrittenOver(p) != nil && (requeue == 0 || requeue > w) {
		requeue = max(w, time.Nanosecond) // the record waits no longer
	}
	c.mu.Unlock()
	switch dec.Action {
	case drain.Cordon, drain.Uncordon:
		err = c.cordon(ctx, p, dec, now)
	case drain.Evict, drain.DryRunEvict:
		var deferred bool
		if deferred, err = c.evict(ctx, p, dec); deferred && (requeue == 0 || requeue > RecordDelay) {
			requeue = RecordDelay // the record waits no longer
		}
	case drain.Scale:
		err = c.scale(ctx, p, dec)
	}
	if err != nil {
		return 0, err
	}
	return requeue, nil
}

// decide observes the plan's own facts outside any lock, then decides
// under c.slot with what is shared between plans, then persists the
// decision when it changed the status p carries (which may be a verdict
// recorded and not yet written), or when that is due. A step of a drain
// under way that sends nothing (a wait for a pod's exit or a budget, from
// the status written, written) waits in memory too, for the plan's next
// requests, within RecordDelay. What a plan decided (a slot it takes, the
// evictions it is about to send) is in inflight before the next plan reads
// the shared facts, and until its status is written (or the write failed).
// Under c.slot nothing but the shared bookkeeping is read (no snapshot, no
// analysis: observing says so when it is) and no API call is made, so one
// slow write or one slow analysis stalls no other plan.
func (c *Controller) decide(ctx context.Context, p *api.MaintenancePlan, written *api.MaintenancePlanStatus, due bool) (drain.Decision, *api.MaintenancePlan, time.Time, error) {
	now := c.cfg.Now()
	f, err := observed(c, func() (drain.Facts, error) { return c.observe(p, now) })
	if err != nil {
		return drain.Decision{}, nil, now, err
	}
	c.interleave()
	c.slot.Lock()
	held := time.Now()
	err = c.shared(p, &f)
	var dec drain.Decision
	changed := false
	if err == nil {
		dec = drain.Decide(f, p, now)
		c.planWaits.Set(p.Name, dec.Waits)
		changed = due || !apiequality.Semantic.DeepEqual(p.Status, dec.Status)
		q := p.DeepCopy()
		q.Status = dec.Status
		switch {
		case written != nil && dec.Action == drain.None && apiequality.Semantic.DeepEqual(*written, dec.Status):
			// Back to what is written: nothing to write.
			c.mu.Lock()
			delete(c.unwritten, p.Name)
			c.mu.Unlock()
			changed = false
			p = q
		case changed && !due && dec.Action == drain.None && written != nil && step(*written, dec.Status):
			// A step that sends nothing: it waits in memory, as a
			// verdict does, for the plan's next requests.
			c.mu.Lock()
			at := now
			if u, ok := c.unwritten[p.Name]; ok && c.unwrittenOver(p) != nil {
				at = u.at
			}
			c.unwritten[p.Name] = unwrittenRecord{q, at}
			c.mu.Unlock()
			changed = false
			p = q
		case changed:
			c.mu.Lock()
			c.inflight[p.Name] = q
			c.mu.Unlock()
		}
	}
	c.unlock("plan", held)
	if err != nil {
		return drain.Decision{}, nil, now, err
	}
	if !changed {
		return dec, p, now, nil
	}
	c.interleave() // another decision may read this one in flight
	out, err := c.persist(ctx, p, dec.Status)
	c.mu.Lock()
	delete(c.inflight, p.Name)
	c.mu.Unlock()
	return dec, out, now, err
}

// unlock releases c.slot, taken at held by a decision of kind, and
// measures how long it was held.
func (c *Controller) unlock(kind string, held time.Time) {
	d := time.Since(held)
	c.slot.Unlock()
	if m := c.cfg.Metrics; m != nil {
		m.DecisionLock.WithLabelValues(kind).Observe(d.Seconds())
	}
	if c.cfg.LockHeld != nil {
		c.cfg.LockHeld(kind, d)
	}
}

// observing marks the start of work that must never run under c.slot: a
// snapshot, an analysis, a forecast or a capacity check. With Config.Serial
// one goroutine decides, so a c.slot that is taken here is held by this
// very decision: Config.LockViolation hears of it.
func (c *Controller) observing(what string) {
	if c.cfg.LockViolation == nil || !c.cfg.Serial {
		return
	}
	if !c.slot.TryLock() {
		c.cfg.LockViolation(what)
		return
	}
	c.slot.Unlock()
}

func hasFinalizer(p *api.MaintenancePlan) bool {
	for _, f := range p.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// cordon cordons or uncordons the node through package cordon, guarded by the
// node's UID and the owner annotation, as read live. A released plan is
// Completed from that live answer, never from the cache (which may not yet
// show a cordon that just landed); a cordon that another owner won is
// Blocked from it at once.
func (c *Controller) cordon(ctx context.Context, p *api.MaintenancePlan, dec drain.Decision, now time.Time) error {
	if dec.Action == drain.Cordon {
		held, err := c.heldLive(ctx, p)
		if err != nil {
			return err
		}
		if len(held) >= c.cfg.MaxNodes {
			return c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
				return drain.SlotTaken(q, q.Status, held, c.cfg.MaxNodes, c.cfg.Now())
			})
		}
	}
	req := cordon.Request{Owner: dec.Owner, Reason: dec.Reason, ExpectUID: dec.NodeUID, Uncordon: dec.Action == drain.Uncordon}
	res, err := c.applyCordon(ctx, p.Spec.NodeName, req, now)
	if err != nil {
		if msg, ok := refusal(err); ok {
			// Shown on the plan, not only in the log; retried with
			// backoff until the deadline.
			act := map[drain.Action]string{drain.Cordon: "cordon", drain.Uncordon: "uncordon"}[dec.Action]
			if st := drain.Refused(p, p.Status, act, msg, c.cfg.Now()); !apiequality.Semantic.DeepEqual(st, p.Status) {
				if rerr := c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
					return drain.Refused(q, q.Status, act, msg, c.cfg.Now())
				}); rerr != nil {
					return errors.Join(err, rerr)
				}
			}
		}
		return err
	}
	c.cfg.Log.Info("cordon", "plan", p.Name, "node", res.Node, "action", res.Action, "observed", res.Observed, "message", res.Message)
	if c.cfg.Events != nil && res.Action.Writes() {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: res.Node, UID: res.NodeUID}}
		node.Kind, node.APIVersion = "Node", "v1"
		c.cfg.Events.Eventf(node, p, corev1.EventTypeNormal, string(res.Action), string(dec.Action), "%s (plan %s)", res.Message, p.Name)
	}
	switch {
	case dec.Action == drain.Uncordon:
		return c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
			return drain.Uncordoned(q, q.Status, res.Message, c.cfg.Now())
		})
	case res.Action == cordon.Occupied || res.Action == cordon.UIDMismatch:
		return c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
			return drain.CordonLost(q, q.Status, res.Message, c.cfg.Now())
		})
	}
	return nil
}

// refusal is the API's message when err is its refusal of a write, one
// that asking again unchanged would meet again: 400, 403 (RBAC, a
// webhook), 422. A conflict, a throttle, a timeout or a node gone is not.
func refusal(err error) (string, bool) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "", false
	}
	switch st.Status().Code {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusUnprocessableEntity:
		return st.Status().Message, true
	}
	return "", false
}

// heldLive is the nodes in maintenance as the API server shows them now
// (slots.Held over live reads), read before a cordon takes a slot: the
// caches, a new leader's above all, may lag. Of two plans that decided to
// cordon on caches that lagged, the older goes on: the other's intent
// counts only when it is older than p. The plans are read live, and the
// nodes of the plans that could hold one, at once, when they could fill
// the slots; when they could not, the answer is none, as only whether the
// slots are full matters.
func (c *Controller) heldLive(ctx context.Context, p *api.MaintenancePlan) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	list, err := c.cfg.Plans.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the plans before cordoning: %w", err)
	}
	self := false
	seen := map[string]bool{}
	var plans []*api.MaintenancePlan
	var nodes []string // of the other plans that have cordoned or are about to
	for i := range list.Items {
		o := &list.Items[i]
		plans = append(plans, o)
		self = self || (o.UID == p.UID && o.DeletionTimestamp == nil)
		if o.UID != p.UID && drain.HoldsCordon(&o.Status) && !seen[o.Spec.NodeName] {
			seen[o.Spec.NodeName] = true
			nodes = append(nodes, o.Spec.NodeName)
		}
	}
	if !self {
		return nil, fmt.Errorf("plan %s is gone or being deleted: not cordoning for it", p.Name)
	}
	if len(nodes) < c.cfg.MaxNodes {
		// Even if every one of them holds its node, a slot is free:
		// nothing to read. (A campaign's wave, sized to the free slots,
		// cordons tens of nodes at once; reading each other's nodes took
		// seconds.)
		return nil, nil
	}
	owner := make([]string, len(nodes))
	errs := make([]error, len(nodes))
	read := func(i int) {
		node, err := c.cfg.Clients.Core.Nodes().Get(ctx, nodes[i], metav1.GetOptions{})
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			errs[i] = fmt.Errorf("read node %s before cordoning: %w", nodes[i], err)
		case err == nil:
			owner[i] = node.Annotations[cordon.OwnerAnnotation]
		}
	}
	if c.cfg.Serial {
		for i := range nodes {
			read(i)
		}
	} else {
		parallel.Do(len(nodes), read)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	owners := map[string]string{}
	for i, n := range nodes {
		owners[n] = owner[i]
	}
	var held []string
	for _, h := range slots.Others(slots.Held(plans, owners), p) {
		if h.Landed || before(h.Plan, p) {
			held = append(held, h.Node)
		}
	}
	return held, nil
}

// applyCordon is cordon.Apply on the live node, bounded by the request
// timeout; a node that does not exist has nothing to lift (nil, nil for an
// uncordon).
func (c *Controller) applyCordon(ctx context.Context, node string, req cordon.Request, now time.Time) (*cordon.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	nodes := c.cfg.Clients.Core.Nodes()
	if _, err := nodes.Get(ctx, node, metav1.GetOptions{}); apierrors.IsNotFound(err) && req.Uncordon {
		return &cordon.Result{Node: node, Action: cordon.NotCordoned, Message: "node " + node + " does not exist"}, nil
	}
	return cordon.Apply(ctx, nodes, node, req, now)
}

// finalize lifts this plan's cordon through a live cordon.Apply (which
// removes only this plan's own cordon), then releases the plan.
func (c *Controller) finalize(ctx context.Context, p *api.MaintenancePlan) error {
	if !hasFinalizer(p) {
		return nil
	}
	if err := c.restoreSurges(ctx, p); err != nil {
		return fmt.Errorf("restore the surges on delete: %w", err)
	}
	req := cordon.Request{Owner: drain.Owner(p), Uncordon: true}
	res, err := c.applyCordon(ctx, p.Spec.NodeName, req, c.cfg.Now())
	if err != nil {
		return fmt.Errorf("uncordon on delete: %w", err)
	}
	c.cfg.Log.Info("plan deleted: uncordon", "plan", p.Name, "node", p.Spec.NodeName, "action", res.Action)
	kept := p.Finalizers[:0]
	for _, f := range p.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	p.Finalizers = kept
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := c.cfg.Plans.Update(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }
