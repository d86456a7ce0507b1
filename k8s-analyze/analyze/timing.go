package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// timing is how long the pods of a snapshot take to go and to come back:
// the forecast's options with their defaults, and each workload's time to
// Ready learned from its pods. The forecast times a drain with it, and
// needs-override the downtime of a break-glass delete: one model of both.
type timing struct {
	opts ForecastOptions
	// ready are the learned times to Ready by top owner UID.
	ready map[types.UID]*readiness
	// exits are the learned exits by top owner UID (only workloads with
	// learned exit samples).
	exits map[types.UID]Learned
	// fallback is the default readiness.
	fallback readiness
	// assumed names the volume times taken by default, "" when none was.
	assumed string
}

// newTiming is the timing of the pods of x under opts (zero fields take
// their defaults).
func newTiming(x *index, opts ForecastOptions) *timing {
	t := &timing{opts: opts, ready: map[types.UID]*readiness{}, exits: map[types.UID]Learned{}}
	t.opts.Concurrency = cmp.Or(max(t.opts.Concurrency, 0), DefaultConcurrency)
	t.opts.DefaultReady = min(cmp.Or(max(t.opts.DefaultReady, 0), DefaultReadyTime), maxDuration)
	t.fallback = readiness{p50: t.opts.DefaultReady, p90: t.opts.DefaultReady}
	if t.opts.VolumeDetach <= 0 || t.opts.VolumeAttach <= 0 {
		t.assumed = fmt.Sprintf("%s+%s", cmp.Or(max(t.opts.VolumeDetach, 0), DefaultVolumeDetach), cmp.Or(max(t.opts.VolumeAttach, 0), DefaultVolumeAttach))
	}
	t.opts.VolumeDetach = min(cmp.Or(max(t.opts.VolumeDetach, 0), DefaultVolumeDetach), maxDuration)
	t.opts.VolumeAttach = min(cmp.Or(max(t.opts.VolumeAttach, 0), DefaultVolumeAttach), maxDuration)
	samples := map[*owner][]time.Duration{}
	for i := range x.pods {
		p, top := &x.pods[i], x.chains[i].top
		if top == nil {
			continue
		}
		if _, ok := samples[top]; !ok {
			samples[top] = nil
		}
		if s := p.Scheduling; s != nil && !s.Scheduled.IsZero() && !s.Ready.IsZero() && !s.Ready.Before(&s.Scheduled) {
			samples[top] = append(samples[top], min(s.Ready.Sub(s.Scheduled.Time), maxDuration))
		}
	}
	for top, ds := range samples {
		w := Workload{Kind: top.kind, Namespace: top.meta.Namespace, Name: top.meta.Name}
		r := &readiness{workload: w.String(), samples: len(ds)}
		l, learned := t.opts.Learned[w]
		if learned && l.ExitSamples > 0 {
			t.exits[top.meta.UID] = l
		}
		switch {
		case learned && l.ReadySamples > 0:
			// What maintd watched (creation to first Ready) takes
			// precedence over what the snapshot's pods show.
			r.p50, r.p90 = min(max(l.ReadyP50, 0), maxDuration), min(max(l.ReadyP90, l.ReadyP50, 0), maxDuration)
			r.samples = l.ReadySamples
		case len(ds) == 0:
			r.p50, r.p90 = t.fallback.p50, t.fallback.p90
		default:
			slices.Sort(ds)
			r.p50, r.p90 = quantile(ds, medianPercent), quantile(ds, upperPercent)
		}
		t.ready[top.meta.UID] = r
	}
	return t
}

// readyP50 and readyP90 are a replacement's time from its eviction's
// answer to Ready at the median and at the upper quantile: the control
// plane's reaction (once, thrice at p90) and the workload's time to Ready.
func (t *timing) readyP50(r *readiness) time.Duration { return later(r.p50, t.opts.Reaction) }
func (t *timing) readyP90(r *readiness) time.Duration { return later(r.p90, 3*t.opts.Reaction) }

// timingOf is the timing the analysis uses: the forecaster's, or without a
// forecast (Options.Forecast nil, as maintd's checks) the defaults', made
// the first time a node needs it.
func (a *analyzer) timingOf() *timing {
	if a.fc != nil {
		return &a.fc.timing
	}
	a.tmOnce.Do(func() { a.tm = newTiming(a.x, ForecastOptions{}) })
	return a.tm
}

// timed is st's pod as the forecast times it: its grace, its workload's
// time to Ready, what replaces it and when, and its volumes. Its group and
// phase are the forecast's to set.
func (a *analyzer) timed(t *timing, st *podState) item {
	p, c := st.pod, st.chain
	it := item{st: st, top: c.top, grace: DefaultGrace, ready: &t.fallback}
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
		it.grace = time.Duration(min(max(*g, 0), int64(maxDuration/time.Second))) * time.Second
	}
	it.exit50, it.exit90 = min(DefaultExitP50, it.grace), it.grace
	if c.top != nil {
		if r := t.ready[c.top.meta.UID]; r != nil {
			it.ready = r
		}
		if l, ok := t.exits[c.top.meta.UID]; ok {
			it.exit50 = min(max(l.ExitP50, 0), maxDuration)
			it.exit90 = min(max(l.ExitP90, it.exit50), maxDuration)
			it.exits = l.ExitSamples
		}
	}
	if len(c.hops) > 0 {
		first := c.hops[0]
		it.refills = first.Problem != "missing" && first.Problem != "uid-mismatch"
		it.placed = placedBy(c)
		it.afterExit = first.Kind == "StatefulSet"
	}
	if attached, moves := a.vx.volumesOf(p); attached {
		it.detach = t.opts.VolumeDetach
		if moves {
			it.move = it.detach
			if it.ready.samples == 0 {
				it.move = later(it.move, t.opts.VolumeAttach)
			}
		}
	}
	return it
}

// replacementStarts is how long after its eviction (or delete) the pod's
// replacement starts its way to Ready, given the pod's exit (exit50 or
// exit90): at once for a ReplicaSet's, which makes one as soon as the pod
// is terminating; after the exit for a StatefulSet's, re-created under the
// same name once the pod is gone; after the exit and the volume's move
// (detach, and attach unless the time to Ready holds it) for a pod whose
// ReadWriteOnce volume must move.
func (it *item) replacementStarts(exit time.Duration) time.Duration {
	switch {
	case it.move > 0:
		return later(exit, it.move)
	case it.afterExit:
		return exit
	}
	return 0
}

// exitP50 and exitP90 are an item's exit in the median and the upper run.
func exitP50(it *item) time.Duration { return it.exit50 }
func exitP90(it *item) time.Duration { return it.exit90 }
