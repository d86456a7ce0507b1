// Package v1alpha1 is the MaintenancePlan API, group maintenance.sentinel.dev,
// version v1alpha1: one cluster-scoped object per node to take out for
// maintenance, reconciled by maintd.
//
// The CRD (maintd/deploy/crd.yaml) and zz_generated.deepcopy.go are generated
// from these types by controller-gen (`make generate`); edit the types and
// their markers, never the generated files.
//
// +kubebuilder:object:generate=true
// +groupName=maintenance.sentinel.dev
package v1alpha1
