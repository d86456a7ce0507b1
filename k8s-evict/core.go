package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/k8s-evict/evict/evictrest"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// clients are evict.Run's dependencies for namespace on plumbing's
// one-group REST clients (core/v1, policy/v1) sharing one connection: the
// same requests as the typed clientset, without registering every API
// group at start-up.
func clients(cfg *rest.Config, namespace string) (evict.Deps, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return evict.Deps{}, fmt.Errorf("kubernetes client: %w", err)
	}
	core, param, err := kubeclient.For(cfg, hc, corev1.SchemeGroupVersion, corev1.AddToScheme)
	if err != nil {
		return evict.Deps{}, err
	}
	policy, policyParam, err := kubeclient.For(cfg, hc, policyv1.SchemeGroupVersion, policyv1.AddToScheme)
	if err != nil {
		return evict.Deps{}, err
	}
	return evict.Deps{
		Poster:  evictrest.New(core),
		Pods:    &podREST{rest: core, param: param, namespace: namespace},
		Budgets: &budgetREST{rest: policy, param: policyParam, namespace: namespace},
	}, nil
}

// podREST implements evict.PodClient for one namespace.
type podREST struct {
	rest      rest.Interface
	param     runtime.ParameterCodec
	namespace string
}

func (p *podREST) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := p.rest.Get().Namespace(p.namespace).Resource("pods").Name(name).VersionedParams(&opts, p.param).Do(ctx).Into(out)
	return out, err
}

func (p *podREST) List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	out := &corev1.PodList{}
	err := p.rest.Get().Namespace(p.namespace).Resource("pods").VersionedParams(&opts, p.param).Do(ctx).Into(out)
	return out, err
}

func (p *podREST) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return p.rest.Get().Namespace(p.namespace).Resource("pods").VersionedParams(&opts, p.param).Watch(ctx)
}

// budgetREST implements evict.Budgets for one namespace.
type budgetREST struct {
	rest      rest.Interface
	param     runtime.ParameterCodec
	namespace string
}

func (b *budgetREST) List(ctx context.Context, opts metav1.ListOptions) (*policyv1.PodDisruptionBudgetList, error) {
	out := &policyv1.PodDisruptionBudgetList{}
	err := b.rest.Get().Namespace(b.namespace).Resource("poddisruptionbudgets").VersionedParams(&opts, b.param).Do(ctx).Into(out)
	return out, err
}
