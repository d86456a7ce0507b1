package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

// The capacity tests use the forecast tests' cluster (fnode, fpod, other,
// fbuild): Deployment web in namespace ns, nodes of 4 CPUs, 8Gi and 110
// pods unless told otherwise.

// cpuPod is a web pod name on node requesting cpu, with more of its spec.
func cpuPod(name, node, cpu, more string) string {
	return fpod(name, node, "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "`+cpu+`", memory: 1Gi}}}]`+more, 5)
}

func capacityOf(t *testing.T, s *view.Snapshot, nodes ...string) *CapacityReport {
	t.Helper()
	r, err := Capacity(s, nodes, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// capacityKeys are "verdict reason Kind ns/name" of r's causes.
func capacityKeys(r *CapacityReport) []string {
	return causeKeys(&Forecast{Causes: r.Causes})
}

const gi = 1 << 30

// TestCapacityFits: the pods to move from n1 and n2 (3 CPUs each) fit on
// no single node, but spread over n3, n4 and n5 they all do. The DaemonSet,
// finished and controller-less pods of the set are not moved; n6 is
// cordoned and takes nothing.
func TestCapacityFits(t *testing.T) {
	nodes := threeNodes + fnode("n4", "", "") + fnode("n5", "", "") + fnode("n6", "", ", spec: {unschedulable: true}")
	pods := cpuPod("p", "n1", "3", "") + cpuPod("q", "n1", "3", "") + cpuPod("r", "n2", "3", "") +
		strings.Replace(cpuPod("done", "n1", "3", ""), "phase: Running", "phase: Succeeded", 1) +
		ownedPod("agent-1", "n1", "agent", "DaemonSet", "agent", "ds-agent") + other("bare", "n2", "app: bare", "") +
		other("busy", "n3", "app: x", `, containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]`)
	s := fbuild(t, nodes, map[string]string{"pods": pods, "daemonSets": "\n- {metadata: {name: agent, namespace: ns, uid: ds-agent}}"})
	got := capacityOf(t, s, "n2", "n1", "n2")
	want := &CapacityReport{
		Verdict: VerdictOK, Nodes: []string{"n1", "n2"}, Pods: 3, Schedulable: 3,
		Demand: Resources{MilliCPU: 9000, Memory: 3 * gi, Pods: 3},
		// n3: 3 CPUs, 6Gi and 109 pods; n4, n5: 4 CPUs, 8Gi, 110 pods
		Free: &Resources{MilliCPU: 11000, Memory: 22 * gi, Pods: 329},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
}

// TestCapacityFree: what is free is clamped at 0 on each node (n2's pods
// request more than it has), and unknown, absent, when a node outside the
// set has no allocatable (n4; n3 takes the pod all the same).
func TestCapacityFree(t *testing.T) {
	over := other("busy", "n2", "app: x", `, containers: [{name: c, image: i, resources: {requests: {cpu: "5", memory: 9Gi}}}]`)
	for name, tc := range map[string]struct {
		nodes string
		want  *Resources
	}{
		"clamped":        {nodes: threeNodes, want: &Resources{MilliCPU: 4000, Memory: 8 * gi, Pods: 219}},
		"no allocatable": {nodes: threeNodes + fnode("n4", "", ", status: {}")},
	} {
		t.Run(name, func(t *testing.T) {
			got := capacityOf(t, fbuild(t, tc.nodes, map[string]string{"pods": fpod("p", "n1", "", "", 5) + over}), "n1")
			if diff := cmp.Diff(tc.want, got.Free); diff != "" || got.Verdict != VerdictOK {
				t.Errorf("verdict %s, free (-want +got):\n%s", got.Verdict, diff)
			}
		})
	}
}

// TestCapacityInsufficient: each pod to move fits alone, but together they
// request more CPU than the nodes outside the set have free: never, the
// numbers in the message. A cordoned node outside the set is not counted.
func TestCapacityInsufficient(t *testing.T) {
	nodes := threeNodes + fnode("n4", "", "") + fnode("n5", "", ", spec: {unschedulable: true}")
	pods := cpuPod("p", "n1", "3", "") + cpuPod("q", "n1", "3", "") + cpuPod("r", "n2", "3", "")
	got := capacityOf(t, fbuild(t, nodes, map[string]string{"pods": pods}), "n1", "n2")
	want := &CapacityReport{
		Verdict: VerdictNever, Nodes: []string{"n1", "n2"}, Pods: 3, Schedulable: 2,
		Demand: Resources{MilliCPU: 9000, Memory: 3 * gi, Pods: 3},
		Free:   &Resources{MilliCPU: 8000, Memory: 16 * gi, Pods: 220},
		Causes: []ForecastCause{{Verdict: VerdictNever, Reason: ReasonNoCapacity, Subject: Subject{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "d-web"},
			Message: "the replacement of pod r does not fit: the 3 pods to move request 9000m cpu and the 2 schedulable nodes outside the set have 8000m free in all"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
}

// TestCapacityUnschedulable: a pod whose node selector only nodes of the
// set match cannot move, though each node's own forecast places it on the
// other.
func TestCapacityUnschedulable(t *testing.T) {
	nodes := fnode("n1", "disk: ssd", "") + fnode("n2", "disk: ssd", "") + fnode("n3", "", "") + fnode("n4", "disk: hdd", "")
	s := fbuild(t, nodes, map[string]string{"pods": fpod("p", "n1", "", ", nodeSelector: {disk: ssd}", 5) + fpod("q", "n3", "", "", 5)})
	got := capacityOf(t, s, "n1", "n2")
	if diff := cmp.Diff([]string{webNever}, capacityKeys(got)); diff != "" {
		t.Fatalf("causes (-want +got):\n%s", diff)
	}
	want := "the replacement of pod p cannot run on any node outside the set: none of the 2 schedulable nodes outside the set takes it (2 nodes: node selector)"
	if got.Verdict != VerdictNever || got.Causes[0].Message != want {
		t.Errorf("verdict %s, message %q; want never, %q", got.Verdict, got.Causes[0].Message, want)
	}
	if f := forecastOf(t, s, ForecastOptions{}); f.Verdict != VerdictOK {
		t.Errorf("n1's own forecast is %s, want ok (n2 takes p): %+v", f.Verdict, f.Causes)
	}
}

// TestCapacitySpread: DoNotSchedule topology spread of web on the hostname,
// maxSkew 1, the set n1 and n2. The replacements are placed one after the
// other, each counting those placed before it.
func TestCapacitySpread(t *testing.T) {
	honor := spreadWeb(", nodeTaintsPolicy: Honor")
	// n3 and n4 are the only domains under Honor (the set is cordoned);
	// n4 takes one pod more.
	small := fnode("n4", "", `, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "1"}}`)
	for name, tc := range map[string]struct {
		nodes, pods string
		want        []string
		why         string
	}{
		// a to n3, b to n4 (n3 would be 2 over 0), c to n3 (2 over 1).
		"Honor: the replacements take turns": {nodes: threeNodes + small,
			pods: fpod("a", "n1", "", honor, 5) + fpod("b", "n1", "", honor, 5) + fpod("c", "n2", "", honor, 5), want: []string{}},
		// d would make n3 3 over n4's 1, and n4 is full: it fits alone,
		// not after a, b and c.
		"Honor: the fourth sees the three before it": {nodes: threeNodes + small,
			pods: fpod("a", "n1", "", honor, 5) + fpod("b", "n1", "", honor, 5) + fpod("c", "n2", "", honor, 5) + fpod("d", "n2", "", honor, 5),
			want: []string{"unknown first-fit Deployment ns/web"}, why: "the replacement of pod d fits on a node outside the set alone, but not after the replacements placed before it (first fit, the set's nodes by name, each in pod order)"},
		// Under the default Ignore the set's nodes stay domains, their
		// counts falling as their pods go: one pod per node has no place.
		"Ignore: the set's nodes stay domains": {nodes: threeNodes + fnode("n4", "", ""),
			pods: fpod("a", "n1", "", spreadWeb(""), 5) + fpod("b", "n2", "", spreadWeb(""), 5) + fpod("c", "n3", "", "", 5) + fpod("d", "n4", "", "", 5),
			want: []string{webNever}, why: "the replacement of pod a (and of 1 more of Deployment web) cannot run on any node outside the set: none of the 2 schedulable nodes outside the set takes it (2 nodes: topology spread (maxSkew 1))"},
	} {
		t.Run(name, func(t *testing.T) {
			got := capacityOf(t, fbuild(t, tc.nodes, map[string]string{"pods": tc.pods}), "n1", "n2")
			if diff := cmp.Diff(tc.want, capacityKeys(got)); diff != "" {
				t.Errorf("causes (-want +got):\n%s\n%+v", diff, got.Causes)
			}
			if tc.why != "" && (len(got.Causes) == 0 || !strings.Contains(got.Causes[0].Message, tc.why)) {
				t.Errorf("first cause does not say %q: %+v", tc.why, got.Causes)
			}
		})
	}
}

// TestCapacityWholeCluster: a set of every node leaves nowhere to go.
func TestCapacityWholeCluster(t *testing.T) {
	got := capacityOf(t, fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n1", "", "", 5) + fpod("q", "n3", "", "", 5)}), "n1", "n2", "n3")
	want := &CapacityReport{
		Verdict: VerdictNever, Nodes: []string{"n1", "n2", "n3"}, Pods: 2, Demand: Resources{Pods: 2}, Free: &Resources{},
		Causes: []ForecastCause{{Verdict: VerdictNever, Reason: ReasonUnschedulable, Subject: Subject{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "d-web"},
			Message: "the replacement of pod p (and of 1 more of Deployment web) cannot run on any node outside the set: no schedulable node outside the set"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
}

// TestCapacityErrors: an empty set, a node not in the snapshot and a bad
// snapshot are errors.
func TestCapacityErrors(t *testing.T) {
	s := fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n1", "", "", 5)})
	for name, tc := range map[string]struct {
		nodes []string
		want  string
	}{
		"empty":        {nil, "the set of nodes is empty"},
		"unknown node": {[]string{"n1", "nope"}, `node "nope" is not in the snapshot`},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Capacity(s, tc.nodes, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || r != nil {
				t.Errorf("Capacity(%q) = %v, %v; want an error saying %q", tc.nodes, r, err, tc.want)
			}
		})
	}
	bad := fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n9", "", "", 5)})
	if _, err := Capacity(bad, []string{"n1"}, Options{}); err == nil || !strings.Contains(err.Error(), "n9") {
		t.Errorf("a pod on a node not in the snapshot: err %v, want one naming n9", err)
	}
}

// TestCapacityScoped: a node-scoped snapshot holds no other node: unknown,
// free unknown; with nothing to move, ok.
func TestCapacityScoped(t *testing.T) {
	s := fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n1", "", "", 5)})
	s.Metadata.Scope.Nodes = []string{"n1", "n2"}
	got := capacityOf(t, s, "n1")
	want := &CapacityReport{
		Verdict: VerdictUnknown, Nodes: []string{"n1"}, Pods: 1, Demand: Resources{Pods: 1},
		Causes: []ForecastCause{{Verdict: VerdictUnknown, Reason: ReasonNodesOutOfScope, Subject: Subject{Kind: "Snapshot", Name: "2026-11-29T12:00:00Z"},
			Message: "the snapshot is scoped to its nodes (k8s-snapshot --node): where the 1 pods to move can run cannot be judged without the other nodes and their pods; take a whole-cluster snapshot"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if got := capacityOf(t, s, "n2"); got.Verdict != VerdictOK || got.Pods != 0 {
		t.Errorf("nothing to move: verdict %s, %d pods; want ok, 0", got.Verdict, got.Pods)
	}
}

// TestCapacityLeavesSnapshot: Capacity changes nothing of the snapshot
// (maintd passes a view of its caches), set nodes' cordon included, nor the
// order of the nodes it is given.
func TestCapacityLeavesSnapshot(t *testing.T) {
	text := func() *view.Snapshot {
		return fbuild(t, threeNodes+fnode("n4", "", ""), map[string]string{"pods": cpuPod("a", "n1", "1", spreadWeb("")) + cpuPod("b", "n2", "1", antiWeb) +
			fpod("c", "n3", "", "", 5) + fpod("d", "n4", "", "", 5)})
	}
	s, before := text(), text()
	for _, set := range [][]string{{"n2", "n1"}, {"n2"}, {"n4", "n1", "n3", "n2"}} {
		given := slices.Clone(set)
		if _, err := Capacity(s, set, Options{Surge: true}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(given, set) {
			t.Errorf("Capacity reordered its nodes %q to %q", given, set)
		}
	}
	if diff := cmp.Diff(before, s); diff != "" {
		t.Errorf("the snapshot changed (-before +after):\n%s", diff)
	}
}

// TestCapacitySurge: a pod whose budget never allows its eviction is moved
// all the same, with or without a surge (the surge pod is placed instead of
// the replacement, as in the forecast).
func TestCapacitySurge(t *testing.T) {
	extra := merge(app("api", 1, ""), map[string]string{"pods": ownedPod("p", "n1", "api", "ReplicaSet", "api-1", "rs-api"),
		"podDisruptionBudgets": zeroPDB("api", "api", "minAvailable: 1", 1)})
	s := fbuild(t, threeNodes, extra)
	for _, surge := range []bool{false, true} {
		r, err := Capacity(s, []string{"n1", "n2"}, Options{Surge: surge})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != VerdictOK || r.Pods != 1 {
			t.Errorf("surge %t: verdict %s, %d pods; want ok, 1", surge, r.Verdict, r.Pods)
		}
	}
}

// TestCapacityCausesBounded: at most MaxCapacityCauses causes, never first;
// the others counted.
func TestCapacityCausesBounded(t *testing.T) {
	var pods strings.Builder
	apps := []map[string]string{}
	for i := range MaxCapacityCauses + 2 {
		name := fmt.Sprintf("app%02d", i)
		apps = append(apps, app(name, 1, ""))
		spec := ", nodeSelector: {disk: none}"
		if i%2 == 0 {
			spec = ", containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 80}]}]"
		}
		pod := strings.NewReplacer("app: web", "app: "+name, "name: web-1, uid: rs-web", "name: "+name+"-1, uid: rs-"+name).Replace(fpod(name, "n1", "", spec, 5))
		pods.WriteString(pod)
	}
	extra := merge(append(apps, map[string]string{"pods": pods.String()})...)
	got := capacityOf(t, fbuild(t, threeNodes, extra), "n1")
	if got.Verdict != VerdictNever || len(got.Causes) != MaxCapacityCauses || got.OmittedCauses != 2 {
		t.Fatalf("verdict %s, %d causes, %d omitted; want never, %d, 2", got.Verdict, len(got.Causes), got.OmittedCauses, MaxCapacityCauses)
	}
	never := slices.IndexFunc(got.Causes, func(c ForecastCause) bool { return c.Verdict != VerdictNever })
	if never != MaxCapacityCauses/2+1 {
		t.Errorf("the first unknown cause is the %dth, want the %dth: %v", never, MaxCapacityCauses/2+1, capacityKeys(got))
	}
}

// TestCapacityOfOneNode: the capacity of a set of one node judges its
// replacements as the node's forecast does: the same placement causes, on
// generated clusters with spread and anti-affinity on every pod, some nodes
// short of room for pods.
func TestCapacityOfOneNode(t *testing.T) {
	placement := []string{ReasonUnschedulable, ReasonNoCapacity, ReasonFirstFit, ReasonNotModelled, ReasonNodeStatus, ReasonNodesOutOfScope}
	reasons := map[string]int{}
	for _, nodes := range []int{6, 10, 16} {
		raw := bench.Generate(bench.Size{Nodes: nodes, Namespaces: 3, DeploymentsPerNamespace: 5, Replicas: 12})
		bench.Constrain(raw)
		for i := range raw.Nodes {
			if i%2 == 1 {
				raw.Nodes[i].Status.Allocatable[corev1.ResourcePods] = resource.MustParse(fmt.Sprint(300 / nodes))
			}
		}
		s := view.Of(raw)
		r, err := Analyze(s, Options{Forecast: &ForecastOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range r.Nodes {
			f := &Forecast{}
			for _, c := range n.Forecast.Causes {
				if slices.Contains(placement, c.Reason) {
					f.Causes = append(f.Causes, c)
				}
			}
			c := capacityOf(t, s, n.Name)
			if diff := cmp.Diff(causeKeys(f), capacityKeys(c)); diff != "" {
				t.Errorf("%d nodes, node %s: capacity's causes (-forecast +capacity):\n%s", nodes, n.Name, diff)
			}
			reasons[string(c.Verdict)]++
			for _, c := range c.Causes {
				reasons[c.Reason]++
			}
		}
	}
	t.Logf("%v", reasons)
	for _, want := range []string{"ok", "never", ReasonUnschedulable, ReasonFirstFit} {
		if reasons[want] == 0 {
			t.Errorf("verdicts and reasons %v: want some %s", reasons, want)
		}
	}
}

// TestCapacityCountsOnlyWhereThePodsMayGo: the room that counts is on the
// nodes the pods to move may go to. Two pods of 3 CPUs pinned to pool a
// leave n1; n2 (pool a, 4 CPUs) takes one; n4 has 64 CPUs free but is not
// in pool a: the verdict is never, insufficient-capacity, naming n2's room
// alone (counted over every node, the room of n4 made it an unknown
// first fit).
func TestCapacityCountsOnlyWhereThePodsMayGo(t *testing.T) {
	nodes := fnode("n1", "pool: a", "") + fnode("n2", "pool: a", "") + fnode("n4", "", `, status: {allocatable: {cpu: "64", memory: 64Gi, pods: "110"}}`)
	pinned := ", nodeSelector: {pool: a}"
	pods := cpuPod("p", "n1", "3", pinned) + cpuPod("q", "n1", "3", pinned)
	got := capacityOf(t, fbuild(t, nodes, map[string]string{"pods": pods}), "n1")
	if got.Verdict != VerdictNever || len(got.Causes) != 1 || got.Causes[0].Reason != ReasonNoCapacity ||
		!strings.Contains(got.Causes[0].Message, "the 2 pods to move request 6000m cpu and the 1 schedulable node outside the set has 4000m free in all") {
		t.Errorf("capacity: %s %+v", got.Verdict, got.Causes)
	}
}
