package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// bySurge indexes the owners a surge scaled (Deployments, ReplicaSets) by
// the name of the plan their surge annotation names.
const bySurge = "surgePlan"

func surgePlan(o any) ([]string, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if name, _, ok := drain.ParseOwner(m.GetAnnotations()[drain.SurgeAnnotation]); ok {
		return []string{name}, nil
	}
	return nil, nil
}

// orphaned reports whether an owner carrying the surge of mark is left
// scaled up by a plan that will never restore it: the plan named is gone
// (p nil, or another plan of the same name: its finalizer was removed, or
// it came back from a backup), or it is final and its status does not hold
// the surge unrestored (its status was lost).
func orphaned(mark string, p *api.MaintenancePlan, kind, namespace, name string) bool {
	if p == nil || drain.Owner(p) != mark {
		return true
	}
	if !drain.Final(&p.Status) {
		return false
	}
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, s := range ep.Surges {
			if s.Kind == kind && s.Namespace == namespace && s.Name == name && s.State != drain.SurgeRestored {
				return false // the plan restores it
			}
		}
	}
	return true
}

// releaseOrphans releases what plan name (p, nil when the cache does not
// hold it) left behind and will never release itself: the owners its surge
// scaled (orphaned), restored live, each once, as RestoreTo says from the
// surge-from annotation, with an Event on the owner; and the nodes it
// cordoned when it is gone (its finalizer removed: a Failed plan that
// exists keeps its cordon on purpose), uncordoned through cordon.Apply,
// which lifts that plan's cordon alone. What the cache shows gone is read
// live first: a cache that lags (a new leader's) may not hold a plan made
// since. Another plan's surge that waited for the owner then goes on.
func (c *Controller) releaseOrphans(ctx context.Context, name string, p *api.MaintenancePlan) error {
	type owner struct{ kind, namespace, name, mark string }
	var found []owner
	for _, l := range []struct {
		kind string
		idx  cache.Indexer
	}{{"Deployment", c.sources.dep.GetIndexer()}, {"ReplicaSet", c.sources.rs.GetIndexer()}} {
		objs, err := l.idx.ByIndex(bySurge, name)
		if err != nil {
			return err
		}
		for _, o := range objs {
			m := o.(metav1.Object)
			mark := m.GetAnnotations()[drain.SurgeAnnotation]
			if orphaned(mark, p, l.kind, m.GetNamespace(), m.GetName()) {
				found = append(found, owner{l.kind, m.GetNamespace(), m.GetName(), mark})
			}
		}
	}
	type cordoned struct{ node, mark string }
	var nodes []cordoned
	for _, mark := range c.nodeIndex.ListIndexFuncValues(byOwner) {
		if n, _, ok := drain.ParseOwner(mark); !ok || n != name || (p != nil && drain.Owner(p) == mark) {
			continue
		}
		objs, err := c.nodeIndex.ByIndex(byOwner, mark)
		if err != nil {
			return err
		}
		for _, o := range objs {
			nodes = append(nodes, cordoned{o.(*corev1.Node).Name, mark})
		}
	}
	if len(found) == 0 && len(nodes) == 0 {
		return nil
	}
	if p == nil || !drain.Final(&p.Status) {
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		live, err := c.cfg.Plans.Get(tctx, name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return fmt.Errorf("read plan %s: %w", name, err)
		}
		found = slices.DeleteFunc(found, func(o owner) bool { return !orphaned(o.mark, live, o.kind, o.namespace, o.name) })
		nodes = slices.DeleteFunc(nodes, func(n cordoned) bool { return live != nil && drain.Owner(live) == n.mark })
	}
	for _, o := range found {
		if err := c.restoreOrphan(ctx, o.kind, o.namespace, o.name, o.mark); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		res, err := c.applyCordon(ctx, n.node, cordon.Request{Owner: n.mark, Uncordon: true}, c.cfg.Now())
		if err != nil {
			return fmt.Errorf("lift the cordon of gone plan %s from node %s: %w", name, n.node, err)
		}
		c.cfg.Log.Info("orphaned cordon lifted", "plan", name, "node", n.node, "action", res.Action)
	}
	return nil
}

// restoreOrphan restores one owner read live that still carries mark.
func (c *Controller) restoreOrphan(ctx context.Context, kind, namespace, name, mark string) error {
	what := fmt.Sprintf("%s %s/%s", kind, namespace, name)
	o, err := c.readOwner(ctx, kind, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", what, err)
	case o.meta.Annotations[drain.SurgeAnnotation] != mark:
		return nil // restored meanwhile, or someone else's surge now
	}
	to, write, msg := o.replicas, false, "the count it was scaled from is not recorded: replicas left as they are"
	if from, err := strconv.ParseInt(o.meta.Annotations[drain.SurgeFromAnnotation], 10, 32); err == nil {
		to, write, msg = drain.RestoreTo(int32(from), o.replicas)
	}
	if err := c.patchOwner(ctx, kind, namespace, name, restoreOps(o, mark, to, write)); err != nil {
		return fmt.Errorf("restore %s: %w", what, err)
	}
	plan, uid, _ := drain.ParseOwner(mark)
	note := fmt.Sprintf("%s carried the surge of a plan that is gone or will not restore it (its finalizer or status was lost): %s", what, msg)
	c.cfg.Log.Info("orphaned surge restored", "owner", what, "plan", plan, "message", msg)
	c.surgeEvent(&api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: plan, UID: uid}}, api.Surge{Kind: kind, Namespace: namespace, Name: name, UID: o.meta.UID},
		corev1.EventTypeWarning, note)
	return nil
}
