package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// The policies of admission.yaml, as their refusals name them.
const (
	requesterPolicy = "sentinel-maintenance-requester"
	ownerPolicy     = "sentinel-maintd-owner-writes"
	overridePolicy  = "sentinel-maintenance-override"
	createdBy       = "maintenance.sentinel.dev/created-by" // kubectl-maint's plan.CreatedByAnnotation
)

// TestAdmission applies the kustomization (as TestInCluster does, so that
// either may run first), then asks as real users, and as maintd's
// ServiceAccount with a token of its own, for what admission.yaml's policies
// admit and refuse, each refusal's message checked: a requester (the static
// user noevict) may ask for a plan or a campaign only what they may do
// themselves, under their own name, which never changes; maintd may change
// Deployments and ReplicaSets only in their replica count and its surge
// annotations; a break-glass override is approved only under its
// creator's own name, by someone who may delete its pods themselves.
func TestAdmission(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	kubectl(t, ctx, "apply", "-k", ".", "--server-side")
	waitCRDs(t, ctx)
	admin := cp.Clientset(controlplane.Admin)

	nsA, err := cp.Namespace(ctx, "adm-a")
	if err != nil {
		t.Fatal(err)
	}
	nsX, err := cp.Namespace(ctx, "adm-x")
	if err != nil {
		t.Fatal(err)
	}
	// The requester may write plans and campaigns, cordon one node, and
	// evict in namespace A, not in X.
	user := string(controlplane.NoEvict)
	grant(t, ctx, admin, "", "adm-requester", rbacv1.PolicyRule{APIGroups: []string{api.SchemeGroupVersion.Group},
		Resources: []string{"maintenanceplans", "maintenancecampaigns"}, Verbs: []string{"get", "create", "update", "patch", "delete"}})
	grant(t, ctx, admin, "", "adm-node-a", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, ResourceNames: []string{"adm-node-a"}, Verbs: []string{"patch"}})
	evict := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}}
	grant(t, ctx, admin, nsA, "adm-evict", evict)

	plans, campaigns := maintenanceClients(t, controlplane.Admin)
	userPlans, userCampaigns := maintenanceClients(t, controlplane.NoEvict)
	policyActive(t, ctx, func() error {
		_, err := plans.Create(ctx, plan("adm-probe", nil, api.MaintenancePlanSpec{NodeName: "adm-node-a"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, requesterPolicy)

	web := api.WorkloadRef{Kind: "Deployment", Namespace: nsA, Name: "web"}
	apiX := api.WorkloadRef{Kind: "Deployment", Namespace: nsX, Name: "api"}
	byUser := map[string]string{createdBy: user}
	why := func(kind string) string { return ": a " + kind + " asks maintd only for what its requester may do" }
	var many []api.WorkloadRef // six namespaces
	for _, ns := range []string{nsA, "n2", "n3", "n4", "n5", "n6"} {
		many = append(many, api.WorkloadRef{Kind: "StatefulSet", Namespace: ns, Name: "db"})
	}
	refusals := []struct {
		name   string
		create func() error
		want   string
	}{
		{"a forged requester", func() error {
			_, err := userPlans.Create(ctx, plan("adm-forged", map[string]string{createdBy: "admin"}, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web}}), metav1.CreateOptions{})
			return err
		}, "the annotation maintenance.sentinel.dev/created-by names admin as the requester, but user noevict creates this plan: nobody may record another user as the requester"},
		{"no requester", func() error {
			_, err := userPlans.Create(ctx, plan("adm-anonymous", nil, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web}}), metav1.CreateOptions{})
			return err
		}, "a plan names its requester: set its annotation maintenance.sentinel.dev/created-by to noevict, your name as the API server knows it (kubectl auth whoami)"},
		{"no requester, as admin", func() error {
			_, err := campaigns.Create(ctx, campaign("adm-anonymous", nil, api.MaintenanceCampaignSpec{Nodes: []string{"adm-node-a"}}), metav1.CreateOptions{})
			return err
		}, "a campaign names its requester: set its annotation maintenance.sentinel.dev/created-by to admin, your name as the API server knows it (kubectl auth whoami)"},
		{"another node", func() error {
			_, err := userPlans.Create(ctx, plan("adm-node-b", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-b", Workloads: []api.WorkloadRef{web}}), metav1.CreateOptions{})
			return err
		}, "user noevict may not patch node adm-node-b (cordon it)" + why("plan")},
		{"a plan evicting in X", func() error {
			_, err := userPlans.Create(ctx, plan("adm-x", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web, apiX}}), metav1.CreateOptions{})
			return err
		}, "user noevict may not create pods/eviction in namespace " + nsX + why("plan")},
		{"a campaign evicting in X", func() error {
			_, err := userCampaigns.Create(ctx, campaign("adm-x", byUser, api.MaintenanceCampaignSpec{Nodes: []string{"adm-node-a"}, Workloads: []api.WorkloadRef{web, apiX}}), metav1.CreateOptions{})
			return err
		}, "user noevict may not create pods/eviction in namespace " + nsX + why("campaign")},
		{"a campaign's node selector", func() error {
			_, err := userCampaigns.Create(ctx, campaign("adm-selector", byUser, api.MaintenanceCampaignSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}, Workloads: []api.WorkloadRef{web}}), metav1.CreateOptions{})
			return err
		}, "user noevict may not patch nodes cluster-wide, as spec.nodeSelector may select any node" + why("campaign")},
		{"all workloads", func() error {
			_, err := userPlans.Create(ctx, plan("adm-all", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", AllowAllWorkloads: true}), metav1.CreateOptions{})
			return err
		}, "user noevict may not create pods/eviction cluster-wide, as spec.allowAllWorkloads asks" + why("plan")},
		{"more than 5 namespaces", func() error {
			_, err := userPlans.Create(ctx, plan("adm-many", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: many}), metav1.CreateOptions{})
			return err
		}, "user noevict may not create pods/eviction cluster-wide, as spec.workloads names more than 5 namespaces" + why("plan")},
		{"a surge", func() error {
			_, err := userPlans.Create(ctx, plan("adm-surge", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web}, Surge: api.SurgeIfNeeded}), metav1.CreateOptions{})
			return err
		}, "user noevict may not patch deployments.apps in namespace " + nsA + ", as spec.surge IfNeeded asks" + why("plan")},
	}
	for _, r := range refusals {
		t.Run("refused: "+r.name, func(t *testing.T) { refused(t, r.create(), requesterPolicy, r.want) })
	}

	// Granted the eviction in X, the same plan and campaign are admitted.
	grant(t, ctx, admin, nsX, "adm-evict", evict)
	var p *api.MaintenancePlan
	var c *api.MaintenanceCampaign
	t.Run("admitted once granted", func(t *testing.T) {
		if p, err = userPlans.Create(ctx, plan("adm-x", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web, apiX}}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if c, err = userCampaigns.Create(ctx, campaign("adm-x", byUser, api.MaintenanceCampaignSpec{Nodes: []string{"adm-node-a"}, Workloads: []api.WorkloadRef{web, apiX}}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if p == nil || c == nil {
		t.FailNow()
	}

	t.Run("updates", func(t *testing.T) {
		patch := func(cl maintenancev1alpha1.MaintenancePlanInterface, body string) error {
			_, err := cl.Patch(ctx, p.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}
		// The requester never changes, not even by an admin.
		refused(t, patch(userPlans, `{"metadata":{"annotations":{"`+createdBy+`":"admin"}}}`), requesterPolicy,
			"the requester of a plan never changes: its annotation maintenance.sentinel.dev/created-by is noevict, and this update makes it admin")
		refused(t, patch(plans, `{"metadata":{"annotations":{"`+createdBy+`":null}}}`), requesterPolicy,
			"the requester of a plan never changes: its annotation maintenance.sentinel.dev/created-by is noevict, and this update makes it absent")
		// An update that asks for more is checked as a create is, for
		// the user who sends it.
		refused(t, patch(userPlans, `{"spec":{"workloads":[{"kind":"Deployment","namespace":"adm-z","name":"web"}]}}`), requesterPolicy,
			"user noevict may not create pods/eviction in namespace adm-z"+why("plan"))
		// One that asks for nothing new is not.
		if err := patch(userPlans, `{"spec":{"release":true}}`); err != nil {
			t.Errorf("release: %v", err)
		}
	})

	t.Run("more than 5", func(t *testing.T) {
		six := []string{"adm-node-a", "n2", "n3", "n4", "n5", "n6"}
		_, err := userCampaigns.Create(ctx, campaign("adm-six", byUser, api.MaintenanceCampaignSpec{Nodes: six, Workloads: []api.WorkloadRef{web}}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused(t, err, requesterPolicy, "user noevict may not patch nodes cluster-wide, as spec.nodes names more than 5"+why("campaign"))
		// The most questions a campaign asks (5 nodes, 5 namespaces,
		// 5 Deployments to surge) stay within the API server's budget.
		var ws []api.WorkloadRef
		for _, ns := range six[1:] {
			ws = append(ws, api.WorkloadRef{Kind: "Deployment", Namespace: ns, Name: "web"})
		}
		most := campaign("adm-most", map[string]string{createdBy: "admin"}, api.MaintenanceCampaignSpec{Nodes: six[1:], Workloads: ws, Surge: api.SurgeIfNeeded})
		if _, err := campaigns.Create(ctx, most, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("15 questions, as admin: %v", err)
		}
	})

	// With evictions allowed everywhere, what a surge asks.
	grant(t, ctx, admin, "", "adm-evict-all", evict)
	grant(t, ctx, admin, nsA, "adm-surge", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}})
	t.Run("surges", func(t *testing.T) {
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		if _, err := userPlans.Create(ctx, plan("adm-surge", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web}, Surge: api.SurgeIfNeeded}), dry); err != nil {
			t.Errorf("a surge of a Deployment in %s: %v", nsA, err)
		}
		rs := api.WorkloadRef{Kind: "ReplicaSet", Namespace: nsA, Name: "lone"}
		_, err := userPlans.Create(ctx, plan("adm-surge", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: []api.WorkloadRef{web, rs}, Surge: api.SurgeIfNeeded}), dry)
		refused(t, err, requesterPolicy, "user noevict may not patch replicasets.apps in namespace "+nsA+", as spec.surge IfNeeded asks"+why("plan"))
		_, err = userPlans.Create(ctx, plan("adm-surge", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", AllowAllWorkloads: true, Surge: api.SurgeIfNeeded}), dry)
		refused(t, err, requesterPolicy, "user noevict may not patch deployments.apps cluster-wide, as spec.surge IfNeeded asks with spec.allowAllWorkloads"+why("plan"))
		var ws []api.WorkloadRef
		for _, ns := range []string{nsA, "n2", "n3", "n4", "n5", "n6"} {
			ws = append(ws, api.WorkloadRef{Kind: "Deployment", Namespace: ns, Name: "web"})
		}
		_, err = userPlans.Create(ctx, plan("adm-surge", byUser, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: ws, Surge: api.SurgeIfNeeded}), dry)
		refused(t, err, requesterPolicy, "user noevict may not patch deployments.apps cluster-wide, as spec.surge IfNeeded asks for more than 5 of them"+why("plan"))
	})

	t.Run("maintd makes a campaign's plans", func(t *testing.T) {
		mc, err := maintenancev1alpha1.NewForConfig(maintdConfig(t, ctx))
		if err != nil {
			t.Fatal(err)
		}
		waitAllowed(t, ctx, admin, account, authorizationv1.ResourceAttributes{Verb: "create", Group: api.SchemeGroupVersion.Group, Resource: "maintenanceplans"})
		// As campaign.go makes them: owned by the campaign, no requester.
		owned := plan(c.Name+"-adm-node-a", nil, api.MaintenancePlanSpec{NodeName: "adm-node-a", Workloads: c.Spec.Workloads})
		owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: api.SchemeGroupVersion.String(), Kind: "MaintenanceCampaign", Name: c.Name, UID: c.UID, Controller: ptr.To(true)}}
		if _, err := mc.MaintenancePlans().Create(ctx, owned, metav1.CreateOptions{}); err != nil {
			t.Errorf("a campaign's plan: %v", err)
		}
		_, err = mc.MaintenancePlans().Create(ctx, plan("adm-by-maintd", nil, api.MaintenancePlanSpec{NodeName: "adm-node-a"}), metav1.CreateOptions{})
		refused(t, err, requesterPolicy, "a plan names its requester: set its annotation maintenance.sentinel.dev/created-by to "+account+", your name as the API server knows it (kubectl auth whoami)")
	})

	t.Run("maintd writes owners", func(t *testing.T) { maintdOwnerWrites(t, ctx, admin, nsA) })
	t.Run("overrides", func(t *testing.T) { overrideAdmission(t, ctx, admin, nsA, nsX) })
}

// overrideAdmission: a MaintenanceOverride is admitted only under its
// creator's own name, and only where its approver may delete pods
// themselves; the CRD bounds its duration and refuses any change of its
// spec, not of its metadata. The user noevict may delete pods in nsA, not
// in nsX.
func overrideAdmission(t *testing.T, ctx context.Context, admin kubernetes.Interface, nsA, nsX string) {
	user := string(controlplane.NoEvict)
	grant(t, ctx, admin, "", "adm-overrides", rbacv1.PolicyRule{APIGroups: []string{api.SchemeGroupVersion.Group},
		Resources: []string{"maintenanceoverrides"}, Verbs: []string{"create", "get", "delete"}})
	grant(t, ctx, admin, nsA, "adm-delete-pods", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	adminOverrides, userOverrides := overrideClient(t, controlplane.Admin), overrideClient(t, controlplane.NoEvict)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	policyActive(t, ctx, func() error {
		_, err := adminOverrides.Create(ctx, override("adm-probe", user, time.Hour, nsA), dry)
		return err
	}, overridePolicy)

	why := ": an override lets maintd delete only pods its approver may delete"
	_, err := userOverrides.Create(ctx, override("adm-forged", "admin", time.Hour, nsA), metav1.CreateOptions{})
	refused(t, err, overridePolicy, "spec.approvedBy names admin as the approver, but user noevict creates this override: "+
		"an approver approves under their own name (kubectl auth whoami), and nobody for another")
	_, err = userOverrides.Create(ctx, override("adm-x", user, time.Hour, nsA, nsX), metav1.CreateOptions{})
	refused(t, err, overridePolicy, "user noevict may not delete pods in namespace "+nsX+why)
	_, err = userOverrides.Create(ctx, override("adm-x", user, time.Hour, nsX, nsA, nsX), metav1.CreateOptions{})
	refused(t, err, overridePolicy, "user noevict may not delete pods in namespace "+nsX+why)
	_, err = userOverrides.Create(ctx, override("adm-six", user, time.Hour, nsA, "n2", "n3", "n4", "n5", "n6"), dry)
	refused(t, err, overridePolicy, "user noevict may not delete pods cluster-wide, as spec.pods names more than 5 namespaces"+why)
	// Admin may delete pods everywhere: approving for X is theirs.
	if _, err := adminOverrides.Create(ctx, override("adm-x", "admin", time.Hour, nsA, nsX), dry); err != nil {
		t.Errorf("admin's override in %s and %s: %v", nsA, nsX, err)
	}

	// The CRD: at most 1h, even for an approver the policy admits.
	_, err = userOverrides.Create(ctx, override("adm-long", user, 2*time.Hour, nsA), metav1.CreateOptions{})
	invalid(t, err, "spec.duration", "an override lasts more than 0s and at most 1h")

	o, err := userOverrides.Create(ctx, override("adm-a", user, time.Hour, nsA, nsA), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("an override in %s, approved by %s: %v", nsA, user, err)
	}
	defer func() {
		if err := adminOverrides.Delete(context.WithoutCancel(ctx), o.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}()
	if o.Spec.ApprovedBy != user {
		t.Errorf("approvedBy %q, want %q", o.Spec.ApprovedBy, user)
	}
	// Immutable, even for an admin; its metadata is not.
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	patch := func(body string) error {
		return mc.RESTClient().Patch(types.MergePatchType).Resource("maintenanceoverrides").Name(o.Name).Body([]byte(body)).Do(ctx).Error()
	}
	invalid(t, patch(`{"spec":{"reason":"another"}}`), "spec", "an override is immutable: delete it and approve a new one")
	invalid(t, patch(`{"spec":{"approvedBy":"admin"}}`), "spec", "an override is immutable: delete it and approve a new one")
	if err := patch(`{"metadata":{"labels":{"ticket":"inc-1"}}}`); err != nil {
		t.Errorf("a label on an override: %v", err)
	}
}

func override(name, approver string, d time.Duration, namespaces ...string) *api.MaintenanceOverride {
	var pods []api.OverridePods
	for _, ns := range namespaces {
		pods = append(pods, api.OverridePods{Namespace: ns, Workload: "StatefulSet/db"})
	}
	return &api.MaintenanceOverride{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: api.MaintenanceOverrideSpec{Plan: "adm-x", ApprovedBy: approver,
		Reason: "INC-1: the budget of db never allows", Duration: metav1.Duration{Duration: d}, Pods: pods, MaxPods: 1}}
}

func overrideClient(t *testing.T, user controlplane.User) maintenancev1alpha1.MaintenanceOverrideInterface {
	t.Helper()
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(user))
	if err != nil {
		t.Fatal(err)
	}
	return mc.MaintenanceOverrides()
}

// invalid: err is the CRD's refusal (422) of field, with message want.
func invalid(t *testing.T, err error, field, want string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Errorf("%v, want invalid: %s: %s", err, field, want)
		return
	}
	var causes []string
	details := status.Status().Details
	if details == nil {
		details = &metav1.StatusDetails{}
	}
	for _, c := range details.Causes {
		if c.Field == field && strings.HasSuffix(c.Message, ": "+want) {
			return
		}
		causes = append(causes, c.Field+": "+c.Message)
	}
	t.Errorf("refused with %q, want %s: %s", causes, field, want)
}

// maintdOwnerWrites: maintd's ServiceAccount may change a Deployment or a
// ReplicaSet in spec.replicas and its surge annotations, as a surge's
// scale-up and restore do (the JSON patches of maintd/controller/surge.go),
// and in nothing else; an admin may.
func maintdOwnerWrites(t *testing.T, ctx context.Context, admin kubernetes.Interface, ns string) {
	maintd := kubernetes.NewForConfigOrDie(maintdConfig(t, ctx))
	waitAllowed(t, ctx, admin, account, authorizationv1.ResourceAttributes{Verb: "patch", Group: "apps", Resource: "replicasets", Namespace: ns})

	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}
	d, err := admin.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"team": "shop"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rsLabels := map[string]string{"app": "lone"}
	rs, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "lone"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: template.Spec}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type op = map[string]any
	patch := func(cs kubernetes.Interface, kind string, ops ...op) error {
		data, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "Deployment":
			_, err = cs.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.JSONPatchType, data, metav1.PatchOptions{})
		default:
			_, err = cs.AppsV1().ReplicaSets(ns).Patch(ctx, rs.Name, types.JSONPatchType, data, metav1.PatchOptions{})
		}
		return err
	}
	image := op{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "registry.example/web:2"}
	policyActive(t, ctx, func() error {
		data, _ := json.Marshal([]op{image})
		_, err := maintd.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.JSONPatchType, data, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, ownerPolicy)

	const surge, surgeFrom = "/metadata/annotations/maintenance.sentinel.dev~1surge", "/metadata/annotations/maintenance.sentinel.dev~1surge-from"
	only := func(kind, name string) string {
		return "maintd (" + account + ") may change a " + kind + " only in spec.replicas and its annotations maintenance.sentinel.dev/surge and maintenance.sentinel.dev/surge-from; this update of " + ns + "/" + name + " also changes "
	}
	refused(t, patch(maintd, "Deployment", image), ownerPolicy, only("Deployment", d.Name)+"spec.template")
	refused(t, patch(maintd, "Deployment", op{"op": "add", "path": "/spec/paused", "value": true}, op{"op": "replace", "path": "/spec/replicas", "value": 2}),
		ownerPolicy, only("Deployment", d.Name)+"spec.paused")
	refused(t, patch(maintd, "Deployment", op{"op": "add", "path": "/metadata/labels", "value": map[string]string{"app": "other"}}),
		ownerPolicy, only("Deployment", d.Name)+"metadata.labels[app]")
	refused(t, patch(maintd, "Deployment", op{"op": "replace", "path": "/metadata/annotations/team", "value": "other"}, op{"op": "add", "path": surge, "value": "x"}),
		ownerPolicy, only("Deployment", d.Name)+"metadata.annotations[team]")
	refused(t, patch(maintd, "ReplicaSet", image, op{"op": "add", "path": "/metadata/finalizers", "value": []string{"example.com/hold"}}),
		ownerPolicy, only("ReplicaSet", rs.Name)+"spec.template, metadata.finalizers")

	// A surge's scale-up and restore, on an owner with annotations (the
	// Deployment) and on one without (the ReplicaSet).
	up := func(uid types.UID, annotated bool) []op {
		ops := []op{{"op": "test", "path": "/metadata/uid", "value": uid}, {"op": "test", "path": "/spec/replicas", "value": 1}}
		if annotated {
			ops = append(ops, op{"op": "add", "path": surge, "value": "plan/uid"}, op{"op": "add", "path": surgeFrom, "value": "1"})
		} else {
			ops = append(ops, op{"op": "test", "path": "/metadata/annotations", "value": nil},
				op{"op": "add", "path": "/metadata/annotations", "value": map[string]string{"maintenance.sentinel.dev/surge": "plan/uid", "maintenance.sentinel.dev/surge-from": "1"}})
		}
		return append(ops, op{"op": "replace", "path": "/spec/replicas", "value": 2})
	}
	restore := func(uid types.UID) []op {
		return []op{{"op": "test", "path": "/metadata/uid", "value": uid}, {"op": "test", "path": surge, "value": "plan/uid"},
			{"op": "test", "path": "/spec/replicas", "value": 2}, {"op": "remove", "path": surge}, {"op": "remove", "path": surgeFrom},
			{"op": "replace", "path": "/spec/replicas", "value": 1}}
	}
	for _, w := range []struct {
		kind      string
		uid       types.UID
		annotated bool
	}{{"Deployment", d.UID, true}, {"ReplicaSet", rs.UID, false}} {
		if err := patch(maintd, w.kind, up(w.uid, w.annotated)...); err != nil {
			t.Errorf("%s: a surge's scale-up: %v", w.kind, err)
		}
		if err := patch(maintd, w.kind, restore(w.uid)...); err != nil {
			t.Errorf("%s: a surge's restore: %v", w.kind, err)
		}
	}
	// The policy binds maintd alone.
	if err := patch(admin, "Deployment", image); err != nil {
		t.Errorf("admin's template change: %v", err)
	}
}

func plan(name string, annotations map[string]string, spec api.MaintenancePlanSpec) *api.MaintenancePlan {
	return &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: spec}
}

func campaign(name string, annotations map[string]string, spec api.MaintenanceCampaignSpec) *api.MaintenanceCampaign {
	return &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: spec}
}

func maintenanceClients(t *testing.T, user controlplane.User) (maintenancev1alpha1.MaintenancePlanInterface, maintenancev1alpha1.MaintenanceCampaignInterface) {
	t.Helper()
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(user))
	if err != nil {
		t.Fatal(err)
	}
	return mc.MaintenancePlans(), mc.MaintenanceCampaigns()
}

// refused: err is policy's refusal, with message want.
func refused(t *testing.T, err error, policy, want string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Errorf("admitted (%v), want refused: %s", err, want)
		return
	}
	prefix := "ValidatingAdmissionPolicy '" + policy + "' with binding '" + policy + "' denied request: "
	_, msg, ok := strings.Cut(status.Status().Message, prefix)
	if !ok || status.Status().Code != 403 {
		t.Errorf("refused with %d %q, want a 403 of %s", status.Status().Code, status.Status().Message, policy)
		return
	}
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
}

// policyActive waits until try, a request the policy refuses, is refused
// by it: the API server enforces a new policy and binding once its
// informers have them.
func policyActive(t *testing.T, ctx context.Context, try func() error, policy string) {
	t.Helper()
	var last error
	err := poll(ctx, func() bool {
		last = try()
		return last != nil && strings.Contains(last.Error(), "ValidatingAdmissionPolicy '"+policy+"'")
	})
	if err != nil {
		t.Fatalf("policy %s never refused the probe (last: %v): %v", policy, last, err)
	}
}

// grant binds rule to the user noevict, cluster-wide (a ClusterRole) or in
// namespace ns (a Role), and waits until the authorizer allows it.
func grant(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name string, rule rbacv1.PolicyRule) {
	t.Helper()
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: string(controlplane.NoEvict)}}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns}
	var err error
	if ns == "" {
		if _, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err == nil {
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{})
		}
	} else {
		if _, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err == nil {
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}, metav1.CreateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("grant %s: %v", name, err)
	}
	resource, sub, _ := strings.Cut(rule.Resources[0], "/")
	attrs := authorizationv1.ResourceAttributes{Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: resource, Subresource: sub, Namespace: ns}
	if len(rule.ResourceNames) > 0 {
		attrs.Name = rule.ResourceNames[0]
	}
	waitAllowed(t, ctx, cs, string(controlplane.NoEvict), attrs)
}

// waitAllowed waits until the authorizer allows user (a static user, or a
// ServiceAccount by its full name) attrs: a binding reaches it by a watch.
func waitAllowed(t *testing.T, ctx context.Context, cs kubernetes.Interface, user string, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	groups := []string{"system:authenticated"}
	if strings.HasPrefix(user, "system:serviceaccount:") {
		groups = append(groups, "system:serviceaccounts", "system:serviceaccounts:"+strings.Split(user, ":")[2])
	}
	err := poll(ctx, func() bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && res.Status.Allowed
	})
	if err != nil {
		t.Fatalf("%s never allowed %+v: %v", user, attrs, err)
	}
}
