package controller

import (
	"k8s.io/client-go/util/watchlist"

	"github.com/sentinel-go/sentinel/maintd/client/clientset/versioned"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
)

// planClientset is the clientset the generated plan informer lists and
// watches through: Config.Plans and nothing else. maintd makes the typed
// client of its API group alone (the clientset would add a discovery
// client), and a test or a simulation passes the fake's plans client.
type planClientset struct {
	versioned.Interface // nil: the informer calls MaintenanceV1alpha1 alone
	plans               maintenancev1alpha1.MaintenancePlanInterface
	campaigns           maintenancev1alpha1.MaintenanceCampaignInterface
}

func (c planClientset) MaintenanceV1alpha1() maintenancev1alpha1.MaintenanceV1alpha1Interface {
	return planGroup{plans: c.plans, campaigns: c.campaigns}
}

// IsWatchListSemanticsUnSupported passes on what the plans client says of
// streamed lists (watch-list requests): a fake that cannot serve them says
// so, and the informer's reflector lists instead.
func (c planClientset) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(c.plans) ||
		(c.campaigns != nil && watchlist.DoesClientNotSupportWatchListSemantics(c.campaigns))
}

// planGroup is planClientset's group client: its plans client alone.
type planGroup struct {
	maintenancev1alpha1.MaintenanceV1alpha1Interface // nil: RESTClient is never called
	plans                                            maintenancev1alpha1.MaintenancePlanInterface
	campaigns                                        maintenancev1alpha1.MaintenanceCampaignInterface
}

func (g planGroup) MaintenancePlans() maintenancev1alpha1.MaintenancePlanInterface { return g.plans }

func (g planGroup) MaintenanceCampaigns() maintenancev1alpha1.MaintenanceCampaignInterface {
	return g.campaigns
}
