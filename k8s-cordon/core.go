package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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

func (n *nodeREST) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error) {
	out := &corev1.Node{}
	err := n.rest.Patch(pt).Resource("nodes").Name(name).SubResource(subresources...).VersionedParams(&opts, n.param).Body(data).Do(ctx).Into(out)
	return out, err
}
