package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// nodeREST implements cordon.Client on plumbing's core/v1-only REST
// client: the same requests as the typed clientset, without registering
// every API group at start-up.
type nodeREST struct {
	rest  rest.Interface
	param runtime.ParameterCodec
}

func nodeClient(cfg *rest.Config) (*nodeREST, error) {
	c, param, err := kubeclient.CoreV1(cfg)
	if err != nil {
		return nil, err
	}
	return &nodeREST{rest: c, param: param}, nil
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
