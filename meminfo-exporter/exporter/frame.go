package exporter

import (
	"sync"

	dto "github.com/prometheus/client_model/go"
)

// frame is the metric families of one scrape. Its objects are reused from
// scrape to scrape: a frame goes back to the pool only once the handler
// has encoded it (the done func of Gather).
type frame struct {
	out      []*dto.MetricFamily
	families []*dto.MetricFamily // every family made so far; the first nf are in use
	nf       int
	metrics  []*metric
	nm       int
	done     func()
}

// metric is a dto.Metric with room for its value and two labels.
type metric struct {
	m      dto.Metric
	g      dto.Gauge
	c      dto.Counter
	v      float64
	pairs  [2]dto.LabelPair
	labels [2]*dto.LabelPair
}

func (f *frame) reset() {
	f.out = f.out[:0]
	f.nf, f.nm = 0, 0
}

// family starts a family. The pointers must stay valid until the frame is
// reused: they point into the Exporter's names.
func (f *frame) family(name, help *string, typ *dto.MetricType) *dto.MetricFamily {
	if f.nf == len(f.families) {
		f.families = append(f.families, new(dto.MetricFamily))
	}
	fam := f.families[f.nf]
	f.nf++
	fam.Name, fam.Help, fam.Type = name, help, typ
	fam.Metric = fam.Metric[:0]
	f.out = append(f.out, fam)
	return fam
}

// sample adds a metric with value v and up to two labels, given as
// name, value pointer pairs.
func (f *frame) sample(fam *dto.MetricFamily, v float64, labels ...*string) {
	if f.nm == len(f.metrics) {
		m := new(metric)
		m.g.Value, m.c.Value = &m.v, &m.v
		for i := range m.labels {
			m.labels[i] = &m.pairs[i]
		}
		f.metrics = append(f.metrics, m)
	}
	m := f.metrics[f.nm]
	f.nm++
	m.v = v
	m.m.Gauge, m.m.Counter = nil, nil
	if *fam.Type == dto.MetricType_COUNTER {
		m.m.Counter = &m.c
	} else {
		m.m.Gauge = &m.g
	}
	n := len(labels) / 2
	for i := range n {
		m.pairs[i].Name, m.pairs[i].Value = labels[2*i], labels[2*i+1]
	}
	m.m.Label = m.labels[:n]
	fam.Metric = append(fam.Metric, &m.m)
}

// framePool keeps the frames that are not in use: as many as there were
// concurrent scrapes at most. (A sync.Pool would do, but drops frames at
// every GC, and at random under the race detector.)
type framePool struct {
	mu   sync.Mutex
	free []*frame
}

func (p *framePool) get() *frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		f := p.free[n-1]
		p.free = p.free[:n-1]
		return f
	}
	return &frame{}
}

func (p *framePool) put(f *frame) {
	p.mu.Lock()
	p.free = append(p.free, f)
	p.mu.Unlock()
}
