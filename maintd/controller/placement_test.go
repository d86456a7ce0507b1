package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// TestForecastOnSharedPlacement: a plan's forecast made on the shared
// placement model (its node's snapshot, and where pods may go from the
// model) is the analysis of its node in a view of the whole cache, every
// node and pod with what the scheduler reads of it, as k8s-analyze judges a
// whole-cluster snapshot. The pods of one app are pinned to the drained
// node by a node selector (their replacements fit nowhere: never); once
// unpinned, and the model made again, they fit.
func TestForecastOnSharedPlacement(t *testing.T) {
	c, plan, _ := benchCluster(t, 40, 30)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pin := func(selector map[string]string) {
		for _, o := range c.pods.idx.List() {
			p := o.(*cachedPod)
			if p.Labels["app"] != "app00000" {
				continue
			}
			q, sc := *p, *p.Scheduling
			sc.NodeSelector, q.Scheduling = selector, &sc
			if err := c.pods.idx.Update(&q); err != nil {
				t.Fatal(err)
			}
		}
		c.placeEpoch.Add(1) // as podChanged would, for a change the model reads
	}
	check := func(want analyze.Verdict) {
		t.Helper()
		node, err := c.nodes.Get(plan.Spec.NodeName)
		if err != nil {
			t.Fatal(err)
		}
		onNode, err := c.pods.onNode(plan.Spec.NodeName)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.snapshot(node, onNode, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		c.forecasts = map[string]forecastMemo{}
		got, _, err := c.forecast(plan, s, onNode, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		// The whole cache: the node's view with every cached node and pod.
		v := view.Of(s)
		v.Metadata.Scope = snapshot.Scope{}
		nodes, err := c.nodes.List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		v.Nodes = nil
		for _, n := range slices.SortedFunc(slices.Values(nodes), byKey[*corev1.Node]) {
			v.Nodes = append(v.Nodes, view.NodeOf(n))
		}
		v.Pods = nil
		var scratch corev1.Pod
		for _, o := range c.pods.idx.List() {
			v.Pods = append(v.Pods, o.(*cachedPod).view(&scratch))
		}
		r, err := analyze.Analyze(v, analyze.Options{Nodes: []string{node.Name}, Now: now,
			Forecast: &analyze.ForecastOptions{Concurrency: 50, Reaction: Reaction}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r.Nodes[0].Forecast, got); diff != "" {
			t.Errorf("forecast on the shared model (-whole cache +shared):\n%s", diff)
		}
		if got.Verdict != want {
			t.Errorf("verdict %s, want %s: %+v", got.Verdict, want, got.Causes)
		}
	}
	pin(map[string]string{corev1.LabelHostname: plan.Spec.NodeName})
	check(analyze.VerdictNever)
	pin(nil)
	check(analyze.VerdictOK)
}
