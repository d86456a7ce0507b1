package follow

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// CampaignOutcome reports whether campaign c has reached its drain's end
// (Drained: every node drained, waiting for release, unless spec.release
// releases them; or Completed) or
// stopped short of it (Blocked, Failed), and the exit code that means: 0
// reached, 3 Blocked or Failed. A status that does not yet reflect the
// campaign's spec is never an outcome.
func CampaignOutcome(c *api.MaintenanceCampaign) (done bool, code exitcode.Code) {
	st := &c.Status
	if st.ObservedGeneration < c.Generation || st.Phase == "" {
		return false, exitcode.NotNow
	}
	switch st.Phase {
	case api.Blocked, api.Failed:
		return true, exitcode.Blocked
	case api.Drained:
		return !c.Spec.Release, exitcode.OK
	case api.Completed:
		return true, exitcode.OK
	}
	return false, exitcode.NotNow
}

// CampaignCode is the exit code of c as it is now: 0 Drained or
// Completed, 3 Blocked or Failed, 2 on its way.
func CampaignCode(c *api.MaintenanceCampaign) exitcode.Code {
	if done, code := CampaignOutcome(c); done {
		return code
	}
	return exitcode.NotNow
}

// ErrCampaignDeleted is the error of a follow whose campaign was deleted.
var ErrCampaignDeleted = errors.New("the campaign was deleted")

// WatchCampaign calls seen with campaign name as it is now and after each
// change, with its plans (listed by its label at each change: a plan's
// progress changes the campaign's counts), until seen returns true
// (WatchCampaign returns the campaign then) or an error, the campaign is
// deleted (ErrCampaignDeleted) or not found, or ctx ends.
func WatchCampaign(ctx context.Context, campaigns maintenancev1alpha1.MaintenanceCampaignInterface, plans maintenancev1alpha1.MaintenancePlanInterface, name string,
	seen func(*api.MaintenanceCampaign, []api.MaintenancePlan) (bool, error)) (*api.MaintenanceCampaign, error) {
	var last *api.MaintenanceCampaign
	lw := byName(name, campaigns.List, campaigns.Watch)
	planSel := labels.SelectorFromSet(labels.Set{api.CampaignLabel: name}).String()
	_, err := watchtools.UntilWithSync(ctx, lw, &api.MaintenanceCampaign{}, exists(name, "maintenancecampaigns"), func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Deleted:
			return false, ErrCampaignDeleted
		case watch.Added, watch.Modified:
			c, ok := e.Object.(*api.MaintenanceCampaign)
			if !ok {
				return false, fmt.Errorf("watch campaign %s: unexpected %T", name, e.Object)
			}
			last = c
			list, err := plans.List(ctx, metav1.ListOptions{LabelSelector: planSel})
			if err != nil {
				return false, fmt.Errorf("list the plans of campaign %s: %w", name, err)
			}
			return seen(c, list.Items)
		}
		return false, nil
	})
	return last, err
}
