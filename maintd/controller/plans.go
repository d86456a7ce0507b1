package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// Plans is the MaintenancePlan client: the REST calls maintd makes on its
// own resource, on a client that knows only this API group.
type Plans struct {
	rest  rest.Interface
	param runtime.ParameterCodec
}

// NewPlans is a Plans client for cfg.
func NewPlans(cfg *rest.Config) (*Plans, error) {
	c, param, err := kubeclient.For(kubeclient.JSON(cfg), nil, api.SchemeGroupVersion, api.AddToScheme)
	if err != nil {
		return nil, err
	}
	return &Plans{rest: c, param: param}, nil
}

// List lists the plans.
func (p *Plans) List(ctx context.Context, opts metav1.ListOptions) (*api.MaintenancePlanList, error) {
	out := &api.MaintenancePlanList{}
	err := p.rest.Get().Resource(api.Resource).VersionedParams(&opts, p.param).Do(ctx).Into(out)
	return out, err
}

// Watch watches the plans.
func (p *Plans) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return p.rest.Get().Resource(api.Resource).VersionedParams(&opts, p.param).Watch(ctx)
}

// Get reads one plan.
func (p *Plans) Get(ctx context.Context, name string) (*api.MaintenancePlan, error) {
	out := &api.MaintenancePlan{}
	err := p.rest.Get().Resource(api.Resource).Name(name).Do(ctx).Into(out)
	return out, err
}

// Create creates a plan.
func (p *Plans) Create(ctx context.Context, plan *api.MaintenancePlan) (*api.MaintenancePlan, error) {
	out := &api.MaintenancePlan{}
	err := p.rest.Post().Resource(api.Resource).Body(plan).Do(ctx).Into(out)
	return out, err
}

// Update writes a plan's metadata and spec (finalizers), guarded by its
// resourceVersion.
func (p *Plans) Update(ctx context.Context, plan *api.MaintenancePlan) (*api.MaintenancePlan, error) {
	out := &api.MaintenancePlan{}
	err := p.rest.Put().Resource(api.Resource).Name(plan.Name).Body(plan).Do(ctx).Into(out)
	return out, err
}

// UpdateStatus writes a plan's status, guarded by its resourceVersion.
func (p *Plans) UpdateStatus(ctx context.Context, plan *api.MaintenancePlan) (*api.MaintenancePlan, error) {
	out := &api.MaintenancePlan{}
	err := p.rest.Put().Resource(api.Resource).Name(plan.Name).SubResource("status").Body(plan).Do(ctx).Into(out)
	return out, err
}

// Delete deletes a plan.
func (p *Plans) Delete(ctx context.Context, name string) error {
	return p.rest.Delete().Resource(api.Resource).Name(name).Do(ctx).Error()
}
