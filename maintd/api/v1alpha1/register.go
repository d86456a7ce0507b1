package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the MaintenancePlan.
const GroupName = "maintenance.sentinel.dev"

// SchemeGroupVersion is group maintenance.sentinel.dev, version v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource is the group-qualified resource of a resource name in this
// group (maintenanceplans); the generated listers name it in their
// not-found errors.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// AddToScheme registers MaintenancePlan, MaintenanceCampaign,
// MaintenanceOverride and their lists.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &MaintenancePlan{}, &MaintenancePlanList{}, &MaintenanceCampaign{}, &MaintenanceCampaignList{},
		&MaintenanceOverride{}, &MaintenanceOverrideList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
