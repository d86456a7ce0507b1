package honesty

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/k8s-evict/evict/evictrest"
	"github.com/sentinel-go/sentinel/maintd/sim"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

// cp is the one real control plane of this test binary. When it cannot
// start, every test fails (controlplane.Main).
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { os.Exit(controlplane.Main(m, controlplane.Options{}, &cp)) }

const (
	// pool labels the kwok nodes the cases' pods run on.
	pool = "honesty"
	// hold is the finalizer that keeps a deleted pod terminating.
	hold = "sentinel.dev/honesty-hold"
	// otherUID is no pod's UID: a precondition that fails.
	otherUID = types.UID("00000000-0000-4000-8000-000000000000")
)

// precondition is the UID an eviction carries.
type precondition int

const (
	noUID    precondition = iota
	rightUID              // the pod's own, read just before
	wrongUID              // otherUID
)

// env is one case's namespace on the shared control plane.
type env struct {
	ns     string
	cs     kubernetes.Interface
	poster *evictrest.Poster
}

// hook changes a case's objects: prepare with the controllers running (the
// budgets settle after it), frozen with kube-controller-manager stopped,
// just before the eviction is read and sent.
type hook func(ctx context.Context, e *env) error

// want is what the real API server answers when the case is set up as it
// means to be (docs/eviction-api.md, and the eviction subresource's
// handler of kube-apiserver v1.37.2). It checks the set-up; the fake is
// compared with the real answer, not with want.
type want struct {
	code       int
	text       string // in the message or in a cause's message
	retryAfter int32
	deleted    bool
	spent      bool // disruptedPods gained the pod, disruptionsAllowed went down
}

type testCase struct {
	name      string
	manifests string // YAML, with ${NAMESPACE} and ${POOL}
	ready     int    // pods app=web Ready before prepare
	prepare   hook
	frozen    hook
	pod       string // the pod to evict; "" the first Ready one by name
	uid       precondition
	dryRun    bool
	want      want
}

var cases = []testCase{
	{
		name:      "no budget",
		manifests: pods("web-0", "web-1"),
		ready:     2, pod: "web-0",
		want: want{code: 201, deleted: true},
	},
	{
		name:      "budget allows one, Deployment with maxUnavailable 1",
		manifests: deployment(3) + pdb("web", "maxUnavailable: 1"),
		ready:     3,
		want:      want{code: 201, deleted: true, spent: true},
	},
	{
		name:      "budget exhausted, minAvailable = replicas",
		manifests: deployment(2) + pdb("web", "minAvailable: 2"),
		ready:     2,
		want:      want{code: 429, text: "The disruption budget web needs 2 healthy pods and has 2 currently"},
	},
	{
		name:      "two budgets select the pod",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 1") + pdb("web-too", "minAvailable: 1"),
		ready:     3, pod: "web-0",
		want: want{code: 500, text: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
	},
	{
		name:      "budget spec changed, its status not yet",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 1"),
		ready:     3, pod: "web-0",
		frozen: editPDB("web", func(p *policyv1.PodDisruptionBudget) {
			two := intstr.FromInt32(2)
			p.Spec.MinAvailable = &two
		}),
		want: want{code: 429, text: "The disruption budget web is still being processed by the server.", retryAfter: 10},
	},
	{
		name:      "unready pod, IfHealthyBudget, budget met",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2", "unhealthyPodEvictionPolicy: IfHealthyBudget"),
		ready:     3, prepare: makeUnready("web-2"), pod: "web-2",
		want: want{code: 201, deleted: true},
	},
	{
		name:      "unready pod, IfHealthyBudget, budget short",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 3", "unhealthyPodEvictionPolicy: IfHealthyBudget"),
		ready:     3, prepare: makeUnready("web-2"), pod: "web-2",
		want: want{code: 429, text: "The disruption budget web needs 3 healthy pods and has 2 currently"},
	},
	{
		name:      "unready pod, policy unset, budget short",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 3"),
		ready:     3, prepare: makeUnready("web-2"), pod: "web-2",
		want: want{code: 429, text: "The disruption budget web needs 3 healthy pods and has 2 currently"},
	},
	{
		name:      "unready pod, AlwaysAllow, budget short",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 3", "unhealthyPodEvictionPolicy: AlwaysAllow"),
		ready:     3, prepare: makeUnready("web-2"), pod: "web-2",
		want: want{code: 201, deleted: true},
	},
	{
		// The handler adds a resourceVersion precondition to the delete
		// of an unhealthy pod it lets go without the budget, and answers
		// any conflict of that delete, the caller's UID included, with
		// the stale-budget 429.
		name:      "unready pod, AlwaysAllow, wrong UID",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 3", "unhealthyPodEvictionPolicy: AlwaysAllow"),
		ready:     3, prepare: makeUnready("web-2"), pod: "web-2", uid: wrongUID,
		want: want{code: 429, text: "The disruption budget web is still being processed by the server.", retryAfter: 10},
	},
	{
		name:      "terminating pod (held by a finalizer), budget allows one",
		manifests: pods("web-0", "web-1") + heldPod("web-2") + pdb("web", "minAvailable: 1"),
		ready:     3, prepare: deletePod("web-2"), pod: "web-2",
		want: want{code: 201, deleted: true},
	},
	{
		name:      "wrong UID, budget allows one",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0", uid: wrongUID,
		want: want{code: 409, text: "does not match the UID in record", spent: true},
	},
	{
		name:      "right UID, budget allows one",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0", uid: rightUID,
		want: want{code: 201, deleted: true, spent: true},
	},
	{
		name:      "wrong UID, no budget",
		manifests: pods("web-0", "web-1"),
		ready:     2, pod: "web-0", uid: wrongUID,
		want: want{code: 409, text: "does not match the UID in record"},
	},
	{
		name:      "dry run, budget allows one",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0", dryRun: true,
		want: want{code: 201},
	},
	{
		name:      "dry run, budget exhausted",
		manifests: pods("web-0", "web-1") + pdb("web", "minAvailable: 2"),
		ready:     2, pod: "web-0", dryRun: true,
		want: want{code: 429, text: "The disruption budget web needs 2 healthy pods and has 2 currently"},
	},
	{
		// A dry-run delete checks the preconditions too.
		name:      "dry run, wrong UID, budget allows one",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0", dryRun: true, uid: wrongUID,
		want: want{code: 409, text: "does not match the UID in record"},
	},
	{
		name:      "no such pod",
		manifests: pods("web-0", "web-1") + pdb("web", "minAvailable: 1"),
		ready:     2, pod: "web-9",
		want: want{code: 404, text: `pods "web-9" not found`},
	},
	{
		name:      "Pending pod, budget exhausted",
		manifests: pods("web-0", "web-1") + pendingPod("web-pending") + pdb("web", "minAvailable: 2"),
		ready:     2, pod: "web-pending",
		want: want{code: 201, deleted: true},
	},
	{
		name:      "Pending pod, two budgets",
		manifests: pods("web-0", "web-1") + pendingPod("web-pending") + pdb("web", "minAvailable: 1") + pdb("web-too", "minAvailable: 1"),
		ready:     2, pod: "web-pending",
		want: want{code: 201, deleted: true},
	},
	{
		// The handler retries a conflict of a pod it deletes without
		// the budget for some 10 s (20 tries), then answers the last.
		name:      "Pending pod, wrong UID",
		manifests: pods("web-0") + pendingPod("web-pending") + pdb("web", "minAvailable: 1"),
		ready:     1, pod: "web-pending", uid: wrongUID,
		want: want{code: 409, text: "does not match the UID in record"},
	},
	{
		name:      "Succeeded pod, budget exhausted",
		manifests: pods("web-0", "web-1") + pdb("web", "minAvailable: 2"),
		ready:     2, prepare: succeed("web-1"), pod: "web-1",
		want: want{code: 201, deleted: true},
	},
	{
		// Pods without a controller count for no expected pod under
		// maxUnavailable: expectedPods 0, disruptionsAllowed 0 with 3
		// healthy and 0 desired.
		name:      "maxUnavailable over bare pods",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "maxUnavailable: 1"),
		ready:     3, pod: "web-0",
		want: want{code: 429, text: "The disruption budget web does not allow evicting pods currently"},
	},
	{
		// The first eviction spent the budget (disruptionsAllowed 0,
		// condition InsufficientPods) and the disruption controller has
		// not recomputed it: healthy 3 > desired 2.
		name:      "second eviction before the budget is recomputed",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, frozen: evictFirst("web-0"), pod: "web-1",
		want: want{code: 429, text: "The disruption budget web does not allow evicting pods currently"},
	},
	{
		// What the disruption controller writes when a sync fails
		// (failSafe), written here while it is stopped.
		name:      "budget whose sync failed",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0",
		frozen: writePDBStatus("web", func(st *policyv1.PodDisruptionBudgetStatus) {
			st.DisruptionsAllowed = 0
			st.Conditions = []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
				Reason: policyv1.SyncFailedReason, Message: `found no controllers for pod "web-0"`,
				ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.Now()}}
		}),
		want: want{code: 429, text: `The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod "web-0"`},
	},
	{
		// More evictions granted than the disruption controller has
		// confirmed (written here while it is stopped).
		name:      "budget with more than 2000 unconfirmed evictions",
		manifests: pods("web-0", "web-1", "web-2") + pdb("web", "minAvailable: 2"),
		ready:     3, pod: "web-0",
		frozen: writePDBStatus("web", func(st *policyv1.PodDisruptionBudgetStatus) {
			st.DisruptedPods = map[string]metav1.Time{}
			for i := range 2001 {
				st.DisruptedPods[fmt.Sprintf("gone-%04d", i)] = metav1.Now()
			}
		}),
		want: want{code: 403, text: "too many pending evictions not confirmed by PDB controller"},
	},
}

// TestEvictionHonesty sets every case up with the controllers running, then
// stops kube-controller-manager, so that no controller writes between the
// read and the eviction, nor after it: the budget's status afterwards is
// the eviction's doing alone, and an evicted pod is not replaced. Then, case
// by case, it reads the namespace's pods and budgets, has sim.Evict answer
// the eviction on exactly those objects, posts the same eviction to the API
// server (one request, client-go's retries off), and compares.
func TestEvictionHonesty(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, _, err := kubeclient.CoreV1(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	poster := evictrest.New(c)
	admin := cp.Clientset(controlplane.Admin)
	if err := cp.CreateNodes(ctx, pool, pool+"-1", pool+"-2", pool+"-3"); err != nil {
		t.Fatal(err)
	}

	// Set-up, a few cases at a time: most of it is waiting.
	envs := make([]*env, len(cases))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 6)
	for i, tc := range cases {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			e := &env{cs: admin, poster: poster}
			if err := setUp(ctx, tc, e); err != nil {
				t.Errorf("%s: set-up in namespace %s: %v", tc.name, e.ns, err)
				return
			}
			envs[i] = e
		})
	}
	wg.Wait()
	t.Cleanup(func() { release(admin, envs) })
	t.Logf("%d cases set up in %s", len(cases), time.Since(start).Round(100*time.Millisecond))

	if err := cp.StopControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.StartControllerManager(context.Background()); err != nil {
			t.Errorf("restart kube-controller-manager: %v", err)
		}
	})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if envs[i] == nil {
				t.Fatal("not set up")
			}
			compare(t, ctx, tc, envs[i])
		})
	}
	t.Logf("took %s", time.Since(start).Round(100*time.Millisecond))
}

// setUp makes the case's namespace and objects, waits for its pods to be
// Ready, runs prepare, and waits until the disruption controller has
// processed every budget of the namespace for the pods as they are now.
func setUp(ctx context.Context, tc testCase, e *env) error {
	ns, err := cp.Namespace(ctx, "honesty")
	if err != nil {
		return err
	}
	e.ns = ns
	if err := cp.Apply(ctx, []byte(tc.manifests), map[string]string{"NAMESPACE": ns, "POOL": pool}); err != nil {
		return err
	}
	if err := cp.WaitPodsReady(ctx, ns, "app=web", tc.ready); err != nil {
		return err
	}
	if tc.prepare != nil {
		if err := tc.prepare(ctx, e); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	return settled(ctx, e)
}

// settled polls until every budget of e's namespace has its status for its
// generation (observedGeneration) and counts as healthy exactly the pods
// that are: Ready, not being deleted, not in its disruptedPods.
func settled(ctx context.Context, e *env) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, pdbs, err := e.read(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, pdb := range pdbs {
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil {
				return false, err
			}
			healthy := int32(0)
			for _, p := range pods {
				if _, disrupted := pdb.Status.DisruptedPods[p.Name]; sel.Matches(labels.Set(p.Labels)) && !disrupted &&
					p.DeletionTimestamp == nil && controlplane.PodReady(p) {
					healthy++
				}
			}
			if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.CurrentHealthy != healthy {
				last = fmt.Sprintf("budget %s: observedGeneration %d of %d, currentHealthy %d of %d",
					pdb.Name, pdb.Status.ObservedGeneration, pdb.Generation, pdb.Status.CurrentHealthy, healthy)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("budgets not processed by the disruption controller (%s): %w", last, err)
	}
	return nil
}

// read lists the namespace's pods and budgets, as the API server has them.
func (e *env) read(ctx context.Context) ([]*corev1.Pod, []*policyv1.PodDisruptionBudget, error) {
	podList, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	pdbList, err := e.cs.PolicyV1().PodDisruptionBudgets(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	var pods []*corev1.Pod
	for i := range podList.Items {
		pods = append(pods, &podList.Items[i])
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for i := range pdbList.Items {
		pdbs = append(pdbs, &pdbList.Items[i])
	}
	return pods, pdbs, nil
}

// outcome is an answer and its effect, as compared. What must differ
// between the two endpoints is left out: the Status's kind and apiVersion
// (the wire's, not in the fake's Go value) and its empty metadata; the
// time of an entry of disruptedPods (the API server's clock, the fake's
// now), of which only the pod's name counts. UIDs and names are the same:
// the fake is given the objects read from the API server.
type outcome struct {
	Answer answer
	Effect effect
}

type answer struct {
	Code     int // HTTP
	Status   string
	BodyCode int32
	Reason   metav1.StatusReason
	Message  string
	Details  *metav1.StatusDetails // causes, retryAfterSeconds, name, kind
}

type effect struct {
	// Deleted: the pod existed before and is gone or terminating after.
	Deleted bool
	// Spent: the budgets whose status.disruptedPods gained the pod;
	// Decremented: those whose disruptionsAllowed went down by one.
	Spent, Decremented string
}

func answerOf(code int, st *metav1.Status) answer {
	a := answer{Code: code}
	if st != nil {
		a.Status, a.BodyCode, a.Reason, a.Message, a.Details = st.Status, st.Code, st.Reason, st.Message, st.Details
	}
	return a
}

func compare(t *testing.T, ctx context.Context, tc testCase, e *env) {
	if tc.frozen != nil {
		if err := tc.frozen(ctx, e); err != nil {
			t.Fatalf("namespace %s: %v", e.ns, err)
		}
	}
	pods, pdbs, err := e.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := tc.pod
	if name == "" {
		for _, p := range pods { // listed by name
			if controlplane.PodReady(p) && p.DeletionTimestamp == nil {
				name = p.Name
				break
			}
		}
	}
	var target *corev1.Pod
	for _, p := range pods {
		if p.Name == name {
			target = p
		}
	}
	req := evict.Request{Namespace: e.ns, Name: name, DryRun: tc.dryRun}
	switch tc.uid {
	case rightUID:
		if target == nil {
			t.Fatalf("no pod %s to take the UID of", name)
		}
		req.UID = target.UID
	case wrongUID:
		req.UID = otherUID
	}
	ev := evict.Eviction(req)
	var objects []runtime.Object
	for _, p := range pods {
		objects = append(objects, p)
	}
	for _, p := range pdbs {
		objects = append(objects, p)
	}

	v := sim.Evict(objects, ev, time.Now())
	fake := outcome{Answer: answerOf(v.Code, v.Status), Effect: effect{
		Deleted: v.Applied || (target != nil && target.DeletionTimestamp != nil),
		Spent:   v.PDB, Decremented: v.PDB,
	}}

	sent := time.Now()
	a, err := e.poster.PostEviction(ctx, ev)
	took := time.Since(sent)
	if err != nil {
		t.Fatalf("POST pods/%s/eviction: %v", name, err)
	}
	ef, err := e.effect(ctx, name, target, pdbs)
	if err != nil {
		t.Fatal(err)
	}
	server := outcome{Answer: answerOf(a.Code, a.Status), Effect: ef}
	t.Logf("namespace %s, pod %s, uid %q, dry run %v: kube-apiserver answered in %s: %d %s; %+v",
		e.ns, name, req.UID, tc.dryRun, took.Round(time.Millisecond), a.Code, texts(server.Answer), ef)

	// The set-up: the real answer is the one the case is made for.
	w := tc.want
	retry := int32(0)
	if d := server.Answer.Details; d != nil {
		retry = d.RetryAfterSeconds
	}
	if server.Answer.Code != w.code || !strings.Contains(texts(server.Answer), w.text) || retry != w.retryAfter ||
		ef.Deleted != w.deleted || (ef.Spent != "") != w.spent || (ef.Decremented != "") != w.spent {
		t.Errorf("the case is not what it means to be: kube-apiserver answered %d %q (retry after %d s), %+v; the case wants %d %q (retry after %d s), deleted %v, spent %v",
			server.Answer.Code, texts(server.Answer), retry, ef, w.code, w.text, w.retryAfter, w.deleted, w.spent)
	}
	if diff := cmp.Diff(server, fake); diff != "" {
		t.Errorf("sim.Evict differs from kube-apiserver %s (-real +fake):\n%s", controlplane.KubeVersion, diff)
	}
}

// texts is an answer's message and its causes' messages.
func texts(a answer) string {
	s := a.Message
	if a.Details != nil {
		for _, c := range a.Details.Causes {
			s += " | " + c.Message
		}
	}
	return s
}

// effect reads what the eviction of name did: the pod (before: as read
// before, nil when there was none) and the budgets' status against before.
func (e *env) effect(ctx context.Context, name string, before *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) (effect, error) {
	var ef effect
	p, err := e.cs.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		ef.Deleted = before != nil
	case err != nil:
		return ef, err
	default:
		ef.Deleted = before != nil && p.UID == before.UID && p.DeletionTimestamp != nil
	}
	_, after, err := e.read(ctx)
	if err != nil {
		return ef, err
	}
	var spent, decremented []string
	for _, b := range pdbs {
		i := slices.IndexFunc(after, func(a *policyv1.PodDisruptionBudget) bool { return a.Name == b.Name })
		if i < 0 {
			continue
		}
		a := after[i]
		_, had := b.Status.DisruptedPods[name]
		if _, has := a.Status.DisruptedPods[name]; has && !had {
			spent = append(spent, b.Name)
		}
		if a.Status.DisruptionsAllowed == b.Status.DisruptionsAllowed-1 {
			decremented = append(decremented, b.Name)
		}
	}
	ef.Spent, ef.Decremented = strings.Join(spent, ","), strings.Join(decremented, ",")
	return ef, nil
}

// release removes the hold finalizer from the cases' pods.
func release(cs kubernetes.Interface, envs []*env) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, e := range envs {
		if e == nil {
			continue
		}
		pods, err := cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			if slices.Contains(p.Finalizers, hold) {
				p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == hold })
				_, _ = cs.CoreV1().Pods(e.ns).Update(ctx, &p, metav1.UpdateOptions{})
			}
		}
	}
}

// The manifests: pods labelled app=web on the pool's nodes.

func podYAML(name, nodePool string, finalizers bool) string {
	fin := ""
	if finalizers {
		fin = ", finalizers: [" + hold + "]"
	}
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: "${NAMESPACE}", labels: {app: web}%s}
spec:
  nodeSelector: {%s: "%s"}
  containers: [{name: c, image: registry.example/web:1}]
`, name, fin, controlplane.PoolLabel, nodePool)
}

// pods are bare pods on the pool.
func pods(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(podYAML(n, "${POOL}", false))
	}
	return b.String()
}

// heldPod is a bare pod with the hold finalizer.
func heldPod(name string) string { return podYAML(name, "${POOL}", true) }

// pendingPod can be scheduled on no node: it stays Pending.
func pendingPod(name string) string { return podYAML(name, "${POOL}-nowhere", false) }

func deployment(replicas int) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: "${NAMESPACE}"}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {%s: "${POOL}"}
      containers: [{name: c, image: registry.example/web:1}]
`, replicas, controlplane.PoolLabel)
}

// pdb selects app=web; spec holds its other spec fields ("minAvailable: 2").
func pdb(name string, spec ...string) string {
	return fmt.Sprintf(`---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %s, namespace: "${NAMESPACE}"}
spec:
  selector: {matchLabels: {app: web}}
  %s
`, name, strings.Join(spec, "\n  "))
}

// The hooks.

// makeUnready sets the pod's Ready and ContainersReady conditions False, as
// a failing readiness probe would (kwok leaves a Running pod's conditions
// alone).
func makeUnready(name string) hook {
	return updatePodStatus(name, func(p *corev1.Pod) {
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
	})
}

// succeed ends the pod: phase Succeeded, its container terminated with 0,
// not Ready.
func succeed(name string) hook {
	return updatePodStatus(name, func(p *corev1.Pod) {
		now := metav1.Now()
		p.Status.Phase = corev1.PodSucceeded
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
				p.Status.Conditions[i].Reason = "PodCompleted"
			}
		}
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			started := now
			if cs.State.Running != nil {
				started = cs.State.Running.StartedAt
			}
			cs.Ready, cs.Started = false, new(false)
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now}}
		}
	})
}

func updatePodStatus(name string, change func(*corev1.Pod)) hook {
	return func(ctx context.Context, e *env) error {
		pods := e.cs.CoreV1().Pods(e.ns)
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(p)
			_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		})
	}
}

// deletePod deletes the pod (gracefully); with a finalizer it stays,
// terminating.
func deletePod(name string) hook {
	return func(ctx context.Context, e *env) error {
		return e.cs.CoreV1().Pods(e.ns).Delete(ctx, name, metav1.DeleteOptions{})
	}
}

// editPDB changes the budget's spec: a new generation.
func editPDB(name string, change func(*policyv1.PodDisruptionBudget)) hook {
	return func(ctx context.Context, e *env) error {
		pdbs := e.cs.PolicyV1().PodDisruptionBudgets(e.ns)
		p, err := pdbs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(p)
		after, err := pdbs.Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if after.Status.ObservedGeneration >= after.Generation {
			return fmt.Errorf("budget %s: generation %d, observedGeneration %d: the spec change made no new generation", name, after.Generation, after.Status.ObservedGeneration)
		}
		return nil
	}
}

// writePDBStatus writes the budget's status as the disruption controller
// could have.
func writePDBStatus(name string, change func(*policyv1.PodDisruptionBudgetStatus)) hook {
	return func(ctx context.Context, e *env) error {
		pdbs := e.cs.PolicyV1().PodDisruptionBudgets(e.ns)
		p, err := pdbs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(&p.Status)
		_, err = pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}
}

// evictFirst evicts the pod, which must be accepted.
func evictFirst(name string) hook {
	return func(ctx context.Context, e *env) error {
		a, err := e.poster.PostEviction(ctx, evict.Eviction(evict.Request{Namespace: e.ns, Name: name}))
		if err != nil {
			return err
		}
		if a.Code != 201 {
			return fmt.Errorf("first eviction of %s: %d %s, want 201", name, a.Code, texts(answerOf(a.Code, a.Status)))
		}
		return nil
	}
}
