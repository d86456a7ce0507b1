package drain

import (
	"strconv"
	"time"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/waits"
)

// WaveKey is the key of a wait on wave n of a campaign.
func WaveKey(campaign string, n int) string { return campaign + "/" + strconv.Itoa(n) }

// declare completes the decision's waits with what every plan that can
// still act waits on, and sets Decision.Waits. The steps of decide added
// their own: a slot, the wave, a placement, the others' evictions, the
// budgets they met.
func (d *decider) declare() {
	w := d.waits
	ep := d.st.EvictionProgress
	if ep != nil {
		for _, s := range ep.Surges {
			if s.State != SurgeRestored {
				w.Add(waits.Pods, s.Namespace) // its new replica, or its restore
			}
		}
	}
	if !Final(&d.st) {
		// Its node, the pods on it and the other plans of it; the pause
		// switch and the breaker of its campaign.
		w.Add(waits.Node, d.spec.NodeName)
		w.Add(waits.Pause, "")
		if c := d.p.Labels[api.CampaignLabel]; c != "" {
			w.Add(waits.Pause, c)
		}
		if ep != nil {
			for _, c := range ep.Cooldowns {
				if c.PDB != GlobalKey {
					w.Add(waits.PDB, c.PDB)
				}
			}
		}
		if a := d.f.Analysis; a != nil && !d.parked {
			// What the analysis of its pods reads: their owners and
			// volumes, the budgets of their namespaces (a new one may
			// select them), and the budgets that govern the pods to move.
			w.Add(waits.Owners, "")
			started := ep != nil && ep.Scope != ""
			for _, v := range a.Pods {
				w.Add(waits.Owners, v.Namespace)
				w.Add(waits.Budgets, v.Namespace)
				if !started {
					// Its preflight and forecast read all of them, and a
					// finding may come as pods move elsewhere.
					w.Add(waits.PDBs, v.Namespace)
					w.Add(waits.Pods, v.Namespace)
				}
				if v.Action == analyze.Skip {
					continue
				}
				for _, r := range v.PDBs {
					w.Add(waits.PDB, r.Namespace+"/"+r.Name)
				}
			}
		}
	}
	d.dec.Waits = w.List()
}

// Shares is what the other plans' decisions read of a plan's status: its
// evictions in flight, which count against their budgets until the
// budgets show them (Facts.Others), and the end of a throttle it met,
// which holds every plan's evictions (Facts.ThrottledUntil).
func Shares(st *api.MaintenancePlanStatus) (active []api.ActivePod, throttledUntil time.Time) {
	ep := st.EvictionProgress
	if ep == nil {
		return nil, time.Time{}
	}
	for _, c := range ep.Cooldowns {
		if c.PDB == GlobalKey && c.Reason == api.EvictionThrottled && c.NextActionAt.After(throttledUntil) {
			throttledUntil = c.NextActionAt.Time
		}
	}
	return ep.ActivePods, throttledUntil
}

// SharesLess reports whether what the others read of a plan went from a to
// b in a way that may let them act: fewer of its evictions in flight, or
// another throttle. More evictions in flight only make them wait longer.
func SharesLess(a, b *api.MaintenancePlanStatus) bool {
	activeA, untilA := Shares(a)
	activeB, untilB := Shares(b)
	return len(activeB) < len(activeA) || !untilA.Equal(untilB)
}
