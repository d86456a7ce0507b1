package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// unreadyByController indexes the pods the breaker may count (not Ready,
// not going, not finished) by their controller's UID: the breaker reads a
// campaign's owners' pods at each of its decisions, and of the thousands
// of pods a campaign moves only the few replacements not yet Ready are
// these.
const unreadyByController = "unreadyControllerUID"

func unreadyControllerUID(o any) ([]string, error) {
	p := o.(*cachedPod)
	if p.DeletionTimestamp != nil || ready(p) || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// running reports whether a campaign has started and is not final: its
// breaker watches the cluster.
func running(m *api.MaintenanceCampaign) bool { return m.Status.StartedAt != nil }

// campaignChanged handles an event of a campaign: the campaign decides
// again, and when its breaker opened or closed, so do its plans.
func (c *Controller) campaignChanged(old, obj any) {
	m, ok := obj.(*api.MaintenanceCampaign)
	if !ok {
		return
	}
	if c.cfg.Selector.Matches(labels.Set(m.Labels)) {
		c.campaignQueue.Add(m.Name)
	}
	if o, ok := old.(*api.MaintenanceCampaign); !ok || breakerOpen(o) != breakerOpen(m) {
		c.wake(waits.Wait{On: waits.Pause, Key: m.Name})
	}
}

func breakerOpen(m *api.MaintenanceCampaign) bool {
	return m.Status.Breaker != nil && m.Status.Breaker.Open
}

// reconcileCampaign runs one campaign once: read, decide, persist, then make
// the wave's plans and release the drained ones.
func (c *Controller) reconcileCampaign(ctx context.Context, name string) (time.Duration, error) {
	cached, err := c.campaigns.Get(name)
	if apierrors.IsNotFound(err) {
		c.campaignWaits.Forget(name)
		c.mu.Lock()
		delete(c.campaignProgress, name)
		c.mu.Unlock()
		if m := c.cfg.Metrics; m != nil {
			m.CampaignPaused.DeletePartialMatch(map[string]string{"campaign": name})
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !c.cfg.Selector.Matches(labels.Set(cached.Labels)) || cached.DeletionTimestamp != nil {
		return 0, nil // a deleted campaign's plans go with it (garbage collection), each lifting its cordon
	}
	m := cached.DeepCopy()
	now := c.cfg.Now()
	c.mu.Lock()
	u, ok := c.campaignProgress[name]
	if ok && u.rv == cached.ResourceVersion {
		m.Status = *u.status.DeepCopy() // the counts decided and not yet written
	} else {
		ok = false
		delete(c.campaignProgress, name)
	}
	c.mu.Unlock()
	dec, err := c.decideCampaign(ctx, m)
	if err != nil {
		return 0, err
	}
	c.campaignWaits.Set(name, dec.Waits)
	requeue := dec.Requeue
	switch {
	case apiequality.Semantic.DeepEqual(m.Status, dec.Status) && (!ok || now.Before(u.at.Add(ProgressDelay))):
		if ok {
			requeue = shorter(requeue, u.at.Add(ProgressDelay).Sub(now))
		}
	case progressOnly(cached.Status, dec.Status) && (!ok || now.Before(u.at.Add(ProgressDelay))):
		// Only the evictions counted changed: they wait, in memory, for
		// the next change that matters, within ProgressDelay.
		at := now
		if ok {
			at = u.at
		}
		c.mu.Lock()
		c.campaignProgress[name] = campaignProgress{rv: cached.ResourceVersion, status: *dec.Status.DeepCopy(), at: at}
		c.mu.Unlock()
		requeue = shorter(requeue, at.Add(ProgressDelay).Sub(now))
	default:
		before := cached.Status
		m.Status = dec.Status
		c.interleave()
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		out, err := c.cfg.Campaigns.UpdateStatus(tctx, m, metav1.UpdateOptions{})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("update campaign status: %w", err)
		}
		m = out
		c.mu.Lock()
		delete(c.campaignProgress, name)
		c.mu.Unlock()
		c.campaignRecorded(m, before)
	}
	for _, p := range dec.Create {
		if err := c.createPlan(ctx, m, p); err != nil {
			return 0, err
		}
	}
	for _, name := range dec.Release {
		if err := c.releasePlan(ctx, m, name); err != nil {
			return 0, err
		}
	}
	return requeue, nil
}

// ProgressDelay bounds how long a campaign's counts of evictions, changed
// alone, wait in memory for its next change that matters (a node's
// outcome, its phase, a wave) to be written with it: the plans' evictions
// would otherwise rewrite the campaign's status at every batch. The next
// decision starts from them, so a plan deleted meanwhile keeps its count;
// a restart in between recounts from the plans that exist.
const ProgressDelay = 5 * time.Second

// campaignProgress is a campaign's status decided over its version rv,
// whose changes are counts alone, not yet written; at is when the first of
// them was decided.
type campaignProgress struct {
	rv     string
	status api.MaintenanceCampaignStatus
	at     time.Time
}

// progressOnly reports whether b differs from a in the counts of
// evictions alone (status.counts.evicted, each node's evicted).
func progressOnly(a, b api.MaintenanceCampaignStatus) bool {
	strip := func(st api.MaintenanceCampaignStatus) api.MaintenanceCampaignStatus {
		st = *st.DeepCopy()
		st.Counts.Evicted = 0
		for i := range st.NodeStatus {
			st.NodeStatus[i].Evicted, st.NodeStatus[i].EvictedBefore = 0, 0
		}
		return st
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// shorter is the shorter of two requeue delays, 0 being none.
func shorter(a, b time.Duration) time.Duration {
	b = max(b, time.Nanosecond)
	if a == 0 || b < a {
		return b
	}
	return a
}

// campaignRecorded logs, records an event and sets the gauge for a
// campaign status just written.
func (c *Controller) campaignRecorded(m *api.MaintenanceCampaign, before api.MaintenanceCampaignStatus) {
	st := m.Status
	if metrics := c.cfg.Metrics; metrics != nil {
		metrics.CampaignPaused.DeletePartialMatch(map[string]string{"campaign": m.Name})
		switch {
		case st.Reason == api.Paused:
			metrics.CampaignPaused.WithLabelValues(m.Name, "paused").Set(1)
		case st.Reason == api.BreakerOpen && st.Breaker != nil:
			metrics.CampaignPaused.WithLabelValues(m.Name, st.Breaker.Reason).Set(1)
		}
	}
	if before.Phase == st.Phase && before.Reason == st.Reason {
		return
	}
	c.cfg.Log.Info("campaign", "campaign", m.Name, "phase", st.Phase, "reason", st.Reason, "message", st.Message)
	if c.cfg.Events != nil {
		typ := corev1.EventTypeNormal
		if st.Phase == api.Blocked || st.Phase == api.Failed || st.Reason == api.BreakerOpen {
			typ = corev1.EventTypeWarning
		}
		c.cfg.Events.Eventf(m, nil, typ, string(st.Phase), string(st.Reason), "%s", truncate(st.Message, 1000))
	}
}

// createPlan makes one plan of a wave; one that exists and is the
// campaign's (made before a restart, or before the cache showed it) is
// fine.
func (c *Controller) createPlan(ctx context.Context, m *api.MaintenanceCampaign, p *api.MaintenancePlan) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	_, err := c.cfg.Plans.Create(ctx, p, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create plan %s: %w", p.Name, err)
		}
		c.cfg.Log.Info("campaign: plan made", "campaign", m.Name, "plan", p.Name, "node", p.Spec.NodeName, "wave", p.Labels[api.WaveLabel])
		return nil
	}
	live, err := c.cfg.Plans.Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read plan %s: %w", p.Name, err)
	}
	if !ownedBy(live, m.UID) {
		return fmt.Errorf("plan %s exists and is not campaign %s's: rename it or the campaign", p.Name, m.Name)
	}
	return nil
}

// releasePlan sets spec.release on a drained plan of the campaign.
func (c *Controller) releasePlan(ctx context.Context, m *api.MaintenanceCampaign, name string) error {
	p, err := c.plans.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !ownedBy(p, m.UID) || p.Spec.Release {
		return nil
	}
	p = p.DeepCopy()
	p.Spec.Release = true
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := c.cfg.Plans.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("release plan %s: %w", name, err)
	}
	c.cfg.Log.Info("campaign: plan released", "campaign", m.Name, "plan", name)
	return nil
}

func ownedBy(p *api.MaintenancePlan, uid types.UID) bool {
	return uid != "" && controllerOf(p) == uid
}

// campaignPlans are the plans a campaign owns, the newest versions this
// controller knows; c.slot is held (it reads what is in flight).
func (c *Controller) campaignPlans(m *api.MaintenanceCampaign) ([]*api.MaintenancePlan, error) {
	sel := labels.SelectorFromSet(labels.Set{api.CampaignLabel: m.Name})
	cached, err := c.plans.List(sel)
	if err != nil {
		return nil, err
	}
	var out []*api.MaintenancePlan
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range cached {
		if ownedBy(p, m.UID) && !c.deleted(p) {
			// A plan's end counts once it is written: a wave is not done
			// on a status still being written, which may yet fail (sim
			// seed 67); its slot counts as soon as it is decided.
			n := c.newest(p)
			if drain.Final(&n.Status) {
				n = c.written(p)
			}
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *api.MaintenancePlan) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// decideCampaign observes the campaign's facts outside any lock (the
// nodes, the breaker's sickness and, when Decide asks, the start's pods
// and a wave's capacity, which places thousands of pods), and decides
// under c.slot with the shared facts alone: its plans and the slots held,
// in their newest versions (those decided and not yet written included).
func (c *Controller) decideCampaign(ctx context.Context, m *api.MaintenanceCampaign) (campaign.Decision, error) {
	now := c.cfg.Now()
	f := campaign.Facts{MaxNodes: c.cfg.MaxNodes, Pause: c.pauseFacts()}
	var err error
	if f.Nodes, err = c.nodes.List(labels.Everything()); err != nil {
		return campaign.Decision{}, fmt.Errorf("list nodes: %w", err)
	}
	if running(m) {
		if f.Sick, err = observed(c, func() (campaign.Sickness, error) { return c.sickness(m, f.Nodes) }); err != nil {
			return campaign.Decision{}, err
		}
	}
	// A fact Decide asks for is read and it decides again; the slots may
	// change between two looks (another wave's size), so it may ask
	// again, a few times at most.
	for range 4 {
		c.interleave()
		c.slot.Lock()
		held := time.Now()
		var dec campaign.Decision
		err := c.campaignShared(m, &f)
		if err == nil {
			dec, err = campaign.Decide(m, f, now)
		}
		c.unlock("campaign", held)
		if err != nil || dec.Need == nil {
			return dec, err
		}
		if n := dec.Need.Start; n != nil {
			s, err := observed(c, func() (campaign.Start, error) { return c.campaignStart(n, now) })
			if err != nil {
				return dec, err
			}
			f.Start = &s
		}
		if n := dec.Need.Capacity; n != nil {
			cp, err := observed(c, func() (campaign.Capacity, error) { return c.capacity(m, n, now) })
			if err != nil {
				return dec, err
			}
			f.Capacity = &cp
		}
		if n := dec.Need.Live; n != nil {
			if f.Live, err = c.livePlans(ctx, n); err != nil {
				return dec, err
			}
		}
	}
	return campaign.Decision{}, fmt.Errorf("campaign %s: the facts its decision needs kept changing", m.Name)
}

// livePlans reads plans by name live: their UIDs, "" for those that do not
// exist. A campaign asks when a node's plan is missing from the cache
// before it ended: deleted, or not yet seen by a new leader.
func (c *Controller) livePlans(ctx context.Context, names []string) (map[string]types.UID, error) {
	out := make(map[string]types.UID, len(names))
	for _, name := range names {
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		p, err := c.cfg.Plans.Get(tctx, name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			out[name] = ""
		case err != nil:
			return nil, fmt.Errorf("read plan %s: %w", name, err)
		default:
			out[name] = p.UID
		}
	}
	return out, nil
}

// campaignShared sets what a campaign shares with the plans: its plans and
// the slots held; c.slot is held.
func (c *Controller) campaignShared(m *api.MaintenanceCampaign, f *campaign.Facts) error {
	var err error
	if f.Plans, err = c.campaignPlans(m); err != nil {
		return fmt.Errorf("list the campaign's plans: %w", err)
	}
	all, err := c.plans.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list plans: %w", err)
	}
	c.mu.Lock()
	byName := c.newestOf(all)
	f.Holders = len(c.held(byName))
	c.mu.Unlock()
	return nil
}

// campaignStart reads the controllers, namespaces and count of the pods to
// move on nodes: those the analysis of their drain does not skip, as the
// plans count them (drain.Moves).
func (c *Controller) campaignStart(nodes []string, now time.Time) (campaign.Start, error) {
	c.observing("start of a campaign")
	s := campaign.Start{Nodes: nodes}
	snap, err := c.nodesSnapshot(nodes, now)
	if err != nil {
		return s, err
	}
	r, err := analyze.AnalyzeObjects(snap, analyze.Options{Nodes: nodes, Now: now})
	if err != nil {
		return s, fmt.Errorf("analyse the campaign's nodes: %w", err)
	}
	owners, namespaces := map[types.UID]bool{}, map[string]bool{}
	for _, n := range r.Nodes {
		for _, v := range n.Pods {
			if !drain.Moves(v) {
				continue
			}
			s.Pods++
			namespaces[v.Namespace] = true
			if len(v.Owners) > 0 {
				owners[v.Owners[0].UID] = true
			}
		}
	}
	s.Owners = sortedKeys(owners)
	s.Namespaces = sortedKeys(namespaces)
	return s, nil
}

// sickness reads what the breaker of a running campaign judges: the
// NotReady nodes outside it, its owners' pods made since its start that
// are not Ready, and the budgets of its namespaces below their floor.
func (c *Controller) sickness(m *api.MaintenanceCampaign, nodes []*corev1.Node) (campaign.Sickness, error) {
	var s campaign.Sickness
	mine := map[string]bool{}
	for _, n := range m.Status.Nodes {
		mine[n] = true
	}
	for _, n := range nodes {
		if !mine[n.Name] && !nodeReady(n) {
			s.NotReady = append(s.NotReady, n.Name)
		}
	}
	slices.Sort(s.NotReady)
	start := m.Status.StartedAt.Time
	for _, uid := range m.Status.Owners {
		pods, err := c.pods.idx.ByIndex(unreadyByController, string(uid))
		if err != nil {
			return s, fmt.Errorf("pods of %s: %w", uid, err)
		}
		for _, o := range pods {
			p := o.(*cachedPod)
			if p.CreationTimestamp.Time.Before(start) {
				continue
			}
			why := string(cmp.Or(p.Phase, corev1.PodPending))
			if p.Waiting != "" {
				why += ", " + p.Waiting
			}
			if p.NodeName == "" {
				why += ", not scheduled"
			}
			s.Unready = append(s.Unready, campaign.Unready{Namespace: p.Namespace, Name: p.Name, Created: p.CreationTimestamp.Time, Why: why})
		}
	}
	for _, ns := range m.Status.Namespaces {
		pdbs, err := c.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
		if err != nil {
			return s, fmt.Errorf("list pod disruption budgets in %s: %w", ns, err)
		}
		for _, b := range pdbs {
			if belowFloor(b) {
				s.BelowFloor = append(s.BelowFloor, fmt.Sprintf("%s/%s: %d healthy, %d desired", b.Namespace, b.Name, b.Status.CurrentHealthy, b.Status.DesiredHealthy))
			}
		}
	}
	slices.Sort(s.BelowFloor)
	return s, nil
}

// belowFloor reports whether a budget's current status shows fewer healthy
// pods than it desires.
func belowFloor(b *policyv1.PodDisruptionBudget) bool {
	return b.Status.ObservedGeneration >= b.Generation && b.Status.CurrentHealthy < b.Status.DesiredHealthy
}

// nodeReady reports whether a node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, cd := range n.Status.Conditions {
		if cd.Type == corev1.NodeReady {
			return cd.Status == corev1.ConditionTrue
		}
	}
	return false
}

// capacity judges whether the nodes outside a wave can take its pods, from
// the caches, with the scheduling constraints the drain forecast models;
// c.slot is not held.
func (c *Controller) capacity(m *api.MaintenanceCampaign, names []string, now time.Time) (campaign.Capacity, error) {
	c.observing("capacity of campaign " + m.Name)
	s, err := c.nodesSnapshot(names, now)
	if err != nil {
		return campaign.Capacity{}, err
	}
	pl, err := c.placement(true)
	if err != nil {
		return campaign.Capacity{}, err
	}
	r, err := pl.Capacity(c.viewOf(s), names, analyze.Options{Now: now, Surge: m.Spec.Surge == api.SurgeIfNeeded})
	if err != nil {
		return campaign.Capacity{}, fmt.Errorf("capacity of the wave: %w", err)
	}
	out := campaign.Capacity{Nodes: names, Verdict: string(r.Verdict), Pods: r.Pods, Causes: r.Causes}
	var msgs []string
	for _, cs := range r.Causes {
		msgs = append(msgs, cs.Reason+": "+cs.Message)
	}
	out.Message = strings.Join(msgs, "; ")
	return out, nil
}

// nodesSnapshot is the snapshot the analysis of the drains of the nodes
// names needs, from the caches (snapshotOf).
func (c *Controller) nodesSnapshot(names []string, now time.Time) (*snapshot.Snapshot, error) {
	var nodes []*corev1.Node
	var pods []*cachedPod
	for _, n := range names {
		node, err := c.nodes.Get(n)
		if err != nil {
			return nil, fmt.Errorf("read node %s: %w", n, err)
		}
		nodes = append(nodes, node)
		on, err := c.pods.onNode(n)
		if err != nil {
			return nil, fmt.Errorf("pods on node %s: %w", n, err)
		}
		pods = append(pods, on...)
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for _, ns := range podNamespaces(pods) {
		inNS, err := c.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list pod disruption budgets in %s: %w", ns, err)
		}
		pdbs = append(pdbs, inNS...)
	}
	return c.snapshotOf(nodes, pods, pdbs, now)
}

// campaignOf is the cached campaign that owns plan p (or as CatchUp read
// it, until its first event reaches the cache), nil for none.
func (c *Controller) campaignOf(p *api.MaintenancePlan) *api.MaintenanceCampaign {
	name := p.Labels[api.CampaignLabel]
	if c.campaignInformer == nil || name == "" {
		return nil
	}
	m, err := c.campaigns.Get(name)
	c.caughtMu.Lock()
	if caught, ok := c.caughtCampaigns[name]; ok {
		m, err = caught, nil
	}
	c.caughtMu.Unlock()
	if err != nil || !ownedBy(p, m.UID) {
		return nil
	}
	return m
}

// waveOf is the wave of a campaign's plan p among the plans byName (the
// newest versions): the nodes of its wave whose plans are still about to
// cordon.
func waveOf(p *api.MaintenancePlan, byName map[string]*api.MaintenancePlan) *drain.Wave {
	w := &drain.Wave{Campaign: p.Labels[api.CampaignLabel], Number: campaign.WaveOf(p)}
	for _, o := range byName {
		if o.Labels[api.CampaignLabel] != w.Campaign || campaign.WaveOf(o) != w.Number || controllerOf(o) != controllerOf(p) {
			continue
		}
		w.Nodes++
		if o.UID != p.UID && campaign.AboutToCordon(&o.Status) {
			w.Cordoning = append(w.Cordoning, o.Spec.NodeName)
		}
	}
	slices.Sort(w.Cordoning)
	return w
}

// controllerOf is the UID of a plan's controller (its campaign), "" for
// none.
func controllerOf(p *api.MaintenancePlan) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}
