package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	"k8s.io/client-go/rest"

	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

// clients are the typed clients of the groups kubectl-maint uses, sharing
// one connection pool: the built-in kinds in protobuf, the plans,
// campaigns and overrides (custom resources) in JSON.
type clients struct {
	cfg       *rest.Config
	plans     maintenancev1alpha1.MaintenancePlanInterface
	campaigns maintenancev1alpha1.MaintenanceCampaignInterface
	overrides maintenancev1alpha1.MaintenanceOverrideInterface
	core      corev1client.CoreV1Interface
	policy    policyv1client.PolicyV1Interface
	events    eventsv1client.EventsV1Interface
	auth      authenticationv1client.AuthenticationV1Interface
}

func newClients(c *cli.Context) (*clients, error) {
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	cl := &clients{cfg: cfg}
	var errs [5]error
	var mc *maintenancev1alpha1.MaintenanceV1alpha1Client
	mc, errs[0] = maintenancev1alpha1.NewForConfigAndClient(kubeclient.JSON(cfg), hc)
	cl.core, errs[1] = corev1client.NewForConfigAndClient(cfg, hc)
	cl.policy, errs[2] = policyv1client.NewForConfigAndClient(cfg, hc)
	cl.events, errs[3] = eventsv1client.NewForConfigAndClient(cfg, hc)
	cl.auth, errs[4] = authenticationv1client.NewForConfigAndClient(kubeclient.JSON(cfg), hc)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	cl.plans, cl.campaigns, cl.overrides = mc.MaintenancePlans(), mc.MaintenanceCampaigns(), mc.MaintenanceOverrides()
	return cl, nil
}

// whoami is the user the API server authenticates these clients as
// (kubectl auth whoami), "" when it does not say.
func (cl *clients) whoami(c *cli.Context) string {
	r, err := cl.auth.SelfSubjectReviews().Create(c.Context, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return r.Status.UserInfo.Username
}
