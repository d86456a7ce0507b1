package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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

// clear0 empties pods, keeping its room and dropping what it pointed to.
func clear0(pods []view.Pod) []view.Pod {
	clear(pods)
	return pods[:0]
}

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
// when the facts forecastKey names change; c.slot is held.
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
	v := view.Of(scoped)
	release, err := c.widen(v)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer release()
	spec := drain.Defaulted(p.Spec)
	r, err := analyze.Analyze(v, analyze.Options{Nodes: []string{node.Name}, Now: now, Surge: p.Spec.Surge == api.SurgeIfNeeded,
		Forecast: &analyze.ForecastOptions{Concurrency: spec.MaxConcurrentEvictions, Reaction: Reaction}})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("forecast the drain of node %s: %w", node.Name, err)
	}
	f := r.Nodes[0].Forecast
	c.mu.Lock()
	c.forecasts[p.Name] = forecastMemo{uid: p.UID, key: key, forecast: f, at: now}
	c.mu.Unlock()
	return f, now, nil
}

// widen makes the scoped view v one of the whole cluster where its pods'
// replacements may go: every cached node, and every cached pod in a buffer
// reused from call to call (they are made one at a time, under c.slot), so
// that a forecast allocates what the analysis needs, not a copy of the
// cluster. release gives the buffer back once v is no longer read.
func (c *Controller) widen(v *view.Snapshot) (release func(), err error) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	v.Metadata.Scope = snapshot.Scope{}
	slices.SortFunc(nodes, byKey[*corev1.Node])
	v.Nodes = make([]view.Node, len(nodes))
	for i, n := range nodes {
		v.Nodes[i] = view.NodeOf(n)
	}
	all := c.pods.idx.List()
	v.Pods = slices.Grow(c.forecastPods[:0], len(all))
	var scratch corev1.Pod
	for _, o := range all {
		v.Pods = append(v.Pods, o.(*cachedPod).view(&scratch))
	}
	return func() { c.forecastPods = clear0(v.Pods) }, nil
}
