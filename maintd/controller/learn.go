package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
)

// Forecast learning (docs/maintd.md, "Forecast learning"): how long the
// pods of each workload take to exit once evicted and their replacements to
// become Ready, learned from what this maintd watched, and fed to every
// forecast it makes (analyze.ForecastOptions.Learned). For a pod deleted on
// a node that has a MaintenancePlan (maintd's evictions and deletes, and
// any other delete during the maintenance), the time from its
// deletionTimestamp appearing in the pod cache to the pod's disappearance
// from it; for a pod of the same workload created after such a deletion,
// the time from its appearance in the cache to its first Ready (a later
// flap is not its first). The learned times are kept in a ConfigMap of
// maintd's namespace, written at most every learnedWriteEvery, and read
// when maintd starts to lead.

// DefaultLearned is the ConfigMap maintd keeps its learned times in by
// default (maintd --learned-configmap).
const DefaultLearned = "maintd-system/sentinel-maintd-learned"

const (
	// learnedSamples is how many of a workload's last exits and times to
	// Ready are kept: the window the quantiles are taken of.
	learnedSamples = 32
	// learnedWorkloads bounds the workloads kept (the most recently
	// sampled): 1,000 windows of 32+32 samples in milliseconds fit a
	// ConfigMap (1 MiB) with room to spare.
	learnedWorkloads = 1000
	// learnedWriteEvery is how often, at most, the ConfigMap is written
	// (only when something new was learned).
	learnedWriteEvery = 30 * time.Second
	// replacementWindow is how long after a deletion of a workload's pod a
	// new pod of it counts as a replacement.
	replacementWindow = 10 * time.Minute
)

// learner holds what was learned and what is being watched.
type learner struct {
	mu sync.Mutex
	// exiting are pods whose deletion was seen, not yet gone.
	exiting map[types.UID]pending
	// fresh are replacements seen created, not yet Ready.
	fresh map[types.UID]pending
	// deleted is when a deletion of each workload's pod was last seen.
	deleted map[analyze.Workload]time.Time
	windows map[analyze.Workload]*window
	// version counts the samples taken; written is the version last
	// persisted, memo the Learned of memoVersion.
	version, written, memoVersion int64
	memo                          map[analyze.Workload]analyze.Learned
}

type pending struct {
	workload analyze.Workload
	since    time.Time
}

// window is a workload's last samples, oldest first.
type window struct {
	exit, ready []time.Duration
	last        time.Time
}

func newLearner() *learner {
	return &learner{exiting: map[types.UID]pending{}, fresh: map[types.UID]pending{}, deleted: map[analyze.Workload]time.Time{},
		windows: map[analyze.Workload]*window{}}
}

// observe takes an event of a pod of workload w (old nil for an add, p nil
// for a delete) seen at now; maintained says whether the pod's node has a
// MaintenancePlan (its deletion then teaches an exit).
func (l *learner) observe(old, p *cachedPod, w analyze.Workload, maintained bool, now time.Time) {
	if w.Kind == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case p == nil && old != nil: // gone
		if e, ok := l.exiting[old.UID]; ok {
			l.sample(e.workload, now, now.Sub(e.since), 0)
		}
		delete(l.exiting, old.UID)
		delete(l.fresh, old.UID)
		return
	case p == nil:
		return
	}
	if p.DeletionTimestamp != nil {
		delete(l.fresh, p.UID) // deleted before it was Ready: no sample
		// Seen as it happened (an update): a pod listed already deleting
		// says nothing of when its deletion began.
		if old != nil && old.DeletionTimestamp == nil && maintained {
			l.exiting[p.UID] = pending{w, now}
			l.deleted[w] = now
			l.prune(now)
		}
		return
	}
	if old == nil {
		// A replacement: created after a deletion of its workload's pod
		// (the creation timestamp is in whole seconds).
		if at, ok := l.deleted[w]; ok && now.Sub(at) <= replacementWindow && !p.CreationTimestamp.Time.Before(at.Truncate(time.Second)) && !ready(p) {
			l.fresh[p.UID] = pending{w, now}
		}
		return
	}
	if f, ok := l.fresh[p.UID]; ok && ready(p) {
		l.sample(f.workload, now, 0, now.Sub(f.since))
		delete(l.fresh, p.UID)
	}
}

// prune forgets, once they are many, the deletions and the replacements
// not yet Ready seen longer than replacementWindow ago (a replacement that
// never becomes Ready, a workload not drained since), and the exits seen
// that long ago and never ended (a delete event missed).
func (l *learner) prune(now time.Time) {
	if len(l.deleted)+len(l.fresh)+len(l.exiting) < 4*learnedWorkloads {
		return
	}
	maps.DeleteFunc(l.deleted, func(_ analyze.Workload, at time.Time) bool { return now.Sub(at) > replacementWindow })
	old := func(_ types.UID, p pending) bool { return now.Sub(p.since) > replacementWindow }
	maps.DeleteFunc(l.fresh, old)
	maps.DeleteFunc(l.exiting, old)
}

// sample adds an exit (exit > 0) or a time to Ready (ready > 0) of w.
func (l *learner) sample(w analyze.Workload, now time.Time, exit, ready time.Duration) {
	win := l.windows[w]
	if win == nil {
		win = &window{}
		l.windows[w] = win
	}
	if exit > 0 {
		win.exit = keepLast(win.exit, exit)
	}
	if ready > 0 {
		win.ready = keepLast(win.ready, ready)
	}
	win.last = now
	l.version++
	l.trim()
}

// keepLast appends d to s, keeping the last learnedSamples.
func keepLast(s []time.Duration, d time.Duration) []time.Duration {
	s = append(s, d)
	return s[max(0, len(s)-learnedSamples):]
}

// trim keeps the learnedWorkloads most recently sampled workloads.
func (l *learner) trim() {
	if len(l.windows) <= learnedWorkloads {
		return
	}
	ws := slices.Collect(maps.Keys(l.windows))
	slices.SortFunc(ws, func(a, b analyze.Workload) int { return l.windows[b].last.Compare(l.windows[a].last) })
	for _, w := range ws[learnedWorkloads:] {
		delete(l.windows, w)
	}
}

// learned is what the forecast is given: each workload's quantiles.
func (l *learner) learned() map[analyze.Workload]analyze.Learned {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.memo == nil || l.memoVersion != l.version {
		l.memo = make(map[analyze.Workload]analyze.Learned, len(l.windows))
		for w, win := range l.windows {
			l.memo[w] = analyze.LearnedOf(win.exit, win.ready)
		}
		l.memoVersion = l.version
	}
	return l.memo
}

// encode is the learned samples as the ConfigMap keeps them
// (analyze.LearnedDoc, JSON), workloads sorted, and the version they are
// of.
func (l *learner) encode() (string, int64, error) {
	l.mu.Lock()
	doc := analyze.LearnedDoc{Workloads: make([]analyze.LearnedSamples, 0, len(l.windows))}
	ms := func(s []time.Duration) []int64 {
		out := make([]int64, len(s))
		for i, d := range s {
			out[i] = d.Milliseconds()
		}
		return out
	}
	for w, win := range l.windows {
		doc.Workloads = append(doc.Workloads, analyze.LearnedSamples{Workload: w, ExitMillis: ms(win.exit), ReadyMillis: ms(win.ready), Last: win.last.UTC().Truncate(time.Second)})
	}
	version := l.version
	l.mu.Unlock()
	slices.SortFunc(doc.Workloads, func(a, b analyze.LearnedSamples) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	b, err := json.Marshal(doc)
	return string(b), version, err
}

// decodeLearned reads a ConfigMap's analyze.LearnedKey
// (analyze.DecodeLearned): at most learnedWorkloads workloads (the most
// recently sampled) of at most learnedSamples samples each (the last);
// samples that are not positive, or longer than a day, are dropped.
func decodeLearned(data string) (map[analyze.Workload]*window, error) {
	samples, err := analyze.DecodeLearned([]byte(data))
	if err != nil {
		return nil, err
	}
	l := &learner{windows: map[analyze.Workload]*window{}}
	for _, s := range samples {
		exits, readies := s.Samples()
		if len(exits)+len(readies) == 0 {
			continue
		}
		l.windows[s.Workload] = &window{exit: exits[max(0, len(exits)-learnedSamples):], ready: readies[max(0, len(readies)-learnedSamples):], last: s.Last}
	}
	l.trim()
	return l.windows, nil
}

// load takes the windows read from the ConfigMap; samples learned since
// this process started stay after them (they are newer).
func (l *learner) load(read map[analyze.Workload]*window) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for w, r := range read {
		if now, ok := l.windows[w]; ok {
			r.exit = append(r.exit, now.exit...)[max(0, len(r.exit)+len(now.exit)-learnedSamples):]
			r.ready = append(r.ready, now.ready...)[max(0, len(r.ready)+len(now.ready)-learnedSamples):]
			r.last = now.last
		}
		l.windows[w] = r
	}
	l.version++
	l.written = l.version
	l.trim()
}

// workloadOf is the top of a cached pod's owner chain, as the forecast
// keys what it learned (analyze.Workload): its controller, and that one's
// controller while the cache holds it (a ReplicaSet's Deployment); zero
// for a pod without a controller.
func (c *Controller) workloadOf(p *cachedPod) analyze.Workload {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return analyze.Workload{}
	}
	w := analyze.Workload{Kind: ref.Kind, Namespace: p.Namespace, Name: ref.Name}
	for range 3 {
		o, err := c.owner(w.Kind, w.Namespace, w.Name)
		if err != nil || o == nil {
			break
		}
		up := metav1.GetControllerOfNoCopy(o)
		if up == nil {
			break
		}
		w = analyze.Workload{Kind: up.Kind, Namespace: p.Namespace, Name: up.Name}
	}
	return w
}

// learnPod takes a pod event (old nil for an add, obj nil for a delete)
// into the learner.
func (c *Controller) learnPod(old, obj any) {
	o, _ := old.(*cachedPod)
	p, _ := obj.(*cachedPod)
	q := cmp.Or(p, o)
	if q == nil {
		return
	}
	if o != nil && p != nil && (o.DeletionTimestamp == nil) == (p.DeletionTimestamp == nil) && ready(o) == ready(p) {
		return // status churn: nothing a learner times
	}
	maintained := false
	if q.NodeName != "" && c.planInformer != nil {
		if plans, err := c.planInformer.GetIndexer().ByIndex(byNode, q.NodeName); err == nil {
			maintained = len(plans) > 0
		}
	}
	c.learner.observe(o, p, c.workloadOf(q), maintained, c.cfg.Now())
}

// keepLearned reads the learned times from the ConfigMap, then writes them
// back at most every learnedWriteEvery while something new was learned,
// and once more when ctx ends. Without a ConfigMap (Config.Learned zero)
// it does nothing: what is learned lives as long as the process. A
// ConfigMap that cannot be read or written is logged; learning goes on.
func (c *Controller) keepLearned(ctx context.Context) {
	ref := c.cfg.Learned
	if ref.Name == "" {
		return
	}
	cms := c.cfg.Clients.Core.ConfigMaps(ref.Namespace)
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	cm, err := cms.Get(rctx, ref.Name, metav1.GetOptions{})
	cancel()
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		c.cfg.Log.Warn("cannot read the learned times; starting without them", "configmap", ref.String(), "err", err)
	default:
		if read, err := decodeLearned(cm.Data[analyze.LearnedKey]); err != nil {
			c.cfg.Log.Warn("cannot read the learned times; starting without them", "configmap", ref.String(), "err", err)
		} else {
			c.learner.load(read)
			c.cfg.Log.Info("learned times read", "configmap", ref.String(), "workloads", len(read))
		}
	}
	write := func(ctx context.Context) {
		c.learner.mu.Lock()
		due := c.learner.version != c.learner.written
		c.learner.mu.Unlock()
		if !due {
			return
		}
		data, version, err := c.learner.encode()
		if err == nil {
			err = c.writeLearned(ctx, data)
		}
		if err != nil {
			c.cfg.Log.Warn("cannot write the learned times", "configmap", ref.String(), "err", err)
			return
		}
		c.learner.mu.Lock()
		c.learner.written = max(c.learner.written, version)
		c.learner.mu.Unlock()
	}
	tick := time.NewTicker(learnedWriteEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.RequestTimeout)
			write(wctx)
			cancel()
			return
		case <-tick.C:
			write(ctx)
		}
	}
}

// writeLearned puts data in the learned ConfigMap, creating it when it is
// not there.
func (c *Controller) writeLearned(ctx context.Context, data string) error {
	ref := c.cfg.Learned
	cms := c.cfg.Clients.Core.ConfigMaps(ref.Namespace)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name,
		Labels: map[string]string{"app.kubernetes.io/name": "maintd"}}, Data: map[string]string{analyze.LearnedKey: data}}
	_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	}
	return err
}
