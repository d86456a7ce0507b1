package sim

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sentinel-go/sentinel/maintd/controller"
)

// worker is one of a leader's workers: a goroutine that reconciles one
// queued key at a time, as Run's workers do. The world runs one goroutine
// at a time: a worker runs until its next request to the API (it parks
// there) or until its key is done, and the seed picks which parked worker
// goes on, or whether a new one takes the next key. The decisions of
// several workers so interleave where the controller lets them
// (Config.Interleave: before a decision takes the shared lock, before it
// writes what it decided, before each eviction), and the same seed replays
// the same interleaving.
type worker struct {
	run  chan struct{}
	park chan bool // false: parked at a request; true: its key is done
	// did reports whether it reconciled a key (there was one queued).
	did bool
}

// process lets the leader's workers go on by one step: a parked worker
// runs to its next interleaving point, or a new worker takes the next queued key (a
// plan's or a campaign's, in the order the seed picks). False when there
// was nothing to do.
func (w *World) process() bool {
	in := w.leader()
	if in == nil {
		return false
	}
	if !in.caughtUp {
		// A new leader reads the plans live first, as Run does.
		if err := in.ctrl.CatchUp(ctxBackground); err != nil {
			w.failf("%s: catch up: %v", in.name, err)
		}
		in.caughtUp = true
		w.mu.Lock()
		in.pausedAtCatchUp = w.switchOn()
		w.mu.Unlock()
	}
	in.queue.flush()
	in.campaigns.flush()
	defer in.queue.flush()
	defer in.campaigns.flush()
	if n := len(in.parked); n > 0 && (n >= in.workers || w.picking.IntN(2) == 0) {
		wk := in.parked[w.picking.IntN(n)]
		w.resume(in, wk)
		return true
	}
	first := w.picking.IntN(2) == 0
	wk := &worker{run: make(chan struct{}), park: make(chan bool)}
	go func() {
		<-wk.run
		wk.did = in.ctrl.ProcessNext(ctxBackground, first) || in.ctrl.ProcessNext(ctxBackground, !first)
		wk.park <- true
	}()
	in.parked = append(in.parked, wk)
	w.resume(in, wk)
	if !wk.did && len(in.parked) > 0 {
		// Nothing was queued: one of the parked ones goes on instead.
		return w.process()
	}
	return wk.did
}

// resume runs worker wk of in until it parks or is done.
func (w *World) resume(in *instance, wk *worker) {
	in.current = wk
	wk.run <- struct{}{}
	done := <-wk.park
	in.current = nil
	if done {
		for i, p := range in.parked {
			if p == wk {
				in.parked = append(in.parked[:i], in.parked[i+1:]...)
				break
			}
		}
	}
}

// finish runs every parked worker of in until its key is done: a stopped
// or killed instance's requests fail at once, a live one's are served.
func (w *World) finish(in *instance) {
	for len(in.parked) > 0 {
		w.resume(in, in.parked[0])
	}
}

// yield parks the worker of in that is running, at an interleaving point,
// until the world lets it go on; outside a worker (a scripted schedule's
// ProcessNext) or on a dead instance it goes on at once.
func (w *World) yield(in *instance) {
	wk := in.current
	if wk == nil {
		return
	}
	w.mu.Lock()
	dead := in.dead
	w.mu.Unlock()
	if dead {
		return
	}
	wk.park <- false
	<-wk.run
}

// depose takes the lease from the leader in while its workers are in the
// middle of their keys: a new leader may start, and what each worker was
// about to send is still in flight (inflight). One with nothing in flight
// stops at once.
func (w *World) depose(in *instance) {
	w.mu.Lock()
	in.deposed, in.deposedAt = true, w.clock.Now()
	in.switchAtDepose, in.throttledAtDepose = w.switchOn(), w.throttled
	in.pending = map[schema.GroupVersionResource][]watch.Event{}
	in.flying = slices.Clone(in.parked)
	w.mu.Unlock()
	w.logf("leader change: %s loses its lease, %d workers in the middle of their keys (their requests in flight for %s)", in.name, len(in.flying), controller.DefaultRequestTimeout)
	if len(in.flying) == 0 {
		w.stop(in, "stop")
	}
}

// inflight lets one worker of a deposed instance go on to its next
// interleaving point (its request in flight reaches the server), or stops
// the instance once no worker of it is left in flight or its requests
// timed out; false when no instance is deposed.
func (w *World) inflight() bool {
	for _, in := range w.instances {
		if !in.deposed {
			continue
		}
		if len(in.flying) == 0 || !w.clock.Now().Before(in.deposedAt.Add(controller.DefaultRequestTimeout)) {
			w.stop(in, "deposed, its requests done or timed out: stop")
			return true
		}
		i := w.leading.IntN(len(in.flying))
		wk := in.flying[i]
		in.flying = slices.Delete(in.flying, i, i+1)
		w.logf("in flight: a worker of %s (deposed) goes on", in.name)
		w.resume(in, wk)
		return true
	}
	return false
}
