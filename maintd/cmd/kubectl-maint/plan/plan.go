// Package plan turns what a person types (kubectl maint drain NODE
// --workloads ... --accept ... --deadline ...) into a MaintenancePlan, and
// finds the plans of a node. Parsing is strict: a bad value is an error
// that names the flag and what is wrong, before anything is written.
package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// Labels and annotations kubectl-maint puts on the plans it creates.
const (
	// CreatedByLabel is who created the plan (the API server's name for
	// the user, made a label value); CreatedByAnnotation is the name as
	// it is.
	CreatedByLabel      = "maintenance.sentinel.dev/created-by"
	CreatedByAnnotation = "maintenance.sentinel.dev/created-by"
	// ManagedByLabel is app.kubernetes.io/managed-by: kubectl-maint.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "kubectl-maint"
)

// Request is a drain as a person asks for it.
type Request struct {
	Node string
	// Name of the plan; empty: NODE-<random>, made by the API server.
	Name         string
	Reason       string
	Workloads    []api.WorkloadRef
	AllWorkloads bool
	Accept       []string
	// Deadline; 0 is the CRD's default (1h).
	Deadline time.Duration
	// VolumeDetachTimeout; 0 is the CRD's default (5m).
	VolumeDetachTimeout time.Duration
	DryRun              bool
	// Surge moves a pod whose budget never allows its eviction with one
	// more replica of its owner first (spec.surge: IfNeeded).
	Surge bool
	// Windows and HealthGate are spec.windows and spec.healthGate (nil:
	// none).
	Windows    *api.MaintenanceWindows
	HealthGate *api.HealthGate
	// Release is a campaign's spec.release: each node is released as soon
	// as it is drained.
	Release bool
}

// New is the plan of r, created by user (as the API server names them).
func New(r Request, user string) *api.MaintenancePlan {
	p := &api.MaintenancePlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenancePlan"},
		ObjectMeta: r.objectMeta(user),
		Spec: api.MaintenancePlanSpec{
			NodeName:          r.Node,
			Reason:            r.Reason,
			Workloads:         r.Workloads,
			AllowAllWorkloads: r.AllWorkloads,
			AcceptedRisks:     r.Accept,
			DryRun:            r.DryRun,
			Windows:           r.Windows,
			HealthGate:        r.HealthGate,
		},
	}
	if r.Name == "" {
		p.GenerateName = r.Node + "-"
	}
	p.Spec.Deadline, p.Spec.VolumeDetachTimeout, p.Spec.Surge = r.limits()
	return p
}

// objectMeta names a plan or campaign r.Name and labels it as created
// by user with kubectl-maint.
func (r Request) objectMeta(user string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        r.Name,
		Labels:      map[string]string{CreatedByLabel: LabelValue(user), ManagedByLabel: ManagedBy},
		Annotations: map[string]string{CreatedByAnnotation: user},
	}
}

// limits are r's deadline and volume detach timeout (nil when not set)
// and its surge policy, as a plan's or a campaign's spec holds them.
func (r Request) limits() (deadline, detach *metav1.Duration, surge api.SurgePolicy) {
	if r.Deadline > 0 {
		deadline = &metav1.Duration{Duration: r.Deadline}
	}
	if r.VolumeDetachTimeout > 0 {
		detach = &metav1.Duration{Duration: r.VolumeDetachTimeout}
	}
	if r.Surge {
		surge = api.SurgeIfNeeded
	}
	return deadline, detach, surge
}

// LabelValue makes a user name a label value: characters a label value
// may not hold become "_", at most 63, starting and ending with a letter
// or digit; "unknown" when nothing is left.
func LabelValue(user string) string {
	b := []byte(user)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	s := string(b[:min(len(b), validation.LabelValueMaxLength)])
	s = strings.TrimFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	return cmp.Or(s, "unknown")
}

// kinds are the workload kinds a plan may name, by the names kubectl
// knows them by.
var kinds = map[string]string{
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment", "deployment.apps": "Deployment",
	"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet", "statefulset.apps": "StatefulSet",
	"replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet", "replicaset.apps": "ReplicaSet",
	"job": "Job", "jobs": "Job", "job.batch": "Job",
}

// ParseWorkloads reads --workloads values: each a comma-separated list of
// KIND/NAMESPACE/NAME (kind as kubectl spells it: deployment, deploy, sts,
// rs, job, ...). Duplicates are dropped.
func ParseWorkloads(values []string) ([]api.WorkloadRef, error) {
	var out []api.WorkloadRef
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			parts := strings.Split(item, "/")
			if len(parts) != 3 {
				return nil, fmt.Errorf("invalid --workloads %q: want KIND/NAMESPACE/NAME, e.g. deployment/shop/web", item)
			}
			kind, ok := kinds[strings.ToLower(parts[0])]
			if !ok {
				return nil, fmt.Errorf("invalid --workloads %q: unknown kind %q: want deployment, statefulset, replicaset or job", item, parts[0])
			}
			if errs := validation.IsDNS1123Label(parts[1]); len(errs) > 0 {
				return nil, fmt.Errorf("invalid --workloads %q: namespace %q: %s", item, parts[1], errs[0])
			}
			if errs := validation.IsDNS1123Subdomain(parts[2]); len(errs) > 0 {
				return nil, fmt.Errorf("invalid --workloads %q: name %q: %s", item, parts[2], errs[0])
			}
			ref := api.WorkloadRef{Kind: kind, Namespace: parts[1], Name: parts[2]}
			if !slices.Contains(out, ref) {
				out = append(out, ref)
			}
		}
	}
	return out, nil
}

// Acceptable are the values a plan's spec.acceptedRisks takes, and so
// --accept: the codes of the High k8s-analyze findings, each of which
// blocks a plan unless accepted, and the causes of a drain forecast of
// never (analyze.NeverReasons), each of which blocks a plan
// (drain-never-completes) unless accepted. pdb-overlap is both.
func Acceptable() (findings, never []string) {
	for _, c := range analyze.Checks() {
		if c.Severity == analyze.High {
			findings = append(findings, string(c.Code))
		}
	}
	return findings, analyze.NeverReasons()
}

// AcceptableText lists the values --accept takes, for its help and its
// errors.
func AcceptableText() string {
	findings, never := Acceptable()
	return fmt.Sprintf("high-risk findings: %s; never causes: %s", strings.Join(findings, ", "), strings.Join(never, ", "))
}

// ParseAccept reads --accept values: k8s-analyze finding codes of High
// severity and causes of a drain forecast of never (Acceptable).
// Duplicates are dropped.
func ParseAccept(values []string) ([]string, error) {
	findings, never := Acceptable()
	var out []string
	for _, v := range values {
		for code := range strings.SplitSeq(v, ",") {
			code = strings.TrimSpace(code)
			if !slices.Contains(findings, code) && !slices.Contains(never, code) {
				return nil, fmt.Errorf("invalid --accept %q: neither a high-risk finding code nor a cause of a drain forecast of never; %s", code, AcceptableText())
			}
			if !slices.Contains(out, code) {
				out = append(out, code)
			}
		}
	}
	return out, nil
}

// ParseDeadline reads --deadline: a positive Go duration (90m, 1h30m).
func ParseDeadline(s string) (time.Duration, error) { return ParseDuration("deadline", s) }

// ParseDuration reads a duration flag (--deadline, --volume-detach-timeout):
// a positive Go duration (90m, 1h30m).
func ParseDuration(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid --%s %q: a duration such as 90m or 2h", flag, s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid --%s %q: must be positive", flag, s)
	}
	return d, nil
}

// ValidName checks a node's or plan's name (flag or argument what).
func ValidName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%s: a name is needed", what)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("invalid %s %q: %s", what, name, errs[0])
	}
	return nil
}

// Live reports whether p is still at work on its node or holds it: any
// plan that exists and is not Completed (a Failed plan keeps its cordon
// until it is deleted).
func Live(p *api.MaintenancePlan) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != api.Completed
}

// Releasable reports whether a release (spec.release) ends plan p: maintd
// lifts its cordon and it completes. A plan whose status is final (Failed,
// such as deadline-exceeded; Blocked for good, its spec changed after its
// start or its node or a workload replaced) is never decided again: it
// keeps its cordon until it is deleted, when maintd's finalizer lifts it.
func Releasable(p *api.MaintenancePlan) bool {
	return !drain.Final(&p.Status)
}

// OfNode are the plans of node among plans, the live ones first, each
// group newest first.
func OfNode(plans []api.MaintenancePlan, node string) []*api.MaintenancePlan {
	var out []*api.MaintenancePlan
	for i := range plans {
		if plans[i].Spec.NodeName == node {
			out = append(out, &plans[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *api.MaintenancePlan) int {
		if la, lb := Live(a), Live(b); la != lb {
			if la {
				return -1
			}
			return 1
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	return out
}
