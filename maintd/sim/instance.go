package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	pfake "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/fake"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// instance is one maintd process: a real controller on clients whose
// requests the world serves, with its own watches and what its caches were
// sent (mirror).
type instance struct {
	id   int
	name string
	ctrl *controller.Controller
	// queue and campaigns are the plans' and the campaigns' workqueues
	// (their delays), and retrying the rate limiters over them, which
	// count the retries after an error.
	queue, campaigns *queue
	retrying         [2]workqueue.TypedRateLimitingInterface[string]
	// workers is how many workers reconcile (the seed's), parked those in
	// the middle of a key, current the one running (nil: none).
	workers  int
	parked   []*worker
	current  *worker
	cancel   context.CancelFunc
	selector labels.Selector
	// dead: killed; every request it makes fails as if never sent.
	dead bool
	// deposed: it lost its lease while workers of it were in the middle
	// of their keys, and a new leader may start. Until its requests time
	// out (deposedAt plus the request timeout; an eviction's, plus its
	// evictionTimeout) each of those workers (flying) goes on once, to
	// its next interleaving point: what it was about to send reaches the
	// server, in flight. Its watches bring nothing more. What the world
	// showed it when it was deposed (the pause switch, the end of a
	// throttle's wait) is what its requests in flight were sent under.
	deposed           bool
	deposedAt         time.Time
	flying            []*worker
	switchAtDepose    int
	throttledAtDepose time.Time
	// caughtUp: it has read the plans live, as a new leader does.
	caughtUp bool
	// pausedAtCatchUp is the pause switch (World.switches) the server held when
	// it caught up (World.switches), 0 for none.
	pausedAtCatchUp int
	// pending are the changes not yet sent on its watches, per resource,
	// in order; mirror is what its caches were sent.
	pending  map[schema.GroupVersionResource][]watch.Event
	mirror   map[schema.GroupVersionResource]map[string]runtime.Object
	watchers map[schema.GroupVersionResource]*watcher
	// sent counts the informer events sent; handled those the
	// controller's handlers have run for (Config.Handled).
	sent    int64
	handled atomic.Int64
	signal  chan struct{}
	// What it has read, for the silence invariant: events of other kinds,
	// and of plans, in all and per plan.
	facts, planEvents int64
	perPlan           map[string]int64
	// Its own status writes, in all and per plan.
	wrotePlans int64
	wrotePlan  map[string]int64
}

// watcher is one watch of an instance: the world sends events on it.
type watcher struct {
	ch   chan watch.Event
	once sync.Once
}

func (w *watcher) Stop()                          { w.once.Do(func() { close(w.ch) }) }
func (w *watcher) ResultChan() <-chan watch.Event { return w.ch }

// errKilled is every answer to a killed instance.
var errKilled = errors.New("sim: the process was killed")

// start runs a new maintd instance (leader when no other instance leads)
// and waits until its caches have synced.
func (w *World) start(sel labels.Selector, name string) *instance {
	w.nextID++
	in := &instance{id: w.nextID, name: name, selector: sel, signal: make(chan struct{}, 1), workers: 2 + w.picking.IntN(2),
		pending:  map[schema.GroupVersionResource][]watch.Event{},
		mirror:   map[schema.GroupVersionResource]map[string]runtime.Object{},
		watchers: map[schema.GroupVersionResource]*watcher{}, perPlan: map[string]int64{}, wrotePlan: map[string]int64{}}
	if in.name == "" {
		in.name = fmt.Sprintf("maintd-%d", in.id)
	}
	core := &kfake.Clientset{}
	core.AddReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) { return w.request(in, a) })
	core.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) { return w.watch(in, a) })
	w.authorize(in, core)
	plans := &pfake.Clientset{}
	plans.AddReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) { return w.request(in, a) })
	plans.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) { return w.watch(in, a) })
	in.queue, in.campaigns = newQueue(w.clock), newQueue(w.clock)
	limited := func(q *queue, name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: q})
	}
	in.retrying = [2]workqueue.TypedRateLimitingInterface[string]{limited(in.queue, in.name), limited(in.campaigns, in.name+"-campaigns")}
	in.ctrl = controller.New(controller.Config{
		Clients: controller.Clients{Core: core.CoreV1(), Apps: core.AppsV1(), Batch: core.BatchV1(), Policy: core.PolicyV1(), Autoscaling: core.AutoscalingV2(), Storage: core.StorageV1(),
			Authorization: core.AuthorizationV1()},
		Plans:     plans.MaintenanceV1alpha1().MaintenancePlans(),
		Campaigns: plans.MaintenanceV1alpha1().MaintenanceCampaigns(),
		Overrides: plans.MaintenanceV1alpha1().MaintenanceOverrides(),
		Poster:    poster{w, in},
		Selector:  sel, MaxNodes: w.MaxNodes, Now: w.clock.Now, Pause: pauseSwitch,
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Events: recorder{w, in},
		Queue:  in.retrying[0], CampaignQueue: in.retrying[1], Serial: true,
		Interleave: func() { w.yield(in) },
		// No decision builds a snapshot or runs an analysis while it
		// holds the lock every decision shares.
		LockViolation: func(what string) { w.violate("%s: %s while the decisions' shared lock is held", in.name, what) },
		Handled: func() {
			in.handled.Add(1)
			select {
			case in.signal <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	w.instances = append(w.instances, in)
	w.logf("start %s", in.name)
	in.ctrl.Start(ctx)
	w.settleInformers(in)
	deadline := time.After(20 * time.Second)
	for !in.ctrl.Synced() {
		select {
		case <-deadline:
			w.failf("%s: caches not synced after their lists were handled", in.name)
			return in
		case <-time.After(100 * time.Microsecond):
			// HasSynced follows the informers' queues, not the handlers
		}
	}
	return in
}

// settleInformers waits until every informer of in watches and its
// handlers have run for every event sent.
func (w *World) settleInformers(in *instance) {
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		watching := len(in.watchers) == len(resources)
		w.mu.Unlock()
		if watching && in.handled.Load() == atomic.LoadInt64(&in.sent) {
			return
		}
		select {
		case <-in.signal:
		case <-deadline:
			w.failf("%s: informers did not settle: %d of %d events handled, %d of %d resources watched", in.name, in.handled.Load(), atomic.LoadInt64(&in.sent), len(in.watchers), len(resources))
			return
		case <-time.After(time.Millisecond):
			// the watch of a resource starts in an informer's goroutine
		}
	}
}

// stop ends an instance: killed (its requests already fail) or stopped
// cleanly (a leader that lost its lease, or SIGTERM).
func (w *World) stop(in *instance, how string) {
	w.mu.Lock()
	in.dead = true
	w.mu.Unlock()
	w.finish(in) // its workers' calls in flight fail
	in.cancel()
	in.queue.ShutDown()
	in.campaigns.ShutDown()
	w.mu.Lock()
	for _, wt := range in.watchers {
		wt.Stop()
	}
	w.mu.Unlock()
	in.ctrl.Stopped()
	w.instances = slices.DeleteFunc(w.instances, func(o *instance) bool { return o == in })
	w.logf("%s %s", how, in.name)
}

// request serves one client call of an instance.
func (w *World) request(in *instance, a k8stesting.Action) (bool, runtime.Object, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in.dead {
		return true, nil, errKilled
	}
	write := a.GetVerb() != "get" && a.GetVerb() != "list"
	if l, ok := a.(k8stesting.ListActionImpl); a.GetVerb() == "get" || ok && l.ListOptions.ResourceVersion == "" {
		w.actions++ // a live read, answered or failed, is a fact the next status may record
	}
	if in.deposed && !w.clock.Now().Before(in.deposedAt.Add(controller.DefaultRequestTimeout)) {
		w.logf("%s (deposed): %s %s -> timed out in flight", in.name, a.GetVerb(), describeAction(a))
		return true, nil, context.DeadlineExceeded
	}
	f := w.fault(in, a)
	point := w.killPoint(f, a)
	if f == killBefore || f == killBeforeDelete {
		in.dead = true
		w.killed(point)
		w.logf("kill %s before %s %s", in.name, a.GetVerb(), describeAction(a))
		return true, nil, errKilled
	}
	if f == conflictWrite || f == readFail || f == readTimeout {
		w.erred[in.id] = true
	}
	switch f {
	case conflict, conflictWrite:
		w.withdrawn(in, a)
		w.logf("409 to %s on %s %s", in.name, a.GetVerb(), describeAction(a))
		return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), nameOf(a), errors.New("the object has been modified (injected)"))
	case readFail:
		w.logf("500 to %s on %s %s (injected)", in.name, a.GetVerb(), describeAction(a))
		return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out (injected)"))
	case readTimeout:
		w.logf("timeout of %s's %s %s (injected)", in.name, a.GetVerb(), describeAction(a))
		return true, nil, fmt.Errorf("%s %s: %w (injected)", a.GetVerb(), describeAction(a), context.DeadlineExceeded)
	}
	if w.refuseNodes && write && a.GetResource() == nodesR {
		w.logf("403 to %s on %s %s (a webhook)", in.name, a.GetVerb(), describeAction(a))
		return true, nil, apierrors.NewForbidden(nodesR.GroupResource(), nameOf(a), errors.New(`admission webhook "freeze.example.com" denied the request: change freeze`))
	}
	var before runtime.Object
	switch r := a.GetResource(); {
	case r == plansR && a.GetSubresource() == "status":
		before, _ = w.s.get(plansR, "", nameOf(a))
	case (r == depsR || r == rsR || r == nodesR) && write:
		before, _ = w.s.get(r, a.GetNamespace(), nameOf(a))
	}
	out, err := w.serve(in, a)
	if r := a.GetResource(); err != nil && write && (r == depsR || r == rsR || r == nodesR) {
		w.erred[in.id] = true
	}
	if err != nil {
		w.withdrawn(in, a)
	}
	if l, ok := a.(k8stesting.ListActionImpl); ok && err == nil && l.ListOptions.ResourceVersion != "" {
		// An informer's list (from its cache's version, "0" at first); a
		// live read asks for the newest ("").
		w.listed(in, a.GetResource(), out)
	}
	if write || (a.GetVerb() == "get" && a.GetResource() == podsR) {
		w.logf("%s: %s %s -> %s", in.name, a.GetVerb(), describeAction(a), errText(err))
	}
	if write {
		if err == nil {
			w.wrote(in, a, before, out)
		}
	}
	if f == killAfter || f == killAfterScale || f == killAfterLedger {
		in.dead = true
		w.logf("kill %s after %s %s (applied, answer lost)", in.name, a.GetVerb(), describeAction(a))
		if err == nil {
			w.killed(point)
		}
		return true, nil, errKilled
	}
	if err := w.deleteFault(in, a, f, point); err != nil {
		return true, nil, err
	}
	return true, out, err
}

// withdrawn notes a plan's status write of in that failed (erred): the
// other plans' decisions made while it was being written read the status
// it decided (Controller.newest), those after it read their caches again,
// so the next status in writes may be written once more (seed 867 of the
// world with volumes: a plan blocked by a rival that the rival's decision,
// being written, had failed). w.mu is held.
func (w *World) withdrawn(in *instance, a k8stesting.Action) {
	if a.GetResource() == plansR && a.GetSubresource() == "status" && a.GetVerb() == "update" {
		w.erred[in.id] = true
	}
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func nameOf(a k8stesting.Action) string {
	switch a.GetVerb() {
	case "get":
		return a.(k8stesting.GetAction).GetName()
	case "update":
		m, _ := meta.Accessor(a.(k8stesting.UpdateAction).GetObject())
		return m.GetName()
	case "create":
		m, _ := meta.Accessor(a.(k8stesting.CreateAction).GetObject())
		return m.GetName()
	case "patch":
		return a.(k8stesting.PatchAction).GetName()
	case "delete":
		return a.(k8stesting.DeleteAction).GetName()
	}
	return ""
}

func describeAction(a k8stesting.Action) string {
	r := a.GetResource().Resource
	if sub := a.GetSubresource(); sub != "" {
		r += "/" + sub
	}
	return r + " " + key(a.GetNamespace(), nameOf(a))
}

// listed starts an instance's view of a resource from a list: the events
// after it are pending; each listed object is one informer event.
func (w *World) listed(in *instance, r schema.GroupVersionResource, list runtime.Object) {
	items, _ := meta.ExtractList(list)
	old := in.mirror[r]
	m := map[string]runtime.Object{}
	for _, o := range items {
		m[keyOf(o)] = o.DeepCopyObject()
	}
	n := int64(len(items))
	for k := range old {
		if _, ok := m[k]; !ok {
			n++ // a relist deletes what is gone
		}
	}
	in.mirror[r], in.pending[r] = m, nil
	atomic.AddInt64(&in.sent, n)
}

// watch starts a watch of an instance; its events come when the world
// sends them.
func (w *World) watch(in *instance, a k8stesting.Action) (bool, watch.Interface, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in.dead {
		return true, nil, errKilled
	}
	wt := &watcher{ch: make(chan watch.Event, 4096)}
	in.watchers[a.GetResource()] = wt
	select {
	case in.signal <- struct{}{}:
	default:
	}
	return true, wt, nil
}

// changed queues a change for every live instance.
func (w *World) changed(r schema.GroupVersionResource, ev watch.Event) {
	for _, in := range w.instances {
		if !in.dead && !in.deposed {
			in.pending[r] = append(in.pending[r], watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()})
		}
	}
}

// deliver sends up to n pending events of resource r to in and waits until
// its handlers ran; it returns how many it sent.
func (w *World) deliver(in *instance, r schema.GroupVersionResource, n int) int {
	w.mu.Lock()
	wt := in.watchers[r]
	sent := 0
	for ; wt != nil && sent < n && len(in.pending[r]) > 0; sent++ {
		ev := in.pending[r][0]
		in.pending[r] = in.pending[r][1:]
		k := keyOf(ev.Object)
		m, _ := meta.Accessor(ev.Object)
		_, known := in.mirror[r][k]
		matches := r != plansR || in.selector.Matches(labels.Set(m.GetLabels()))
		switch {
		case ev.Type == watch.Deleted && !known, ev.Type != watch.Deleted && !matches && !known:
			sent--
			continue // not in this watch's view
		case ev.Type == watch.Deleted || !matches:
			ev.Type = watch.Deleted
			delete(in.mirror[r], k)
		case !known:
			ev.Type = watch.Added
			in.mirror[r][k] = ev.Object.DeepCopyObject()
		default:
			in.mirror[r][k] = ev.Object.DeepCopyObject()
		}
		atomic.AddInt64(&in.sent, 1)
		if r == plansR {
			in.planEvents++
			in.perPlan[m.GetName()]++
		} else {
			in.facts++
		}
		wt.ch <- ev
	}
	w.mu.Unlock()
	if sent > 0 {
		w.settleInformers(in)
	}
	return sent
}

// poster is an instance's eviction client: the world's endpoint.
type poster struct {
	w  *World
	in *instance
}

func (p poster) PostEviction(ctx context.Context, ev *policyv1.Eviction) (evict.Answer, error) {
	w := p.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.in.dead {
		return evict.Answer{}, errKilled
	}
	w.actions++ // an answer, whatever it is, is a fact the next status records
	if p.in.deposed && !w.clock.Now().Before(p.in.deposedAt.Add(drain.DefaultEvictionTimeout)) {
		w.logf("%s (deposed): evict %s/%s -> timed out in flight", p.in.name, ev.Namespace, ev.Name)
		return evict.Answer{}, context.DeadlineExceeded
	}
	a := k8stesting.NewCreateAction(podsR, ev.Namespace, ev)
	a.Subresource = "eviction"
	f := w.fault(p.in, a)
	switch f {
	case killBefore, killBeforeEviction:
		p.in.dead = true
		w.logf("kill %s before evicting %s/%s", p.in.name, ev.Namespace, ev.Name)
		return evict.Answer{}, errKilled
	case throttle:
		w.logf("%s: evict %s/%s -> 429 throttled (injected)", p.in.name, ev.Namespace, ev.Name)
		st := apierrors.NewTooManyRequests("Too many requests, please try again later.", 1).Status()
		w.throttle, w.throttleBy = w.clock.Now().Add(time.Second), p.in.id
		return evict.Answer{Code: http.StatusTooManyRequests, Status: &st}, nil
	case timeoutNotSent:
		w.logf("%s: evict %s/%s -> timeout, not applied (injected)", p.in.name, ev.Namespace, ev.Name)
		return evict.Answer{}, context.DeadlineExceeded
	}
	w.checkEviction(p.in, ev)
	v := w.s.evict(ev)
	w.evicted(p.in, ev, v)
	switch f {
	case killAfter:
		p.in.dead = true
		w.logf("kill %s after evicting %s/%s (%d, answer lost)", p.in.name, ev.Namespace, ev.Name, v.Code)
		return evict.Answer{}, errKilled
	case lost:
		w.logf("answer to %s lost (%d applied=%t)", p.in.name, v.Code, v.Applied)
		return evict.Answer{}, io.ErrUnexpectedEOF
	case timeoutApplied:
		w.logf("answer to %s timed out (%d applied=%t)", p.in.name, v.Code, v.Applied)
		return evict.Answer{}, context.DeadlineExceeded
	}
	return evict.Answer{Code: v.Code, Status: v.Status}, nil
}

// recorder records the Events of an instance in the world.
type recorder struct {
	w  *World
	in *instance
}

func (r recorder) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.w.event(r.in, regarding, eventtype, reason, action, fmt.Sprintf(note, args...))
}

// queue is a delaying workqueue on the simulated clock: delays wait in a
// list the world releases when the clock passes them, and additions wait
// until the world flushes them in name order, so that the order of the
// informers' goroutines does not order the work.
type queue struct {
	workqueue.TypedInterface[string]
	clock   clock.PassiveClock
	mu      sync.Mutex
	staged  map[string]bool
	waiting map[string]time.Time
}

func newQueue(c clock.PassiveClock) *queue {
	return &queue{TypedInterface: workqueue.NewTyped[string](), clock: c, staged: map[string]bool{}, waiting: map[string]time.Time{}}
}

func (q *queue) Add(key string) {
	q.mu.Lock()
	q.staged[key] = true
	q.mu.Unlock()
}

func (q *queue) AddAfter(key string, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	at := q.clock.Now().Add(d)
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.waiting[key]; !ok || at.Before(t) {
		q.waiting[key] = at
	}
}

// flush adds the staged keys and the delays that are due, in name order,
// and returns the earliest delay still waiting.
func (q *queue) flush() (next time.Time) {
	q.mu.Lock()
	now := q.clock.Now()
	for k, t := range q.waiting {
		if !t.After(now) {
			q.staged[k] = true
			delete(q.waiting, k)
		} else if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	keys := sortedKeys(q.staged)
	clear(q.staged)
	q.mu.Unlock()
	for _, k := range keys {
		q.TypedInterface.Add(k)
	}
	return next
}
