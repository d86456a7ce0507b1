package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Answer is one eviction's classified answer (Result), or the error that kept
// it from being classified (then it counts as unknown).
type Answer struct {
	Target Target
	Result *evict.Result
	Err    error
	// Withheld, when set, is the end of the API server's throttle (another
	// plan's 429, answered after this decision was made) that held the
	// request back: it was never sent.
	Withheld time.Time
}

// outcome is the answer's classified outcome; an error is unknown.
func (a Answer) outcome() evict.Outcome {
	if a.Err != nil || a.Result == nil {
		return evict.Unknown
	}
	return a.Result.Outcome
}

func (a Answer) message() string {
	if a.Err != nil {
		return a.Err.Error()
	}
	if a.Result == nil {
		return "no answer"
	}
	return a.Result.Message
}

// Record applies the answers of the evictions Decide asked for to the status
// Decide returned (and the controller persisted), as the outcome table says:
// accepted pods are waited for; refusals become cooldowns per PDB, or block
// the plan; an unknown answer keeps the pod active and is never assumed
// either way.
func Record(p *api.MaintenancePlan, st api.MaintenancePlanStatus, answers []Answer, now time.Time) api.MaintenancePlanStatus {
	st = *st.DeepCopy()
	spec := Defaulted(p.Spec)
	ep := st.EvictionProgress
	if ep == nil {
		return st
	}
	r := newRecorder(&st, spec, now)
	now = r.now
	for _, a := range answers {
		r.answer(a)
	}
	switch {
	case r.blocked != nil:
		st.Phase, st.Reason, st.Message = api.Blocked, r.blocked.Reason, r.blocked.Message
	case len(r.cooling) > 0:
		c := r.cooling[0]
		st.Phase, st.Reason, st.Message = api.CoolingDown, c.Reason, r.waits()
	case r.accepted > 0:
		st.Phase, st.Reason = api.Draining, api.EvictionAccepted
		st.Message = fmt.Sprintf("%d evictions accepted: %s", r.accepted, strings.Join(r.names, ", "))
	default:
		st.Phase, st.Reason = api.Draining, api.EvictionRequested
		st.Message = strings.Join(r.messages, "; ")
	}
	ep.NextActionAt = nil
	for _, c := range ep.Cooldowns {
		if ep.NextActionAt == nil || c.NextActionAt.Before(ep.NextActionAt) {
			ep.NextActionAt = c.NextActionAt.DeepCopy()
		}
	}
	SetConditions(&st, p.Generation, now)
	Remember(&st, now)
	return st
}

type recorder struct {
	st   *api.MaintenancePlanStatus
	ep   *api.EvictionProgress
	spec Spec
	// now is the time of the answers in whole seconds, as the status
	// records times; at is the time itself.
	now, at  time.Time
	blocked  *api.Cooldown
	cooling  []api.Cooldown
	messages []string
	names    []string
	accepted int
}

// newRecorder records answers given at now into st.
func newRecorder(st *api.MaintenancePlanStatus, spec Spec, now time.Time) recorder {
	return recorder{st: st, ep: st.EvictionProgress, spec: spec, now: now.UTC().Truncate(time.Second), at: now}
}

func (r *recorder) answer(a Answer) {
	t := a.Target
	idx := -1
	for i, ap := range r.ep.ActivePods {
		if ap.UID == t.UID {
			idx = i
		}
	}
	if idx < 0 {
		return // not ours (any more)
	}
	drop := func() { r.ep.ActivePods = slices.Delete(r.ep.ActivePods, idx, idx+1) }
	key := GlobalKey
	if t.PDB != "" {
		key = t.Namespace + "/" + t.PDB
	}
	if !a.Withheld.IsZero() {
		drop() // never sent: nothing to count
		r.cool(GlobalKey, api.EvictionThrottled, a.Withheld.Sub(r.at), "", "the API server throttled another plan's eviction after this plan decided its own: they were not sent")
		return
	}
	msg := fmt.Sprintf("%s/%s: %s", t.Namespace, t.Name, a.message())
	switch o := a.outcome(); o {
	case evict.Accepted, evict.AcceptedNotGone:
		r.ep.ActivePods[idx].Outcome = Accepted
		r.ep.ActivePods[idx].AnsweredAt = nil
		r.accepted++
		r.names = append(r.names, t.Namespace+"/"+t.Name)
		if t.PDB != "" {
			// The budget allowed one: its cooldown is over. A pod without
			// a PDB says nothing of the global waits (a throttle, a block).
			r.clear(key)
		}
	case evict.Gone:
		drop() // it went by itself (or was replaced): nothing to count
		r.st.Pods.Skipped++
		r.messages = append(r.messages, msg)
	case evict.BudgetExhausted:
		drop()
		r.cool(key, api.BudgetExhausted, r.spec.MaxCooldown, t.PDBVersion, msg)
	case evict.PDBStale:
		drop()
		r.cool(key, api.PDBStale, retryAfter(a.Result, 10*time.Second), t.PDBVersion, msg)
	case evict.Throttled:
		drop()
		r.cool(GlobalKey, api.EvictionThrottled, retryAfter(a.Result, time.Second), "", msg)
	case evict.Contention:
		drop()
		attempts := int32(0)
		if c := r.find(key); c != nil {
			attempts = c.Attempts
		}
		r.cool(key, api.APIContention, min(time.Second<<min(attempts, 10), r.spec.MaxCooldown), t.PDBVersion, msg)
	case evict.PDBOverlap:
		drop()
		if names := a.Result.PDBs; len(names) > 0 {
			msg += " (PDBs " + strings.Join(names, ", ") + ")"
		}
		r.block(api.PDBOverlap, msg)
	case evict.Forbidden:
		drop()
		r.block(api.EvictionForbidden, msg)
	case evict.Invalid:
		drop()
		r.block(api.EvictionRejected, msg)
	default:
		// The wait for the answer counts from its arrival; the pod is read
		// live before anything is sent again (Target.Live).
		now := metav1.NewTime(r.now)
		r.ep.ActivePods[idx].Outcome = Unknown
		r.ep.ActivePods[idx].AnsweredAt = &now
		r.messages = append(r.messages, msg+" (answer unknown: the pod is read again before anything else)")
	}
}

func retryAfter(res *evict.Result, fallback time.Duration) time.Duration {
	if res != nil && res.RetryAfterSeconds > 0 {
		return time.Duration(res.RetryAfterSeconds) * time.Second
	}
	return fallback
}

func (r *recorder) find(key string) *api.Cooldown {
	for i := range r.ep.Cooldowns {
		if r.ep.Cooldowns[i].PDB == key {
			return &r.ep.Cooldowns[i]
		}
	}
	return nil
}

func (r *recorder) clear(key string) {
	for i, c := range r.ep.Cooldowns {
		if c.PDB == key {
			r.ep.Cooldowns = append(r.ep.Cooldowns[:i], r.ep.Cooldowns[i+1:]...)
			return
		}
	}
}

// waits says what the plan waits for after the refusals, as Decide says it
// on its next look (each budget's "namespace/pdb: message", in order), so
// that the next look has nothing to rewrite.
func (r *recorder) waits() string {
	var out []string
	for _, c := range r.cooling {
		if c.PDB == GlobalKey {
			out = append(out, c.Message)
		} else {
			out = append(out, c.PDB+": "+c.Message)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), "; ")
}

// cool starts or extends key's cooldown by wait, capped by maxCooldown.
func (r *recorder) cool(key string, reason api.Reason, wait time.Duration, rv, msg string) {
	// From the answer's own time, and up to the next whole second: a
	// Retry-After counts from when it was said, and the status keeps
	// whole seconds (rounded down, it would end up to a second early).
	until := metav1.NewTime(ceilSecond(r.at.Add(min(wait, r.spec.MaxCooldown))))
	c := r.find(key)
	if c == nil {
		r.ep.Cooldowns = append(r.ep.Cooldowns, api.Cooldown{PDB: key})
		c = &r.ep.Cooldowns[len(r.ep.Cooldowns)-1]
	}
	c.Reason, c.NextActionAt, c.Message, c.ResourceVersion = reason, until, msg, rv
	c.Attempts++
	r.cooling = append(r.cooling, *c)
	r.messages = append(r.messages, msg)
}

// block holds every eviction for maxCooldown and blocks the plan meanwhile:
// the cause needs a person (RBAC, a webhook, overlapping PDBs), so it is
// tried again at that pace, never in a loop.
func (r *recorder) block(reason api.Reason, msg string) {
	r.cool(GlobalKey, reason, r.spec.MaxCooldown, "", msg)
	r.blocked = r.find(GlobalKey)
	r.cooling = r.cooling[:len(r.cooling)-1]
}

// dryRun reports what evicting every pod would get, through server-side
// dry runs, at most once per maxCooldown; it writes nothing else.
func (d *decider) dryRun(pods, unknown []analyze.PodVerdict) {
	if len(unknown) > 0 {
		d.unknownPods(unknown)
		return
	}
	if d.highRisk(pods) {
		return
	}
	d.count(pods)
	if d.st.Reason == api.DryRunDone && d.st.ObservedGeneration == d.p.Generation {
		return // once per generation: a change to the spec runs it again
	}
	for _, v := range pods {
		d.dec.Targets = append(d.dec.Targets, Target{Namespace: v.Namespace, Name: v.Name, UID: v.UID, PDB: v.EvictableNow.PDB})
	}
	sortTargets(d.dec.Targets)
	d.dec.Action = DryRunEvict
	d.set(api.Pending, api.DryRunDone, "dry run of %d evictions", len(pods))
}

// RecordDryRun stores the dry-run answers as per-pod verdicts.
func RecordDryRun(p *api.MaintenancePlan, st api.MaintenancePlanStatus, answers []Answer, now time.Time) api.MaintenancePlanStatus {
	st = *st.DeepCopy()
	st.DryRun = nil
	refused := 0
	if ep := st.EvictionProgress; ep != nil {
		// A throttle holds every plan's evictions, dry runs' too: it is
		// recorded as any plan's would be.
		r := newRecorder(&st, Defaulted(p.Spec), now)
		for _, a := range answers {
			if a.outcome() == evict.Throttled {
				r.cool(GlobalKey, api.EvictionThrottled, retryAfter(a.Result, time.Second), "", a.message())
			}
		}
	}
	var notes []string
	for _, a := range answers {
		v := api.PodVerdict{Namespace: a.Target.Namespace, Name: a.Target.Name, UID: a.Target.UID, Outcome: string(a.outcome()), Message: a.message()}
		if a.Result != nil {
			v.HTTPStatus = a.Result.HTTPStatus
		}
		if a.outcome() != evict.Accepted {
			refused++
			notes = append(notes, fmt.Sprintf("%s/%s %s", v.Namespace, v.Name, v.Outcome))
		}
		st.DryRun = append(st.DryRun, v)
	}
	st.Message = fmt.Sprintf("dry run: %d of %d pods would be evicted now", len(answers)-refused, len(answers))
	if refused > 0 {
		st.Message += "; refused: " + strings.Join(notes, ", ")
	}
	st.Message += " (each dry run is judged alone: the budget is not spent between them)"
	if n := len(st.History); n > 0 && st.History[n-1].Reason == api.DryRunDone {
		st.History[n-1].Message = st.Message
	}
	SetConditions(&st, p.Generation, now.UTC().Truncate(time.Second))
	return st
}

// ceilSecond is t rounded up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); u.Before(t) {
		return u.Add(time.Second)
	}
	return t
}
