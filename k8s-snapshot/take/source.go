package take

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// Source is what Take reads from: one page of a list, and the server's
// version.
type Source interface {
	// List reads one page of resource ("pods", "deployments", ...) in
	// namespace ("" for all namespaces or a cluster-scoped resource) into
	// the typed list into (*corev1.PodList, ...).
	List(ctx context.Context, resource, namespace string, opts metav1.ListOptions, into runtime.Object) error
	// Version is the server's gitVersion.
	Version(ctx context.Context) (string, error)
}

// group is one API group version's REST client.
type group struct {
	client rest.Interface
	codec  runtime.ParameterCodec
}

// REST is the Source of a real API server: a REST client per API group
// Take reads (core, apps, batch, policy, storage, autoscaling), sharing one
// connection, with only those groups' types registered. The typed
// clientset would register every API group at start-up, a large part of a
// node-scoped snapshot's time.
type REST struct {
	resources map[string]group // by resource name
}

// NewREST is the Source for cfg.
func NewREST(cfg *rest.Config) (*REST, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	r := &REST{resources: map[string]group{}}
	for _, g := range []struct {
		gv        schema.GroupVersion
		add       func(*runtime.Scheme) error
		resources []string
	}{
		{corev1.SchemeGroupVersion, corev1.AddToScheme, []string{"pods", "nodes", "persistentvolumeclaims", "persistentvolumes", "namespaces"}},
		{appsv1.SchemeGroupVersion, appsv1.AddToScheme, []string{"replicasets", "deployments", "statefulsets", "daemonsets"}},
		{batchv1.SchemeGroupVersion, batchv1.AddToScheme, []string{"jobs", "cronjobs"}},
		{policyv1.SchemeGroupVersion, policyv1.AddToScheme, []string{"poddisruptionbudgets"}},
		{storagev1.SchemeGroupVersion, storagev1.AddToScheme, []string{"storageclasses", "volumeattachments", "csidrivers", "csinodes"}},
		{autoscalingv2.SchemeGroupVersion, autoscalingv2.AddToScheme, []string{"horizontalpodautoscalers"}},
	} {
		c, codec, err := kubeclient.For(cfg, hc, g.gv, g.add)
		if err != nil {
			return nil, err
		}
		for _, res := range g.resources {
			r.resources[res] = group{c, codec}
		}
	}
	return r, nil
}

// List implements Source.
func (r *REST) List(ctx context.Context, resource, namespace string, opts metav1.ListOptions, into runtime.Object) error {
	g, ok := r.resources[resource]
	if !ok {
		return fmt.Errorf("no client for %s", resource)
	}
	req := g.client.Get().Resource(resource).VersionedParams(&opts, g.codec)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	return req.Do(ctx).Into(into)
}

// Version implements Source.
func (r *REST) Version(ctx context.Context) (string, error) {
	body, err := r.resources["pods"].client.Get().AbsPath("/version").Do(ctx).Raw() // any client: the path is absolute
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("version: %w", err)
	}
	return info.GitVersion, nil
}
