package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// app is Deployment name with replicas and its ReplicaSet name-1; meta is
// more of the Deployment's metadata.
func app(name string, replicas int, meta string) map[string]string {
	return map[string]string{
		"deployments": fmt.Sprintf(`
- {metadata: {name: %[1]s, namespace: ns, uid: d-%[1]s%[3]s}, spec: {replicas: %[2]d, selector: {matchLabels: {app: %[1]s}}, template: {}}, status: {readyReplicas: %[2]d}}`, name, replicas, meta),
		"replicaSets": fmt.Sprintf(`
- {metadata: {name: %[1]s-1, namespace: ns, uid: rs-%[1]s, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s, uid: d-%[1]s, controller: true}]}, spec: {replicas: %[2]d, selector: {matchLabels: {app: %[1]s}}}, status: {replicas: %[2]d, readyReplicas: %[2]d}}`, name, replicas),
	}
}

// ownedPod is a Ready pod named name on node with label app: label and
// controller kind/owner (uid uid); no controller when kind is "".
func ownedPod(name, node, label, kind, owner, uid string) string {
	refs := ""
	if kind != "" {
		group := "apps/v1"
		if kind == "Job" {
			group = "batch/v1"
		}
		refs = fmt.Sprintf(", ownerReferences: [{apiVersion: %s, kind: %s, name: %s, uid: %s, controller: true}]", group, kind, owner, uid)
	}
	return fmt.Sprintf(`
- {metadata: {name: %s, namespace: ns, uid: pod-%s, labels: {app: %s}%s},
   spec: {nodeName: %s, containers: [{name: c, image: i}]}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`, name, name, label, refs, node)
}

// merge merges snapshot sections: each key's items are concatenated.
func merge(parts ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, p := range parts {
		for k, v := range p {
			out[k] += v
		}
	}
	return out
}

// zeroPDB is PDB name selecting app: label with spec, whose status has
// expected pods all healthy and none to spare.
func zeroPDB(name, label, spec string, expected int) string {
	return pdbYAML(name, spec+", selector: {matchLabels: {app: "+label+"}}",
		fmt.Sprintf("disruptionsAllowed: 0, currentHealthy: %d, desiredHealthy: %d, expectedPods: %d", expected, expected, expected))
}

// TestSurge: whether a surge moves pod p (on n1) whose budget never allows
// its eviction, each rule of CHECKS.md's "Surge" in turn; and what
// Options.Surge changes of its action, its reasons and the node's findings
// and grade.
func TestSurge(t *testing.T) {
	api := app("api", 1, "")
	apiPod := map[string]string{"pods": ownedPod("p", "n1", "api", "ReplicaSet", "api-1", "rs-api")}
	apiMove := &SurgeMove{Kind: "Deployment", Name: "api", UID: "d-api", Replicas: 1, PDB: "api"}
	webMove := &SurgeMove{Kind: "Deployment", Name: "web", UID: "d-web", Replicas: 3, PDB: "web"}
	// A single replica with a budget that never allows: the pod's own
	// findings besides.
	single := []Code{PDBInsufficientForNode, PDBZeroSpec, SingleReplica}
	// ... and when no surge moves it, it needs an override.
	singleOverride := []Code{NeedsOverride, PDBInsufficientForNode, PDBZeroSpec, SingleReplica}
	tests := map[string]struct {
		extra   map[string]string
		want    *SurgeMove
		noSurge string   // pod p's NoSurge, in full
		codes   []Code   // n1's findings without Options.Surge (always high)
		surged  []Code   // n1's findings with Options.Surge, when a surge moves p
		risk    Severity // n1's risk with Options.Surge, when a surge moves p
		surges  int      // n1's pods a surge moves, when it moves p (0: 1)
	}{
		"int minAvailable equal to the replicas, 1 replica": {
			extra: merge(api, apiPod, map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1)}),
			want:  apiMove, codes: append(single, SurgeMovable),
			surged: []Code{PDBInsufficientForNode, SingleReplica, SurgeMovable}, risk: Medium,
		},
		"int minAvailable equal to the replicas, 3 replicas": {
			extra: map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", "minAvailable: 3", 3)},
			want:  webMove, codes: []Code{PDBZeroSpec, SurgeMovable},
			surged: []Code{SurgeMovable}, risk: Medium,
		},
		"3 replicas all on the node: the surge answers all-replicas-on-node": {
			extra: map[string]string{"pods": webPod("p", "n1", "") + webPod("q", "n1", "") + webPod("r", "n1", ""),
				"podDisruptionBudgets": zeroPDB("web", "web", "minAvailable: 3", 3)},
			want: webMove, codes: []Code{AllReplicasOnNode, AllReplicasOnNode, AllReplicasOnNode, PDBInsufficientForNode, PDBZeroSpec, SurgeMovable, SurgeMovable, SurgeMovable},
			surged: []Code{PDBInsufficientForNode, SurgeMovable, SurgeMovable, SurgeMovable}, risk: Medium, surges: 3,
		},
		"minAvailable 50% of 1 replica: one of 2 is 1": {
			extra: merge(api, apiPod, map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", `minAvailable: "50%"`, 1)}),
			want:  apiMove, codes: append(single, SurgeMovable),
			surged: []Code{PDBInsufficientForNode, SingleReplica, SurgeMovable}, risk: Medium,
		},
		"a ReplicaSet no controller owns is scaled itself": {
			extra: map[string]string{
				"replicaSets": `
- {metadata: {name: solo-1, namespace: ns, uid: rs-solo}, spec: {replicas: 1, selector: {matchLabels: {app: solo}}}, status: {replicas: 1, readyReplicas: 1}}`,
				"pods":                 ownedPod("p", "n1", "solo", "ReplicaSet", "solo-1", "rs-solo"),
				"podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)},
			want:  &SurgeMove{Kind: "ReplicaSet", Name: "solo-1", UID: "rs-solo", Replicas: 1, PDB: "solo"},
			codes: append(single, SurgeMovable), surged: []Code{PDBInsufficientForNode, SingleReplica, SurgeMovable}, risk: Medium,
		},
		"an autoscaler of another Deployment is no matter": {
			extra: merge(api, apiPod, map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1),
				"horizontalPodAutoscalers": "\n- {metadata: {name: web, namespace: ns, uid: hpa-web}, spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 5}}"}),
			want: apiMove, codes: append(single, SurgeMovable),
			surged: []Code{PDBInsufficientForNode, SingleReplica, SurgeMovable}, risk: Medium,
		},
		"minAvailable above the replicas": {
			extra:   map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", "minAvailable: 5", 3)},
			noSurge: "pod ns/p, owned by Deployment ns/web: PDB web needs 5 healthy of 4: one more replica is not enough",
			codes:   []Code{NeedsOverride, PDBZeroSpec},
		},
		"minAvailable 90% of 3: 4 of 4": {
			extra:   map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", `minAvailable: "90%"`, 3)},
			noSurge: "pod ns/p, owned by Deployment ns/web: PDB web needs 4 healthy of 4: one more replica is not enough",
			codes:   []Code{NeedsOverride, PDBZeroSpec},
		},
		"maxUnavailable 0": {
			extra:   map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", "maxUnavailable: 0", 3)},
			noSurge: "pod ns/p, owned by Deployment ns/web: PDB web has maxUnavailable 0: more replicas never help",
			codes:   []Code{NeedsOverride, PDBZeroSpec},
		},
		`maxUnavailable "0%"`: {
			extra:   map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", `maxUnavailable: "0%"`, 3)},
			noSurge: "pod ns/p, owned by Deployment ns/web: PDB web has maxUnavailable 0%: more replicas never help",
			codes:   []Code{NeedsOverride, PDBZeroSpec},
		},
		"minAvailable 100%": {
			extra:   map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", `minAvailable: "100%"`, 3)},
			noSurge: "pod ns/p, owned by Deployment ns/web: PDB web has minAvailable 100%: more replicas never help",
			codes:   []Code{NeedsOverride, PDBZeroSpec},
		},
		"StatefulSet": {
			extra: map[string]string{
				"statefulSets": `
- {metadata: {name: db, namespace: ns, uid: ss-db}, spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {}, serviceName: db}, status: {replicas: 1, readyReplicas: 1}}`,
				"pods":                 ownedPod("p", "n1", "db", "StatefulSet", "db", "ss-db"),
				"podDisruptionBudgets": zeroPDB("db", "db", "minAvailable: 1", 1)},
			noSurge: "pod ns/p, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run",
			codes:   singleOverride,
		},
		"bare pod": {
			extra:   map[string]string{"pods": ownedPod("p", "n1", "solo", "", "", ""), "podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)},
			noSurge: "pod ns/p: no controller owns it: nothing to add a replica to",
			codes:   []Code{NeedsOverride, PDBInsufficientForNode, PDBZeroSpec, UnmanagedPod},
		},
		"Job": {
			extra: map[string]string{
				"jobs":                 "\n- {metadata: {name: batch, namespace: ns, uid: job-batch}, spec: {template: {}}}",
				"pods":                 ownedPod("p", "n1", "batch", "Job", "batch", "job-batch"),
				"podDisruptionBudgets": zeroPDB("batch", "batch", "minAvailable: 1", 1)},
			noSurge: "pod ns/p, owned by Job ns/batch: a Job's pods run to completion: it has no replicas to add",
			codes:   []Code{NeedsOverride, PDBInsufficientForNode, PDBZeroSpec},
		},
		"owner not in the snapshot": {
			extra:   map[string]string{"pods": ownedPod("p", "n1", "solo", "ReplicaSet", "gone", "rs-gone"), "podDisruptionBudgets": zeroPDB("solo", "solo", "minAvailable: 1", 1)},
			noSurge: "pod ns/p, owned by ReplicaSet ns/gone: ReplicaSet ns/gone is not in the snapshot: there is no verified owner to scale",
			codes:   []Code{NeedsOverride, OwnerMissing, PDBInsufficientForNode, PDBZeroSpec},
		},
		"Deployment that a custom controller owns": {
			extra: merge(app("api", 1, ", ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: api, uid: ro-api, controller: true}]"), apiPod,
				map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1)}),
			noSurge: "pod ns/p, owned by Deployment ns/api: Rollout ns/api is a kind the snapshot does not hold: whether one more replica runs cannot be judged",
			codes:   []Code{NeedsOverride, OwnerUnverifiable, PDBInsufficientForNode, PDBZeroSpec}, // no single-replica: the chain is not verified
		},
		"Deployment being deleted": {
			extra: merge(app("api", 1, `, deletionTimestamp: "2026-11-29T11:59:00Z"`), apiPod,
				map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1)}),
			noSurge: "pod ns/p, owned by Deployment ns/api: Deployment ns/api is being deleted",
			codes:   singleOverride,
		},
		"HorizontalPodAutoscaler on the Deployment": {
			extra: merge(api, apiPod, map[string]string{"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1),
				"horizontalPodAutoscalers": "\n- {metadata: {name: api-hpa, namespace: ns, uid: hpa-api}, spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}, minReplicas: 1, maxReplicas: 5}}"}),
			noSurge: "pod ns/p, owned by Deployment ns/api: HorizontalPodAutoscaler ns/api-hpa scales Deployment api: a replica count maintd changed would fight it",
			codes:   singleOverride,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := build(t, tc.extra)
			for _, surge := range []bool{false, true} {
				r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: surge})
				if err != nil {
					t.Fatal(err)
				}
				n := r.Nodes[0]
				i := slices.IndexFunc(n.Pods, func(v PodVerdict) bool { return v.Name == "p" })
				if i < 0 {
					t.Fatalf("no verdict for pod p: %+v", n.Pods)
				}
				v := n.Pods[i]
				if diff := cmp.Diff(tc.want, v.Surge); diff != "" {
					t.Errorf("surge %v: Surge (-want +got):\n%s", surge, diff)
				}
				if v.NoSurge != tc.noSurge {
					t.Errorf("surge %v: NoSurge = %q, want %q", surge, v.NoSurge, tc.noSurge)
				}
				moved := surge && tc.want != nil
				wantCodes, wantRisk, wantAction, wantCount := tc.codes, High, Block, 0
				if moved {
					wantCodes, wantRisk, wantAction, wantCount = tc.surged, tc.risk, Surge, max(tc.surges, 1)
				}
				if diff := cmp.Diff(wantCodes, codes(n.Findings)); diff != "" {
					t.Errorf("surge %v: finding codes (-want +got):\n%s", surge, diff)
				}
				if n.Risk != wantRisk || v.Action != wantAction || n.Counts.Surge != wantCount {
					t.Errorf("surge %v: risk %s, action %s, %d surges; want %s, %s, %d", surge, n.Risk, v.Action, n.Counts.Surge, wantRisk, wantAction, wantCount)
				}
				// Moved, surge-movable instead of pdb-zero-spec; otherwise
				// pdb-zero-spec, and surge-movable when a surge could.
				if slices.Contains(v.Reasons, PDBZeroSpec) == moved || slices.Contains(v.Reasons, SurgeMovable) != (tc.want != nil) {
					t.Errorf("surge %v: reasons %v", surge, v.Reasons)
				}
			}
		})
	}
}

// TestSurgeFinding: the surge-movable finding names the owner, its
// replicas now and with the surge, and the budget.
func TestSurgeFinding(t *testing.T) {
	s := build(t, map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", "minAvailable: 3", 3)})
	r, err := Analyze(s, Options{Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Finding{Code: SurgeMovable, Severity: Medium, Subject: Subject{Kind: "Pod", Namespace: "ns", Name: "p", UID: "pod-p"},
		Message:  "one more replica of Deployment ns/web (3→4) lets pod ns/p go with no downtime: a drain with a surge (maintd spec.surge: IfNeeded, k8s-analyze --surge) moves it",
		Evidence: map[string]string{"owner": "Deployment web", "replicas": "3→4", "pdb": "web"}, Fix: checksByCode()[SurgeMovable].Fix}
	i := slices.IndexFunc(r.Nodes[0].Findings, func(f Finding) bool { return f.Code == SurgeMovable })
	if i < 0 {
		t.Fatalf("no surge-movable finding: %v", codes(r.Nodes[0].Findings))
	}
	if diff := cmp.Diff(want, r.Nodes[0].Findings[i]); diff != "" {
		t.Errorf("finding (-want +got):\n%s", diff)
	}
}

// TestSurgeOnlyForNeverAllowing: a pod whose budget can allow (exhausted
// now, or spare) has neither Surge nor NoSurge, and the same verdict with
// Options.Surge.
func TestSurgeOnlyForNeverAllowing(t *testing.T) {
	for name, pdb := range map[string]string{
		"spare":     pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3"),
		"exhausted": pdbYAML("web", "minAvailable: 3, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 4"),
	} {
		t.Run(name, func(t *testing.T) {
			s := build(t, map[string]string{"pods": spread, "podDisruptionBudgets": pdb})
			var reports [2]*Report
			for i, surge := range []bool{false, true} {
				r, err := Analyze(s, Options{Surge: surge, Forecast: &ForecastOptions{}})
				if err != nil {
					t.Fatal(err)
				}
				reports[i] = r
				for _, n := range r.Nodes {
					for _, v := range n.Pods {
						if v.Surge != nil || v.NoSurge != "" {
							t.Errorf("surge %v: pod %s: Surge %+v, NoSurge %q; want neither", surge, v.Name, v.Surge, v.NoSurge)
						}
					}
				}
			}
			if diff := cmp.Diff(reports[0], reports[1]); diff != "" {
				t.Errorf("Options.Surge changed the report (-without +with):\n%s", diff)
			}
		})
	}
}

// TestSurgeSomePodsOfABudget: a budget over two workloads, one a surge
// moves (web) and one it does not (a StatefulSet): with Options.Surge the
// web pod surges, the StatefulSet's pod stays blocked, and the budget's
// pdb-zero-spec still grades the node high.
func TestSurgeSomePodsOfABudget(t *testing.T) {
	s := build(t, map[string]string{
		"statefulSets": `
- {metadata: {name: db, namespace: ns, uid: ss-db}, spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {}, serviceName: db}, status: {replicas: 1, readyReplicas: 1}}`,
		"pods": spread + ownedPod("d", "n1", "db", "StatefulSet", "db", "ss-db"),
		// web (3 replicas) and db (1): whole 4, minAvailable 4 needs 4 of 5.
		"podDisruptionBudgets": pdbYAML("all", "minAvailable: 4, selector: {matchExpressions: [{key: app, operator: In, values: [web, db]}]}",
			"disruptionsAllowed: 0, currentHealthy: 4, desiredHealthy: 4, expectedPods: 4"),
	})
	r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: true, Forecast: &ForecastOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Nodes[0]
	got := map[string]string{}
	for _, v := range n.Pods {
		got[v.Name] = fmt.Sprintf("%s %v %q", v.Action, v.Surge != nil, v.NoSurge)
	}
	want := map[string]string{
		"p": `surge true ""`,
		"d": `block false "pod ns/d, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if n.Risk != High || !slices.Contains(codes(n.Findings), PDBZeroSpec) {
		t.Errorf("risk %s, findings %v; want high with pdb-zero-spec", n.Risk, codes(n.Findings))
	}
	// (Its nodes have no allocatable: where replacements go is unknown.)
	if keys := causeKeys(n.Forecast); n.Forecast.Verdict != VerdictNever || keys[0] != "never pdb-never-allows PodDisruptionBudget ns/all" {
		t.Errorf("forecast %s, causes %v; want never, pdb-never-allows of all first", n.Forecast.Verdict, keys)
	}
	if msg := n.Forecast.Causes[0].Message; !strings.HasSuffix(msg, ", and no surge helps: pod ns/d, owned by StatefulSet ns/db: its pods have fixed identities, so a second copy cannot run") {
		t.Errorf("cause message %q does not say why no surge helps", msg)
	}
}

// TestSurgeForecast: with Options.Surge a budget whose pods a surge moves
// is no never cause: the surge pod is Ready after the workload's time to
// Ready, then the budget allows one eviction, and each next pod goes once
// the previous one's replacement is Ready; the drain ends a grace later.
// Without it the forecast is never, as before. web's pods are Ready 10s,
// 20s and 40s after scheduling: p50 20s, p90 40s; the grace is 30s.
func TestSurgeForecast(t *testing.T) {
	d := func(s string) metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.Duration{Duration: v}
	}
	never := []string{"never pdb-never-allows PodDisruptionBudget ns/web"}
	pdb := zeroPDB("web", "web", "minAvailable: 3", 3)
	ready := ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("40s"), Samples: 3}
	prior := ExitTime{P50: d("2s"), P90: d("30s")} // nothing learned of the exits
	for name, tc := range map[string]struct {
		nodes, pods string
		want        *Forecast // with Options.Surge
	}{
		"one pod: its surge pod's time to Ready, then the grace": {nodes: threeNodes,
			pods: fpod("p", "n1", "", "", 10) + fpod("q", "n2", "", "", 20) + fpod("r", "n3", "", "", 40),
			want: &Forecast{Verdict: VerdictOK, P50: ptr(d("22s")), P90: ptr(d("1m10s")), Pods: 1, Concurrency: DefaultConcurrency,
				CriticalPath: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 1, Rounds: 1, RoundTime: d("20s"), Grace: d("30s"), Exit: prior, Ready: ready, Surge: true}}},
		"three pods of one budget: three rounds": {nodes: threeNodes,
			pods: fpod("p", "n1", "", "", 10) + fpod("q", "n1", "", "", 20) + fpod("r", "n1", "", "", 40),
			want: &Forecast{Verdict: VerdictOK, P50: ptr(d("1m2s")), P90: ptr(d("2m30s")), Pods: 3, Concurrency: DefaultConcurrency,
				CriticalPath: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 3, RoundTime: d("20s"), Grace: d("30s"), Exit: prior, Ready: ready, Surge: true}}},
		"no other node takes the surge pod: never, as its replacement": {nodes: fnode("n1", "", ""),
			pods: fpod("p", "n1", "", "", 10) + fpod("q", "n1", "", "", 20) + fpod("r", "n1", "", "", 40),
			want: &Forecast{Verdict: VerdictNever, Pods: 3, Concurrency: DefaultConcurrency, Causes: []ForecastCause{{Verdict: VerdictNever, Reason: ReasonUnschedulable,
				Subject: Subject{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "d-web"},
				Message: "the replacement of pod p (and of 2 more of Deployment web) cannot run on any other node: no other schedulable node in the snapshot"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			s := fbuild(t, tc.nodes, map[string]string{"pods": tc.pods, "podDisruptionBudgets": pdb})
			for _, surge := range []bool{false, true} {
				r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: surge, Forecast: &ForecastOptions{}})
				if err != nil {
					t.Fatal(err)
				}
				f := r.Nodes[0].Forecast
				if !surge {
					if got := causeKeys(f); !slices.Contains(got, never[0]) || f.Verdict != VerdictNever {
						t.Errorf("without Options.Surge: verdict %s, causes %v; want never with %v", f.Verdict, got, never)
					}
					continue
				}
				if diff := cmp.Diff(tc.want, f); diff != "" {
					t.Errorf("with Options.Surge (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSurgeTable: the table's surge column and lines, only when a node has
// a pod to surge.
func TestSurgeTable(t *testing.T) {
	s := build(t, map[string]string{"pods": spread, "podDisruptionBudgets": zeroPDB("web", "web", "minAvailable: 3", 3)})
	for surge, want := range map[bool][]string{
		false: {
			"NODE  RISK    PODS  EVICT  SKIP  BLOCK  FINDINGS",
			"n1    high       1      0     0      1  1 high, 1 medium, 0 low",
		},
		true: {
			"NODE  RISK    PODS  EVICT  SKIP  BLOCK  SURGE  FINDINGS",
			"n1    medium     1      0     0      0      1  0 high, 1 medium, 0 low",
			"  surge     Pod ns/p  Deployment ns/web 3→4, then evict (PDB web)",
		},
	} {
		r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: surge})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteTable(&b, r, false); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if diff := cmp.Diff(want, lines[:len(want)]); diff != "" {
			t.Errorf("surge %v: table (-want +got):\n%s\n%s", surge, diff, b.String())
		}
	}
}

// TestSurgeForecastStale: a surge does not mend a stale status (the
// Eviction API answers 429 until the disruption controller catches up): the
// forecast is unknown, with the surge's estimate (web's time to Ready 20s,
// then the grace).
func TestSurgeForecastStale(t *testing.T) {
	s := fbuild(t, threeNodes, map[string]string{
		"pods": fpod("p", "n1", "", "", 10) + fpod("q", "n2", "", "", 20) + fpod("r", "n3", "", "", 40),
		"podDisruptionBudgets": `
- {metadata: {name: web, namespace: ns, uid: pdb-web, generation: 2}, spec: {minAvailable: 3, selector: {matchLabels: {app: web}}}, status: {observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 3}}`,
	})
	r, err := Analyze(s, Options{Nodes: []string{"n1"}, Surge: true, Forecast: &ForecastOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Nodes[0].Forecast
	if diff := cmp.Diff([]string{"unknown pdb-stale PodDisruptionBudget ns/web"}, causeKeys(f)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if f.Verdict != VerdictUnknown || f.P50 == nil || f.P50.Duration != 22*time.Second || f.CriticalPath == nil || !f.CriticalPath.Surge {
		t.Errorf("verdict %s, p50 %v, critical path %+v; want unknown, 22s, a surge", f.Verdict, f.P50, f.CriticalPath)
	}
}
