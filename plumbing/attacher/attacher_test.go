package attacher_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/sentinel-go/sentinel/plumbing/attacher"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(controlplane.Main(m, controlplane.Options{Volumes: true}, &cp))
}

// env is one test's namespace, nodes (its pool) and CSI driver.
type env struct {
	ns, driver string
	nodes      []string
	admin      kubernetes.Interface
}

func newEnv(t *testing.T, ctx context.Context, nodes int) env {
	t.Helper()
	ns, err := cp.Namespace(ctx, "attacher")
	if err != nil {
		t.Fatal(err)
	}
	e := env{ns: ns, driver: ns + ".attach.sentinel.test", admin: cp.Clientset(controlplane.Admin)}
	for i := range nodes {
		e.nodes = append(e.nodes, ns+"-"+string(rune('a'+i)))
	}
	if err := cp.CreateNodes(ctx, ns, e.nodes...); err != nil {
		t.Fatal(err)
	}
	if err := attacher.CreateDriver(ctx, e.admin, e.driver); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e env) start(t *testing.T, ctx context.Context, cfg attacher.Config) *attacher.Attacher {
	t.Helper()
	a, err := attacher.Start(ctx, e.admin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

// createPod creates pod name on node (by node selector, through the
// scheduler) mounting each claim.
func (e env) createPod(t *testing.T, ctx context.Context, name, node string, claims ...string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": node},
			Containers:   []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}
	for _, claim := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: claim, MountPath: "/" + claim})
	}
	if _, err := e.admin.CoreV1().Pods(e.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor watches the object name of lw (of type proto's) until cond holds
// for it (exists false once it is gone) and returns the object cond held for
// (nil when gone) and the moment this test saw it hold.
func waitFor[T runtime.Object](t *testing.T, ctx context.Context, lw cache.ListerWatcher, proto T, name, what string, cond func(obj T, exists bool) bool) (T, time.Time) {
	t.Helper()
	var last, got T
	check := func(obj any, exists bool) bool {
		o, _ := obj.(T)
		if exists {
			last = o
		}
		if !cond(o, exists) {
			return false
		}
		if exists {
			got = o
		}
		return true
	}
	_, err := watchtools.UntilWithSync(ctx, lw, proto, func(store cache.Store) (bool, error) {
		obj, exists, err := store.GetByKey(name)
		return err == nil && check(obj, exists), err
	}, func(ev watch.Event) (bool, error) {
		return check(ev.Object, ev.Type != watch.Deleted), nil
	})
	at := time.Now()
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %+v", what, err, last)
	}
	return got, at
}

func (e env) vaWatch(name string) cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(e.admin.StorageV1().RESTClient(), "volumeattachments", "",
		func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name })
}

func (e env) nodeWatch(name string) cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(e.admin.CoreV1().RESTClient(), "nodes", "",
		func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name })
}

func attachedTo(node *corev1.Node, volume corev1.UniqueVolumeName) bool {
	return slices.ContainsFunc(node.Status.VolumesAttached, func(v corev1.AttachedVolume) bool { return v.Name == volume })
}

// only are the events of one VolumeAttachment.
func only(events []attacher.Event, va string) []attacher.Event {
	return slices.DeleteFunc(slices.Clone(events), func(ev attacher.Event) bool { return ev.VA != va })
}

// TestAttachDetach: the attach-detach controller creates the
// VolumeAttachment of a pod's CSI volume on a kwok node, the attacher
// attaches it after AttachDelay, the controller reports it in
// node.status.volumesAttached; once the pod is deleted the controller
// deletes the VolumeAttachment and the attacher lets it go DetachDelay
// later.
func TestAttachDetach(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	node := e.nodes[0]
	cfg := attacher.Config{Driver: e.driver, AttachDelay: time.Second, DetachDelay: 2 * time.Second}
	a := e.start(t, ctx, cfg)
	pvs, err := attacher.CreateVolumes(ctx, e.admin, e.driver, e.ns, "data")
	if err != nil {
		t.Fatal(err)
	}
	pv, handle := pvs[0].Name, pvs[0].Spec.CSI.VolumeHandle
	name := attacher.AttachmentName(handle, e.driver, node)

	created := time.Now()
	e.createPod(t, ctx, "app", node, "data")
	va, attachedAt := waitFor(t, ctx, e.vaWatch(name), &storagev1.VolumeAttachment{}, name, "VolumeAttachment "+name+" attached",
		func(va *storagev1.VolumeAttachment, exists bool) bool { return exists && va.Status.Attached })
	want := storagev1.VolumeAttachmentSpec{Attacher: e.driver, NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}
	if diff := cmp.Diff(want, va.Spec); diff != "" {
		t.Errorf("VolumeAttachment spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{attacher.Finalizer(e.driver)}, va.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if got := attachedAt.Sub(created); got < cfg.AttachDelay {
		t.Errorf("attached %s after the pod was created, before its AttachDelay %s", got, cfg.AttachDelay)
	}
	volume := attacher.AttachedName(e.driver, handle)
	waitFor(t, ctx, e.nodeWatch(node), &corev1.Node{}, node, "node "+node+" reporting "+string(volume)+" attached",
		func(n *corev1.Node, exists bool) bool { return exists && attachedTo(n, volume) })

	deleted := time.Now()
	if err := e.admin.CoreV1().Pods(e.ns).Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, goneAt := waitFor(t, ctx, e.vaWatch(name), &storagev1.VolumeAttachment{}, name, "VolumeAttachment "+name+" gone",
		func(_ *storagev1.VolumeAttachment, exists bool) bool { return !exists })
	if got := goneAt.Sub(deleted); got < cfg.DetachDelay || got > cfg.DetachDelay+10*time.Second {
		t.Errorf("VolumeAttachment gone %s after the pod's deletion, want DetachDelay %s (and at most 10 s more)", got, cfg.DetachDelay)
	}
	waitFor(t, ctx, e.nodeWatch(node), &corev1.Node{}, node, "node "+node+" not reporting "+string(volume),
		func(n *corev1.Node, exists bool) bool { return exists && !attachedTo(n, volume) })

	events := only(a.Events(), name)
	wantEvents := []attacher.Event{
		{Kind: attacher.Attached, VA: name, PV: pv, Node: node},
		{Kind: attacher.DetachRequested, VA: name, PV: pv, Node: node},
		{Kind: attacher.Detached, VA: name, PV: pv, Node: node},
	}
	if diff := cmp.Diff(wantEvents, events, cmpopts.IgnoreFields(attacher.Event{}, "At")); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	attached, requested, detached := events[0].At, events[1].At, events[2].At
	t.Logf("pod created -> Attached %s (AttachDelay %s); pod deleted -> DetachRequested %s -> Detached %s (DetachDelay %s) -> gone seen by the test %s",
		attached.Sub(created), cfg.AttachDelay, requested.Sub(deleted), detached.Sub(requested), cfg.DetachDelay, goneAt.Sub(detached))
	if attached.Before(created.Add(cfg.AttachDelay)) || attached.After(attachedAt) {
		t.Errorf("Attached at %s, want between the pod's creation + AttachDelay (%s) and the test's sight of it (%s)",
			attached.Format(time.StampMicro), created.Add(cfg.AttachDelay).Format(time.StampMicro), attachedAt.Format(time.StampMicro))
	}
	if requested.Before(deleted) || detached.Sub(requested) < cfg.DetachDelay || detached.After(goneAt) {
		t.Errorf("pod deleted at %s, DetachRequested at %s, Detached at %s, gone seen at %s: want them in order, Detached DetachDelay %s after DetachRequested",
			deleted.Format(time.StampMicro), requested.Format(time.StampMicro), detached.Format(time.StampMicro), goneAt.Format(time.StampMicro), cfg.DetachDelay)
	}
}

// TestNeverDetach: a volume that never detaches gets its detachError and
// its VolumeAttachment stays, finalizer and all, after the other volume of
// the same pod has detached. node.status.volumesAttached no longer holds
// it: the attach-detach controller takes a volume out of it before it
// deletes the VolumeAttachment, and a failed detach leaves it out (the
// controller marks it uncertain, which is not reported, and retries the
// detach with an exponential backoff).
func TestNeverDetach(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	node := e.nodes[0]
	pvs, err := attacher.CreateVolumes(ctx, e.admin, e.driver, e.ns, "stuck", "fine")
	if err != nil {
		t.Fatal(err)
	}
	stuck, fine := pvs[0], pvs[1]
	cfg := attacher.Config{Driver: e.driver, DetachDelay: time.Second,
		Volumes: map[string]attacher.Volume{stuck.Name: {NeverDetach: true}}}
	a := e.start(t, ctx, cfg)
	stuckVA := attacher.AttachmentName(stuck.Spec.CSI.VolumeHandle, e.driver, node)
	fineVA := attacher.AttachmentName(fine.Spec.CSI.VolumeHandle, e.driver, node)

	e.createPod(t, ctx, "app", node, "stuck", "fine")
	for _, name := range []string{stuckVA, fineVA} {
		waitFor(t, ctx, e.vaWatch(name), &storagev1.VolumeAttachment{}, name, "VolumeAttachment "+name+" attached",
			func(va *storagev1.VolumeAttachment, exists bool) bool { return exists && va.Status.Attached })
	}
	if err := e.admin.CoreV1().Pods(e.ns).Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, e.vaWatch(fineVA), &storagev1.VolumeAttachment{}, fineVA, "VolumeAttachment "+fineVA+" gone",
		func(_ *storagev1.VolumeAttachment, exists bool) bool { return !exists })
	va, _ := waitFor(t, ctx, e.vaWatch(stuckVA), &storagev1.VolumeAttachment{}, stuckVA, "VolumeAttachment "+stuckVA+" with a detachError",
		func(va *storagev1.VolumeAttachment, exists bool) bool { return !exists || va.Status.DetachError != nil })
	if va == nil {
		t.Fatalf("VolumeAttachment %s of the volume that never detaches is gone", stuckVA)
	}
	if va.DeletionTimestamp == nil || !slices.Contains(va.Finalizers, attacher.Finalizer(e.driver)) || va.Status.DetachError.Message != attacher.DetachErrorMessage {
		t.Errorf("stuck VolumeAttachment: deletionTimestamp %v, finalizers %v, detachError %+v; want being deleted, held by %s, with %q",
			va.DeletionTimestamp, va.Finalizers, va.Status.DetachError, attacher.Finalizer(e.driver), attacher.DetachErrorMessage)
	}
	n, err := e.admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Status.VolumesAttached) != 0 {
		t.Errorf("node %s reports %v attached, want none (the stuck volume's detach began)", node, n.Status.VolumesAttached)
	}

	kinds := func(events []attacher.Event) []attacher.Kind {
		var out []attacher.Kind
		for _, ev := range events {
			out = append(out, ev.Kind)
		}
		return out
	}
	events := a.Events()
	if diff := cmp.Diff([]attacher.Kind{attacher.Attached, attacher.DetachRequested, attacher.DetachFailed}, kinds(only(events, stuckVA))); diff != "" {
		t.Errorf("events of the stuck VolumeAttachment (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]attacher.Kind{attacher.Attached, attacher.DetachRequested, attacher.Detached}, kinds(only(events, fineVA))); diff != "" {
		t.Errorf("events of the other VolumeAttachment (-want +got):\n%s", diff)
	}
}

// TestStatefulSet: CreateStatefulSet's replicas each get their claim, bound
// to a volume of the driver, and each volume is attached to its pod's node.
func TestStatefulSet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 3)
	a := e.start(t, ctx, attacher.Config{Driver: e.driver})
	sts := attacher.NewStatefulSet(e.ns, "db", 3, map[string]string{controlplane.PoolLabel: e.ns})
	pvs, err := attacher.CreateStatefulSet(ctx, e.admin, e.driver, sts)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "app=db", 3); err != nil {
		t.Fatal(err)
	}
	pods, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	// Each pod's claim is <template>-<pod name>, bound to its PV; the VA
	// of that PV on the pod's node gets attached.
	want := map[string]attacher.Event{}
	for _, pod := range pods.Items {
		claim := attacher.ClaimTemplate + "-" + pod.Name
		pvc, err := e.admin.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != attacher.PVName(e.ns, claim) {
			t.Errorf("claim %s: %s to %q, want Bound to %s", claim, pvc.Status.Phase, pvc.Spec.VolumeName, attacher.PVName(e.ns, claim))
		}
		va := attacher.AttachmentName(attacher.PVName(e.ns, claim), e.driver, pod.Spec.NodeName)
		want[va] = attacher.Event{Kind: attacher.Attached, VA: va, PV: attacher.PVName(e.ns, claim), Node: pod.Spec.NodeName}
	}
	if len(pvs) != 3 || len(want) != 3 {
		t.Fatalf("%d PVs, %d pods' attachments, want 3 of each", len(pvs), len(want))
	}
	err = a.Wait(ctx, func(events []attacher.Event) bool {
		n := 0
		for _, ev := range events {
			if w, ok := want[ev.VA]; ok && cmp.Equal(w, ev, cmpopts.IgnoreFields(attacher.Event{}, "At")) {
				n++
			}
		}
		return n == len(want)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMove: a StatefulSet's pod (gated by WaitForAttachLabel) deleted on one
// node comes back on the other, and is Ready no earlier than its volume's
// detach from the old node (DetachDelay), its attach to the new one
// (AttachDelay: the attach-detach controller attaches a ReadWriteOnce
// volume elsewhere only once it is detached) and its ready delay.
func TestMove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2)
	from, to := e.nodes[0], e.nodes[1]
	cfg := attacher.Config{Driver: e.driver, AttachDelay: time.Second, DetachDelay: 2 * time.Second}
	const readyDelay = time.Second
	a := e.start(t, ctx, cfg)
	e.cordon(t, ctx, to, true)
	sts := attacher.NewStatefulSet(e.ns, "db", 1, map[string]string{controlplane.PoolLabel: e.ns})
	sts.Spec.Template.Annotations = map[string]string{controlplane.PodReadyDelayAnnotation: readyDelay.String()}
	created := time.Now()
	pvs, err := attacher.CreateStatefulSet(ctx, e.admin, e.driver, sts)
	if err != nil {
		t.Fatal(err)
	}
	pv := pvs[0].Name
	pod, readyAt := e.waitPodReady(t, ctx, "db-0", "")
	if pod.Spec.NodeName != from {
		t.Fatalf("db-0 on %s, want %s", pod.Spec.NodeName, from)
	}
	if got, want := readyAt.Sub(created), cfg.AttachDelay+readyDelay; got < want {
		t.Errorf("db-0 Ready %s after its creation, before its attach and ready delay %s", got, want)
	}

	e.cordon(t, ctx, to, false)
	e.cordon(t, ctx, from, true)
	deleted := time.Now()
	if err := e.admin.CoreV1().Pods(e.ns).Delete(ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	moved, movedAt := e.waitPodReady(t, ctx, "db-0", pod.UID)
	if moved.Spec.NodeName != to {
		t.Fatalf("db-0 came back on %s, want %s", moved.Spec.NodeName, to)
	}
	want := cfg.DetachDelay + cfg.AttachDelay + readyDelay
	if got := movedAt.Sub(deleted); got < want || got > want+10*time.Second {
		t.Errorf("db-0 Ready on %s %s after its deletion on %s, want detach + attach + ready = %s (and at most 10 s more)", to, got, from, want)
	}
	var steps []attacher.Event
	for _, ev := range a.Events() {
		if ev.PV == pv {
			steps = append(steps, attacher.Event{Kind: ev.Kind, Node: ev.Node})
		}
	}
	wantSteps := []attacher.Event{{Kind: attacher.Attached, Node: from}, {Kind: attacher.DetachRequested, Node: from},
		{Kind: attacher.Detached, Node: from}, {Kind: attacher.Attached, Node: to}}
	if diff := cmp.Diff(wantSteps, steps); diff != "" {
		t.Errorf("steps of volume %s (-want +got):\n%s", pv, diff)
	}
	t.Logf("db-0 deleted on %s -> Ready on %s after %s (detach %s + attach %s + ready %s)", from, to, movedAt.Sub(deleted), cfg.DetachDelay, cfg.AttachDelay, readyDelay)
}

// cordon sets node's spec.unschedulable.
func (e env) cordon(t *testing.T, ctx context.Context, node string, on bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := e.admin.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitPodReady waits for pod name of e.ns, other than the one of UID
// before, to be Ready.
func (e env) waitPodReady(t *testing.T, ctx context.Context, name string, before types.UID) (*corev1.Pod, time.Time) {
	t.Helper()
	lw := cache.NewFilteredListWatchFromClient(e.admin.CoreV1().RESTClient(), "pods", e.ns,
		func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name })
	return waitFor(t, ctx, lw, &corev1.Pod{}, e.ns+"/"+name, "pod "+name+" Ready",
		func(p *corev1.Pod, exists bool) bool { return exists && p.UID != before && controlplane.PodReady(p) })
}

// TestNames: the names the attacher and the attach-detach controller use
// are the real ones (external-attacher's GetFinalizerName, the csi
// plugin's getAttachmentName and GetVolumeName).
func TestNames(t *testing.T) {
	got := []string{
		attacher.Finalizer("attach.sentinel.test"),
		attacher.Finalizer("example.com/disk_"),
		attacher.AttachmentName("vol-1", "attach.sentinel.test", "node-1"),
		string(attacher.AttachedName("attach.sentinel.test", "vol-1")),
	}
	want := []string{
		"external-attacher/attach-sentinel-test",
		"external-attacher/example-com-disk-X",
		"csi-" + fmt.Sprintf("%x", sha256.Sum256([]byte("vol-1attach.sentinel.testnode-1"))),
		"kubernetes.io/csi/attach.sentinel.test^vol-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
