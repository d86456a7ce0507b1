package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/attacher"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// unmountFinalizer stands in for a consumer's unmount of a volume that a
// storage server on its node serves: a consumer being deleted keeps it
// while no storage provider runs on its node, as a Ceph client whose OSDs
// went first hangs Terminating (kubernetes#109353). See unmounts.
const unmountFinalizer = "sentinel.dev/test-unmount"

const (
	// consumerPods is how many pods of a storageNode use the driver's volumes.
	consumerPods = 20
	// consumerGrace is their terminationGracePeriodSeconds; kwok deletes
	// them 1 s after their deletion (the container's stop).
	consumerGrace = 2 * time.Second
	// providerApp labels the storage providers (the "OSDs").
	providerApp = "osd"
)

var kwokToleration = []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}

// storageNode is node 1 of an env holding the consumers and the providers
// of one CSI driver: StatefulSet data of 20 pods, each with a
// ReadWriteOnce volume of the driver, under a PDB of maxUnavailable 5, in
// the env's namespace; Deployment osd of 2 pods in namespace storage,
// beside the driver's node-plugin DaemonSet (which is how maintd
// recognises them). Node 2 takes the replacements. The driver's
// external-attacher attaches in 0.5 s and detaches in 1 s, and unmounts
// plays the consumers' unmount.
type storageNode struct {
	env
	storage, driver string
	attacher        *attacher.Attacher
	unmounts        *unmounts
	// consumers are the consumers on node 1 before the drain: names by UID.
	consumers map[types.UID]string
}

func newStorageNode(t *testing.T, ctx context.Context) *storageNode {
	t.Helper()
	e := newEnv(t, ctx, 1)
	storage, err := cp.Namespace(ctx, "storage")
	if err != nil {
		t.Fatal(err)
	}
	s := &storageNode{env: e, storage: storage, driver: e.ns + ".csi.sentinel.test", consumers: map[types.UID]string{}}
	if err := attacher.CreateDriver(ctx, e.admin, s.driver); err != nil {
		t.Fatal(err)
	}
	s.attacher, err = attacher.Start(ctx, e.admin, attacher.Config{Driver: s.driver, AttachDelay: 500 * time.Millisecond, DetachDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.attacher.Stop)
	pool := map[string]string{controlplane.PoolLabel: e.pool}

	plugin := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "csi-node", Namespace: storage},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "csi-node"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "csi-node"}},
				Spec: corev1.PodSpec{NodeSelector: pool, Tolerations: kwokToleration, Containers: []corev1.Container{{
					Name: "node-driver-registrar", Image: "registry.example/csi-node-driver-registrar:2",
					Args: []string{"--kubelet-registration-path=/var/lib/kubelet/plugins/" + s.driver + "/csi.sock"},
				}}}}}}
	if _, err := e.admin.AppsV1().DaemonSets(storage).Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createApp(t, ctx, e, storage, providerApp, 2, nil, nil)

	sts := attacher.NewStatefulSet(e.ns, "data", consumerPods, pool)
	tmpl := &sts.Spec.Template
	tmpl.Finalizers = []string{unmountFinalizer}
	tmpl.Annotations = map[string]string{controlplane.PodReadyDelayAnnotation: "1s", controlplane.PodDeleteDelayAnnotation: "1s"}
	tmpl.Spec.TerminationGracePeriodSeconds = ptr.To(int64(consumerGrace / time.Second))
	tmpl.Spec.Tolerations = kwokToleration
	if _, err := attacher.CreateStatefulSet(ctx, e.admin, s.driver, sts); err != nil {
		t.Fatal(err)
	}
	e.pdb(t, ctx, "data", "data", nil, intOrString(5))
	if err := cp.WaitPodsReady(ctx, e.ns, "app=data", consumerPods); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{providerApp, "csi-node"} {
		if err := cp.WaitPodsReady(ctx, storage, "app="+app, map[string]int{providerApp: 2, "csi-node": 1}[app]); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range e.podsOn(t, ctx, e.node(1)) {
		s.consumers[p.UID] = p.Name
	}
	if len(s.consumers) != consumerPods {
		t.Fatalf("%d consumers on %s, want %d", len(s.consumers), e.node(1), consumerPods)
	}
	if err := cp.CreateNodes(ctx, e.pool, e.node(2)); err != nil {
		t.Fatal(err)
	}
	s.unmounts = startUnmounts(t, ctx, e.admin, e.ns, storage)
	return s
}

// createApp creates Deployment name of replicas pods (labelled app=name
// and with labels, annotated with annotations) in namespace ns, kept on
// e's nodes, Ready 1 s after they start and gone 1 s after their deletion.
func createApp(t *testing.T, ctx context.Context, e env, ns, name string, replicas int32, podLabels, annotations map[string]string) {
	t.Helper()
	tmpl := e.podTemplate(name, time.Second, time.Second, func(s *corev1.PodSpec) { s.Tolerations = kwokToleration })
	for k, v := range podLabels {
		tmpl.Labels[k] = v
	}
	for k, v := range annotations {
		tmpl.Annotations[k] = v
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: tmpl}}
	if _, err := e.admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// unmounts removes unmountFinalizer from a consumer being deleted, but
// only while a storage provider (app=osd, Running, not being deleted) is
// on the consumer's node, and notes when each consumer is gone.
type unmounts struct {
	client               kubernetes.Interface
	consumers, providers corelisters.PodLister
	kick                 chan struct{}

	mu   sync.Mutex
	gone map[types.UID]time.Time // when the test's informer saw the consumer deleted
	errs []error
}

// startUnmounts starts unmounts for the consumers of namespace consumerNS
// and the providers of providerNS; at the end of the test it stops, and
// lets every consumer still held go.
func startUnmounts(t *testing.T, ctx context.Context, client kubernetes.Interface, consumerNS, providerNS string) *unmounts {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	u := &unmounts{client: client, kick: make(chan struct{}, 1), gone: map[types.UID]time.Time{}}
	kick := func() {
		select {
		case u.kick <- struct{}{}:
		default:
		}
	}
	var factories []informers.SharedInformerFactory
	for _, ns := range []string{consumerNS, providerNS} {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
		pods := f.Core().V1().Pods()
		_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { kick() },
			UpdateFunc: func(_, _ any) { kick() },
			DeleteFunc: func(obj any) {
				if ns == consumerNS {
					u.noteGone(obj)
				}
				kick()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if ns == consumerNS {
			u.consumers = pods.Lister()
		} else {
			u.providers = pods.Lister()
		}
		factories = append(factories, f)
		f.Start(ctx.Done())
	}
	for _, f := range factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("unmounts: the cache of %v did not sync", typ)
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-u.kick:
				u.release(ctx)
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, f := range factories {
			f.Shutdown()
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, err := range u.errs {
			t.Errorf("unmounts: %v", err)
		}
		// Let the consumers still held go.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		pods, err := client.CoreV1().Pods(consumerNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				if err := u.unhold(ctx, &p); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}
		}
	})
	return u
}

func (u *unmounts) noteGone(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		u.mu.Lock()
		u.gone[p.UID] = time.Now()
		u.mu.Unlock()
	}
}

// goneAt is when consumer uid was seen gone.
func (u *unmounts) goneAt(uid types.UID) (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	at, ok := u.gone[uid]
	return at, ok
}

// release lets go of each consumer being deleted that a provider on its
// node serves.
func (u *unmounts) release(ctx context.Context) {
	pods, err := u.consumers.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.DeletionTimestamp == nil || !slices.Contains(p.Finalizers, unmountFinalizer) || !u.providerRuns(p.Spec.NodeName) {
			continue
		}
		if err := u.unhold(ctx, p); err != nil && ctx.Err() == nil {
			u.mu.Lock()
			u.errs = append(u.errs, err)
			u.mu.Unlock()
		}
	}
}

// providerRuns reports whether a storage provider runs on node.
func (u *unmounts) providerRuns(node string) bool {
	pods, err := u.providers.List(labels.SelectorFromSet(labels.Set{"app": providerApp}))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(pods, func(p *corev1.Pod) bool {
		return p.Spec.NodeName == node && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning
	})
}

// unhold removes unmountFinalizer from pod p (this instance of it).
func (u *unmounts) unhold(ctx context.Context, p *corev1.Pod) error {
	i := slices.Index(p.Finalizers, unmountFinalizer)
	if i < 0 {
		return nil
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`,
		p.UID, i, unmountFinalizer, i)
	_, err := u.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or changed meanwhile: its update comes
	}
	if err != nil {
		return fmt.Errorf("release %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// accepted are the eviction requests of namespace ns the API server
// accepted (dry runs apart), from the audit log, in the order received.
func accepted(t *testing.T, ns string) []controlplane.AuditEvent {
	t.Helper()
	events, err := cp.Audit()
	if err != nil {
		t.Fatal(err)
	}
	var out []controlplane.AuditEvent
	for _, ev := range events {
		if ev.Verb == "create" && ev.Resource == "pods" && ev.Sub == "eviction" && ev.Namespace == ns && !ev.DryRun && ev.Code == 201 {
			out = append(out, ev)
		}
	}
	slices.SortStableFunc(out, func(a, b controlplane.AuditEvent) int { return a.Received.Compare(b.Received) })
	return out
}

// lastDetach is the last volume the attacher detached from node, and how
// many it detached there.
func lastDetach(a *attacher.Attacher, node string) (last time.Time, n int) {
	for _, ev := range a.Events() {
		if ev.Node == node && ev.Kind == attacher.Detached {
			n++
			last = later(last, ev.At)
		}
	}
	return last, n
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// planStatus is one status of a plan, as a watch saw it.
type planStatus struct {
	at     time.Time
	status api.MaintenancePlanStatus
}

// watchPlan records every status plan name is written with from now on;
// the returned func stops the watch and returns them, oldest first.
func (e env) watchPlan(t *testing.T, ctx context.Context, name string) func() []planStatus {
	t.Helper()
	w, err := e.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var seen []planStatus
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*api.MaintenancePlan); ok && ev.Type != watch.Deleted {
				seen = append(seen, planStatus{at: time.Now(), status: *p.Status.DeepCopy()})
			}
		}
	}()
	return func() []planStatus {
		w.Stop()
		<-done
		return seen
	}
}

// firstGroups are the drain groups of the first status that has them.
func firstGroups(statuses []planStatus) []api.DrainGroup {
	for _, s := range statuses {
		if ep := s.status.EvictionProgress; ep != nil && len(ep.Groups) > 0 {
			return ep.Groups
		}
	}
	return nil
}

// TestStorageLast: on one node, 20 consumers of a CSI driver's volumes and
// 2 storage providers of that driver (pods of the namespace of the
// driver's node plugin), and a consumer hangs Terminating while no
// provider runs on its node (unmounts). maintd evicts every provider only
// after the node's last consumer is gone and its volumes are detached
// (the API server's audit log against the test's watch and the
// attacher's record), and no consumer is Terminating longer than its
// grace + 5 s. The control, in the same run: kubectl drain --timeout=20s
// of an identical node evicts the providers with the consumers, and fails
// at its timeout with consumers stuck Terminating.
func TestStorageLast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	m := newStorageNode(t, ctx) // drained by maintd
	k := newStorageNode(t, ctx) // drained by kubectl drain

	t.Run("maintd", func(t *testing.T) {
		m.startMaintd(t, "")
		name := m.ns + "-storage"
		statuses := m.watchPlan(t, ctx, name)
		m.plan(t, ctx, "storage", api.MaintenancePlanSpec{NodeName: m.node(1), AllowAllWorkloads: true,
			AcceptedRisks: []string{"rwo-reattach", "all-replicas-on-node"}})
		// About 20 s: a drain that hangs on a consumer fails within 2 minutes.
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		done := m.drainedOrStopped(t, wctx, name)
		seen := statuses()

		evictedAt := map[types.UID]time.Time{}
		for _, ev := range accepted(t, m.ns) {
			evictedAt[types.UID(ev.UID)] = ev.Received
		}
		var lastGone time.Time
		var longest time.Duration
		for uid, pod := range m.consumers {
			at, evicted := evictedAt[uid]
			gone, ok := m.unmounts.goneAt(uid)
			if !evicted || !ok {
				t.Errorf("consumer %s: evicted %t, gone %t", pod, evicted, ok)
				continue
			}
			lastGone = later(lastGone, gone)
			d := gone.Sub(at)
			longest = max(longest, d)
			if d > consumerGrace+5*time.Second {
				t.Errorf("consumer %s Terminating for %v (evicted %s, gone %s): longer than its grace %v + 5s",
					pod, d.Round(time.Millisecond), at.Format("15:04:05.000"), gone.Format("15:04:05.000"), consumerGrace)
			}
		}
		detached, n := lastDetach(m.attacher, m.node(1))
		if n != consumerPods {
			t.Errorf("%d volumes detached from %s, want %d", n, m.node(1), consumerPods)
		}
		providers := accepted(t, m.storage)
		if len(providers) != 2 {
			t.Errorf("%d provider evictions accepted, want 2: %+v", len(providers), providers)
		}
		for _, ev := range providers {
			if !ev.Received.After(lastGone) || !ev.Received.After(detached) {
				t.Errorf("provider %s evicted at %s: the node's last consumer was gone at %s, its last volume detached at %s",
					ev.Name, ev.Received.Format("15:04:05.000"), lastGone.Format("15:04:05.000"), detached.Format("15:04:05.000"))
			}
		}
		want := []api.DrainGroup{
			{Order: 0, Behavior: "Drain", Why: "default", Pods: consumerPods},
			{Order: 1, Behavior: "Drain", Why: fmt.Sprintf("storage provider of driver %s for %d pods", m.driver, consumerPods), Pods: 2},
		}
		if diff := cmp.Diff(want, firstGroups(seen), cmpopts.IgnoreFields(api.DrainGroup{}, "Remaining")); diff != "" {
			t.Errorf("status.evictionProgress.groups at the start (-want +got):\n%s", diff)
		}
		if !inOrder(steps(done), []string{"Draining/waiting-for-drain-group", "Drained/drained"}) {
			t.Errorf("the wait of the providers for the detach is not in the history: %s", history(done))
		}
		if len(providers) > 0 {
			t.Logf("last consumer gone %s, last detach %s, first provider eviction %s (%v after the detach); longest Terminating consumer %v; history %s",
				lastGone.Format("15:04:05.000"), detached.Format("15:04:05.000"), providers[0].Received.Format("15:04:05.000"),
				providers[0].Received.Sub(detached).Round(time.Millisecond), longest.Round(time.Millisecond), history(done))
		}
	})

	t.Run("kubectl drain", func(t *testing.T) {
		const timeout = 20 * time.Second
		cmd := exec.CommandContext(ctx, filepath.Join(cp.BinDir(), "kubectl"), "--kubeconfig", cp.Kubeconfig(controlplane.Admin),
			"drain", k.node(1), "--ignore-daemonsets", "--delete-emptydir-data", "--timeout="+timeout.String())
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		start := time.Now()
		out, err := cmd.CombinedOutput()
		exited := time.Now()
		var stuck []corev1.Pod
		for _, p := range k.podsOn(t, ctx, k.node(1)) {
			if p.DeletionTimestamp != nil {
				stuck = append(stuck, p)
			}
		}
		if err == nil || exited.Sub(start) < timeout {
			t.Fatalf("kubectl drain: %v after %v, want a failure at its timeout %v:\n%s", err, exited.Sub(start), timeout, out)
		}
		if len(stuck) == 0 {
			t.Fatalf("kubectl drain failed at its timeout with no consumer Terminating:\n%s", out)
		}
		left, lerr := k.admin.CoreV1().Pods(k.storage).List(ctx, metav1.ListOptions{LabelSelector: "app=" + providerApp, FieldSelector: "spec.nodeName=" + k.node(1)})
		if lerr != nil || len(left.Items) != 0 {
			t.Errorf("providers on the node at kubectl drain's timeout: %v %v", lerr, left)
		}
		if providers := accepted(t, k.storage); len(providers) != 2 {
			t.Errorf("%d provider evictions accepted, want 2", len(providers))
		}
		// kubectl drain sends no UID precondition: a pod's last eviction
		// accepted is the one of the instance still there.
		evictedAt := map[string]time.Time{}
		for _, ev := range accepted(t, k.ns) {
			evictedAt[ev.Name] = ev.Received
		}
		var longest time.Duration
		for _, p := range stuck {
			at, ok := evictedAt[p.Name]
			if !ok {
				t.Errorf("consumer %s Terminating without an eviction", p.Name)
				continue
			}
			longest = max(longest, exited.Sub(at))
			if line := fmt.Sprintf("error when waiting for pod %q in namespace %q to terminate", p.Name, p.Namespace); !strings.Contains(string(out), line) {
				t.Errorf("kubectl drain's output does not say it waited for %s to terminate:\n%s", p.Name, out)
			}
		}
		if longest <= consumerGrace+5*time.Second {
			t.Errorf("the longest Terminating consumer at kubectl drain's timeout had been so for %v: want a hang, over its grace %v + 5s", longest, consumerGrace)
		}
		t.Logf("kubectl drain exited after %v: %v; %d consumers Terminating, the longest for %v", exited.Sub(start).Round(time.Millisecond), err, len(stuck), longest.Round(time.Millisecond))
	})
}

// rulesLabel labels the namespaces TestDrainRules' namespace selectors match.
const rulesLabel = "sentinel.dev/drain-rules"

// TestDrainRules: spec.drainRules with an order and each behaviour, matched
// by pod selector, by namespace selector and by both, and a pod's
// annotation that overrides the rule matching it. On one node: first (2
// pods, rule a-first: Drain, order -1, by pod selector), web (2, no rule:
// order 0), batch (1, rule c-batch: WaitCompleted, by pod and namespace
// selector), override (1, matched by a-first but annotated order=2), late
// (2, in a namespace rule d-late selects: Drain, order 3) and kept (1, in
// a namespace rule b-skip selects: Skip). The audit log shows the
// evictions in that order, each group's after the previous group's pods
// were gone (kwok deletes a pod 1 s after its eviction); batch is never
// evicted, and override waits until the test marks batch Succeeded; kept
// is never touched. status.evictionProgress.groups shows the groups at the
// start and while batch is waited for.
func TestDrainRules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	labelled := func(prefix, value string) string {
		ns, err := cp.Namespace(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, rulesLabel, value)
		if _, err := e.admin.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	skipNS, lateNS := labelled("rules-skip", "skip-"+e.ns), labelled("rules-late", "late-"+e.ns)
	createApp(t, ctx, e, e.ns, "first", 2, map[string]string{"drain": "first"}, nil)
	createApp(t, ctx, e, e.ns, "web", 2, nil, nil)
	createApp(t, ctx, e, e.ns, "batch", 1, map[string]string{"drain": "wait"}, nil)
	createApp(t, ctx, e, e.ns, "override", 1, map[string]string{"drain": "first"}, map[string]string{analyze.DrainAnnotation: "order=2"})
	createApp(t, ctx, e, lateNS, "late", 2, nil, nil)
	createApp(t, ctx, e, skipNS, "kept", 1, nil, nil)
	apps := map[string]string{} // pod name -> app
	var batch, kept corev1.Pod
	for ns, n := range map[string]int{e.ns: 6, lateNS: 2, skipNS: 1} {
		if err := cp.WaitPodsReady(ctx, ns, "app", n); err != nil {
			t.Fatal(err)
		}
		pods, err := e.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			apps[p.Name] = p.Labels["app"]
			switch p.Labels["app"] {
			case "batch":
				batch = p
			case "kept":
				kept = p
			}
		}
	}
	if err := cp.CreateNodes(ctx, e.pool, e.node(2)); err != nil {
		t.Fatal(err)
	}

	selector := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	rules := []api.DrainRule{
		{Name: "a-first", Drain: api.DrainRuleDrain{Behavior: "Drain", Order: ptr.To[int32](-1)},
			Pods: []api.DrainRulePods{{Selector: selector("drain", "first")}}},
		{Name: "b-skip", Drain: api.DrainRuleDrain{Behavior: "Skip"},
			Pods: []api.DrainRulePods{{NamespaceSelector: selector(rulesLabel, "skip-"+e.ns)}}},
		{Name: "c-batch", Drain: api.DrainRuleDrain{Behavior: "WaitCompleted"},
			Pods: []api.DrainRulePods{{Selector: selector("drain", "wait"), NamespaceSelector: selector(corev1.LabelMetadataName, e.ns)}}},
		{Name: "d-late", Drain: api.DrainRuleDrain{Behavior: "Drain", Order: ptr.To[int32](3)},
			Pods: []api.DrainRulePods{{NamespaceSelector: selector(rulesLabel, "late-"+e.ns)}}},
	}
	e.startMaintd(t, "")
	name := e.ns + "-rules"
	statuses := e.watchPlan(t, ctx, name)
	e.plan(t, ctx, "rules", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true,
		AcceptedRisks: []string{"all-replicas-on-node"}, DrainRules: rules})

	waiting := e.waitPhase(t, ctx, name, api.Draining, api.WaitingForCompletion)
	if !strings.Contains(waiting.Status.Message, batch.Namespace+"/"+batch.Name) {
		t.Errorf("message %q does not name the pod waited for, %s", waiting.Status.Message, batch.Name)
	}
	want := []api.DrainGroup{
		{Order: 0, Behavior: "WaitCompleted", Why: "rule c-batch", Pods: 1, Remaining: 1},
		{Order: 2, Behavior: "Drain", Why: "annotation", Pods: 1, Remaining: 1},
		{Order: 3, Behavior: "Drain", Why: "rule d-late", Pods: 2, Remaining: 2},
		{Order: 0, Behavior: "Skip", Why: "rule b-skip", Pods: 1, Remaining: 1},
	}
	if diff := cmp.Diff(want, waiting.Status.EvictionProgress.Groups); diff != "" {
		t.Errorf("groups while batch is waited for (-want +got):\n%s", diff)
	}
	var evicted []string
	for _, ns := range []string{e.ns, lateNS, skipNS} {
		for _, ev := range accepted(t, ns) {
			evicted = append(evicted, apps[ev.Name])
		}
	}
	slices.Sort(evicted)
	if diff := cmp.Diff([]string{"first", "first", "web", "web"}, evicted); diff != "" {
		t.Errorf("evictions before batch completed (-want +got):\n%s", diff)
	}

	// batch completes.
	completed := time.Now()
	patch := `{"status":{"phase":"Succeeded"}}`
	if _, err := e.admin.CoreV1().Pods(e.ns).Patch(ctx, batch.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	done := e.drainedOrStopped(t, ctx, name)
	seen := statuses()

	want = []api.DrainGroup{
		{Order: -1, Behavior: "Drain", Why: "rule a-first", Pods: 2},
		{Order: 0, Behavior: "Drain", Why: "default", Pods: 2},
		{Order: 0, Behavior: "WaitCompleted", Why: "rule c-batch", Pods: 1},
		{Order: 2, Behavior: "Drain", Why: "annotation", Pods: 1},
		{Order: 3, Behavior: "Drain", Why: "rule d-late", Pods: 2},
		{Order: 0, Behavior: "Skip", Why: "rule b-skip", Pods: 1},
	}
	if diff := cmp.Diff(want, firstGroups(seen), cmpopts.IgnoreFields(api.DrainGroup{}, "Remaining")); diff != "" {
		t.Errorf("groups at the start (-want +got):\n%s", diff)
	}

	// The evictions, in the order the API server received them: each
	// group's after the previous group's pods were gone.
	var all []controlplane.AuditEvent
	for _, ns := range []string{e.ns, lateNS, skipNS} {
		all = append(all, accepted(t, ns)...)
	}
	slices.SortStableFunc(all, func(a, b controlplane.AuditEvent) int { return a.Received.Compare(b.Received) })
	rank := map[string]int{"first": 0, "web": 1, "override": 2, "late": 3}
	var order []string
	last := map[int]time.Time{} // the last eviction of each rank
	for _, ev := range all {
		app := apps[ev.Name]
		order = append(order, app)
		r, ok := rank[app]
		if !ok {
			t.Errorf("pod %s/%s of %s evicted", ev.Namespace, ev.Name, app)
			continue
		}
		if prev, ok := last[r-1]; ok && ev.Received.Sub(prev) < time.Second {
			t.Errorf("%s evicted %v after the last pod of the group before it: before that pod was gone", ev.Name, ev.Received.Sub(prev))
		}
		if app == "override" && ev.Received.Before(completed) {
			t.Errorf("%s evicted at %s, before batch completed at %s", ev.Name, ev.Received.Format("15:04:05.000"), completed.Format("15:04:05.000"))
		}
		last[r] = ev.Received
	}
	if diff := cmp.Diff([]string{"first", "first", "web", "web", "override", "late", "late"}, order); diff != "" {
		t.Errorf("evictions in the order received (-want +got):\n%s\nhistory: %s", diff, history(done))
	}
	now, err := e.admin.CoreV1().Pods(skipNS).Get(ctx, kept.Name, metav1.GetOptions{})
	if err != nil || now.UID != kept.UID || now.DeletionTimestamp != nil || now.Spec.NodeName != e.node(1) {
		t.Errorf("the skipped pod %s: %v, %+v", kept.Name, err, now)
	}
	if got := done.Status.Pods; got.Evicted != 7 {
		t.Errorf("status.pods %+v: want 7 evicted", got)
	}
}
