package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// evict sends the decided evictions, each once, in parallel, then records
// their classified answers in the plan's status. Before each request the
// pod's UID is checked against the cache: a pod that is gone or replaced
// gets no request (a refused UID precondition would still spend the budget).
// When every request was accepted (or its pod is gone), the record waits in
// memory for the plan's next decision, which writes both (deferred; see
// RecordDelay): a refusal, a throttle or an unknown answer is written at
// once, as the next decisions of every plan must honour it.
func (c *Controller) evict(ctx context.Context, p *api.MaintenancePlan, dec drain.Decision) (deferred bool, err error) {
	if len(dec.Targets) == 0 {
		return false, nil // nothing to send, nothing to record
	}
	spec := drain.Defaulted(p.Spec)
	dry := dec.Action == drain.DryRunEvict
	answers := make([]drain.Answer, len(dec.Targets))
	var wg sync.WaitGroup
	send := wg.Go
	if c.cfg.Serial {
		send = func(f func()) { f() }
	}
	for i, t := range dec.Targets {
		answers[i].Target = t
		res := c.gone(t)
		if res == nil && t.Live && !dry {
			res = c.readLive(ctx, t)
		}
		if res != nil {
			answers[i].Result = res
			continue
		}
		if t.Ledgered {
			continue // its eviction was refused before its entry was written: the DELETE alone is sent again (forceDeletes)
		}
		c.interleave()
		if until := c.throttle(); !dry && c.cfg.Now().Before(until) {
			// Another plan met a throttle after this decision was made:
			// it holds every eviction, this plan's too.
			answers[i].Withheld = until
			continue
		}
		send(func() {
			ctx, cancel := context.WithTimeout(ctx, spec.EvictionTimeout)
			defer cancel()
			req := evict.Request{Namespace: t.Namespace, Name: t.Name, UID: t.UID, DryRun: dry, MaxRetryAfter: spec.MaxCooldown}
			res, err := evict.Pod(ctx, c.cfg.Poster, req)
			if err == nil && res.Outcome == evict.PDBOverlap {
				if pod, err := c.pods.get(t.Namespace, t.Name); err == nil {
					if pdbs, err := c.pdbs.PodDisruptionBudgets(t.Namespace).List(everything()); err == nil {
						res.PDBs = evict.Overlapping(pod.pod(), derefs(pdbs))
					}
				}
			}
			answers[i].Result, answers[i].Err = res, err
			if err == nil && res.Outcome == evict.Throttled {
				c.throttled(res)
			}
			if m := c.cfg.Metrics; m != nil && !dry {
				m.Evictions.WithLabelValues(outcome(res, err)).Inc()
			}
			if !dry {
				c.cfg.Log.Info("evict", "plan", p.Name, "pod", t.Namespace+"/"+t.Name, "uid", t.UID, "outcome", outcome(res, err))
				c.podEvent(p, t, res, err)
			}
		})
	}
	wg.Wait()
	var forced map[int]string
	if !dry {
		var err error
		if forced, err = c.forceDeletes(ctx, p, answers); err != nil {
			c.cfg.Log.Error("force-delete: the ledger was not written, nothing deleted", "plan", p.Name, "error", err)
		}
	}
	if !dry && allAccepted(answers) && !hasForce(dec.Targets) {
		q := p.DeepCopy()
		q.Status = drain.Record(p, p.Status, answers, c.cfg.Now())
		c.mu.Lock()
		c.unwritten[p.Name] = unwrittenRecord{q, c.cfg.Now()}
		c.mu.Unlock()
		c.cfg.Log.Info("plan", "plan", p.Name, "phase", q.Status.Phase, "reason", q.Status.Reason, "message", q.Status.Message, "written", false)
		return true, nil
	}
	return false, c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
		if dry {
			return drain.RecordDryRun(q, q.Status, answers, c.cfg.Now())
		}
		st := drain.Record(q, q.Status, answers, c.cfg.Now())
		for i, outcome := range forced {
			st = drain.Settled(st, answers[i].Target.UID, outcome, c.cfg.Now())
		}
		return st
	})
}

// hasForce reports whether any target is a forced one: its outcome is
// written at once, not deferred.
func hasForce(ts []drain.Target) bool {
	for _, t := range ts {
		if t.Force != nil {
			return true
		}
	}
	return false
}

// allAccepted reports whether every answer is an accepted request or a pod
// gone: a verdict that holds back no later decision.
func allAccepted(answers []drain.Answer) bool {
	for _, a := range answers {
		if a.Err != nil || a.Result == nil || !a.Withheld.IsZero() {
			return false
		}
		switch a.Result.Outcome {
		case evict.Accepted, evict.AcceptedNotGone, evict.Gone:
		default:
			return false
		}
	}
	return true
}

// throttle is when the last throttling 429 stops holding every eviction.
func (c *Controller) throttle() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.throttledUntil
}

// throttled notes a throttling 429: the API server's wait holds every
// plan's evictions, also after the plan whose status records it is gone.
func (c *Controller) throttled(res *evict.Result) {
	until := c.cfg.Now().Add(max(time.Duration(res.RetryAfterSeconds)*time.Second, time.Second))
	c.mu.Lock()
	if until.After(c.throttledUntil) {
		c.throttledUntil = until
	}
	c.mu.Unlock()
}

// podEvent records an Event on an evicted pod (the API accepted its
// eviction) naming the plan and the PDB that allowed it.
func (c *Controller) podEvent(p *api.MaintenancePlan, t drain.Target, res *evict.Result, err error) {
	if c.cfg.Events == nil || err != nil || (res.Outcome != evict.Accepted && res.Outcome != evict.AcceptedNotGone) {
		return
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name, UID: t.UID}}
	pod.Kind, pod.APIVersion = "Pod", "v1"
	budget := "no PodDisruptionBudget governs it"
	if t.PDB != "" {
		budget = "PodDisruptionBudget " + t.Namespace + "/" + t.PDB + " allowed it"
	}
	c.cfg.Events.Eventf(pod, p, corev1.EventTypeNormal, "Evicted", "Evict",
		"evicted by MaintenancePlan %s to drain node %s; %s", p.Name, p.Spec.NodeName, budget)
}

func outcome(res *evict.Result, err error) string {
	if err != nil {
		return "error"
	}
	return string(res.Outcome)
}

// gone answers for a target the cache shows gone or replaced, without a
// request (evict.Check); nil means the pod is there with that UID.
func (c *Controller) gone(t drain.Target) *evict.Result {
	var pod *corev1.Pod
	if cached, err := c.pods.get(t.Namespace, t.Name); err == nil {
		pod = cached.pod()
	}
	res, ok := evict.Check(evict.Request{Namespace: t.Namespace, Name: t.Name, UID: t.UID}, pod)
	if ok {
		return nil
	}
	return res
}

// readLive reads a pod whose earlier request got no answer from the API
// server: the request may have been applied while the cache does not show
// it yet. It answers, without a request, for a pod that is gone, replaced
// or going; nil means the pod is there, with that UID, not going. A read
// that fails answers unknown: nothing is sent on a guess.
func (c *Controller) readLive(ctx context.Context, t drain.Target) *evict.Result {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	pod, err := c.cfg.Clients.Core.Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		res := evict.NewResult(t.Namespace, t.Name)
		res.UID, res.Outcome, res.Message = t.UID, evict.Unknown, fmt.Sprintf("read the pod before sending again: %v", err)
		return res
	}
	if res, ok := evict.Check(evict.Request{Namespace: t.Namespace, Name: t.Name, UID: t.UID}, pod); !ok {
		return res
	}
	if pod.DeletionTimestamp != nil {
		res := evict.NewResult(t.Namespace, t.Name)
		res.UID, res.Outcome, res.Message = t.UID, evict.AcceptedNotGone, "the pod is going: the earlier request, whose answer was lost, was applied"
		return res
	}
	return nil
}

// record applies an outcome to the plan (its status, by its spec) and
// writes it; on a conflict it reads the plan again and applies the outcome
// to that, spec and status.
func (c *Controller) record(ctx context.Context, p *api.MaintenancePlan, apply func(*api.MaintenancePlan) api.MaintenancePlanStatus) error {
	for range 5 {
		q := p.DeepCopy()
		q.Status = apply(p)
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		out, err := c.cfg.Plans.UpdateStatus(tctx, q, metav1.UpdateOptions{})
		cancel()
		if err == nil {
			c.wrote(out, q.ResourceVersion)
			c.changed(out, p.Status, q.Status)
			return nil
		}
		if !isConflict(err) {
			return fmt.Errorf("record outcome: %w", err)
		}
		tctx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
		p, err = c.cfg.Plans.Get(tctx, p.Name, metav1.GetOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("record outcome: re-read plan: %w", err)
		}
	}
	return fmt.Errorf("record outcome: plan %s kept changing", p.Name)
}
