package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// podREST implements evict.Pods (and Get) for one namespace on a REST
// client that knows core/v1 and nothing else. The typed clientset would do
// the same requests, but linking it registers every API group at
// start-up, a large part of a short run's time.
type podREST struct {
	rest      rest.Interface
	param     runtime.ParameterCodec
	namespace string
}

func podClient(cfg *rest.Config, namespace string) (*podREST, error) {
	c, param, err := restFor(cfg, "/api", corev1.SchemeGroupVersion, corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	return &podREST{rest: c, param: param, namespace: namespace}, nil
}

// restFor is a REST client for the group version gv alone.
func restFor(cfg *rest.Config, apiPath string, gv schema.GroupVersion, add func(*runtime.Scheme) error) (rest.Interface, runtime.ParameterCodec, error) {
	scheme := runtime.NewScheme()
	if err := add(scheme); err != nil {
		return nil, nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = apiPath
	cfg.GroupVersion = &gv
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return c, runtime.NewParameterCodec(scheme), nil
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

// budgets lists the PodDisruptionBudgets of pods' namespace.
func (p *podREST) budgets(ctx context.Context, cfg *rest.Config) ([]policyv1.PodDisruptionBudget, error) {
	c, param, err := restFor(cfg, "/apis", policyv1.SchemeGroupVersion, policyv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	out := &policyv1.PodDisruptionBudgetList{}
	err = c.Get().Namespace(p.namespace).Resource("poddisruptionbudgets").VersionedParams(&metav1.ListOptions{}, param).Do(ctx).Into(out)
	return out.Items, err
}
