package analyze

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stsPod is pod name of StatefulSet ss on node n1 (label app: ss), Ready
// `ready` seconds after it was scheduled at 11:00 (not Ready when ready <
// 0), with more of its spec.
func stsPod(name, ss string, ready int, spec string) string {
	conds := fmt.Sprintf(`[{type: PodScheduled, status: "True", lastTransitionTime: "2026-11-29T11:00:00Z"}, {type: Ready, status: "True", lastTransitionTime: "%s"}]`,
		time.Date(2026, 11, 29, 11, 0, ready, 0, time.UTC).Format(time.RFC3339))
	if ready < 0 {
		conds = `[{type: PodScheduled, status: "True", lastTransitionTime: "2026-11-29T11:00:00Z"}, {type: Ready, status: "False"}]`
	}
	return fmt.Sprintf(`
- {metadata: {name: %[1]s, namespace: ns, uid: pod-%[1]s, labels: {app: %[2]s}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: %[2]s, uid: ss-%[2]s, controller: true}]},
   spec: {nodeName: n1, containers: [{name: c, image: i}]%[3]s},
   status: {phase: Running, conditions: %[4]s}}`, name, ss, spec, conds)
}

// postgres is a single-replica StatefulSet db as it is run for a small
// database: pod db-0 on n1 with a grace of 60s, Ready 25s after it was
// scheduled, its data on a ReadWriteOnce CSI volume (attached), under a
// PDB minAvailable 1; status is the PDB's status.
func postgres(ready int, pdbSpec, status string) map[string]string {
	readyReplicas := 1
	if ready < 0 {
		readyReplicas = 0
	}
	return map[string]string{
		"statefulSets": fmt.Sprintf(`
- {metadata: {name: db, namespace: ns, uid: ss-db}, spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {}, serviceName: db}, status: {replicas: 1, readyReplicas: %d}}`, readyReplicas),
		"pods":                   stsPod("db-0", "db", ready, ", terminationGracePeriodSeconds: 60, volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]"),
		"persistentVolumeClaims": "\n- {metadata: {name: data-db-0, namespace: ns, uid: pvc-db-0}, spec: {accessModes: [ReadWriteOnce], volumeName: pv-db-0}}",
		"persistentVolumes":      "\n- {metadata: {name: pv-db-0, uid: pv-db-0}, spec: {accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}, claimRef: {namespace: ns, name: data-db-0}}}",
		"podDisruptionBudgets":   pdbYAML("db", pdbSpec+", selector: {matchLabels: {app: db}}", status),
	}
}

// healthyDB is postgres's PDB status with db-0 Ready.
const healthyDB = "disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1"

// TestNeedsOverride: which pods need an override, on clusters drawn like
// real ones, and the downtime each entry of the forecast's list gives.
func TestNeedsOverride(t *testing.T) {
	d := func(s string) metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.Duration{Duration: v}
	}
	// web (base: Deployment web, 3 replicas, ReplicaSet web-1): p on n1, q
	// and r elsewhere, Ready 10s, 20s and 40s after scheduling: p50 20s,
	// p90 40s.
	web := fpod("p", "n1", "", "", 10) + fpod("q", "n2", "", "", 20) + fpod("r", "n3", "", "", 40)
	webReady := &ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("40s"), Samples: 3}
	for name, tc := range map[string]struct {
		extra map[string]string
		opts  ForecastOptions
		want  []OverrideNeed // n1's forecast's list; nil: no pod needs one
		// action is pod p's or db-0's action (block when one is wanted).
		action Action
		// free: the Eviction API would let it go now.
		free bool
	}{
		"single-replica StatefulSet under minAvailable 1, ReadWriteOnce volume": {
			extra: postgres(25, "minAvailable: 1", healthyDB),
			// grace 60s + detach 5s (the attach is within the learned
			// Ready) + Ready 25s.
			want: []OverrideNeed{{Namespace: "ns", Name: "db-0", UID: "pod-db-0", PDB: "db", Spec: "minAvailable 1 >= 1 expected pods",
				NoSurge: "pod ns/db-0, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run",
				Ready:   true, Replacement: "StatefulSet ns/db", Grace: d("60s"), VolumeMove: d("5s"),
				ReplacementReady: &ReadyTime{Workload: "StatefulSet ns/db", P50: d("25s"), P90: d("25s"), Samples: 1},
				Downtime:         &Downtime{P50: d("32s"), P90: d("1m30s")}}},
		},
		"maxUnavailable 0 over 3 replicas: the ReplicaSet replaces at once": {
			extra: map[string]string{"pods": web, "podDisruptionBudgets": zeroPDB("web", "web", "maxUnavailable: 0", 3)},
			// The control plane's reaction, once at p50 and thrice at p90,
			// as the forecast adds it.
			opts: ForecastOptions{Reaction: time.Second},
			want: []OverrideNeed{{Namespace: "ns", Name: "p", UID: "pod-p", PDB: "web", Spec: "maxUnavailable 0",
				NoSurge: "pod ns/p, owned by Deployment ns/web: PDB web has maxUnavailable 0: more replicas never help",
				Ready:   true, Replacement: "ReplicaSet ns/web-1", Grace: d("30s"), ReplacementReady: webReady,
				Downtime: &Downtime{P50: d("21s"), P90: d("43s")}}},
		},
		"minAvailable 1 over 2 replicas: the budget allows one": {
			extra: map[string]string{"pods": fpod("p", "n1", "", "", 10) + fpod("q", "n2", "", "", 20),
				"podDisruptionBudgets": pdbYAML("web", "minAvailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2")},
			action: Evict,
		},
		"not Ready under the default unhealthyPodEvictionPolicy: the budget refuses it": {
			extra: postgres(-1, "minAvailable: 1", "disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1"),
			// No pod shows its times: the default Ready 1m, and the
			// attach is not within it.
			want: []OverrideNeed{{Namespace: "ns", Name: "db-0", UID: "pod-db-0", PDB: "db", Spec: "minAvailable 1 >= 1 expected pods",
				NoSurge:     "pod ns/db-0, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run",
				Replacement: "StatefulSet ns/db", Grace: d("60s"), VolumeMove: d("10s"),
				ReplacementReady: &ReadyTime{Workload: "StatefulSet ns/db", P50: d("1m"), P90: d("1m")},
				Downtime:         &Downtime{P50: d("1m12s"), P90: d("2m10s")}}},
		},
		"not Ready under AlwaysAllow: evicted without budget": {
			extra:  postgres(-1, "minAvailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow", "disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1"),
			action: Block, // by its own rwo-reattach, not by the budget
			free:   true,
		},
		"a Deployment that can surge": {
			extra:  merge(app("api", 1, ""), map[string]string{"pods": ownedPod("p", "n1", "api", "ReplicaSet", "api-1", "rs-api"), "podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1)}),
			action: Block, // without Options.Surge, blocked by pdb-zero-spec: surge-movable says how
		},
		"a bare pod under a PDB: nothing re-creates it": {
			extra: map[string]string{"pods": ownedPod("p", "n1", "solo", "", "", ""),
				"podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)},
			want: []OverrideNeed{{Namespace: "ns", Name: "p", UID: "pod-p", PDB: "solo", Spec: "minAvailable 1 >= 1 expected pods",
				NoSurge: "pod ns/p: no controller owns it: nothing to add a replica to", Ready: true, Grace: d("30s")}},
		},
		"a bare pod that is not Ready: it goes without budget": {
			extra: map[string]string{"pods": other("p", "n1", "app: solo", ""),
				"podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)},
			action: Block, // unmanaged-pod, its own
			free:   true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := fbuild(t, threeNodes, tc.extra)
			for _, surge := range []bool{false, true} {
				r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: surge, Forecast: &tc.opts})
				if err != nil {
					t.Fatal(err)
				}
				n := r.Nodes[0]
				if diff := cmp.Diff(tc.want, n.Forecast.NeedsOverride); diff != "" {
					t.Errorf("surge %v: needsOverride (-want +got):\n%s", surge, diff)
				}
				// One finding per pod of the list, and none otherwise.
				var found []string
				for _, f := range n.Findings {
					if f.Code == NeedsOverride {
						found = append(found, f.Subject.Name)
						if f.Severity != High || f.Subject.Kind != "Pod" {
							t.Errorf("surge %v: finding %+v, want a high one about the pod", surge, f)
						}
					}
				}
				var names []string
				for _, o := range tc.want {
					names = append(names, o.Name)
				}
				if diff := cmp.Diff(names, found); diff != "" {
					t.Errorf("surge %v: needs-override findings (-want +got):\n%s", surge, diff)
				}
				for _, v := range n.Pods {
					needs := slices.Contains(names, v.Name)
					if slices.Contains(v.Reasons, NeedsOverride) != needs {
						t.Errorf("surge %v: pod %s reasons %v, needs an override: %v", surge, v.Name, v.Reasons, needs)
					}
					if needs && v.Action != Block {
						t.Errorf("surge %v: pod %s action %s, want block", surge, v.Name, v.Action)
					}
					if tc.action != "" && !surge && v.Action != tc.action {
						t.Errorf("pod %s action %s, want %s", v.Name, v.Action, tc.action)
					}
					if tc.free && !v.EvictableNow.Allowed {
						t.Errorf("pod %s: evictableNow %+v, want allowed", v.Name, v.EvictableNow)
					}
				}
			}
		})
	}
}

// TestNeedsOverrideFinding: the finding's message names the pod, the PDB,
// why it never allows, why no surge helps, the override as the way out
// and the downtime, explained; its evidence holds the same.
func TestNeedsOverrideFinding(t *testing.T) {
	fix := checksByCode()[NeedsOverride].Fix
	subject := Subject{Kind: "Pod", Namespace: "ns", Name: "db-0", UID: "pod-db-0"}
	const head = "PDB db can never allow the eviction of pod ns/db-0 (minAvailable 1 >= 1 expected pods) and no surge makes room (pod ns/db-0, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run): only a delete moves it, under a MaintenanceOverride that someone other than the plan's requester approves (kubectl maint override)"
	for name, tc := range map[string]struct {
		extra map[string]string
		opts  *Options
		want  Finding
	}{
		"StatefulSet with a ReadWriteOnce volume": {
			extra: postgres(25, "minAvailable: 1", healthyDB),
			want: Finding{Code: NeedsOverride, Severity: High, Subject: subject, Fix: fix,
				Message: head + "; the pod is then down about 32s (p90 1m30s): its exit, up to its grace 1m0s, then its ReadWriteOnce volume's move 5s, then StatefulSet ns/db re-creates it, Ready in 25s (p90 25s, learned from 1 pod of StatefulSet ns/db)",
				Evidence: map[string]string{"pdb": "db", "spec": "minAvailable 1 >= 1 expected pods", "grace": "1m0s", "ready": "true",
					"replacement": "StatefulSet ns/db", "downtimeP50": "32s", "downtimeP90": "1m30s", "volumeMove": "5s"}},
		},
		"StatefulSet without a volume, not Ready; no forecast: the default times": {
			extra: func() map[string]string {
				m := postgres(-1, "minAvailable: 1", "disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1")
				m["pods"] = stsPod("db-0", "db", -1, "")
				return m
			}(),
			opts: &Options{Nodes: []string{"n1"}},
			want: Finding{Code: NeedsOverride, Severity: High, Subject: subject, Fix: fix,
				Message: head + "; the pod is then down about 1m2s (p90 1m30s): its exit, up to its grace 30s, then StatefulSet ns/db re-creates it under the same name, Ready in 1m0s (p90 1m0s, the default: no pod of the workload shows its times); it is not Ready now, so the delete takes nothing that serves",
				Evidence: map[string]string{"pdb": "db", "spec": "minAvailable 1 >= 1 expected pods", "grace": "30s", "ready": "false",
					"replacement": "StatefulSet ns/db", "downtimeP50": "1m2s", "downtimeP90": "1m30s"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{Nodes: []string{"n1"}, Forecast: &ForecastOptions{}}
			if tc.opts != nil {
				opts = *tc.opts
			}
			r, err := Analyze(fbuild(t, threeNodes, tc.extra), opts)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(r.Nodes[0].Findings, func(f Finding) bool { return f.Code == NeedsOverride })
			if i < 0 {
				t.Fatalf("no needs-override finding: %v", codes(r.Nodes[0].Findings))
			}
			if diff := cmp.Diff(tc.want, r.Nodes[0].Findings[i]); diff != "" {
				t.Errorf("finding (-want +got):\n%s", diff)
			}
		})
	}
	// A bare pod: no downtime, gone for good.
	r, err := Analyze(fbuild(t, threeNodes, map[string]string{"pods": ownedPod("p", "n1", "solo", "", "", ""),
		"podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)}), Options{Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(r.Nodes[0].Findings, func(f Finding) bool { return f.Code == NeedsOverride })
	if i < 0 {
		t.Fatalf("bare pod: no needs-override finding: %v", codes(r.Nodes[0].Findings))
	}
	f := r.Nodes[0].Findings[i]
	if want := "; nothing re-creates it (no controller owns it): the delete removes the pod for good"; !strings.HasSuffix(f.Message, want) {
		t.Errorf("bare pod: message %q does not end with %q", f.Message, want)
	}
	if f.Evidence["replacement"] != "none" || f.Evidence["downtimeP50"] != "" {
		t.Errorf("bare pod: evidence %v, want replacement none and no downtime", f.Evidence)
	}
}

// TestNeedsOverrideReport: a script reads the list from the report's JSON
// (nodes[].forecast.needsOverride[], downtime.p50 and p90 as Go
// durations); the table has a line per pod; a pod the drain order skips is
// not on the list (the drain leaves it), though its finding stays.
func TestNeedsOverrideReport(t *testing.T) {
	s := fbuild(t, threeNodes, postgres(25, "minAvailable: 1", healthyDB))
	r, err := Analyze(s, Options{Nodes: []string{"n1"}, Forecast: &ForecastOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Forecast struct {
				NeedsOverride []struct {
					Namespace, Name, PDB, Replacement string
					Downtime                          struct{ P50, P90 string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Nodes[0].Forecast.NeedsOverride
	if len(got) != 1 || got[0].Name != "db-0" || got[0].PDB != "db" || got[0].Replacement != "StatefulSet ns/db" || got[0].Downtime.P50 != "32s" || got[0].Downtime.P90 != "1m30s" {
		t.Errorf("needsOverride as JSON: %+v", got)
	}
	var table strings.Builder
	if err := WriteTable(&table, r, false); err != nil {
		t.Fatal(err)
	}
	const line = "  forecast  override  Pod ns/db-0  down 32s (p90 1m30s) after a delete, until StatefulSet ns/db's replacement is Ready; PDB db never allows (minAvailable 1 >= 1 expected pods), no surge helps\n"
	if !strings.Contains(table.String(), line) {
		t.Errorf("the table lacks %q:\n%s", line, table.String())
	}

	skipped := postgres(25, "minAvailable: 1", healthyDB)
	skipped["pods"] = strings.Replace(skipped["pods"], "labels: {app: db}", `labels: {app: db}, annotations: {maintenance.sentinel.dev/drain: skip}`, 1)
	r, err = Analyze(fbuild(t, threeNodes, skipped), Options{Nodes: []string{"n1"}, Forecast: &ForecastOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Nodes[0]; n.Forecast.NeedsOverride != nil || !slices.Contains(codes(n.Findings), NeedsOverride) {
		t.Errorf("skipped by the drain order: needsOverride %+v, findings %v; want none on the list, the finding kept", n.Forecast.NeedsOverride, codes(n.Findings))
	}
}
