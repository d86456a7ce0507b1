package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// CatchUp reads the plans, the campaigns and the pause switch live before
// the first decision: a standby's warm caches may not show yet what the
// last leader (or a person) wrote. A plan whose cached version is older is
// decided on the live one until the cache shows it (as after this
// controller's own writes: newest, behind); a campaign or a pause switch
// the cache does not show as read stands for it until its next event
// (catchUpOthers). It retries until ctx ends.
func (c *Controller) CatchUp(ctx context.Context) error {
	for {
		lctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		list, err := c.cfg.Plans.List(lctx, metav1.ListOptions{})
		cancel()
		if err == nil {
			err = c.catchUpOthers(ctx)
		}
		if err == nil {
			alive := map[string]bool{}
			for i := range list.Items {
				live := &list.Items[i]
				alive[live.Name] = true
				cached, err := c.plans.Get(live.Name)
				if err == nil && cached.UID == live.UID && cached.ResourceVersion != live.ResourceVersion {
					c.wrote(live, cached.ResourceVersion)
				}
			}
			cached, err := c.plans.List(labels.Everything())
			if err != nil {
				return err
			}
			c.mu.Lock()
			for _, p := range cached {
				if !alive[p.Name] {
					// Gone: decided on by nobody until the cache drops it.
					c.superseded[p.Name] = write{over: map[string]bool{p.ResourceVersion: true}}
				}
			}
			c.mu.Unlock()
			return nil
		}
		c.cfg.Log.Error("catch up with the plans", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// catchUpOthers reads the campaigns and the pause switch live, and keeps
// those the caches do not show as read (caughtCampaigns, caughtPause).
func (c *Controller) catchUpOthers(ctx context.Context) error {
	var pause *corev1.ConfigMap
	if c.pause != nil {
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		live, err := c.cfg.Clients.Core.ConfigMaps(c.cfg.Pause.Namespace).Get(tctx, c.cfg.Pause.Name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read the pause switch: %w", err)
		default:
			if o, ok, _ := c.pause.GetByKey(c.cfg.Pause.String()); !ok || o.(*corev1.ConfigMap).ResourceVersion != live.ResourceVersion {
				pause = live
			}
		}
	}
	camps := map[string]*api.MaintenanceCampaign{}
	if c.campaignInformer != nil {
		tctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		list, err := c.cfg.Campaigns.List(tctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("read the campaigns: %w", err)
		}
		for i := range list.Items {
			live := &list.Items[i]
			if cached, err := c.campaigns.Get(live.Name); err != nil || cached.ResourceVersion != live.ResourceVersion {
				camps[live.Name] = live
			}
		}
	}
	c.caughtMu.Lock()
	c.caughtPause, c.caughtCampaigns = pause, camps
	c.caughtMu.Unlock()
	return nil
}

// persist writes the status; a conflict is an error, and the plan is read
// again and decided again.
func (c *Controller) persist(ctx context.Context, p *api.MaintenancePlan, st api.MaintenancePlanStatus) (*api.MaintenancePlan, error) {
	before := p.Status
	p = p.DeepCopy()
	p.Status = st
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	out, err := c.cfg.Plans.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status: %w", err)
	}
	c.wrote(out, p.ResourceVersion)
	c.mu.Lock()
	delete(c.unwritten, p.Name) // written with this status, if there was one
	c.mu.Unlock()
	c.changed(out, before, st)
	return out, nil
}

// write is a plan as this controller wrote it over version rv.
type write struct {
	// over are the versions this controller wrote over, one write after
	// the other: a cache that holds one of them is behind plan.
	over map[string]bool
	plan *api.MaintenancePlan
}

// wrote notes that this controller replaced version rv of a plan with out.
func (c *Controller) wrote(out *api.MaintenancePlan, rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.superseded[out.Name]
	if !ok || w.plan == nil || w.plan.ResourceVersion != rv || w.plan.UID != out.UID {
		w = write{over: map[string]bool{}}
	}
	w.over[rv], w.plan = true, out
	c.superseded[out.Name] = w
}

// newest is the newest of a cached plan, what this controller wrote over it,
// the verdict it recorded and has not written yet, and what it decided and
// is writing; c.mu is held.
func (c *Controller) newest(cached *api.MaintenancePlan) *api.MaintenancePlan {
	if d, ok := c.inflight[cached.Name]; ok && d.UID == cached.UID {
		return d
	}
	return c.written(cached)
}

// written is the newest of a cached plan, what this controller wrote over
// it and the verdict it recorded and has not written yet: newest but what
// it is writing now; c.mu is held.
func (c *Controller) written(cached *api.MaintenancePlan) *api.MaintenancePlan {
	written := cached
	if w, ok := c.superseded[cached.Name]; ok && w.over[cached.ResourceVersion] && w.plan != nil {
		written = w.plan
	}
	if u := c.unwrittenOver(written); u != nil {
		return u
	}
	return written
}

// unwrittenOver is the verdict this controller recorded over plan p as
// written and has not written yet, nil when there is none (or it was
// recorded over another version); c.mu is held.
func (c *Controller) unwrittenOver(p *api.MaintenancePlan) *api.MaintenancePlan {
	if u, ok := c.unwritten[p.Name]; ok && u.plan.UID == p.UID && u.plan.ResourceVersion == p.ResourceVersion {
		return u.plan
	}
	return nil
}

// unwrittenDue is how long the unwritten record of plan name may still wait
// at now (0: it is due, or there is none); c.mu is held.
func (c *Controller) unwrittenDue(name string, now time.Time) time.Duration {
	if u, ok := c.unwritten[name]; ok {
		return max(u.at.Add(RecordDelay).Sub(now), 0)
	}
	return 0
}

// Unwritten reports whether plan name has a verdict recorded and not yet
// written: its next decision, within RecordDelay, writes it.
func (c *Controller) Unwritten(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.unwritten[name]
	return ok
}

// deleted reports whether a cached plan is known to be deleted (CatchUp read
// the plans live and did not find it); c.mu is held.
func (c *Controller) deleted(cached *api.MaintenancePlan) bool {
	w, ok := c.superseded[cached.Name]
	return ok && w.plan == nil && w.over[cached.ResourceVersion]
}

// behind reports whether the cached plan is a version this controller has
// already written over; once the cache has moved on, the note goes.
func (c *Controller) behind(cached *api.MaintenancePlan) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.superseded[cached.Name]
	if ok && !w.over[cached.ResourceVersion] {
		delete(c.superseded, cached.Name)
		return false
	}
	return ok
}

// newestOf is the newest version this controller knows of each cached plan
// (newest), by name, leaving out those known to be deleted; c.mu is held.
func (c *Controller) newestOf(cached []*api.MaintenancePlan) map[string]*api.MaintenancePlan {
	out := make(map[string]*api.MaintenancePlan, len(cached))
	for _, p := range cached {
		if !c.deleted(p) {
			out[p.Name] = c.newest(p)
		}
	}
	return out
}
