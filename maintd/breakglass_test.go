package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/verify"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// maintdUser is the shipped ServiceAccount as the audit log names it.
const maintdUser = "system:serviceaccount:maintd-system:maintd"

// singletons makes n single-replica StatefulSets db-1..db-n on e's node 1,
// each under a PDB with minAvailable 1: no eviction of them is ever
// allowed, and none can surge.
func singletons(t *testing.T, ctx context.Context, e env, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("db-%d", i)
		labels := map[string]string{"app": name, "tier": "db"}
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					NodeSelector:                  map[string]string{"kubernetes.io/hostname": e.node(1)},
					Tolerations:                   []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					TerminationGracePeriodSeconds: ptr.To[int64](3),
					Containers:                    []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}}}}}
		if _, err := e.admin.AppsV1().StatefulSets(e.ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		if _, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, ctx, e, n)
	for i := 1; i <= n; i++ {
		settled(t, ctx, e, fmt.Sprintf("db-%d", i), 0)
	}
}

// breakGlassAccess is the shipped access plus the break-glass component's
// ClusterRole and binding (deploy/breakglass), taken away when the test
// ends: the other tests run maintd without the right to delete pods.
func breakGlassAccess(t *testing.T, ctx context.Context) string {
	t.Helper()
	kc := shippedAccess(t, ctx)
	files, err := filepath.Glob(filepath.Join("deploy", "breakglass", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("deploy/breakglass: no manifests (%v)", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Apply(ctx, data, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		rbac := cp.Clientset(controlplane.Admin).RbacV1()
		list, err := rbac.ClusterRoleBindings().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, b := range list.Items {
			if b.RoleRef.Name == breakGlassRole(t, ctx) {
				_ = rbac.ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
			}
		}
	})
	return kc
}

// breakGlassRole is the name of the component's ClusterRole: the one that
// grants delete on pods.
func breakGlassRole(t *testing.T, ctx context.Context) string {
	t.Helper()
	list, err := cp.Clientset(controlplane.Admin).RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=sentinel"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Items {
		if slices.ContainsFunc(r.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.Resources, "pods") && slices.Contains(p.Verbs, "delete")
		}) {
			return r.Name
		}
	}
	return "sentinel-maintd-breakglass"
}

// overrideClient is the MaintenanceOverride client of user.
func overrideClient(t *testing.T, user controlplane.User) maintenancev1alpha1.MaintenanceOverrideInterface {
	t.Helper()
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(user))
	if err != nil {
		t.Fatal(err)
	}
	return mc.MaintenanceOverrides()
}

// TestBreakGlass: 10 single-replica StatefulSets under minAvailable 1 on a
// node; admin's plan has a deadline of 30 s. Admin's own approval is
// ignored (two people); the user viewer's, for 6 pods, one per budget, for 120 s, is used past
// the deadline: exactly 6 pod DELETEs by maintd's ServiceAccount in the
// API server's audit log, each with the pod's UID as precondition and its
// grace period, each after the deadline and the approval and before the
// expiry, each in the ledger before it was sent; the other 4 pods stay,
// and the plan is Blocked saying the override is spent.
func TestBreakGlass(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2)
	singletons(t, ctx, e, 10)
	kc := breakGlassAccess(t, ctx)
	e.startMaintd(t, kc)

	p := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-bg", Labels: map[string]string{"test": e.label},
		Annotations: map[string]string{api.CreatedByAnnotation: string(controlplane.Admin)}},
		Spec: api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 30 * time.Second},
			// A person accepts that the budgets never allow and the
			// replacements, pinned to the node, stay Pending: the plan
			// starts, and waits on the budgets until its deadline.
			AcceptedRisks: []string{"pdb-zero-spec", "needs-override", "pdb-never-allows", "replacement-unschedulable"}}}
	p, err := e.plans.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.deletePlan(t, p) })
	approver(t, ctx, controlplane.Viewer)
	approve := func(name string, approver controlplane.User, max int32, d time.Duration) *api.MaintenanceOverride {
		overrides := overrideClient(t, approver)
		o, err := overrides.Create(ctx, &api.MaintenanceOverride{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name},
			Spec: api.MaintenanceOverrideSpec{Plan: p.Name, PlanUID: p.UID, ApprovedBy: string(approver), Reason: "INC-42: kernel CVE",
				Duration: metav1.Duration{Duration: d}, Pods: []api.OverridePods{{Namespace: e.ns, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}}},
				MaxPods: max, MaxPerPDB: 1}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = overrideClient(t, controlplane.Admin).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
		return o
	}
	approve("self", controlplane.Admin, 10, 10*time.Minute)
	blocked := e.wait(t, ctx, p.Name, "Blocked: approved by the requester", func(q *api.MaintenancePlan) bool {
		return q.Status.Phase == api.Blocked && q.Status.Reason == api.OverrideSpent && strings.Contains(q.Status.Message, "who requested the plan")
	})
	deadline := blocked.Status.EvictionProgress.Deadline.Time
	bob := approve("second", controlplane.Viewer, 6, 120*time.Second)
	spent := e.wait(t, ctx, p.Name, "Blocked: override spent", func(q *api.MaintenancePlan) bool {
		return q.Status.Phase == api.Blocked && q.Status.Reason == api.OverrideSpent && strings.Contains(q.Status.Message, "is spent") &&
			len(q.Status.Forced) == 6 && !slices.ContainsFunc(q.Status.Forced, func(f api.ForcedDelete) bool { return f.Outcome == "" })
	})

	ledger := map[string]api.ForcedDelete{}
	for _, f := range spent.Status.Forced {
		ledger[string(f.UID)] = f
		if f.Override != bob.Name || f.ApprovedBy != string(controlplane.Viewer) || f.Outcome != api.ForcedDeleted || f.PDBBefore.DesiredHealthy != 1 || f.GracePeriodSeconds != 3 {
			t.Errorf("ledger entry %+v: want override %s by viewer, deleted, the budget's status before (desired 1), grace 3", f, bob.Name)
		}
	}
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	expiry := bob.CreationTimestamp.Add(120 * time.Second)
	var deletes []controlplane.AuditEvent
	for _, ev := range events {
		if ev.Verb == "delete" && ev.Resource == "pods" && ev.Sub == "" && ev.Namespace == e.ns {
			if ev.User != maintdUser {
				t.Errorf("pod DELETE by %s (want none but maintd's): %+v", ev.User, ev)
				continue
			}
			deletes = append(deletes, ev)
		}
	}
	if len(deletes) != 6 {
		t.Fatalf("%d pod DELETEs by maintd, want 6: %+v", len(deletes), deletes)
	}
	for _, ev := range deletes {
		entry, ok := ledger[ev.UID]
		switch {
		case ev.UID == "":
			t.Errorf("DELETE of %s without a UID precondition", ev.Name)
		case !ok:
			t.Errorf("DELETE of %s (uid %s) has no ledger entry", ev.Name, ev.UID)
		case ev.Code != 200:
			t.Errorf("DELETE of %s answered %d", ev.Name, ev.Code)
		case ev.GracePeriodSeconds == nil || *ev.GracePeriodSeconds != 3:
			t.Errorf("DELETE of %s with grace %v, want the pod's 3 s", ev.Name, ev.GracePeriodSeconds)
		case ev.Received.Before(deadline) || ev.Received.Before(bob.CreationTimestamp.Time) || !ev.Received.Before(expiry):
			t.Errorf("DELETE of %s at %s: want after the deadline %s and the approval %s, before the expiry %s", ev.Name, ev.Received, deadline, bob.CreationTimestamp, expiry)
		case entry.RecordedAt.Time.After(ev.Received):
			t.Errorf("DELETE of %s at %s before its ledger entry (%s)", ev.Name, ev.Received, entry.RecordedAt)
		}
	}
	// The 4 others stay on the node, named in the Blocked message.
	pods, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + e.node(1)})
	if err != nil {
		t.Fatal(err)
	}
	var left int
	for _, pod := range pods.Items {
		if _, forced := ledger[string(pod.UID)]; forced {
			t.Errorf("pod %s (uid %s) is in the ledger and still on the node", pod.Name, pod.UID)
			continue
		}
		left++
		if !strings.Contains(spent.Status.Message, pod.Namespace+"/"+pod.Name) && !strings.Contains(spent.Status.Message, "/"+pod.Labels["app"]+":") {
			t.Errorf("the Blocked message does not name %s: %s", pod.Name, spent.Status.Message)
		}
	}
	if left != 4 {
		t.Errorf("%d pods left on the node, want 4", left)
	}

	// A Warning Event on each deleted pod and on its budget, naming the
	// plan, the override and its approver.
	want := map[string]bool{}
	for _, f := range spent.Status.Forced {
		want["Pod/"+f.Pod], want["PodDisruptionBudget/"+f.PDB] = true, true
	}
	got := map[string]string{}
	if err := pollUntil(ctx, func() bool {
		for _, reason := range []string{"ForceDeleted", "BudgetOverridden"} {
			list, err := e.admin.EventsV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
			if err != nil {
				return false
			}
			for _, ev := range list.Items {
				if ev.Type == corev1.EventTypeWarning && ev.Related != nil && ev.Related.Name == p.Name {
					got[ev.Regarding.Kind+"/"+ev.Regarding.Name] = ev.Note
				}
			}
		}
		return len(got) == len(want)
	}); err != nil {
		t.Errorf("ForceDeleted and BudgetOverridden events: %v, want one on each of %v", got, want)
	}
	for obj, note := range got {
		if !want[obj] || !strings.Contains(note, bob.Name) || !strings.Contains(note, "approved by "+string(controlplane.Viewer)) {
			t.Errorf("event on %s: %q: want a forced pod or its budget, override %s and its approver named", obj, note, bob.Name)
		}
	}

	// kubectl maint verify's replay agrees with the real log, and finds a
	// ledger edited by hand and a log with a DELETE taken out.
	plans := []api.MaintenancePlan{*spent}
	events = ofNamespace(events, e.ns)
	if r := verify.Replay(events, plans, maintdUser); len(r.Mismatches) != 0 || r.Deletes != 6 || r.Entries != 6 {
		t.Errorf("verify on the real log: %d deletes, %d entries, mismatches %v; want 6, 6, none", r.Deletes, r.Entries, r.Mismatches)
	}
	edited := *spent.DeepCopy()
	edited.Status.Forced[2].UID = "0d5e1f3a-0000-4000-8000-000000000000"
	if r := verify.Replay(events, []api.MaintenancePlan{edited}, maintdUser); !slices.ContainsFunc(r.Mismatches, func(m verify.Mismatch) bool {
		return m.Entry == e.ns+"/"+edited.Status.Forced[2].Pod
	}) {
		t.Errorf("verify with an edited ledger: mismatches %v, want one naming %s", r.Mismatches, edited.Status.Forced[2].Pod)
	}
	cut := slices.DeleteFunc(slices.Clone(events), func(ev controlplane.AuditEvent) bool {
		return ev.UID == string(spent.Status.Forced[4].UID) && ev.Verb == "delete"
	})
	if r := verify.Replay(cut, plans, maintdUser); !slices.ContainsFunc(r.Mismatches, func(m verify.Mismatch) bool {
		return m.Entry == e.ns+"/"+spent.Status.Forced[4].Pod
	}) {
		t.Errorf("verify with a DELETE taken out: mismatches %v, want one naming %s", r.Mismatches, spent.Status.Forced[4].Pod)
	}
}

// approver lets user create, read and delete MaintenanceOverrides (admission
// is not installed here: deploy's tests check who may approve what).
func approver(t *testing.T, ctx context.Context, user controlplane.User) {
	t.Helper()
	rbac := cp.Clientset(controlplane.Admin).RbacV1()
	name := "test-approver-" + string(user)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{api.GroupName}, Resources: []string{"maintenanceoverrides"}, Verbs: []string{"create", "get", "list", "watch", "delete"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: string(user)}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestBreakGlassKill: maintd is killed (SIGKILL) at 20 seeded points, one
// per forced pod, each between a ledger entry's write and its DELETE's
// answer: a proxy on loopback between maintd and the API server holds
// each pod DELETE and kills maintd either before passing it on (the
// DELETE never sent) or after the API server answered it (applied, the
// answer lost). Each time a new maintd takes over. The API server's audit
// log shows each of the 20 pods deleted by maintd exactly once (no DELETE
// twice, none lost), each after its entry; verify's replay agrees.
func TestBreakGlassKill(t *testing.T) {
	const pods = 20
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	e := newEnv(t, ctx, 2)
	singletons(t, ctx, e, pods)
	kc := breakGlassAccess(t, ctx)
	approver(t, ctx, controlplane.Viewer)

	p := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-kill", Labels: map[string]string{"test": e.label},
		Annotations: map[string]string{api.CreatedByAnnotation: string(controlplane.Admin)}},
		Spec: api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, Deadline: &metav1.Duration{Duration: 5 * time.Second},
			MaxConcurrentEvictions: 1, EvictionTimeout: &metav1.Duration{Duration: time.Second},
			AcceptedRisks: []string{"pdb-zero-spec", "needs-override", "pdb-never-allows", "replacement-unschedulable"}}}
	p, err := e.plans.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.deletePlan(t, p) })
	o, err := overrideClient(t, controlplane.Viewer).Create(ctx, &api.MaintenanceOverride{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-kill"},
		Spec: api.MaintenanceOverrideSpec{Plan: p.Name, PlanUID: p.UID, ApprovedBy: string(controlplane.Viewer), Reason: "INC-43",
			Duration: metav1.Duration{Duration: time.Hour}, Pods: []api.OverridePods{{Namespace: e.ns, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}}},
			MaxPods: pods, MaxPerPDB: 1}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = overrideClient(t, controlplane.Admin).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
	})

	// Each kill point, drawn from the seed: before the DELETE is passed on,
	// or after its answer came back.
	px := newKillProxy(t, kc, func() bool { return rng.IntN(2) == 0 })
	var m *maintd
	start := func() {
		m = e.startMaintd(t, px.kubeconfig)
		px.mu.Lock()
		px.current = m
		px.mu.Unlock()
	}
	start()
	for px.reached() < pods {
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d kill points reached when the test timed out", px.reached(), pods)
		case <-px.killed:
			start()
		}
	}
	done := e.wait(t, ctx, p.Name, "every entry settled, nothing left to force", func(q *api.MaintenancePlan) bool {
		return len(q.Status.Forced) == pods && !slices.ContainsFunc(q.Status.Forced, func(f api.ForcedDelete) bool { return f.Outcome == "" }) &&
			q.Status.Pods.Remaining == 0
	})
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	for _, ev := range events {
		if ev.Verb == "delete" && ev.Resource == "pods" && ev.Sub == "" && ev.Namespace == e.ns && !ev.Disconnected {
			if ev.User != maintdUser || ev.UID == "" {
				t.Errorf("pod DELETE by %s with uid precondition %q: want maintd's, with one", ev.User, ev.UID)
			}
			sent[ev.UID]++
		}
	}
	for _, f := range done.Status.Forced {
		switch n := sent[string(f.UID)]; {
		case n > 1:
			t.Errorf("pod %s/%s (uid %s) was sent %d DELETEs", f.Namespace, f.Pod, f.UID, n)
		case n == 0:
			t.Errorf("pod %s/%s (uid %s) is in the ledger (%s) and was never deleted", f.Namespace, f.Pod, f.UID, f.Outcome)
		}
	}
	if len(sent) != pods {
		t.Errorf("%d pods deleted, want %d", len(sent), pods)
	}
	before := 0
	px.mu.Lock()
	for _, held := range px.points {
		if held {
			before++
		}
	}
	px.mu.Unlock()
	t.Logf("%d kills before a DELETE was passed on, %d after its answer", before, pods-before)
	if r := verify.Replay(ofNamespace(events, e.ns), []api.MaintenancePlan{*done}, maintdUser); len(r.Mismatches) != 0 {
		t.Errorf("verify: %v", r.Mismatches)
	}
}

// killProxy passes maintd's requests on to the API server, but kills
// maintd at the first DELETE of each pod: before passing it on, or after
// the API server answered it, as hold says.
type killProxy struct {
	kubeconfig string
	killed     chan struct{}
	mu         sync.Mutex
	current    *maintd
	// points are the kill points reached, by pod path: true for before
	// the DELETE was passed on.
	points map[string]bool
}

// reached counts the kill points reached.
func (px *killProxy) reached() int {
	px.mu.Lock()
	defer px.mu.Unlock()
	return len(px.points)
}

func newKillProxy(t *testing.T, kubeconfig string, hold func() bool) *killProxy {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	px := &killProxy{killed: make(chan struct{}, 1), points: map[string]bool{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport, rp.FlushInterval = rt, -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || !strings.Contains(r.URL.Path, "/pods/") {
			rp.ServeHTTP(w, r)
			return
		}
		px.mu.Lock()
		m := px.current
		_, seen := px.points[r.URL.Path]
		before := !seen && hold()
		if !seen {
			px.points[r.URL.Path] = before
		}
		px.mu.Unlock()
		if seen {
			rp.ServeHTTP(w, r)
			return
		}
		if !before {
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r) // applied; its answer never reaches maintd
		}
		m.kill()
		px.killed <- struct{}{}
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(srv.Close)
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range raw.Clusters {
		c.Server, c.CertificateAuthorityData, c.CertificateAuthority = srv.URL, nil, ""
	}
	px.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, px.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return px
}

// ofNamespace leaves out the pod requests of other namespaces: the other
// tests of this binary (another break-glass test's DELETEs, whose plans
// this test does not hand to verify).
func ofNamespace(events []controlplane.AuditEvent, ns string) []controlplane.AuditEvent {
	return slices.DeleteFunc(slices.Clone(events), func(ev controlplane.AuditEvent) bool {
		return ev.Resource == "pods" && ev.Namespace != ns
	})
}
