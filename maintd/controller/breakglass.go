package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// byPlan indexes MaintenanceOverrides by the plan they name.
const byPlan = "plan"

// mayDeleteFor is how long maintd trusts its own SelfSubjectAccessReview
// of pod deletes in a namespace: the break-glass component applied or
// removed shows within it.
const mayDeleteFor = 30 * time.Second

// accessCache holds maintd's answers to "may I delete pods in namespace
// N", each until its time.
type accessCache struct {
	mu sync.Mutex
	m  map[string]access
}

type access struct {
	allowed bool
	until   time.Time
}

// overrideInformer caches the MaintenanceOverrides (nil without a client).
func (c *Controller) overrideInformer() cache.SharedIndexInformer {
	if c.cfg.Overrides == nil {
		return nil
	}
	i := informer(c, c.cfg.Overrides, &api.MaintenanceOverride{}, cache.Indexers{byPlan: func(o any) ([]string, error) {
		return []string{o.(*api.MaintenanceOverride).Spec.Plan}, nil
	}})
	c.overrides = i.GetIndexer()
	return i
}

// overrideChanged wakes the plan an override names.
func (c *Controller) overrideChanged(old, obj any) {
	for _, o := range []any{old, obj} {
		if mo, ok := o.(*api.MaintenanceOverride); ok {
			c.wake(waits.Wait{On: waits.Overrides, Key: mo.Spec.Plan})
		}
	}
}

// overrideFacts reads the overrides for p (those pinned to another
// instance of its name left out) and, when there are any, whether maintd
// may delete pods in the namespaces they name.
func (c *Controller) overrideFacts(ctx context.Context, p *api.MaintenancePlan, f *drain.Facts) error {
	if c.overrides == nil {
		return nil
	}
	objs, err := c.overrides.ByIndex(byPlan, p.Name)
	if err != nil {
		return fmt.Errorf("overrides of plan %s: %w", p.Name, err)
	}
	for _, o := range objs {
		mo := o.(*api.MaintenanceOverride)
		if mo.Spec.PlanUID != "" && mo.Spec.PlanUID != p.UID {
			continue
		}
		f.Overrides = append(f.Overrides, *mo)
	}
	if len(f.Overrides) == 0 {
		return nil
	}
	f.MayDelete = map[string]bool{}
	for _, mo := range f.Overrides {
		for _, sel := range mo.Spec.Pods {
			if _, asked := f.MayDelete[sel.Namespace]; asked {
				continue
			}
			ok, err := c.mayDelete(ctx, sel.Namespace)
			if err != nil {
				return err
			}
			f.MayDelete[sel.Namespace] = ok
		}
	}
	return nil
}

// mayDelete asks the API server whether maintd may delete pods in ns (a
// SelfSubjectAccessReview), at most once per mayDeleteFor.
func (c *Controller) mayDelete(ctx context.Context, ns string) (bool, error) {
	now := c.cfg.Now()
	c.access.mu.Lock()
	a, ok := c.access.m[ns]
	c.access.mu.Unlock()
	if ok && now.Before(a.until) {
		return a.allowed, nil
	}
	if c.cfg.Clients.Authorization == nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	r, err := c.cfg.Clients.Authorization.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: "delete", Resource: "pods"}}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("may maintd delete pods in %s: %w", ns, err)
	}
	c.access.mu.Lock()
	if c.access.m == nil {
		c.access.m = map[string]access{}
	}
	c.access.m[ns] = access{r.Status.Allowed, now.Add(mayDeleteFor)}
	c.access.mu.Unlock()
	return r.Status.Allowed, nil
}

// forceDeletes finishes the forced targets of a decision whose evictions
// were sent: where the budget still refused (or the entry is written
// already and the pod, read live, is there), it writes the ledger entries,
// and only then sends each DELETE, with the pod's UID as precondition and
// its own grace period. Each answer becomes the target's: accepted when
// the DELETE was, gone when the pod was. It returns the entries' outcomes,
// by index of the answers, to be settled with the record.
func (c *Controller) forceDeletes(ctx context.Context, p *api.MaintenancePlan, answers []drain.Answer) (map[int]string, error) {
	var idx []int
	var entries []api.ForcedDelete
	now := c.cfg.Now()
	for i, a := range answers {
		t := a.Target
		if t.Force == nil || !a.Withheld.IsZero() {
			continue
		}
		switch {
		case t.Ledgered && a.Result == nil && a.Err == nil:
			idx = append(idx, i)
		case !t.Ledgered && a.Err == nil && a.Result != nil && a.Result.Outcome == evict.BudgetExhausted:
			e := *t.Force
			e.RecordedAt = metav1.NewTime(now.UTC().Truncate(time.Second))
			if b, err := c.pdbs.PodDisruptionBudgets(t.Namespace).Get(t.PDB); err == nil {
				e.PDBBefore = pdbStatus(b)
			}
			entries = append(entries, e)
			answers[i].Target.Force = &e // its DELETE and Events name the budget's status as written
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	if len(entries) > 0 {
		// The ledger first: a DELETE is never sent unrecorded.
		c.interleave()
		if err := c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus { return drain.Ledger(q.Status, entries) }); err != nil {
			for _, i := range idx {
				if answers[i].Result == nil {
					answers[i].Err = err
				}
			}
			return nil, err
		}
	}
	outcomes := map[int]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	send := wg.Go
	if c.cfg.Serial {
		send = func(f func()) { f() }
	}
	for _, i := range idx {
		c.interleave()
		send(func() {
			t := answers[i].Target
			res, outcome := c.deletePod(ctx, p, t)
			mu.Lock()
			answers[i].Result, answers[i].Err = res, nil
			if outcome != "" {
				outcomes[i] = outcome
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return outcomes, nil
}

// deletePod sends one forced DELETE and classifies its answer; outcome is
// the ledger entry's ("" when unknown: the entry stays open and the pod is
// read live before anything is sent again).
func (c *Controller) deletePod(ctx context.Context, p *api.MaintenancePlan, t drain.Target) (*evict.Result, string) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	grace := t.Force.GracePeriodSeconds
	uid := t.UID
	err := c.cfg.Clients.Core.Pods(t.Namespace).Delete(ctx, t.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, GracePeriodSeconds: &grace})
	res := evict.NewResult(t.Namespace, t.Name)
	res.UID = t.UID
	outcome := ""
	switch {
	case err == nil:
		res.Outcome, res.HTTPStatus, outcome = evict.AcceptedNotGone, 200, api.ForcedDeleted
		res.Message = fmt.Sprintf("deleted under override %s approved by %s", t.Force.Override, t.Force.ApprovedBy)
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		res.Outcome, outcome = evict.Gone, api.ForcedGone
		res.Message = "the pod was gone (or replaced) before the DELETE: nothing deleted"
	default:
		res.Outcome, res.Message = evict.Unknown, fmt.Sprintf("forced DELETE: %v", err)
	}
	if m := c.cfg.Metrics; m != nil && m.ForcedDeletes != nil {
		m.ForcedDeletes.WithLabelValues(string(res.Outcome)).Inc()
	}
	c.cfg.Log.Info("force-delete", "plan", p.Name, "pod", t.Namespace+"/"+t.Name, "uid", t.UID, "override", t.Force.Override,
		"approvedBy", t.Force.ApprovedBy, "outcome", res.Outcome, "error", err)
	if outcome == api.ForcedDeleted {
		c.forceEvents(p, t)
	}
	return res, outcome
}

// forceEvents records a Warning Event on the deleted pod and on the
// budget that refused its eviction, naming the plan, the override and its
// approver.
func (c *Controller) forceEvents(p *api.MaintenancePlan, t drain.Target) {
	if c.cfg.Events == nil {
		return
	}
	e := t.Force
	note := fmt.Sprintf("deleted by MaintenancePlan %s (node %s) under MaintenanceOverride %s approved by %s: PodDisruptionBudget %s refused its eviction (healthy %d, needs %d)",
		p.Name, p.Spec.NodeName, e.Override, e.ApprovedBy, t.PDB, e.PDBBefore.CurrentHealthy, e.PDBBefore.DesiredHealthy)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name, UID: t.UID}}
	pod.Kind, pod.APIVersion = "Pod", "v1"
	c.cfg.Events.Eventf(pod, p, corev1.EventTypeWarning, "ForceDeleted", "Delete", "%s", note)
	if t.PDB == "" {
		return
	}
	if b, err := c.pdbs.PodDisruptionBudgets(t.Namespace).Get(t.PDB); err == nil {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name, UID: b.UID}}
		pdb.Kind, pdb.APIVersion = "PodDisruptionBudget", "policy/v1"
		c.cfg.Events.Eventf(pdb, p, corev1.EventTypeWarning, "BudgetOverridden", "Delete", "pod %s/%s %s", t.Namespace, t.Name, note)
	}
}

func pdbStatus(b *policyv1.PodDisruptionBudget) api.PDBStatus {
	return api.PDBStatus{CurrentHealthy: b.Status.CurrentHealthy, DesiredHealthy: b.Status.DesiredHealthy,
		ExpectedPods: b.Status.ExpectedPods, DisruptionsAllowed: b.Status.DisruptionsAllowed}
}
