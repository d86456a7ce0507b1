//go:build bench

package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/attacher"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// volumesSection is the volumes benchmark's part of docs/benchmarks.md.
const volumesSection = "## maintd volumes"

// warm is BENCH_WARM=1: every maintd measured has first drained a node of
// its own with pods of the same driver (warmUp), as a maintd that has run
// a while has; its section is volumesSection + ", warm".
var warm = os.Getenv("BENCH_WARM") == "1"

const (
	volumeSets     = 10
	volumeReplicas = 3
	volumeAttach   = 2 * time.Second
	volumeDetach   = 3 * time.Second
	// volumeReady is a pod's time from its volume attached to Ready.
	volumeReady = 2 * time.Second
	// volumeGrace is the pods' terminationGracePeriodSeconds, which they
	// take in full (kwok deletes them that long after their deletion), as
	// the forecast times them.
	volumeGrace = time.Second
	// volumeDriver is the benchmark's CSI driver; one attacher plays it for
	// every copy of the scenario.
	volumeDriver = "volumes.bench.sentinel.test"
)

// volumeRun is one drain of the volumes scenario by one tool.
type volumeRun struct {
	run
	// empty is when the drained node's last VolumeAttachment went: the
	// attacher's removal of its finalizer, the last one.
	empty time.Time
}

// TestVolumesVersusKubectl: a node with 10 StatefulSets x 3, each pod
// with its own ReadWriteOnce volume (attach 2 s, detach 3 s, Ready 2 s
// after the attach), drained by maintd and by kubectl drain, fresh copies
// in one run: the time to Drained and to kubectl drain's exit against the
// moment the node is truly empty (its last VolumeAttachment gone), and
// maintd's forecast against its actual time.
func TestVolumesVersusKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(env("BENCH_N", "3"))
	if err != nil || n < 1 {
		t.Fatalf("BENCH_N=%q", os.Getenv("BENCH_N"))
	}
	b := newBench(t, ctx, "maintd")
	if err := attacher.CreateDriver(ctx, b.admin, volumeDriver); err != nil {
		t.Fatal(err)
	}
	a, err := attacher.Start(ctx, b.admin, attacher.Config{Driver: volumeDriver, AttachDelay: volumeAttach, DetachDelay: volumeDetach})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()

	var m, k []volumeRun
	for i := range n {
		tools := []string{"maintd", "kubectl"}
		if i%2 == 1 {
			slices.Reverse(tools)
		}
		for _, tool := range tools {
			sc, pvs := b.volumeSetup(ctx)
			var r run
			if tool == "maintd" {
				if warm {
					sc.warm = b.warmUp
				}
				r = b.maintd(ctx, sc)
			} else {
				r = b.drain(ctx, sc)
			}
			vr := volumeRun{run: r, empty: b.emptied(ctx, a, sc)}
			t.Logf("run %d, %s: ok=%v drained after %s, empty after %s (drained %+.2f s from it), evictions=%d 429=%d forecast=%s %s",
				i+1, tool, r.ok, r.wall.Round(time.Millisecond), vr.empty.Sub(r.start).Round(time.Millisecond), r.end.Sub(vr.empty).Seconds(),
				r.evictions, r.rejected, forecastText(r), strings.Join(r.other, " "))
			if tool == "maintd" {
				m = append(m, vr)
			} else {
				k = append(k, vr)
			}
			b.teardown(ctx, sc)
			b.deletePVs(ctx, pvs)
		}
	}

	var missed []string
	var lags, kLags, errs []float64
	for _, r := range m {
		if !r.ok {
			missed = append(missed, "a maintd drain did not complete: "+strings.Join(r.other, " "))
			continue
		}
		lag := r.end.Sub(r.empty)
		lags = append(lags, lag.Seconds())
		if lag < 0 || lag > 2*time.Second {
			missed = append(missed, fmt.Sprintf("maintd Drained %+.2f s from the true empty moment (target 0 to +2 s)", lag.Seconds()))
		}
		if r.forecast == nil || r.forecast.P50 == nil {
			missed = append(missed, fmt.Sprintf("maintd's plan showed no forecast with a p50: %s", forecastText(r.run)))
			continue
		}
		e := (r.wall - r.forecast.P50.Duration).Seconds() / r.wall.Seconds()
		errs = append(errs, e)
		if math.Abs(e) > 0.25 {
			missed = append(missed, fmt.Sprintf("forecast p50 %s against %.2f s actual (%+.0f%%, target within 25%%)", r.forecast.P50.Duration, r.wall.Seconds(), 100*e))
		}
	}
	for _, r := range k {
		if !r.ok {
			missed = append(missed, "kubectl drain failed: "+strings.Join(r.other, " "))
			continue
		}
		kLags = append(kLags, r.end.Sub(r.empty).Seconds())
	}

	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }
	each := func(rs []volumeRun, f func(volumeRun) string) string {
		var parts []string
		for _, r := range rs {
			parts = append(parts, f(r))
		}
		return strings.Join(parts, ", ")
	}
	walls := func(rs []volumeRun) []time.Duration {
		var ds []time.Duration
		for _, r := range rs {
			ds = append(ds, r.wall)
		}
		return ds
	}
	empties := func(rs []volumeRun) []time.Duration {
		var ds []time.Duration
		for _, r := range rs {
			ds = append(ds, r.empty.Sub(r.start))
		}
		return ds
	}
	var doc strings.Builder
	section := volumesSection
	if warm {
		section += ", warm"
	}
	fmt.Fprintf(&doc, "%s\n\n", section)
	if warm {
		fmt.Fprintf(&doc, "As \"%s\", but each maintd measured has first drained a node of its own with 3 pods of the same\n", volumesSection)
		fmt.Fprintf(&doc, "driver and released it (not measured): it has watched this driver detach and attach volumes, as a maintd that has run\n")
		fmt.Fprintf(&doc, "a while has, and its forecast times a volume's move by what it watched.\n\n")
	}
	fmt.Fprintf(&doc, "A node with %d StatefulSets x %d replicas, each pod with its own ReadWriteOnce CSI volume (pre-bound PVs of a\n", volumeSets, volumeReplicas)
	fmt.Fprintf(&doc, "test driver whose external-attacher, plumbing/attacher, attaches a volume in %s and detaches it in %s;\n", volumeAttach, volumeDetach)
	fmt.Fprintf(&doc, "kube-controller-manager's attach-detach controller makes and deletes the VolumeAttachments), a pod Ready %s\n", volumeReady)
	fmt.Fprintf(&doc, "after its volume is attached and gone %s after its deletion (its whole terminationGracePeriodSeconds, as the\n", volumeGrace)
	fmt.Fprintf(&doc, "forecast times it), a PDB with maxUnavailable 1 per StatefulSet. Every drain gets a fresh\n")
	fmt.Fprintf(&doc, "namespace and two fresh kwok nodes (all %d pods on node-1; node-2 takes the replacements). maintd (a plan\n", volumeSets*volumeReplicas)
	fmt.Fprintf(&doc, "with `allowAllWorkloads` and `acceptedRisks: [rwo-reattach, all-replicas-on-node]`, started as in \"## maintd\")\n")
	fmt.Fprintf(&doc, "against `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data` (v1.37.2), %d drains each,\n", n)
	fmt.Fprintf(&doc, "interleaved, in one run against one local control plane.\n\n")
	fmt.Fprintf(&doc, "- drained: maintd's plan `Drained` (the watch event), from the plan's creation; kubectl drain's exit, from its start.\n")
	fmt.Fprintf(&doc, "- truly empty: the node's last VolumeAttachment gone (the attacher's removal of its finalizer, the last\n")
	fmt.Fprintf(&doc, "  one), from the same start.\n")
	fmt.Fprintf(&doc, "- forecast: the first `status.forecast` of the plan (made at its start), against the time from the plan's\n")
	fmt.Fprintf(&doc, "  creation to `Drained`.\n\n")
	fmt.Fprintf(&doc, "| | maintd | kubectl drain | target |\n|---|---|---|---|\n")
	fmt.Fprintf(&doc, "| drained, median of %d (s) | %s | %s | |\n", n, sec(median(walls(m))), sec(median(walls(k))))
	fmt.Fprintf(&doc, "| each run (s) | %s | %s | |\n", each(m, func(r volumeRun) string { return sec(r.wall) }), each(k, func(r volumeRun) string { return sec(r.wall) }))
	fmt.Fprintf(&doc, "| truly empty, median (s) | %s | %s | |\n", sec(median(empties(m))), sec(median(empties(k))))
	fmt.Fprintf(&doc, "| drained minus truly empty, each run (s) | %s | %s | maintd 0 to +2 s |\n",
		each(m, func(r volumeRun) string { return fmt.Sprintf("%+.2f", r.end.Sub(r.empty).Seconds()) }),
		each(k, func(r volumeRun) string { return fmt.Sprintf("%+.2f", r.end.Sub(r.empty).Seconds()) }))
	fmt.Fprintf(&doc, "| forecast p50 / p90 at the start, each run | %s | | |\n", each(m, func(r volumeRun) string { return forecastText(r.run) }))
	fmt.Fprintf(&doc, "| (actual - p50) / actual, each run | %s | | within 25%% |\n", each(m, func(r volumeRun) string {
		if r.forecast == nil || r.forecast.P50 == nil || !r.ok {
			return "n/a"
		}
		return fmt.Sprintf("%+.0f%%", 100*(r.wall-r.forecast.P50.Duration).Seconds()/r.wall.Seconds())
	}))
	fmt.Fprintf(&doc, "| eviction POSTs (answered 429), each run | %s | %s | |\n\n",
		each(m, func(r volumeRun) string { return fmt.Sprintf("%d (%d)", r.evictions, r.rejected) }),
		each(k, func(r volumeRun) string { return fmt.Sprintf("%d (%d)", r.evictions, r.rejected) }))
	if len(kLags) > 0 {
		slices.Sort(kLags)
		fmt.Fprintf(&doc, "kubectl drain says the node is drained %.2f to %.2f s before it is: its pods are gone, their volumes still\n", -kLags[len(kLags)-1], -kLags[0])
		fmt.Fprintf(&doc, "attached (each detach takes %s after the pod's exit). maintd's Drained comes %s s after the last detach.\n", volumeDetach, spread(lags))
	}
	within := 0
	for _, r := range m {
		if r.ok && r.forecast != nil && r.forecast.P90 != nil && r.wall <= r.forecast.P90.Duration {
			within++
		}
	}
	fmt.Fprintf(&doc, "The actual was within the forecast's p90 in %d of %d runs. This driver detaches in %s and attaches in %s",
		within, len(m), volumeDetach, volumeAttach)
	if len(m) > 0 && m[0].forecast != nil && len(m[0].forecast.Causes) > 0 {
		fmt.Fprintf(&doc, "; the forecast's causes:\n")
		for _, c := range m[0].forecast.Causes {
			fmt.Fprintf(&doc, "- %s: %s\n", c.Reason, c.Message)
		}
	} else {
		fmt.Fprintf(&doc, ".\n")
	}
	if len(missed) == 0 {
		fmt.Fprintf(&doc, "\nEvery target met.\n\n")
	} else {
		fmt.Fprintf(&doc, "\nMissed: %s.\n\n", strings.Join(missed, "; "))
	}
	suite := "volumes"
	if warm {
		suite = "volumes-warm"
	}
	b.publish(&doc, missed, "Reproduce: `BENCH_N=%d bash maintd/bench/run.sh %s`.\n", n, suite)
}

// spread is the range of xs, "+a to +b" (a single value alone).
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "n/a"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if s[0] == s[len(s)-1] {
		return fmt.Sprintf("%+.2f", s[0])
	}
	return fmt.Sprintf("%+.2f to %+.2f", s[0], s[len(s)-1])
}

func forecastText(r run) string {
	f := r.forecast
	if f == nil {
		return "none"
	}
	if f.P50 == nil || f.P90 == nil {
		return f.Verdict
	}
	return fmt.Sprintf("%s / %s", f.P50.Duration, f.P90.Duration)
}

// volumeSetup makes a namespace, node-1 and, on it, the StatefulSets (their
// volumes pre-bound) and their PDBs; once every pod is Ready it adds node-2
// and waits until each PDB allows one disruption. It returns the scenario
// and the names of its PVs.
func (b *bench) volumeSetup(ctx context.Context) (*scenario, []string) {
	t := b.t
	t.Helper()
	ns, err := cp.Namespace(ctx, "vbench")
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns, pool: ns, pods: volumeSets * volumeReplicas, risks: []string{"rwo-reattach", "all-replicas-on-node"},
		nodes: []string{ns + "-node-1", ns + "-node-2"}}
	if err := cp.CreateNodes(ctx, sc.pool, sc.target()); err != nil {
		t.Fatal(err)
	}
	var pvs []string
	for i := range volumeSets {
		name := fmt.Sprintf("db-%02d", i)
		sts := attacher.NewStatefulSet(ns, name, volumeReplicas, map[string]string{controlplane.PoolLabel: sc.pool})
		sts.Spec.Template.Annotations = map[string]string{controlplane.PodReadyDelayAnnotation: volumeReady.String(), controlplane.PodDeleteDelayAnnotation: volumeGrace.String()}
		sts.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(volumeGrace / time.Second))
		sts.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		made, err := attacher.CreateStatefulSet(ctx, b.admin, volumeDriver, sts)
		if err != nil {
			t.Fatal(err)
		}
		for _, pv := range made {
			pvs = append(pvs, pv.Name)
		}
		one := intstr.FromInt32(1)
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
		if _, err := b.admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := cp.WaitPodsReady(wctx, ns, attacher.WaitForAttachLabel+"=true", sc.pods); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, sc.pool, sc.nodes[1]); err != nil {
		t.Fatal(err)
	}
	var last string
	err = wait.PollUntilContextCancel(wctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := b.admin.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range list.Items {
			if p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1 && p.Status.CurrentHealthy == volumeReplicas {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d PDBs allow 1", ready, len(list.Items))
		return ready == volumeSets, nil
	})
	if err != nil {
		t.Fatalf("scenario %s: %s: %v", ns, last, err)
	}
	return sc, pvs
}

// emptied waits until every volume of the scenario's pods is detached from
// its node-1 and returns when the last one was: the attacher's record.
func (b *bench) emptied(ctx context.Context, a *attacher.Attacher, sc *scenario) time.Time {
	t := b.t
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last time.Time
	err := a.Wait(ctx, func(events []attacher.Event) bool {
		n := 0
		for _, ev := range events {
			if ev.Node == sc.target() && ev.Kind == attacher.Detached {
				n++
				if ev.At.After(last) {
					last = ev.At
				}
			}
		}
		return n >= sc.pods
	})
	if err != nil {
		t.Fatalf("the volumes of %s did not all detach: %v", sc.target(), err)
	}
	list, err := b.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, va := range list.Items {
		if va.Spec.NodeName == sc.target() {
			t.Fatalf("VolumeAttachment %s of %s left after %d detaches", va.Name, sc.target(), sc.pods)
		}
	}
	return last
}

// deletePVs deletes the scenario's PersistentVolumes (Retain: their claims'
// deletion left them Released).
func (b *bench) deletePVs(ctx context.Context, names []string) {
	for _, name := range names {
		if err := b.admin.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			b.t.Errorf("delete PV %s: %v", name, err)
		}
	}
}

// warmUp drains, with the maintd about to be measured (selecting label), a
// node of its own with 3 pods of the bench's driver, and releases it: that
// maintd has then watched the driver detach and attach volumes. It is not
// measured.
func (b *bench) warmUp(ctx context.Context, label string) {
	t := b.t
	t.Helper()
	ns, err := cp.Namespace(ctx, "vwarm")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []string{ns + "-node-1", ns + "-node-2"}
	if err := cp.CreateNodes(ctx, ns, nodes[0]); err != nil {
		t.Fatal(err)
	}
	sts := attacher.NewStatefulSet(ns, "warm", volumeReplicas, map[string]string{controlplane.PoolLabel: ns})
	sts.Spec.Template.Annotations = map[string]string{controlplane.PodReadyDelayAnnotation: volumeReady.String(), controlplane.PodDeleteDelayAnnotation: volumeGrace.String()}
	sts.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(volumeGrace / time.Second))
	sts.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := attacher.CreateStatefulSet(ctx, b.admin, volumeDriver, sts); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := cp.WaitPodsReady(wctx, ns, attacher.WaitForAttachLabel+"=true", volumeReplicas); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, ns, nodes[1]); err != nil {
		t.Fatal(err)
	}
	plan := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "warm-" + label, Labels: map[string]string{runLabel: label}},
		Spec: api.MaintenancePlanSpec{NodeName: nodes[0], AllowAllWorkloads: true, Reason: "warm-up", AcceptedRisks: []string{"rwo-reattach", "all-replicas-on-node"}}}
	if _, err := b.plans.Create(ctx, plan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	phase := func(want api.Phase) {
		err := wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			p, err := b.plans.Get(ctx, plan.Name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == want, nil
		})
		if err != nil {
			t.Fatalf("warm-up plan %s: not %s: %v", plan.Name, want, err)
		}
	}
	phase(api.Drained)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := b.plans.Get(ctx, plan.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Release = true
		_, err = b.plans.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	phase(api.Completed)
}
