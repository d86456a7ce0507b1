package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/metrics"
)

// evictionStep are the reasons of a drain's steps between its evictions,
// Draining or CoolingDown while a budget recovers: they are each pod's,
// recorded by the Evicted Event on the pod; an Event on the plan for each
// would be a write per step that says it twice.
var evictionStep = map[api.Reason]bool{api.EvictionRequested: true, api.EvictionAccepted: true, api.WaitingForPodExit: true, api.BudgetRecovered: true,
	api.BudgetExhausted: true}

// step reports whether a status change from before to st is a step of a
// drain under way (no Event on the plan).
func step(before, st api.MaintenancePlanStatus) bool {
	draining := func(ph api.Phase) bool { return ph == api.Draining || ph == api.CoolingDown }
	return evictionStep[st.Reason] && draining(before.Phase) && draining(st.Phase)
}

// changed logs, records events and counts what a status write changed.
func (c *Controller) changed(p *api.MaintenancePlan, before, st api.MaintenancePlanStatus) {
	if before.Phase != st.Phase || before.Reason != st.Reason {
		c.cfg.Log.Info("plan", "plan", p.Name, "phase", st.Phase, "reason", st.Reason, "message", st.Message)
		if !step(before, st) {
			c.event(p, st)
		}
	}
	if f := st.Forecast; f != nil && (before.Forecast == nil || before.Forecast.Verdict != f.Verdict) {
		c.forecastEvent(p, f)
	}
	m := c.cfg.Metrics
	if m == nil || st.EvictionProgress == nil {
		return
	}
	old := map[string]metav1.Time{}
	if before.EvictionProgress != nil {
		for _, cd := range before.EvictionProgress.Cooldowns {
			old[cd.PDB] = cd.NextActionAt
		}
	}
	now := c.cfg.Now()
	for _, cd := range st.EvictionProgress.Cooldowns {
		if t, ok := old[cd.PDB]; !ok || !t.Equal(&cd.NextActionAt) {
			m.Cooldowns.WithLabelValues(string(cd.Reason)).Observe(max(cd.NextActionAt.Sub(now), 0).Seconds())
		}
	}
}

// Plans lists the cached plans for the per-plan metrics (a plan not yet
// reconciled has phase New).
func (c *Controller) Plans() []metrics.Plan {
	var out []metrics.Plan
	for _, o := range c.planInformer.GetIndexer().List() {
		p := o.(*api.MaintenancePlan)
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = "New"
		}
		out = append(out, metrics.Plan{Name: p.Name, Node: p.Spec.NodeName, Phase: phase, Reason: string(p.Status.Reason),
			Evicted: int(p.Status.Pods.Evicted), Total: int(p.Status.Pods.Total)})
		if f := p.Status.Forecast; f != nil && f.P50 != nil && f.P90 != nil && !drain.Final(&p.Status) {
			out[len(out)-1].Forecast = []float64{f.P50.Seconds(), f.P90.Seconds()}
		}
	}
	return out
}

func (c *Controller) event(p *api.MaintenancePlan, st api.MaintenancePlanStatus) {
	if c.cfg.Events == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if st.Phase == api.Blocked || st.Phase == api.Failed {
		typ = corev1.EventTypeWarning
	}
	c.cfg.Events.Eventf(p, nil, typ, string(st.Phase), string(st.Reason), "%s", truncate(st.Message, 1000))
}

// forecastEvent records a forecast that is new or changed its verdict.
func (c *Controller) forecastEvent(p *api.MaintenancePlan, f *api.Forecast) {
	if c.cfg.Events == nil {
		return
	}
	typ, note := corev1.EventTypeNormal, ""
	switch {
	case f.Verdict == string(analyze.VerdictNever) && len(f.Causes) > 0:
		typ, note = corev1.EventTypeWarning, "the drain never completes: "+f.Causes[0].Message
	case f.P50 != nil && f.P90 != nil:
		note = fmt.Sprintf("the node is empty of its %d pods to evict in %s (p50) to %s (p90)", f.Pods, f.P50.Duration, f.P90.Duration)
		if f.CriticalPath != "" {
			note += "; critical path " + f.CriticalPath
		}
		if f.Verdict == string(analyze.VerdictUnknown) && len(f.Causes) > 0 {
			note += "; unknown: " + f.Causes[0].Message
		}
	}
	c.cfg.Events.Eventf(p, nil, typ, "Forecast", f.Verdict, "%s", truncate(note, 1000))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
