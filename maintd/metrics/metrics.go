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
}

// New registers maintd's series in reg. plans reports the number of plans
// per phase at scrape time.
func New(reg prometheus.Registerer, plans func() map[string]int) *Metrics {
	m := &Metrics{
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "evictions_total",
			Help: "Eviction requests sent, by classified outcome (accepted, budget-exhausted, pdb-stale, throttled, forbidden, ...); dry runs not counted."},
			[]string{"outcome"}),
		Cooldowns: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "cooldown_seconds",
			Help:    "Planned length of each cooldown started, by reason (pdb-budget-exhausted, pdb-stale, eviction-throttled, api-contention).",
			Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300}}, []string{"reason"}),
		Reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "reconcile_duration_seconds",
			Help:    "Time to reconcile one plan once (read, decide, persist, act, record), by result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}, []string{"result"}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "leader",
			Help: "1 while this process holds the leader lease and reconciles, 0 while it stands by."}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_requests_total",
			Help: "Requests to the Kubernetes API, by method and HTTP status code."}, []string{"method", "code"}),
	}
	reg.MustRegister(m.Evictions, m.Cooldowns, m.Reconcile, m.Leader, m.Requests, planCollector{plans})
	return m
}

var planDesc = prometheus.NewDesc(Namespace+"_plans", "MaintenancePlans this maintd runs, by phase.", []string{"phase"}, nil)

// planCollector counts the plans in the cache when scraped.
type planCollector struct{ count func() map[string]int }

func (planCollector) Describe(ch chan<- *prometheus.Desc) { ch <- planDesc }

func (c planCollector) Collect(ch chan<- prometheus.Metric) {
	if c.count == nil {
		return
	}
	for phase, n := range c.count() {
		ch <- prometheus.MustNewConstMetric(planDesc, prometheus.GaugeValue, float64(n), phase)
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
