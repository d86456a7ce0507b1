package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// podREST implements evict.Pods (and Get) for one namespace on plumbing's
// core/v1-only REST client: the same requests as the typed clientset,
// without registering every API group at start-up.
type podREST struct {
	rest      rest.Interface
	param     runtime.ParameterCodec
	namespace string
}

func podClient(cfg *rest.Config, namespace string) (*podREST, error) {
	c, param, err := kubeclient.CoreV1(cfg)
	if err != nil {
		return nil, err
	}
	return &podREST{rest: c, param: param, namespace: namespace}, nil
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

// budgets lists the PodDisruptionBudgets of pods' namespace, on a REST
// client for policy/v1 alone.
func (p *podREST) budgets(ctx context.Context, cfg *rest.Config) ([]policyv1.PodDisruptionBudget, error) {
	c, codec, err := kubeclient.For(cfg, nil, policyv1.SchemeGroupVersion, policyv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	out := &policyv1.PodDisruptionBudgetList{}
	err = c.Get().Namespace(p.namespace).Resource("poddisruptionbudgets").
		VersionedParams(&metav1.ListOptions{}, codec).Do(ctx).Into(out)
	return out.Items, err
}
