// Package metrics is maintd's Prometheus instrumentation on client_golang:
// its own series (plans by phase, evictions by outcome, cooldowns, reconcile
// durations, leadership), the workqueue's (client-go's MetricsProvider) and
// the API requests by code (client-go's rest metrics adapter).
package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
)

// Namespace prefixes every maintd series.
const Namespace = "maintd"

// Metrics are maintd's own series.
type Metrics struct {
	Evictions *prometheus.CounterVec
	Cooldowns *prometheus.HistogramVec
	Reconcile *prometheus.HistogramVec
	Leader    prometheus.Gauge
	Requests  *prometheus.CounterVec
	Paused    prometheus.Gauge
	// CampaignPaused is 1 while a campaign is paused (its breaker open,
	// or the cluster-wide switch), by campaign and reason.
	CampaignPaused *prometheus.GaugeVec
	// DecisionLock is how long each decision holds the lock shared by
	// every plan's and campaign's decision, by kind (plan, campaign).
	DecisionLock *prometheus.HistogramVec
	// ForcedDeletes counts the DELETEs sent under a MaintenanceOverride
	// (break-glass), by classified outcome.
	ForcedDeletes *prometheus.CounterVec
}

// Plan is one cached plan as the per-plan series show it.
type Plan struct {
	Name, Node, Phase, Reason string
	Evicted, Total            int
	// Forecast is the drain forecast's p50 and p90 in seconds (nil: none).
	Forecast []float64
}

// New registers maintd's series in reg. plans lists the cached plans at
// scrape time (nil while standing by).
func New(reg prometheus.Registerer, plans func() []Plan) *Metrics {
	m := &Metrics{
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "evictions_total",
			Help: "Eviction requests sent, by classified outcome (accepted, budget-exhausted, pdb-stale, throttled, forbidden, ...); dry runs not counted."},
			[]string{"outcome"}),
		Cooldowns: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "cooldown_seconds",
			Help:    "Planned length of each cooldown started, by reason (pdb-budget-exhausted, pdb-stale, eviction-throttled, api-contention).",
			Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300}}, []string{"reason"}),
		Reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "reconcile_duration_seconds",
			Help:    "Time to reconcile one plan once (read, decide, persist, act, record), by result (ok, conflict: a write met a newer object and is retried, error).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}, []string{"result"}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "leader",
			Help: "1 while this process holds the leader lease and reconciles, 0 while it stands by."}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_requests_total",
			Help: "Requests to the Kubernetes API, by method and HTTP status code."}, []string{"method", "code"}),
		Paused: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "paused",
			Help: "1 while maintenance is paused cluster-wide (the pause ConfigMap exists, as maintd's cache shows it), else 0."}),
		CampaignPaused: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "campaign_paused",
			Help: "1 while a MaintenanceCampaign is paused, by its breaker (reason nodes-not-ready, pods-not-ready, pdbs-below-floor) or the cluster-wide switch (paused); absent otherwise."}, []string{"campaign", "reason"}),
		DecisionLock: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "decision_lock_seconds",
			Help:    "Time one decision holds the lock that every plan's and campaign's decision shares (the slots, the evictions in flight, the throttles), by kind (plan, campaign).",
			Buckets: []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"kind"}),
		ForcedDeletes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "forced_deletes_total",
			Help: "Pod DELETEs sent under a MaintenanceOverride (break-glass), each after its ledger entry, by classified outcome (accepted-not-gone, gone, unknown)."}, []string{"outcome"}),
	}
	reg.MustRegister(m.Evictions, m.Cooldowns, m.Reconcile, m.Leader, m.Requests, m.Paused, m.CampaignPaused, m.DecisionLock, m.ForcedDeletes, planCollector{plans})
	return m
}

var (
	plansDesc = prometheus.NewDesc(Namespace+"_plans", "MaintenancePlans this maintd runs, by phase.", []string{"phase"}, nil)
	phaseDesc = prometheus.NewDesc(Namespace+"_plan_phase",
		"1 for each MaintenancePlan this maintd runs, labelled with its node, phase and reason.", []string{"plan", "node", "phase", "reason"}, nil)
	evictedDesc  = prometheus.NewDesc(Namespace+"_plan_evicted_pods", "Pods of the plan's node evicted so far (status.pods.evicted).", []string{"plan", "node"}, nil)
	podsDesc     = prometheus.NewDesc(Namespace+"_plan_pods", "Pods of the plan's node to evict (status.pods.total).", []string{"plan", "node"}, nil)
	forecastDesc = prometheus.NewDesc(Namespace+"_plan_forecast_seconds",
		"The drain forecast of the plan's node: seconds from its computedAt until the node is empty of the pods to evict, at quantile 0.5 and 0.9 (status.forecast.p50, p90).", []string{"plan", "quantile"}, nil)
)

// forecastQuantiles label Plan.Forecast's values.
var forecastQuantiles = []string{"0.5", "0.9"}

// planCollector reports the plans in the cache when scraped: counts by
// phase, and per plan its phase and progress (the alert rules' inputs).
type planCollector struct{ list func() []Plan }

func (planCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- plansDesc
	ch <- phaseDesc
	ch <- evictedDesc
	ch <- podsDesc
	ch <- forecastDesc
}

func (c planCollector) Collect(ch chan<- prometheus.Metric) {
	if c.list == nil {
		return
	}
	byPhase := map[string]int{}
	for _, p := range c.list() {
		byPhase[p.Phase]++
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, 1, p.Name, p.Node, p.Phase, p.Reason)
		ch <- prometheus.MustNewConstMetric(evictedDesc, prometheus.GaugeValue, float64(p.Evicted), p.Name, p.Node)
		ch <- prometheus.MustNewConstMetric(podsDesc, prometheus.GaugeValue, float64(p.Total), p.Name, p.Node)
		for i, v := range p.Forecast {
			ch <- prometheus.MustNewConstMetric(forecastDesc, prometheus.GaugeValue, v, p.Name, forecastQuantiles[i])
		}
	}
	for phase, n := range byPhase {
		ch <- prometheus.MustNewConstMetric(plansDesc, prometheus.GaugeValue, float64(n), phase)
	}
}

// RegisterClientGo sends client-go's request results to m.Requests. client-go
// takes one registration per process: the first call wins.
func (m *Metrics) RegisterClientGo() {
	clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: requestResult{m.Requests}})
}

type requestResult struct{ v *prometheus.CounterVec }

func (r requestResult) Increment(_ context.Context, code, method, _ string) {
	r.v.WithLabelValues(method, code).Inc()
}

var _ clientmetrics.ResultMetric = requestResult{}

// Workqueue is client-go's workqueue.MetricsProvider on client_golang, with
// the usual series names under maintd_workqueue_.
type Workqueue struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

// NewWorkqueue registers the workqueue series in reg.
func NewWorkqueue(reg prometheus.Registerer) *Workqueue {
	sub := "workqueue"
	name := []string{"name"}
	w := &Workqueue{
		depth:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: sub, Name: "depth", Help: "Current depth of the workqueue."}, name),
		adds:       prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: sub, Name: "adds_total", Help: "Adds handled by the workqueue."}, name),
		latency:    prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: sub, Name: "queue_duration_seconds", Help: "Time an item stays in the workqueue before it is processed.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, name),
		work:       prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: sub, Name: "work_duration_seconds", Help: "Time processing an item takes.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, name),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: sub, Name: "unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration."}, name),
		longest:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: sub, Name: "longest_running_processor_seconds", Help: "Seconds the longest running processor has been running."}, name),
		retries:    prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: sub, Name: "retries_total", Help: "Retries handled by the workqueue."}, name),
	}
	reg.MustRegister(w.depth, w.adds, w.latency, w.work, w.unfinished, w.longest, w.retries)
	return w
}

func (w *Workqueue) NewDepthMetric(n string) workqueue.GaugeMetric { return w.depth.WithLabelValues(n) }
func (w *Workqueue) NewAddsMetric(n string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(n)
}
func (w *Workqueue) NewLatencyMetric(n string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(n)
}
func (w *Workqueue) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return w.work.WithLabelValues(n)
}
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(n)
}
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(n)
}
func (w *Workqueue) NewRetriesMetric(n string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(n)
}
