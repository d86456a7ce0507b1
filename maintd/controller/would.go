package controller

import (
	"context"

	"time"

	"k8s.io/apimachinery/pkg/labels"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/campaign"
	"github.com/sentinel-go/sentinel/maintd/drain"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// Would is the decision plan name would get now, from the caches, without
// acting or persisting anything; ok is false for a plan the caches do not
// hold, or one this controller does not run. A simulation compares it with
// the plan's status at rest: a plan nothing woke must not have a different
// decision waiting for it (its waits were declared, and an event of one of
// them was lost).
func (c *Controller) Would(name string) (p *api.MaintenancePlan, dec drain.Decision, ok bool, err error) {
	cached, err := c.plans.Get(name)
	if err != nil || !c.selects(cached) || cached.DeletionTimestamp != nil {
		return nil, dec, false, nil
	}
	p = cached.DeepCopy()
	c.mu.Lock()
	if u := c.unwrittenOver(cached); u != nil {
		p = u.DeepCopy() // as the plan's next decision reads it
	}
	c.mu.Unlock()
	_, dec, err = c.Preview(p)
	return p, dec, err == nil, err
}

// Preview is the decision plan p would get now, and the facts it is made
// from, read from the caches as every decision reads them (observe, then
// the shared facts), without acting or persisting anything. p need not
// exist: kubectl maint preflight asks it of the plan it would make, on
// caches filled from a snapshot of the whole cluster.
func (c *Controller) Preview(p *api.MaintenancePlan) (drain.Facts, drain.Decision, error) {
	now := c.cfg.Now()
	f, err := c.observe(p, now)
	if err != nil {
		return f, drain.Decision{}, err
	}
	var dec drain.Decision
	c.slot.Lock()
	held := time.Now()
	if err = c.shared(p, &f); err == nil {
		dec = drain.Decide(f, p, now)
	}
	c.unlock("plan", held)
	return f, dec, err
}

// WouldCampaign is Would for campaign name.
func (c *Controller) WouldCampaign(name string) (m *api.MaintenanceCampaign, dec campaign.Decision, ok bool, err error) {
	if c.campaignInformer == nil {
		return nil, dec, false, nil
	}
	cached, err := c.campaigns.Get(name)
	if err != nil || !c.cfg.Selector.Matches(labels.Set(cached.Labels)) || cached.DeletionTimestamp != nil {
		return nil, dec, false, nil
	}
	m = cached.DeepCopy()
	dec, err = c.decideCampaign(context.Background(), m)
	return m, dec, err == nil, err
}

// Waits are the waits of plan name's last decision (campaign: of campaign
// name's).
func (c *Controller) Waits(name string, campaign bool) []waits.Wait {
	if campaign {
		return c.campaignWaits.Of(name)
	}
	return c.planWaits.Of(name)
}
