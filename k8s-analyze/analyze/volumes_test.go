package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// TestVolumeFindings: the leaked attachments of testdata/storage.yaml are
// high findings naming the VolumeAttachment, PV, claim, driver and reason;
// its recognised providers low ones; the pods' actions do not change.
func TestVolumeFindings(t *testing.T) {
	r, err := AnalyzeObjects(storageSnapshot(t, nil), Options{Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Nodes[0]
	type found struct {
		Code     Code
		Subject  string
		Evidence map[string]string
	}
	var got []found
	for _, f := range n.Findings {
		if f.Code == VolumeAttachmentLeaked || f.Code == StorageProvider {
			got = append(got, found{f.Code, f.Subject.Kind + " " + name(f.Subject.Namespace, f.Subject.Name), f.Evidence})
		}
	}
	want := []found{
		{VolumeAttachmentLeaked, "VolumeAttachment va-gone", map[string]string{"volumeAttachment": "va-gone", "pv": "pv-gone", "driver": rbd, "reason": "pv-gone", "detachError": "rpc error: volume not found"}},
		{VolumeAttachmentLeaked, "VolumeAttachment va-noclaim", map[string]string{"volumeAttachment": "va-noclaim", "pv": "pv-orphan", "claim": "shop/deleted", "driver": rbd, "reason": "claim-gone"}},
		{StorageProvider, "Pod rook-ceph/mgr-0", map[string]string{"drivers": rbd, "order": "1"}},
		{StorageProvider, "Pod rook-ceph/osd-0", map[string]string{"drivers": rbd, "order": "1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if n.Risk != High {
		t.Errorf("risk %s, want high (a leaked attachment)", n.Risk)
	}
	if diff := cmp.Diff(DrainOrder(storageSnapshot(t, nil), "n1", nil), n.DrainOrder); diff != "" {
		t.Errorf("the report's drain order is not DrainOrder's (-DrainOrder +report):\n%s", diff)
	}
	var table strings.Builder
	if err := WriteTable(&table, r, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  order       0  Drain          default: shop/db-0, shop/logger, shop/web-0\n",
		"  order       1  Drain          storage provider of driver " + rbd + " for 1 pod: rook-ceph/mgr-0, rook-ceph/osd-0; waits for 1 volume to detach (va-db0)\n",
	} {
		if !strings.Contains(table.String(), line) {
			t.Errorf("the table lacks %q:\n%s", line, table.String())
		}
	}
}

// volumePods are web pods p, q, r on n1 (r with a grace of 5s; Ready 10s,
// 20s and 40s after scheduling, s on n2 80s: p50 20s, p90 80s), each with
// a ReadWriteOnce claim bound to a CSI PV of driver d.example.com.
func volumePods() map[string]string {
	pods := fpod("p", "n1", "", ", volumes: [{name: v, persistentVolumeClaim: {claimName: data-p}}]", 10) +
		fpod("q", "n1", "", ", volumes: [{name: v, persistentVolumeClaim: {claimName: data-q}}]", 20) +
		fpod("r", "n1", "", ", terminationGracePeriodSeconds: 5, volumes: [{name: v, persistentVolumeClaim: {claimName: data-r}}]", 40) +
		fpod("s", "n2", "", "", 80)
	var pvcs, pvs string
	for _, p := range []string{"p", "q", "r"} {
		pvcs += fmt.Sprintf("\n- {metadata: {name: data-%s, namespace: ns, uid: pvc-%s}, spec: {accessModes: [ReadWriteOnce], volumeName: pv-%s}}", p, p, p)
		pvs += fmt.Sprintf("\n- {metadata: {name: pv-%s, uid: pv-%s}, spec: {accessModes: [ReadWriteOnce], csi: {driver: d.example.com, volumeHandle: h-%s}, claimRef: {namespace: ns, name: data-%s}}}", p, p, p, p)
	}
	return map[string]string{
		"pods": pods, "persistentVolumeClaims": pvcs, "persistentVolumes": pvs,
		"podDisruptionBudgets": pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 4, desiredHealthy: 3, expectedPods: 4"),
	}
}

// TestForecastVolumes: a pod whose ReadWriteOnce volume must move gives its
// budget's unit back after grace + detach (+ attach, within a learned time
// to Ready) + ready, and the drain ends once the last volume is detached.
func TestForecastVolumes(t *testing.T) {
	d := func(s string) *metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Duration{Duration: v}
	}
	for name, tc := range map[string]struct {
		csiDrivers string
		opts       ForecastOptions
		p50, p90   string
		causes     []string
		path       string
	}{
		// p: evicted at 0, gone at 30, detached at 33, its unit back
		// at 33+20 = 53; q at 53, back at 106; r at 106, gone at 111,
		// detached at 114. At p90 (80s): 113, 226, 234.
		"measured: grace + detach + ready (the learned time holds the attach)": {
			opts: ForecastOptions{VolumeDetach: 3 * time.Second, VolumeAttach: 2 * time.Second},
			p50:  "55s", p90: "3m54s", causes: []string{},
			path: "3 pods in 3 rounds of 25s (exit 2s + volume move 3s + ready p50 20s), the last ending with their exit 2s (p90 30s, the prior of grace 30s) and the volume detach 3s; ready p90 1m20s, learned from 4 pods of Deployment ns/web",
		},
		"assumed: the default 5s+5s, said": {
			p50: "1m1s", p90: "4m0s", causes: []string{"unknown volume-move-assumed Node n1"},
			path: "3 pods in 3 rounds of 27s (exit 2s + volume move 5s + ready p50 20s), the last ending with their exit 2s (p90 30s, the prior of grace 30s) and the volume detach 5s; ready p90 1m20s, learned from 4 pods of Deployment ns/web",
		},
		"a driver that attaches nothing: as without volumes": {
			csiDrivers: "\n- {metadata: {name: d.example.com, uid: csi-d}, spec: {attachRequired: false}}",
			p50:        "42s", p90: "2m45s", causes: []string{},
			path: "3 pods in 3 rounds of 20s (ready p50 20s after the eviction), the last ending with their exit 2s (p90 30s, the prior of grace 30s); ready p90 1m20s, learned from 4 pods of Deployment ns/web",
		},
	} {
		t.Run(name, func(t *testing.T) {
			sections := volumePods()
			sections["csiDrivers"] = tc.csiDrivers
			f := forecastOf(t, fbuild(t, threeNodes, sections), tc.opts)
			if diff := cmp.Diff([]*metav1.Duration{d(tc.p50), d(tc.p90)}, []*metav1.Duration{f.P50, f.P90}); diff != "" {
				t.Errorf("p50, p90 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.causes, causeKeys(f)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
			if got := pathText(f.CriticalPath); got != tc.path {
				t.Errorf("path %q\nwant %q", got, tc.path)
			}
		})
	}
}

// TestForecastOrder: a storage provider is evicted only once its consumer is
// gone and its volume detached; Skip pods are not timed, WaitCompleted ones
// are a cause.
func TestForecastOrder(t *testing.T) {
	consumer := other("c", "n1", "app: c", ", volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]")
	provider := strings.Replace(other("osd", "n1", "app: osd", ", terminationGracePeriodSeconds: 10"), "labels: {app: osd}",
		"labels: {app: osd}, annotations: {"+StorageProviderAnnotation+": d.example.com}", 1)
	sections := map[string]string{
		"pods":                   consumer + provider,
		"persistentVolumeClaims": "\n- {metadata: {name: data, namespace: ns, uid: pvc-data}, spec: {accessModes: [ReadWriteOnce], volumeName: pv-data}}",
		"persistentVolumes":      "\n- {metadata: {name: pv-data, uid: pv-data}, spec: {accessModes: [ReadWriteOnce], csi: {driver: d.example.com, volumeHandle: h}, claimRef: {namespace: ns, name: data}}}",
	}
	opts := ForecastOptions{VolumeDetach: 3 * time.Second, VolumeAttach: 2 * time.Second}
	for name, tc := range map[string]struct {
		rules  []DrainRule
		p50    time.Duration
		causes []string
	}{
		// c is gone at 2s (the exit's prior) and detached at 5s; osd
		// goes then, gone at 7s.
		"the provider after its consumer's detach": {p50: 7 * time.Second, causes: []string{}},
		// Without the provider, only c: gone and detached at 5s.
		"a skipped provider is not timed": {rules: []DrainRule{{Name: "osd", Behavior: BehaviorSkip, Pods: []DrainRulePods{{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "osd"}}}}}},
			p50: 5 * time.Second, causes: []string{}},
		"a consumer that must complete": {rules: []DrainRule{{Name: "c", Behavior: BehaviorWaitCompleted, Pods: []DrainRulePods{{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "c"}}}}}},
			p50: 2 * time.Second, causes: []string{"unknown wait-completed Pod ns/c"}},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Analyze(fbuild(t, threeNodes, sections), Options{Nodes: []string{"n1"}, Forecast: &opts, DrainRules: tc.rules})
			if err != nil {
				t.Fatal(err)
			}
			f := r.Nodes[0].Forecast
			if f.P50 == nil || f.P50.Duration != tc.p50 {
				t.Errorf("p50 %v, want %s; order %+v", f.P50, tc.p50, r.Nodes[0].DrainOrder)
			}
			if diff := cmp.Diff(tc.causes, causeKeys(f)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDrainOrderPartitions: every pod a drain must see gone is in exactly
// one group of the order, and no other pod is, on every node of the
// goldens' snapshots and the storage one.
func TestDrainOrderPartitions(t *testing.T) {
	s := storageSnapshot(t, nil)
	v := view.Of(s)
	for _, node := range []string{"n1", "n2"} {
		checkPartition(t, v, node, DrainOrder(s, node, nil))
	}
}

// checkPartition fails t when order is not a partition of the pods of node
// in v that a drain must see gone.
func checkPartition(t *testing.T, v *view.Snapshot, node string, order []DrainGroup) {
	t.Helper()
	want := map[string]int{}
	for i := range v.Pods {
		if p := &v.Pods[i]; p.Spec.NodeName == node && drained(p) {
			want[p.Namespace+"/"+p.Name]++
		}
	}
	got := map[string]int{}
	for _, g := range order {
		for _, p := range g.Pods {
			got[p]++
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node %s: the drain order's pods (-want +got):\n%s", node, diff)
	}
}
