// The campaign's breaker: when its nodes or pods say the cluster is sick.

package campaign

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// breaker opens or closes the breaker from the sickness facts and reports
// whether the campaign is paused (by it or by the cluster-wide switch).
func (d *decider) breaker() bool {
	st, s, sick := &d.st, d.spec, d.f.Sick
	// A node of the campaign that did not pass its health gate after its
	// maintenance counts as a node NotReady outside it.
	notReady, where := sick.NotReady, "outside the campaign"
	for _, p := range d.f.Plans {
		if p.Status.Reason == api.NodeUnhealthy {
			notReady = append(slices.Clip(notReady), p.Spec.NodeName+" (its health gate)")
			where = "outside the campaign or past their health gate"
		}
	}
	var reason, msg string
	switch {
	case len(notReady) > int(s.Breaker.MaxNotReadyNodes):
		reason = "nodes-not-ready"
		msg = fmt.Sprintf("%d nodes %s are NotReady (%s), more than maxNotReadyNodes %d", len(notReady), where, list(notReady), s.Breaker.MaxNotReadyNodes)
	case len(sick.BelowFloor) > int(s.Breaker.MaxPDBsBelowFloor):
		reason = "pdbs-below-floor"
		msg = fmt.Sprintf("%d PodDisruptionBudgets are below their floor (%s), more than maxPDBsBelowFloor %d; the campaign's evictions never do that", len(sick.BelowFloor), list(sick.BelowFloor), s.Breaker.MaxPDBsBelowFloor)
	}
	if reason == "" {
		var late []string
		for _, u := range sick.Unready {
			if age := d.at.Sub(u.Created); age >= s.PodReadyTimeout { // a pod's time, not a whole second
				late = append(late, fmt.Sprintf("%s/%s (%s, %s)", u.Namespace, u.Name, u.Why, age.Truncate(time.Second)))
			} else {
				d.requeueAt(u.Created.Add(s.PodReadyTimeout))
			}
		}
		if len(late) > 0 {
			slices.Sort(late)
			reason = "pods-not-ready"
			msg = fmt.Sprintf("%d pods the campaign moved are not Ready after podReadyTimeout %s: %s", len(late), s.PodReadyTimeout, list(late))
		}
	}
	b := st.Breaker
	now := metav1.NewTime(d.now)
	switch {
	case reason != "":
		if b == nil || !b.Open {
			trips := int32(0)
			if b != nil {
				trips = b.Trips
			}
			b = &api.BreakerStatus{Open: true, OpenedAt: &now, Trips: trips + 1}
		}
		b.Reason, b.Message, b.ClearSince = reason, msg, nil
	case b != nil && b.Open:
		if b.ClearSince == nil {
			// The status keeps whole seconds: the hold-down counts from
			// the first whole second not before health was first seen,
			// so that it is never shorter than holdDown.
			since := metav1.NewTime(d.now)
			if d.at.After(d.now) {
				since = metav1.NewTime(d.now.Add(time.Second))
			}
			b.ClearSince = &since
		}
		if left := b.ClearSince.Add(s.HoldDown).Sub(d.at); left > 0 {
			d.requeueAt(b.ClearSince.Add(s.HoldDown))
		} else {
			b = &api.BreakerStatus{Trips: b.Trips}
		}
	}
	st.Breaker = b
	switch {
	case d.f.Pause != nil:
		d.set(cmp.Or(st.Phase, api.Pending), api.Paused, "maintenance is paused cluster-wide by ConfigMap %s since %s: no new wave, and the plans make no cordon, eviction or surge until it is deleted",
			d.f.Pause.Object, d.f.Pause.Since.UTC().Format(time.RFC3339))
		return true
	case b != nil && b.Open && b.ClearSince == nil:
		d.set(cmp.Or(st.Phase, api.Pending), api.BreakerOpen, "the breaker is open since %s: %s; no new wave, and the plans make no cordon, eviction or surge until every cause has been clear for %s",
			b.OpenedAt.UTC().Format(time.RFC3339), b.Message, s.HoldDown)
		return true
	case b != nil && b.Open:
		d.set(cmp.Or(st.Phase, api.Pending), api.BreakerOpen, "the breaker is open since %s (%s); every cause is clear since %s: it closes %s after that",
			b.OpenedAt.UTC().Format(time.RFC3339), b.Reason, b.ClearSince.UTC().Format(time.RFC3339), s.HoldDown)
		return true
	}
	return false
}
