package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// nodeREST implements cordon.Client on a REST client that knows core/v1 and
// nothing else. The typed clientset would do the same requests, but
// linking it registers every API group at start-up, a large part of a
// short run's time.
type nodeREST struct {
	rest  rest.Interface
	param runtime.ParameterCodec
}

func nodeClient(cfg *rest.Config) (*nodeREST, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &nodeREST{rest: c, param: runtime.NewParameterCodec(scheme)}, nil
}

func (n *nodeREST) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error) {
	out := &corev1.Node{}
	err := n.rest.Get().Resource("nodes").Name(name).VersionedParams(&opts, n.param).Do(ctx).Into(out)
	return out, err
}

func (n *nodeREST) Update(ctx context.Context, node *corev1.Node, opts metav1.UpdateOptions) (*corev1.Node, error) {
	out := &corev1.Node{}
	err := n.rest.Put().Resource("nodes").Name(node.Name).VersionedParams(&opts, n.param).Body(node).Do(ctx).Into(out)
	return out, err
}
