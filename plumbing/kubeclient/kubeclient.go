// Package kubeclient turns sentinel's client options into a client-go
// configuration: clientcmd loading rules (--kubeconfig, KUBECONFIG,
// --context, in-cluster config inside a pod), QPS and burst, a
// sentinel-<tool>/<version> user agent, and protobuf for built-in kinds.
//
// It deliberately does not build the typed clientset
// (k8s.io/client-go/kubernetes): linking that registers every API group at
// start-up, which short-lived tools that touch one group (CoreV1) should not
// pay for. Tools that need it call kubernetes.NewForConfig themselves.
package kubeclient

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Protobuf is the content type for built-in kinds.
const Protobuf = "application/vnd.kubernetes.protobuf"

// Options select and tune the cluster connection.
type Options struct {
	Kubeconfig string  // explicit path; empty: KUBECONFIG, ~/.kube/config, in-cluster
	Context    string  // kubeconfig context; empty: current
	QPS        float32 // client-side rate limit; 0: client-go default
	Burst      int
	Tool       string // user agent sentinel-<Tool>/<Version>
	Version    string
}

// Config loads the REST configuration, with protobuf for built-in kinds.
func (o Options) Config() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return o.Tune(cfg), nil
}

// Tune applies the options' rate limits, user agent and protobuf to a copy
// of cfg.
func (o Options) Tune(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	cfg.UserAgent = UserAgent(o.Tool, o.Version)
	cfg.ContentType = Protobuf
	cfg.AcceptContentTypes = Protobuf + ",application/json"
	return cfg
}

// UserAgent is sentinel-<tool>/<version>.
func UserAgent(tool, version string) string {
	if tool == "" {
		tool = "client"
	}
	if version == "" {
		version = "dev"
	}
	return "sentinel-" + tool + "/" + version
}

// JSON is a copy of cfg that speaks JSON, for custom resources.
func JSON(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	return cfg
}

// CoreV1 is a REST client for the core/v1 API group alone, with the
// parameter codec its requests need. A tool that touches only nodes or pods
// uses it instead of the typed clientset, which registers every API group
// at start-up (a large part of a short run's time).
func CoreV1(cfg *rest.Config) (rest.Interface, runtime.ParameterCodec, error) {
	return For(cfg, nil, corev1.SchemeGroupVersion, corev1.AddToScheme)
}

// For is a REST client for one API group version, whose types add
// registers, with the parameter codec its requests need. Clients of
// several groups share one connection pool when given the same hc (from
// rest.HTTPClientFor); a nil hc makes one from cfg.
func For(cfg *rest.Config, hc *http.Client, gv schema.GroupVersion, add func(*runtime.Scheme) error) (rest.Interface, runtime.ParameterCodec, error) {
	scheme := runtime.NewScheme()
	if err := add(scheme); err != nil {
		return nil, nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.GroupVersion = &gv
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	var c *rest.RESTClient
	var err error
	if hc == nil {
		c, err = rest.RESTClientFor(cfg)
	} else {
		c, err = rest.RESTClientForConfigAndClient(cfg, hc)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return c, runtime.NewParameterCodec(scheme), nil
}
