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

// Resource is the plural resource name clients use.
const Resource = "maintenanceplans"

// AddToScheme registers MaintenancePlan and MaintenancePlanList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &MaintenancePlan{}, &MaintenancePlanList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
