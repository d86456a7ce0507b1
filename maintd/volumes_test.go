package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/attacher"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// startAttacher runs an external-attacher of a driver of the test's own
// (named after its namespace) and creates the driver's CSIDriver.
func (e env) startAttacher(t *testing.T, ctx context.Context, cfg attacher.Config) *attacher.Attacher {
	t.Helper()
	cfg.Driver = e.ns + ".csi.sentinel.test"
	if err := attacher.CreateDriver(ctx, e.admin, cfg.Driver); err != nil {
		t.Fatal(err)
	}
	a, err := attacher.Start(ctx, e.admin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

// statefulSets creates n StatefulSets db-1.. of replicas pods each, every
// pod with its own ReadWriteOnce volume of the attacher's driver, placed in
// the test's pool, each under a PDB of maxUnavailable 1, and waits until
// their pods are Ready (their volumes attached).
func (e env) statefulSets(t *testing.T, ctx context.Context, driver string, n int, replicas int32) {
	t.Helper()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("db-%d", i)
		sts := attacher.NewStatefulSet(e.ns, name, replicas, map[string]string{controlplane.PoolLabel: e.pool})
		sts.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		if _, err := attacher.CreateStatefulSet(ctx, e.admin, driver, sts); err != nil {
			t.Fatal(err)
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
		if _, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.WaitPodsReady(ctx, e.ns, "", n*int(replicas)); err != nil {
		t.Fatal(err)
	}
}

// phaseSeen watches plan name and returns, on a channel, the local time at
// which its status was first seen in phase with reason.
func (e env) phaseSeen(t *testing.T, ctx context.Context, name string, phase api.Phase, reason api.Reason) <-chan time.Time {
	t.Helper()
	w, err := e.plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*api.MaintenancePlan)
			if ok && ev.Type != watch.Deleted && p.Status.Phase == phase && p.Status.Reason == reason {
				out <- time.Now()
				return
			}
		}
	}()
	return out
}

// attachmentsOn lists the VolumeAttachments of node.
func (e env) attachmentsOn(t *testing.T, ctx context.Context, node string) []storagev1.VolumeAttachment {
	t.Helper()
	list, err := e.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []storagev1.VolumeAttachment
	for _, va := range list.Items {
		if va.Spec.NodeName == node {
			out = append(out, va)
		}
	}
	return out
}

// TestDrainedWaitsForDetach: 3 StatefulSets of 3 replicas, each pod with a
// ReadWriteOnce volume, under PDBs of maxUnavailable 1, on one node; the
// driver takes 3 s to detach a volume. The plan is Drained no earlier than
// the moment the node's last VolumeAttachment is gone (the attacher's
// record), and within 2 s of it; before, it says it waits for the detach.
func TestDrainedWaitsForDetach(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	a := e.startAttacher(t, ctx, attacher.Config{AttachDelay: 200 * time.Millisecond, DetachDelay: 3 * time.Second})
	e.statefulSets(t, ctx, e.ns+".csi.sentinel.test", 3, 3)
	if n := len(e.attachmentsOn(t, ctx, e.node(1))); n != 9 {
		t.Fatalf("%d VolumeAttachments on %s, want 9 (one per pod)", n, e.node(1))
	}
	if err := cp.CreateNodes(ctx, e.pool, e.node(2)); err != nil {
		t.Fatal(err)
	}
	e.startMaintd(t, "")
	name := e.ns + "-volumes"
	drained := e.phaseSeen(t, ctx, name, api.Drained, api.ReasonDrained)
	e.plan(t, ctx, "volumes", api.MaintenancePlanSpec{NodeName: e.node(1), Reason: "firmware", AllowAllWorkloads: true, AcceptedRisks: []string{"rwo-reattach", "all-replicas-on-node"}})
	var at time.Time
	select {
	case at = <-drained:
	case <-ctx.Done():
		p := e.waitPhase(t, ctx, name, api.Drained, api.ReasonDrained) // fails, with the last status
		t.Fatalf("not drained: %s", history(p))
	}
	if left := e.attachmentsOn(t, ctx, e.node(1)); len(left) != 0 {
		t.Errorf("Drained while %d VolumeAttachments of %s remain, first %s", len(left), e.node(1), left[0].Name)
	}
	var last time.Time
	detached := 0
	for _, ev := range a.Events() {
		if ev.Node == e.node(1) && ev.Kind == attacher.Detached {
			detached++
			if ev.At.After(last) {
				last = ev.At
			}
		}
	}
	if detached != 9 {
		t.Fatalf("%d volumes detached from %s, want 9", detached, e.node(1))
	}
	if lag := at.Sub(last); lag < 0 || lag > 2*time.Second {
		t.Errorf("Drained seen %v after the last detach of the node (want 0 to 2s)", lag)
	}
	p, err := e.plans.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !inOrder(steps(p), []string{"Draining/waiting-for-volume-detach", "Drained/drained"}) {
		t.Errorf("history does not show the wait for the detach: %s", history(p))
	}
	t.Logf("last detach %s, Drained seen %s later", last.Format("15:04:05.000"), at.Sub(last))
}

// TestVolumeDetachStuck: a volume whose detach never completes blocks the
// plan once spec.volumeDetachTimeout has passed, naming its
// VolumeAttachment, volume, driver and the driver's detach error; once it
// goes, the plan is Drained.
func TestVolumeDetachStuck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	driver := e.ns + ".csi.sentinel.test"
	stuck := attacher.PVName(e.ns, attacher.StatefulSetClaims(attacher.ClaimTemplate, "db-1", 1)[0])
	e.startAttacher(t, ctx, attacher.Config{AttachDelay: 200 * time.Millisecond, DetachDelay: 500 * time.Millisecond,
		Volumes: map[string]attacher.Volume{stuck: {NeverDetach: true}}})
	e.statefulSets(t, ctx, driver, 1, 1)
	if err := cp.CreateNodes(ctx, e.pool, e.node(2)); err != nil {
		t.Fatal(err)
	}
	e.startMaintd(t, "")
	const bound = 5 * time.Second
	p := e.plan(t, ctx, "stuck", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true, AcceptedRisks: []string{"rwo-reattach", "all-replicas-on-node"},
		VolumeDetachTimeout: &metav1.Duration{Duration: bound}})
	waiting := e.waitPhase(t, ctx, p.Name, api.Draining, api.WaitingForVolumeDetach)
	from := time.Now()
	blocked := e.waitPhase(t, ctx, p.Name, api.Blocked, api.VolumeDetachStuck)
	if took := time.Since(from); took > bound+3*time.Second {
		t.Errorf("Blocked %v after the wait began, bound %v", took, bound)
	}
	vas := e.attachmentsOn(t, ctx, e.node(1))
	if len(vas) != 1 {
		t.Fatalf("%d VolumeAttachments on the node, want the stuck one", len(vas))
	}
	for _, part := range []string{"VolumeAttachment " + vas[0].Name, "PV " + stuck, "driver " + driver, attacher.DetachErrorMessage} {
		if !strings.Contains(blocked.Status.Message, part) {
			t.Errorf("message %q does not name %q", blocked.Status.Message, part)
		}
	}
	if d := blocked.Status.EvictionProgress.Detaches; len(d) != 1 || d[0].VolumeAttachment != vas[0].Name || !d[0].Since.Equal(&waiting.Status.EvictionProgress.Detaches[0].Since) {
		t.Errorf("status.evictionProgress.detaches %+v: want the stuck one, since the wait began", d)
	}
	// A person frees it (the driver's detach went through by hand): the
	// plan is Drained.
	va := vas[0]
	va.Finalizers = nil
	if _, err := e.admin.StorageV1().VolumeAttachments().Update(ctx, &va, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
}

// TestLeakedVolumeAttachment: a VolumeAttachment of the node whose PV does
// not exist (its driver gone, nobody to detach it) blocks the plan within
// 5 s, named with its reason; deleting it lets the plan finish.
func TestLeakedVolumeAttachment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 1)
	pv := e.ns + "-gone"
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-leaked"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "gone.csi.sentinel.test", NodeName: e.node(1), Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
	if _, err := e.admin.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := e.admin.StorageV1().VolumeAttachments().Delete(context.Background(), va.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	e.startMaintd(t, "")
	created := time.Now()
	p := e.plan(t, ctx, "leak", api.MaintenancePlanSpec{NodeName: e.node(1), AllowAllWorkloads: true})
	blocked := e.waitPhase(t, ctx, p.Name, api.Blocked, api.VolumeAttachmentLeaked)
	if took := time.Since(created); took > 5*time.Second {
		t.Errorf("leak named %v after the plan was made, want within 5s", took)
	}
	for _, part := range []string{"VolumeAttachment " + va.Name, "PV " + pv, "pv-gone"} {
		if !strings.Contains(blocked.Status.Message, part) {
			t.Errorf("message %q does not name %q", blocked.Status.Message, part)
		}
	}
	if err := e.admin.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
}
