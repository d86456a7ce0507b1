package plan

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// The modes of --dry-run, as kubectl spells them.
const (
	DryRunNone   = "none"
	DryRunClient = "client"
	DryRunServer = "server"
)

// ParseDryRun reads a --dry-run value: none, client or server (any case);
// "true", the flag given alone, is server (maintd's dry run, or the API
// server's), "false" none.
func ParseDryRun(s string) (string, error) {
	switch m := strings.ToLower(s); m {
	case "true":
		return DryRunServer, nil
	case "false", DryRunNone:
		return DryRunNone, nil
	case DryRunClient, DryRunServer:
		return m, nil
	}
	return "", fmt.Errorf("invalid --dry-run %q: none, client or server", s)
}

// ParseNodeSelector reads -l: a label selector (pool=blue,zone in (a,b))
// that names some nodes, not every node.
func ParseNodeSelector(s string) (*metav1.LabelSelector, error) {
	sel, err := metav1.ParseToLabelSelector(s)
	if err != nil {
		return nil, fmt.Errorf("invalid --selector %q: %v", s, err)
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return nil, fmt.Errorf("--selector %q selects every node: name the nodes (pool=blue)", s)
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, fmt.Errorf("invalid --selector %q: %v", s, err)
	}
	return sel, nil
}

// NewCampaign is the campaign of r's settings over nodes (by name) or the
// nodes sel selects (exactly one of them), created by user: r.Name names
// it (empty: drain-<random>, made by the API server); r.Node is not used.
func NewCampaign(r Request, nodes []string, sel *metav1.LabelSelector, user string) *api.MaintenanceCampaign {
	m := &api.MaintenanceCampaign{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenanceCampaign"},
		ObjectMeta: r.objectMeta(user),
		Spec: api.MaintenanceCampaignSpec{
			NodeSelector:      sel,
			Reason:            r.Reason,
			Workloads:         r.Workloads,
			AllowAllWorkloads: r.AllWorkloads,
			AcceptedRisks:     r.Accept,
			Windows:           r.Windows,
			HealthGate:        r.HealthGate,
			Release:           r.Release,
		},
	}
	if sel == nil {
		m.Spec.Nodes = slices.Compact(slices.Sorted(slices.Values(nodes)))
	}
	if r.Name == "" {
		m.GenerateName = "drain-"
	}
	m.Spec.Deadline, m.Spec.VolumeDetachTimeout, m.Spec.Surge = r.limits()
	return m
}
