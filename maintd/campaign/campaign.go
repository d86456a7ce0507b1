// Package campaign decides what a MaintenanceCampaign does next, from facts
// the controller reads from its caches: which nodes it covers, which wave
// of per-node MaintenancePlans to make, which drained plans to release,
// and whether its breaker is open. It makes no API call: the controller
// persists the status it returns, then makes the plans and releases.
package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// Defaults of a campaign's spec, as the CRD sets them.
const (
	DefaultDeadline        = 6 * time.Hour
	DefaultPodReadyTimeout = 5 * time.Minute
	DefaultHoldDown        = time.Minute
	DefaultMaxNotReady     = 1
)

// Spec is a campaign's spec with its defaults applied (the API server
// applies them; a simulation and the unit tests do not run one).
type Spec struct {
	api.MaintenanceCampaignSpec
	Deadline, PodReadyTimeout, HoldDown time.Duration
}

// Defaulted applies the CRD's defaults to s.
func Defaulted(s api.MaintenanceCampaignSpec) Spec {
	d := func(v *metav1.Duration, def time.Duration) time.Duration {
		if v == nil || v.Duration <= 0 {
			return def
		}
		return v.Duration
	}
	out := Spec{MaintenanceCampaignSpec: s, Deadline: d(s.Deadline, DefaultDeadline),
		PodReadyTimeout: d(s.Breaker.PodReadyTimeout, DefaultPodReadyTimeout), HoldDown: d(s.Breaker.HoldDown, DefaultHoldDown)}
	if s.Breaker.PodReadyTimeout == nil && s.Breaker.HoldDown == nil && s.Breaker.MaxNotReadyNodes == 0 && s.Breaker.MaxPDBsBelowFloor == 0 {
		out.Breaker.MaxNotReadyNodes = DefaultMaxNotReady // the CRD's default of an absent breaker
	}
	return out
}

// Start is what the campaign records when it starts: the controllers of
// the pods to move on its nodes, their namespaces, and how many pods.
type Start struct {
	// Nodes are the nodes it was read for.
	Nodes      []string
	Owners     []types.UID
	Namespaces []string
	Pods       int
}

// Capacity is the check, before a wave's first write, that the nodes left
// schedulable can take the wave's pods.
type Capacity struct {
	// Nodes are the wave's nodes it was judged for.
	Nodes []string
	// Verdict is ok, never or unknown.
	Verdict string
	Pods    int
	// Message names the numbers of a never (or an unknown) verdict.
	Message string
	// Causes are the verdict's causes: a never the campaign accepts
	// (spec.acceptedRisks, as a plan's) does not block the wave.
	Causes []analyze.ForecastCause
}

// Sickness is what the breaker reads, from the caches.
type Sickness struct {
	// NotReady are the nodes outside the campaign that are not Ready, by
	// name.
	NotReady []string
	// Unready are the pods the campaign moved (of its owners, created
	// since its start) that are not Ready.
	Unready []Unready
	// BelowFloor are the PodDisruptionBudgets of the campaign's namespaces
	// with fewer healthy pods than they desire, described.
	BelowFloor []string
}

// Unready is a moved pod that is not Ready.
type Unready struct {
	Namespace, Name string
	Created         time.Time
	// Why is its phase or its waiting container's reason
	// (CrashLoopBackOff, ImagePullBackOff, ...).
	Why string
}

// Facts are what Decide reads.
type Facts struct {
	// Nodes are the cluster's nodes.
	Nodes []*corev1.Node
	// Plans are the campaign's plans (those it owns), the newest versions
	// this maintd knows.
	Plans []*api.MaintenancePlan
	// Holders counts the plans of the cluster that hold a cordon (the
	// maintenance slots in use); MaxNodes is the number of slots.
	Holders, MaxNodes int
	// Pause is the cluster-wide pause switch (nil: off).
	Pause *drain.Pause
	// Sick is what the breaker reads.
	Sick Sickness
	// Start is what a campaign records when it starts, read for
	// Start.Nodes (nil: not read). Decide asks for it (Decision.Need)
	// when it is missing or was read for other nodes.
	Start *Start
	// Capacity is the check of a wave's nodes before its first write,
	// judged for Capacity.Nodes (nil: not judged); Decide asks for it
	// likewise.
	Capacity *Capacity
	// Live are the UIDs of plans read live, by name ("" for a plan that
	// does not exist), asked for (Need.Live) when a node's plan is missing
	// from Plans: gone, or not yet in the cache.
	Live map[string]types.UID
}

// Need names the facts Decide needs and was not given: the controller reads
// them (outside the lock the decisions share: a capacity check places
// thousands of pods) and decides again.
type Need struct {
	// Start: read Facts.Start for these nodes; Capacity: judge
	// Facts.Capacity for these nodes; Live: read these plans live
	// (Facts.Live).
	Start, Capacity, Live []string
}

// errNeeded is the error with which the decider stops when a fact is missing.
var errNeeded = errors.New("campaign: a fact is needed")

// AboutToCordon reports whether a plan has not yet cordoned its node and
// will: new, pending (but for a slot or a window), or cordoning and not yet seen
// cordoned. The plans of a wave evict once none of the wave is.
func AboutToCordon(st *api.MaintenancePlanStatus) bool {
	switch st.Phase {
	case "", api.Pending:
		return st.Reason != api.WaitingForSlot && st.Reason != api.OutsideWindow
	case api.Cordoning:
		return true
	}
	return false
}

// Decision is what the controller persists and then does.
type Decision struct {
	Status api.MaintenanceCampaignStatus
	// Create are the plans of a new wave, made after the status is
	// written.
	Create []*api.MaintenancePlan
	// Release are the names of drained plans to release.
	Release []string
	// Requeue is when to decide again without an event (0: on events
	// only).
	Requeue time.Duration
	// Need, when set, is what must be read before deciding: nothing else
	// of the decision holds.
	Need *Need
	// Waits are what the decision waits on: an event of one of them may
	// change it, and no other event can (but the campaign's own).
	Waits []waits.Wait
}

// Final reports whether a campaign is done: Completed or Failed.
func Final(st *api.MaintenanceCampaignStatus) bool {
	return st.Phase == api.Completed || st.Phase == api.Failed
}

// PlanName is the name of the plan a campaign makes for a node.
func PlanName(campaign, node string) string {
	name := campaign + "-" + node
	if len(name) <= 253 {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return name[:240] + "-" + strconv.FormatUint(uint64(h.Sum32()), 36)
}

// WaveOf is a plan's wave (0: not a campaign's plan).
func WaveOf(p *api.MaintenancePlan) int {
	w, err := strconv.Atoi(p.Labels[api.WaveLabel])
	if err != nil || p.Labels[api.CampaignLabel] == "" {
		return 0
	}
	return w
}

type decider struct {
	c    *api.MaintenanceCampaign
	f    Facts
	spec Spec
	// now is the time of the decision in whole seconds, as the status
	// records times; at is the time itself, from which delays count.
	now, at time.Time
	st      api.MaintenanceCampaignStatus
	dec     Decision
	// waits are what the decision waits on, as its steps declare them.
	waits waits.Set
}

// Decide decides a campaign's next step. An error is a fact that could not
// be read; nothing is decided.
func Decide(c *api.MaintenanceCampaign, f Facts, now time.Time) (Decision, error) {
	d := &decider{c: c, f: f, spec: Defaulted(c.Spec), now: now.UTC().Truncate(time.Second), at: now, st: *c.Status.DeepCopy(), waits: waits.Set{}}
	if err := d.decideIn(); errors.Is(err, errNeeded) {
		return Decision{Need: d.dec.Need}, nil
	} else if err != nil {
		return Decision{}, err
	}
	d.st.ObservedGeneration = c.Generation
	d.conditions()
	d.declare()
	d.dec.Status = d.st
	return d.dec, nil
}

// declare completes the decision's waits with what every campaign that is
// not final waits on, and sets Decision.Waits: its plans, the pause switch
// and, once it runs, what its breaker reads (the nodes' readiness, its
// namespaces' pods and budgets).
func (d *decider) declare() {
	if Final(&d.st) {
		return
	}
	w := d.waits
	w.Add(waits.Campaign, d.c.Name)
	w.Add(waits.Pause, "")
	if d.st.StartedAt != nil {
		w.Add(waits.Nodes)
		w.Add(waits.Pods, d.st.Namespaces...)
		w.Add(waits.PDBs, d.st.Namespaces...)
	}
	d.dec.Waits = w.List()
}

func (d *decider) set(phase api.Phase, reason api.Reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if d.st.Phase != phase || d.st.Reason != reason {
		since := metav1.NewTime(d.now)
		d.st.Since = &since
	}
	d.st.Phase, d.st.Reason, d.st.Message = phase, reason, msg
}

// requeueAt asks to decide again at t (a time in whole seconds, as the
// status records them), not before: from the decision's own time, not its
// time in whole seconds, which is up to a second earlier.
func (d *decider) requeueAt(t time.Time) {
	in := max(t.Sub(d.at), time.Nanosecond)
	if d.dec.Requeue == 0 || in < d.dec.Requeue {
		d.dec.Requeue = in
	}
}

func (d *decider) decide() error {
	st := &d.st
	if Final(st) {
		return nil
	}
	if st.StartedAt == nil {
		nodes, err := d.selected()
		if err != nil {
			d.set(api.Blocked, api.NoNodes, "%v", err)
			return nil
		}
		if len(nodes) == 0 {
			d.waits.Add(waits.Nodes)
			d.waits.Add(waits.Placement) // a node's labels
			d.set(api.Blocked, api.NoNodes, "no node matches the campaign's nodes or nodeSelector")
			return nil
		}
		s := d.f.Start
		if s == nil || !slices.Equal(s.Nodes, nodes) {
			d.dec.Need = &Need{Start: nodes}
			return errNeeded
		}
		start, deadline := metav1.NewTime(d.now), metav1.NewTime(d.now.Add(d.spec.Deadline))
		st.Nodes, st.StartedAt, st.Deadline = nodes, &start, &deadline
		st.Owners, st.Counts.PodsAtStart = s.Owners, int32(s.Pods)
		st.Namespaces = s.Namespaces
		d.set(api.Pending, api.CampaignStarted, "%d nodes, %d pods to move", len(nodes), s.Pods)
	}
	byNode := map[string]*api.MaintenancePlan{}
	for _, p := range d.f.Plans {
		byNode[p.Spec.NodeName] = p
	}
	if lagging, err := d.nodes(byNode); err != nil || lagging {
		return err // lagging: the plan's event is on its way, and wakes the campaign
	}
	// The current wave is the latest of the plans seen, those deleted
	// since included; a wave decided whose plans are not seen yet is made
	// again, by the same names.
	wave := 0
	for _, n := range st.NodeStatus {
		if n.PlanUID != "" {
			wave = max(wave, int(n.Wave))
		}
	}
	d.count()
	paused := d.breaker()
	if d.spec.Release {
		for _, p := range d.f.Plans {
			if p.Status.Phase == api.Drained && !p.Spec.Release && p.DeletionTimestamp == nil {
				d.dec.Release = append(d.dec.Release, p.Name)
			}
		}
	}
	if int(st.Counts.Completed) == len(st.Nodes) {
		d.set(api.Completed, api.CampaignCompleted, "all %d nodes drained and released; %d evictions for %d pods on them at the start",
			len(st.Nodes), st.Counts.Evicted, st.Counts.PodsAtStart)
		return nil
	}
	if !d.now.Before(st.Deadline.Time) {
		// Its plans that have not started expire (their startWithin is
		// the campaign's deadline); those started go on to their own
		// deadline, the same, unless the breaker is open: it stays open,
		// and they stay paused where they are.
		plans := "its started plans go on to their deadline, the same"
		if b := st.Breaker; b != nil && b.Open {
			plans = "its breaker stays open (" + b.Message + "): its started plans stay paused"
		}
		d.set(api.Failed, api.DeadlineExceeded, "the campaign's deadline %s passed (started %s): %d of %d nodes drained; no new plan is made, its plans that have not started expire, %s, and the nodes of failed plans stay cordoned (delete their plans, or the campaign, to uncordon them)",
			d.spec.Deadline, st.StartedAt.UTC().Format(time.RFC3339), st.Counts.Drained+st.Counts.Completed, len(st.Nodes), plans)
		return nil
	}
	d.requeueAt(st.Deadline.Time)

	var current, blocked []*api.MaintenancePlan
	for _, p := range d.f.Plans {
		if WaveOf(p) == wave {
			current = append(current, p)
		}
		if p.Status.Phase == api.Blocked || p.Status.Phase == api.Failed {
			blocked = append(blocked, p)
		}
	}
	done := !slices.ContainsFunc(current, func(p *api.MaintenancePlan) bool { return !drain.Final(&p.Status) })
	var remaining, notDone []string
	for _, n := range st.NodeStatus {
		switch {
		case byNode[n.Name] != nil:
		case n.Outcome == api.NodePending:
			remaining = append(remaining, n.Name)
		case n.Outcome != api.NodeCompleted:
			notDone = append(notDone, fmt.Sprintf("%s (%s)", n.Name, n.Outcome))
		}
	}
	switch {
	case paused:
		return nil // breaker() said why
	case len(blocked) > 0:
		names := make([]string, 0, len(blocked))
		for _, p := range blocked {
			names = append(names, fmt.Sprintf("%s (%s: %s)", p.Name, p.Status.Phase, p.Status.Reason))
		}
		d.set(api.Blocked, api.PlansBlocked, "%d of the campaign's plans cannot go on: %s; the others go on; the next wave waits for them (fix the cause, or delete the plan and list its node in spec.retry to drain it again in a later wave)",
			len(blocked), list(names))
		return nil
	case (wave == 0 || done) && len(remaining) > 0:
		return d.nextWave(wave+1, remaining)
	}
	if done && len(remaining) == 0 && len(notDone) > 0 {
		d.set(api.Blocked, api.NodesNotDone, "%d of the campaign's %d nodes did not complete and have no plan: %s; list them in spec.retry to drain them again",
			len(notDone), len(st.Nodes), list(notDone))
		return nil
	}
	drained := 0
	for _, p := range current {
		if p.Status.Phase == api.Drained || drain.Final(&p.Status) || p.Status.Phase == api.Uncordoning {
			drained++
		}
	}
	if drained == len(current) {
		next := "the next wave"
		if len(remaining) == 0 {
			next = "the end of the campaign"
		}
		d.set(api.Drained, api.WaitingForRelease, "wave %d: all %d nodes drained; release them (the campaign's spec.release, or each plan's) for %s",
			wave, len(current), next)
		return nil
	}
	d.set(api.Draining, api.WaveStarted, "wave %d: %d nodes", wave, len(current))
	return nil
}

// nextWave makes the plans of wave n for as many of the remaining nodes as
// there are free maintenance slots, after checking that the nodes left
// schedulable can take their pods.
func (d *decider) nextWave(n int, remaining []string) error {
	free := d.f.MaxNodes - d.f.Holders
	if free <= 0 {
		d.waits.Add(waits.Slot)
		d.set(api.Pending, api.WaitingForSlot, "%d of %d nodes are in maintenance: wave %d waits for a slot", d.f.Holders, d.f.MaxNodes, n)
		return nil
	}
	byName := make(map[string]*corev1.Node, len(d.f.Nodes))
	for _, n := range d.f.Nodes {
		byName[n.Name] = n
	}
	limit := BudgetNodes(d.spec.Budget, len(d.st.Nodes))
	nodes, bound := waveNodes(remaining, min(free, limit), limit < free, d.spec.Budget, byName)
	c := d.f.Capacity
	if c == nil || !slices.Equal(c.Nodes, nodes) {
		d.dec.Need = &Need{Capacity: nodes}
		return errNeeded
	}
	d.st.Capacity = &api.CampaignCapacity{Wave: int32(n), Verdict: c.Verdict, Pods: int32(c.Pods), Message: c.Message}
	if c.Verdict == string(analyze.VerdictNever) {
		if never := drain.Unaccepted(d.spec.AcceptedRisks, c.Causes); len(never) > 0 {
			reasons := make([]string, len(never))
			for i, cs := range never {
				reasons[i] = cs.Reason
			}
			d.waits.Add(waits.Placement)
			d.waits.Add(waits.Nodes)
			d.set(api.Blocked, api.InsufficientCapacity, "wave %d (%d nodes): %s; nothing was cordoned (if it will clear, as when an autoscaler adds nodes, accept it: spec.acceptedRisks %s)",
				n, len(nodes), c.Message, strings.Join(slices.Compact(reasons), ", "))
			return nil
		}
		d.st.Capacity.Message += " (accepted: spec.acceptedRisks)"
	}
	left := d.st.Deadline.Sub(d.now).Truncate(time.Second)
	for _, node := range nodes {
		d.dec.Create = append(d.dec.Create, d.plan(node, n, left))
	}
	d.st.Wave = int32(n)
	if bound != "" {
		bound = "; the budget: " + bound
	}
	d.set(api.Draining, api.WaveStarted, "wave %d: %d nodes (%s); %d nodes after it%s", n, len(nodes), list(nodes), len(remaining)-len(nodes), bound)
	return nil
}

// plan is the plan of node in wave n, with deadline left.
func (d *decider) plan(node string, n int, left time.Duration) *api.MaintenancePlan {
	c, s := d.c, d.spec
	lbls := map[string]string{}
	for k, v := range c.Labels {
		lbls[k] = v // a maintd that selects the campaign by label selects its plans
	}
	lbls[api.CampaignLabel], lbls[api.WaveLabel] = c.Name, strconv.Itoa(n)
	reason := s.Reason
	if reason == "" {
		reason = "campaign " + c.Name
	}
	p := &api.MaintenancePlan{
		ObjectMeta: metav1.ObjectMeta{Name: PlanName(c.Name, node), Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenanceCampaign", Name: c.Name, UID: c.UID, Controller: ptr.To(true)}}},
		Spec: api.MaintenancePlanSpec{NodeName: node, Reason: reason, Workloads: slices.Clone(s.Workloads), AllowAllWorkloads: s.AllowAllWorkloads,
			AcceptedRisks: slices.Clone(s.AcceptedRisks), StartWithin: &metav1.Duration{Duration: left}, Deadline: &metav1.Duration{Duration: left}, MaxConcurrentEvictions: s.MaxConcurrentEvictions, Surge: s.Surge,
			VolumeDetachTimeout: s.VolumeDetachTimeout.DeepCopy(), DrainRules: s.DeepCopy().DrainRules,
			Windows: s.Windows.DeepCopy(), HealthGate: s.HealthGate.DeepCopy()},
	}
	p.Kind, p.APIVersion = "MaintenancePlan", api.SchemeGroupVersion.String()
	return p
}

// selected are the campaign's nodes: those listed that exist, or those the
// selector matches, by name.
func (d *decider) selected() ([]string, error) {
	var out []string
	if sel := d.spec.NodeSelector; sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, fmt.Errorf("spec.nodeSelector: %w", err)
		}
		for _, n := range d.f.Nodes {
			if s.Matches(labels.Set(n.Labels)) {
				out = append(out, n.Name)
			}
		}
	} else {
		exists := map[string]bool{}
		for _, n := range d.f.Nodes {
			exists[n.Name] = true
		}
		var missing []string
		for _, n := range d.spec.Nodes {
			if exists[n] {
				out = append(out, n)
			} else {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("spec.nodes names %d nodes that do not exist: %s", len(missing), list(missing))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// nodes brings status.nodeStatus up to date with the plans that exist
// (byNode): each node's latest plan and its outcome. A node whose plan is
// gone keeps the outcome it had (a drained node's plan deleted lifted its
// cordon: completed), or is deleted if its plan had not ended; listed in
// spec.retry, a node that did not complete is pending again.
func (d *decider) nodes(byNode map[string]*api.MaintenancePlan) (lagging bool, err error) {
	st := &d.st
	had := map[string]api.CampaignNode{}
	for _, n := range st.NodeStatus {
		had[n.Name] = n
	}
	retry := map[string]bool{}
	for _, n := range d.spec.Retry {
		retry[n] = true
	}
	var need []string
	st.NodeStatus = make([]api.CampaignNode, 0, len(st.Nodes))
	for _, name := range st.Nodes {
		n, ok := had[name]
		if !ok {
			n = api.CampaignNode{Name: name, Outcome: api.NodePending}
		}
		if p := byNode[name]; p != nil {
			if p.UID != n.PlanUID {
				if n.PlanUID != "" {
					n.EvictedBefore = n.Evicted // a retry's new plan
				}
				n.Plan, n.PlanUID = p.Name, p.UID
			}
			n.Wave, n.Evicted = int32(WaveOf(p)), n.EvictedBefore+p.Status.Pods.Evicted
			n.Outcome = outcomeOf(&p.Status)
		} else if n.PlanUID != "" {
			// Missing from the cache while it had not ended: gone, or
			// not there yet (a new leader's caches lag)? Read live.
			if n.Outcome == api.NodePlanned || n.Outcome == api.NodeDrained || n.Outcome == api.NodeBlocked {
				uid, ok := d.f.Live[n.Plan]
				if !ok {
					need = append(need, n.Plan)
				}
				if !ok || uid == n.PlanUID {
					lagging = lagging || ok
					st.NodeStatus = append(st.NodeStatus, n) // as it was
					continue
				}
			}
			switch n.Outcome {
			case api.NodeDrained:
				n.Outcome = api.NodeCompleted
			case api.NodePlanned, api.NodeBlocked:
				n.Outcome = api.NodeDeleted
			}
			if retry[name] && n.Outcome != api.NodeCompleted && n.Outcome != api.NodePending {
				n.Outcome = api.NodePending
			}
		}
		st.NodeStatus = append(st.NodeStatus, n)
	}
	if len(need) > 0 {
		d.dec.Need = &Need{Live: need}
		return false, errNeeded
	}
	return lagging, nil
}

// outcomeOf is what a plan in status st makes of its node.
func outcomeOf(st *api.MaintenancePlanStatus) api.NodeOutcome {
	switch st.Phase {
	case api.Drained, api.Uncordoning:
		return api.NodeDrained
	case api.Completed:
		if st.Reason == api.Expired {
			return api.NodeExpired
		}
		return api.NodeCompleted
	case api.Blocked:
		return api.NodeBlocked
	case api.Failed:
		return api.NodeFailed
	}
	return api.NodePlanned
}

// count sums up the nodes.
func (d *decider) count() {
	c := &d.st.Counts
	*c = api.CampaignCounts{Nodes: int32(len(d.st.Nodes)), PodsAtStart: c.PodsAtStart}
	for _, n := range d.st.NodeStatus {
		if n.PlanUID != "" {
			c.Planned++
		}
		c.Evicted += n.Evicted
		switch n.Outcome {
		case api.NodeDrained:
			c.Drained++
		case api.NodeCompleted:
			c.Completed++
		case api.NodeExpired:
			c.Expired++
		case api.NodeBlocked:
			c.Blocked++
		case api.NodeFailed:
			c.Failed++
		case api.NodeDeleted:
			c.Deleted++
		}
	}
}

// conditions derives Ready, Progressing, Blocked and Paused.
func (d *decider) conditions() {
	st := &d.st
	cond := func(typ string, on bool, reason, msg string) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, ObservedGeneration: d.c.Generation,
			Reason: drain.Camel(cmp.Or(reason, string(st.Phase))), Message: msg, LastTransitionTime: metav1.NewTime(d.now)})
	}
	reason := string(st.Reason)
	cond(api.ConditionReady, st.Phase == api.Drained || st.Phase == api.Completed, reason, st.Message)
	cond(api.ConditionProgressing, st.Phase == api.Draining || st.Phase == api.Pending, reason, st.Message)
	cond(api.ConditionBlocked, st.Phase == api.Blocked || st.Phase == api.Failed, reason, st.Message)
	paused := st.Reason == api.Paused || st.Reason == api.BreakerOpen
	why, msg := reason, st.Message
	if b := st.Breaker; Final(st) && b != nil && b.Open {
		// It ended with its breaker open: its started plans stay paused.
		paused, why, msg = true, string(api.BreakerOpen), b.Message
	}
	if paused || meta.FindStatusCondition(st.Conditions, api.ConditionPaused) != nil {
		if !paused {
			why, msg = "Resumed", ""
		}
		cond(api.ConditionPaused, paused, why, msg)
	}
}

// list names up to 10 items and counts the rest.
func list(items []string) string {
	const show = 10
	if len(items) <= show {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:show], ", ") + fmt.Sprintf(" and %d more", len(items)-show)
}
