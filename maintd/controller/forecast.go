package controller

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// Reaction is the control plane's reaction at each step of a drain that
// the forecasts count (analyze.ForecastOptions.Reaction): measured on the
// local control plane (docs/benchmarks.md, "Forecast accuracy"), where a
// round took about 0.3 s more than its replacement's time to Ready once a
// recovered budget and the evictions it allows went in one write (0.5 s
// before).
const Reaction = 300 * time.Millisecond

// forecastMemo is a plan's last drain forecast and the facts it was made
// from: it is made again only when they change.
type forecastMemo struct {
	uid      types.UID
	key      string
	forecast *analyze.Forecast
	at       time.Time
}

// forecastKey names the facts a plan's forecast is made from: its spec, its
// node, the node's pods and the budgets of their namespaces (each by
// resourceVersion), and where pods can go (the epochs). The forecast is
// made again when one of them changes: on an event, never on a timer.
// Once the drain has started (draining), what decides is which pods are
// still on the node: every eviction changes the pods' and the budgets'
// versions several times, and a forecast for each would slow the drain
// it times.
func forecastKey(p *api.MaintenancePlan, node *corev1.Node, onNode []*cachedPod, pdbs []*policyv1.PodDisruptionBudget, nodeEpoch, podEpoch int64, draining bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%s/%d/%d", p.Generation, node.ResourceVersion, nodeEpoch, podEpoch)
	versions := make([]string, 0, len(onNode)+len(pdbs))
	for _, pod := range onNode {
		switch {
		case !draining:
			versions = append(versions, string(pod.UID)+"@"+pod.ResourceVersion)
		case pod.DeletionTimestamp == nil:
			versions = append(versions, string(pod.UID))
		}
	}
	for _, pdb := range pdbs {
		if !draining {
			versions = append(versions, string(pdb.UID)+"@"+pdb.ResourceVersion)
		}
	}
	slices.Sort(versions)
	for _, v := range versions {
		b.WriteString("/" + v)
	}
	return b.String()
}

// forecast is the drain forecast of plan p's node, made from the caches:
// the analysis of the node's snapshot (scoped) with every node and every
// pod of the cluster, where its replacements may go. It is made again only
// when the facts forecastKey names change; c.slot is not held.
func (c *Controller) forecast(p *api.MaintenancePlan, scoped *snapshot.Snapshot, onNode []*cachedPod, pdbs []*policyv1.PodDisruptionBudget, now time.Time) (*analyze.Forecast, time.Time, error) {
	node := &scoped.Nodes[0]
	// Once the drain has started, the room the other pods take matters
	// less than its own pods, whose every change makes it again: a busy
	// cluster's pods do not make every reconcile forecast anew.
	podEpoch := c.podEpoch.Load()
	draining := false
	if ep := p.Status.EvictionProgress; ep != nil && ep.Scope != "" {
		podEpoch, draining = 0, true
	}
	key := forecastKey(p, node, onNode, pdbs, c.nodeEpoch.Load(), podEpoch, draining)
	c.mu.Lock()
	memo, ok := c.forecasts[p.Name]
	c.mu.Unlock()
	if ok && memo.uid == p.UID && memo.key == key {
		return memo.forecast, memo.at, nil
	}
	c.observing("forecast plan " + p.Name)
	pl, err := c.placement(!draining)
	if err != nil {
		return nil, time.Time{}, err
	}
	spec := drain.Defaulted(p.Spec)
	// A volume's move is timed by its driver's detaches and attaches as
	// maintd watched them (none seen: the forecast's assumed defaults).
	var drivers []string
	for _, va := range scoped.VolumeAttachments {
		drivers = append(drivers, va.Spec.Attacher)
	}
	detach, attach := c.volumeTimes.of(drivers)
	r, err := analyze.Analyze(c.viewOf(scoped), analyze.Options{Nodes: []string{node.Name}, Now: now, Surge: p.Spec.Surge == api.SurgeIfNeeded,
		Forecast: &analyze.ForecastOptions{Concurrency: spec.MaxConcurrentEvictions, Reaction: Reaction, Placement: pl, VolumeDetach: detach, VolumeAttach: attach,
			Learned: c.learner.learned()}})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("forecast the drain of node %s: %w", node.Name, err)
	}
	f := r.Nodes[0].Forecast
	c.mu.Lock()
	c.forecasts[p.Name] = forecastMemo{uid: p.UID, key: key, forecast: f, at: now}
	c.mu.Unlock()
	return f, now, nil
}

// sharedPlacement is the placement model of the cluster as the caches show it
// (analyze.Placement: every node and the pods on each), shared by the
// forecasts and capacity checks of every plan and campaign: made once per
// change of where pods can go (Controller.placeEpoch), when one asks, and
// one build serves every ask made while it runs.
type sharedPlacement struct {
	mu sync.Mutex
	// model was made from the caches as they were at epoch.
	model *analyze.Placement
	epoch int64
	// building is closed when the build under way (from the caches at
	// buildEpoch, or later) ends; nil when none is.
	building   chan struct{}
	buildEpoch int64
}

// placement is the placement model of the cluster, made from the caches
// as they are now or later (fresh), or the last one made (not fresh: the
// forecast of a drain under way, which, as its memo, follows its own pods
// rather than the room the others take). Not under c.slot: the build reads
// every cached node and pod.
func (c *Controller) placement(fresh bool) (*analyze.Placement, error) {
	pc := &c.placements
	want := c.placeEpoch.Load()
	for {
		pc.mu.Lock()
		if pc.model != nil && (pc.epoch >= want || !fresh) {
			m := pc.model
			pc.mu.Unlock()
			return m, nil
		}
		if ch := pc.building; ch != nil {
			// Wait for the build under way: it serves this ask when it
			// read the caches at want or later; otherwise the next does.
			pc.mu.Unlock()
			<-ch
			continue
		}
		ch, epoch := make(chan struct{}), c.placeEpoch.Load()
		pc.building, pc.buildEpoch = ch, epoch
		pc.mu.Unlock()
		m, err := c.buildPlacement()
		pc.mu.Lock()
		if err == nil {
			pc.model, pc.epoch = m, epoch
		}
		pc.building = nil
		close(ch)
		pc.mu.Unlock()
		return m, err
	}
}

// viewOf is the analysis's view of s, a snapshot made from the caches, with
// what the forecast reads of each pod to place its replacement
// (view.Scheduling), which a snapshot's pods do not carry: the cache keeps
// it apart.
func (c *Controller) viewOf(s *snapshot.Snapshot) *view.Snapshot {
	v := view.Of(s)
	for i := range v.Pods {
		p := &v.Pods[i]
		if cached, err := c.pods.get(p.Namespace, p.Name); err == nil && cached.UID == p.UID {
			p.Scheduling = cached.Scheduling
		}
	}
	return v
}

// buildPlacement makes the placement model from every cached node and pod.
func (c *Controller) buildPlacement() (*analyze.Placement, error) {
	c.observing("placement model")
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	v := &view.Snapshot{Nodes: make([]view.Node, len(nodes))}
	for i, n := range nodes {
		v.Nodes[i] = view.NodeOf(n)
	}
	all := c.pods.idx.List()
	v.Pods = make([]view.Pod, len(all))
	var scratch corev1.Pod
	for i, o := range all {
		v.Pods[i] = o.(*cachedPod).view(&scratch)
	}
	return analyze.NewPlacement(v), nil
}

// analysisMemo is a plan's last analysis and the facts it was made from.
type analysisMemo struct {
	uid    types.UID
	key    uint64
	report *analyze.Node
}

// analysis is k8s-analyze's verdict on plan p's node from its scoped
// snapshot s, made again only when an object of s changed (by UID and
// resourceVersion), or the surge option did: a re-check with nothing new
// costs the snapshot, not the analysis. A pod whose do-not-disrupt
// annotation is a duration is judged against the clock: its node's
// analysis is made afresh each time.
func (c *Controller) analysis(p *api.MaintenancePlan, s *snapshot.Snapshot, now time.Time) (*analyze.Node, error) {
	c.observing("analyse plan " + p.Name)
	surge := p.Spec.Surge == api.SurgeIfNeeded
	key, memoisable := snapshotKey(s, surge)
	c.mu.Lock()
	memo, ok := c.analyses[p.Name]
	c.mu.Unlock()
	if ok && memoisable && memo.uid == p.UID && memo.key == key {
		return memo.report, nil
	}
	node := s.Nodes[0].Name
	report, err := analyze.AnalyzeObjects(s, analyze.Options{Nodes: []string{node}, Now: now, Surge: surge})
	if err != nil {
		return nil, fmt.Errorf("analyse node %s: %w", node, err)
	}
	n := &report.Nodes[0]
	c.mu.Lock()
	if memoisable {
		c.analyses[p.Name] = analysisMemo{uid: p.UID, key: key, report: n}
	} else {
		delete(c.analyses, p.Name)
	}
	c.mu.Unlock()
	return n, nil
}

// snapshotKey digests what an analysis of s reads: every object's UID and
// resourceVersion, and the surge option; memoisable is false when a pod of
// s carries a do-not-disrupt duration (its verdict depends on the clock).
func snapshotKey(s *snapshot.Snapshot, surge bool) (key uint64, memoisable bool) {
	h := fnv.New64a()
	add := func(m metav1.Object) {
		h.Write([]byte(m.GetUID()))
		h.Write([]byte{'@'})
		h.Write([]byte(m.GetResourceVersion()))
		h.Write([]byte{0})
	}
	fmt.Fprintf(h, "%t|", surge)
	memoisable = true
	for i := range s.Nodes {
		add(&s.Nodes[i])
	}
	for i := range s.Pods {
		add(&s.Pods[i])
		if v, ok := s.Pods[i].Annotations[analyze.DoNotDisruptAnnotation]; ok && v != "true" && v != "false" {
			memoisable = false
		}
	}
	each := func(n int, at func(int) metav1.Object) {
		fmt.Fprintf(h, "|%d|", n)
		for i := range n {
			add(at(i))
		}
	}
	each(len(s.PodDisruptionBudgets), func(i int) metav1.Object { return &s.PodDisruptionBudgets[i] })
	each(len(s.ReplicaSets), func(i int) metav1.Object { return &s.ReplicaSets[i] })
	each(len(s.Deployments), func(i int) metav1.Object { return &s.Deployments[i] })
	each(len(s.StatefulSets), func(i int) metav1.Object { return &s.StatefulSets[i] })
	each(len(s.DaemonSets), func(i int) metav1.Object { return &s.DaemonSets[i] })
	each(len(s.Jobs), func(i int) metav1.Object { return &s.Jobs[i] })
	each(len(s.CronJobs), func(i int) metav1.Object { return &s.CronJobs[i] })
	each(len(s.PersistentVolumeClaims), func(i int) metav1.Object { return &s.PersistentVolumeClaims[i] })
	each(len(s.PersistentVolumes), func(i int) metav1.Object { return &s.PersistentVolumes[i] })
	each(len(s.HorizontalPodAutoscalers), func(i int) metav1.Object { return &s.HorizontalPodAutoscalers[i] })
	each(len(s.StorageClasses), func(i int) metav1.Object { return &s.StorageClasses[i] })
	return h.Sum64(), memoisable
}
