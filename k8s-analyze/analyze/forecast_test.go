package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
)

func TestQuantile(t *testing.T) {
	s := func(secs ...int) []time.Duration {
		out := make([]time.Duration, len(secs))
		for i, v := range secs {
			out[i] = time.Duration(v) * time.Second
		}
		return out
	}
	for name, tc := range map[string]struct {
		sorted   []time.Duration
		p50, p90 time.Duration
	}{
		"none":        {nil, 0, 0},
		"one":         {s(7), 7 * time.Second, 7 * time.Second},
		"three":       {s(1, 2, 9), 2 * time.Second, 9 * time.Second},
		"four":        {s(1, 2, 3, 4), 2 * time.Second, 4 * time.Second},
		"ten":         {s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 5 * time.Second, 9 * time.Second},
		"eleven":      {s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 6 * time.Second, 10 * time.Second},
		"twenty, p90": {s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 10 * time.Second, 18 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			got := [2]time.Duration{quantile(tc.sorted, medianPercent), quantile(tc.sorted, upperPercent)}
			if diff := cmp.Diff([2]time.Duration{tc.p50, tc.p90}, got); diff != "" {
				t.Errorf("p50, p90 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSimulate: the rounds, the concurrency, refills and a budget that never
// refills, on items built by hand (grace 10s, time to Ready 20s at p50 and
// 40s at p90): a StatefulSet's pods, whose replacements start once they
// are gone, and a ReplicaSet's (rs), whose replacements start at once.
func TestSimulate(t *testing.T) {
	rd := &readiness{p50: 20 * time.Second, p90: 40 * time.Second}
	items := func(n, group int, refills bool) []item {
		out := make([]item, n)
		for i := range out {
			out[i] = item{grace: 10 * time.Second, ready: rd, group: group, refills: refills, afterExit: true}
		}
		return out
	}
	rs := func(items []item) []item {
		for i := range items {
			items[i].afterExit = false
		}
		return items
	}
	budget := func(allowance, refill int) group { return group{allowance: allowance, refill: refill} }
	workload := group{allowance: -1}
	for name, tc := range map[string]struct {
		items       []item
		groups      []group
		concurrency int
		end         time.Duration // at p50
		end90       time.Duration
		stuck       int
	}{
		"no budget: one round, the grace": {items: items(3, 0, true), groups: []group{workload}, concurrency: 50, end: 10 * time.Second, end90: 10 * time.Second, stuck: -1},
		"budget of 1, 3 pods: 2 waits of grace+ready, then the grace": {items: items(3, 0, true), groups: []group{budget(1, 0)}, concurrency: 50,
			end: 2*30*time.Second + 10*time.Second, end90: 2*50*time.Second + 10*time.Second, stuck: -1},
		"rs, budget of 1, 3 pods: 2 waits of ready, then the grace": {items: rs(items(3, 0, true)), groups: []group{budget(1, 0)}, concurrency: 50,
			end: 2*20*time.Second + 10*time.Second, end90: 2*40*time.Second + 10*time.Second, stuck: -1},
		"rs, budget of 2, 3 pods: one wait of ready":  {items: rs(items(3, 0, true)), groups: []group{budget(2, 0)}, concurrency: 50, end: 30 * time.Second, end90: 50 * time.Second, stuck: -1},
		"budget of 2, 3 pods: one wait":               {items: items(3, 0, true), groups: []group{budget(2, 0)}, concurrency: 50, end: 40 * time.Second, end90: 60 * time.Second, stuck: -1},
		"concurrency 2, 5 pods: 3 waves of the grace": {items: items(5, 0, true), groups: []group{workload}, concurrency: 2, end: 30 * time.Second, end90: 30 * time.Second, stuck: -1},
		"exhausted budget assumed to refill after one time to Ready": {items: items(2, 0, true), groups: []group{budget(0, 1)}, concurrency: 50,
			end: 20*time.Second + 30*time.Second + 10*time.Second, end90: 40*time.Second + 50*time.Second + 10*time.Second, stuck: -1},
		"pods nothing replaces go last, after the others' refills": {items: append(items(1, 0, false), items(2, 0, true)...), groups: []group{budget(1, 0)}, concurrency: 50,
			end: 2*30*time.Second + 10*time.Second, end90: 2*50*time.Second + 10*time.Second, stuck: -1},
		"two pods nothing replaces, budget of 1: stuck": {items: items(2, 0, false), groups: []group{budget(1, 0)}, concurrency: 50, stuck: 0},
		// One slot: the budget's first pod, then the free pod while the
		// budget refills, then the budget's second (the free pod first
		// would end at 50s).
		"the longer budget first": {items: append(items(1, 0, true), items(2, 1, true)...), groups: []group{workload, budget(1, 0)}, concurrency: 1,
			end: 30*time.Second + 10*time.Second, end90: 50*time.Second + 10*time.Second, stuck: -1},
	} {
		t.Run(name, func(t *testing.T) {
			for g := range tc.groups {
				tc.groups[g].items = nil
			}
			for i, it := range tc.items {
				tc.groups[it.group].items = append(tc.groups[it.group].items, i)
			}
			grace := func(it *item) time.Duration { return it.grace }
			r := simulate(tc.items, tc.groups, tc.concurrency, func(r *readiness) time.Duration { return r.p50 }, grace)
			r90 := simulate(tc.items, tc.groups, tc.concurrency, func(r *readiness) time.Duration { return r.p90 }, grace)
			got := [3]any{r.end, r90.end, r.stuck}
			want := [3]any{tc.end, tc.end90, tc.stuck}
			if tc.stuck >= 0 {
				got[0], got[1] = tc.end, tc.end90
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("end at p50, at p90, stuck group (-want +got):\n%s", diff)
			}
		})
	}
}

// The forecast tests' cluster: Deployment web (ReplicaSet web-1) in
// namespace ns, on nodes of 4 CPUs, 8Gi and 110 pods unless told otherwise.

// fnode is a node named name with extra labels and spec/status fields.
func fnode(name, labels, rest string) string {
	if labels != "" {
		labels = ", " + labels
	}
	if !strings.Contains(rest, "status:") {
		rest += `, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}`
	}
	return fmt.Sprintf("\n- {metadata: {name: %s, uid: node-%s, labels: {kubernetes.io/hostname: %s%s}}%s}", name, name, name, labels, rest)
}

// threeNodes are n1, n2 and n3 of the default size.
var threeNodes = fnode("n1", "", "") + fnode("n2", "", "") + fnode("n3", "", "")

// fpod is a Ready pod of web on node: spec and labels added; it was
// scheduled at 11:00 and Ready `ready` seconds later.
func fpod(name, node, labels, spec string, ready int) string {
	if labels != "" {
		labels = ", " + labels
	}
	if !strings.Contains(spec, "containers:") {
		spec = ", containers: [{name: c, image: i}]" + spec
	}
	return fmt.Sprintf(`
- {metadata: {name: %s, namespace: ns, uid: pod-%s, labels: {app: web%s}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: rs-web, controller: true}]},
   spec: {nodeName: %s%s},
   status: {phase: Running, conditions: [{type: PodScheduled, status: "True", lastTransitionTime: "2026-11-29T11:00:00Z"}, {type: Ready, status: "True", lastTransitionTime: "%s"}]}}`,
		name, name, labels, node, spec, time.Date(2026, 11, 29, 11, 0, ready, 0, time.UTC).Format(time.RFC3339))
}

// other is a pod of another app (labels given) on node.
func other(name, node, labels, spec string) string {
	if !strings.Contains(spec, "containers:") {
		spec = ", containers: [{name: c, image: i}]" + spec
	}
	return fmt.Sprintf(`
- {metadata: {name: %s, namespace: ns, uid: pod-%s, labels: {%s}}, spec: {nodeName: %s%s}, status: {phase: Running}}`, name, name, labels, node, spec)
}

// fbuild is a snapshot of nodes and sections, with web's Deployment and
// ReplicaSet.
func fbuild(t *testing.T, nodes string, extra map[string]string) *view.Snapshot {
	t.Helper()
	doc := fdoc(nodes, extra)
	snap, err := decode.Snapshot(doc)
	if err != nil {
		t.Fatalf("bad test snapshot: %v\n%s", err, doc)
	}
	return snap
}

// fdoc is fbuild's Snapshot document.
func fdoc(nodes string, extra map[string]string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: sentinel.dev/v1alpha1\nkind: Snapshot\nmetadata: {capturedAt: \"2026-11-29T12:00:00Z\", consistent: true}\nnodes:" + nodes + "\n")
	for _, s := range sections[1:] {
		items := extra[s]
		if s == "deployments" || s == "replicaSets" {
			items = base[s] + items
		}
		if items != "" {
			b.WriteString(s + ":" + items + "\n")
		}
	}
	return []byte(b.String())
}

// forecastOf is the forecast of n1.
func forecastOf(t *testing.T, s *view.Snapshot, opts ForecastOptions) *Forecast {
	t.Helper()
	r, err := Analyze(s, Options{Nodes: []string{"n1"}, Forecast: &opts})
	if err != nil {
		t.Fatal(err)
	}
	return r.Nodes[0].Forecast
}

// causeKeys are "verdict reason Kind ns/name" of f's causes.
func causeKeys(f *Forecast) []string {
	out := []string{}
	for _, c := range f.Causes {
		out = append(out, fmt.Sprintf("%s %s %s %s", c.Verdict, c.Reason, c.Subject.Kind, name(c.Subject.Namespace, c.Subject.Name)))
	}
	return out
}

const webNever = "never replacement-unschedulable Deployment ns/web"

// placementCase is a cluster of TestPlacement: nodes, pods and more
// sections; the causes of n1's forecast, and what the first says.
type placementCase struct {
	nodes string
	pods  string
	more  map[string]string
	want  []string // cause keys
	why   string   // in the first cause's message
}

// doc is the case's Snapshot document.
func (tc placementCase) doc() []byte {
	extra := map[string]string{"pods": tc.pods}
	for k, v := range tc.more {
		extra[k] = v
	}
	return fdoc(tc.nodes, extra)
}

// placementCases are TestPlacement's: every constraint of the placement
// model, met (ok), not met anywhere (never, with the cause), and one it
// cannot judge (unknown, never never). Pod p is on n1, the drained node.
var placementCases = map[string]placementCase{
	"no constraint":       {nodes: threeNodes, pods: fpod("p", "n1", "", "", 5), want: []string{}},
	"no other node":       {nodes: fnode("n1", "", ""), pods: fpod("p", "n1", "", "", 5), want: []string{webNever}, why: "no other schedulable node in the snapshot"},
	"cordoned nodes":      {nodes: fnode("n1", "", "") + fnode("n2", "", ", spec: {unschedulable: true}"), pods: fpod("p", "n1", "", "", 5), want: []string{webNever}},
	"node selector met":   {nodes: fnode("n1", "disk: ssd", "") + fnode("n2", "", "") + fnode("n3", "disk: ssd", ""), pods: fpod("p", "n1", "", ", nodeSelector: {disk: ssd}", 5), want: []string{}},
	"node selector unmet": {nodes: fnode("n1", "disk: ssd", "") + fnode("n2", "", "") + fnode("n3", "disk: hdd", ""), pods: fpod("p", "n1", "", ", nodeSelector: {disk: ssd}", 5), want: []string{webNever}, why: "2 nodes: node selector"},
	"affinity In, NotIn, Exists, DoesNotExist, Gt, Lt met": {nodes: threeNodes[:0] + fnode("n1", "", "") + fnode("n2", `zone: a, gen: "5", gpu: "no"`, "") + fnode("n3", `zone: a, gen: "5", gpu: "no", old: "yes"`, ""),
		pods: fpod("p", "n1", "", `, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [
				{key: zone, operator: In, values: [a, b]}, {key: gpu, operator: NotIn, values: ["yes"]}, {key: gen, operator: Exists}, {key: old, operator: DoesNotExist},
				{key: gen, operator: Gt, values: ["4"]}, {key: gen, operator: Lt, values: ["6"]}]}]}}}`, 5), want: []string{}},
	"affinity Gt unmet": {nodes: fnode("n1", "", "") + fnode("n2", `gen: "3"`, "") + fnode("n3", `gen: x`, ""),
		pods: fpod("p", "n1", "", `, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: gen, operator: Gt, values: ["4"]}]}]}}}`, 5),
		want: []string{webNever}, why: "node selector or required node affinity"},
	"affinity terms are ORed; matchFields on the name": {nodes: threeNodes,
		pods: fpod("p", "n1", "", `, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: nope, operator: Exists}]}, {matchFields: [{key: metadata.name, operator: In, values: [n3]}]}]}}}`, 5),
		want: []string{}},
	"matchFields: only the drained node": {nodes: threeNodes,
		pods: fpod("p", "n1", "", `, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]}}}`, 5),
		want: []string{webNever}},
	"taints not tolerated": {nodes: fnode("n1", "", "") + fnode("n2", "", ", spec: {taints: [{key: dedicated, value: db, effect: NoSchedule}]}") + fnode("n3", "", ", spec: {taints: [{key: gone, effect: NoExecute}]}"),
		pods: fpod("p", "n1", "", "", 5), want: []string{webNever}, why: "1 node: taint dedicated=db:NoSchedule not tolerated; 1 node: taint gone:NoExecute not tolerated"},
	"taint tolerated, PreferNoSchedule ignored": {nodes: fnode("n1", "", "") + fnode("n2", "", ", spec: {taints: [{key: dedicated, value: db, effect: NoSchedule}]}") + fnode("n3", "", ", spec: {taints: [{key: soft, effect: PreferNoSchedule}]}"),
		pods: fpod("p", "n1", "", ", tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}]", 5), want: []string{}},
	"taint tolerated only by a Gt toleration: unknown": {nodes: fnode("n1", "", "") + fnode("n2", "", `, spec: {taints: [{key: tier, value: "5", effect: NoSchedule}]}`),
		pods: fpod("p", "n1", "", `, tolerations: [{key: tier, operator: Gt, value: "3", effect: NoSchedule}]`, 5), want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "Lt or Gt toleration"},
	"cpu fits": {nodes: fnode("n1", "", "") + fnode("n2", "", "") + fnode("n3", "", ""), pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "4"}}}]`, 5), want: []string{}},
	"cpu too much": {nodes: threeNodes, pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "4"}}}]`, 5) + other("busy", "n2", "app: x", `, containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]`) + other("busy2", "n3", "app: x", `, containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]`),
		want: []string{webNever}, why: "2 nodes: insufficient cpu"},
	"memory too much": {nodes: threeNodes, pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {memory: 9Gi}}}]`, 5), want: []string{webNever}, why: "insufficient memory"},
	"too many pods": {nodes: fnode("n1", "", "") + fnode("n2", "", `, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "1"}}`), pods: fpod("p", "n1", "", "", 5) + other("x", "n2", "app: x", ""),
		want: []string{webNever}, why: "too many pods"},
	"terminal pods take no room": {nodes: fnode("n1", "", "") + fnode("n2", "", `, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "1"}}`),
		pods: fpod("p", "n1", "", "", 5) + strings.Replace(other("x", "n2", "app: x", ""), "phase: Running", "phase: Succeeded", 1), want: []string{}},
	"no allocatable: unknown": {nodes: fnode("n1", "", "") + fnode("n2", "", ", status: {}"), pods: fpod("p", "n1", "", "", 5), want: []string{"unknown node-allocatable-missing Deployment ns/web"}},
	"replacements add up (first fit), and fit": {nodes: threeNodes,
		pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]`, 5) + fpod("q", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]`, 5), want: []string{}},
	"replacements add up beyond what is free": {nodes: fnode("n1", "", "") + fnode("n2", "", ""),
		pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]`, 5) + fpod("q", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]`, 5),
		want: []string{"never insufficient-capacity Deployment ns/web"}, why: "request 6000m cpu and the other schedulable nodes have 4000m free"},
	"first fit fails where another placement fits: unknown": {nodes: fnode("n1", "", "") + fnode("n2", "", "") + fnode("n3", "", `, status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}`),
		pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]`, 5) + fpod("q", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]`, 5),
		want: []string{"unknown first-fit Deployment ns/web"}},
	"anti-affinity met": {nodes: threeNodes, pods: fpod("p", "n1", "", antiWeb, 5) + fpod("q", "n2", "", "", 5), want: []string{}},
	"anti-affinity unmet": {nodes: threeNodes, pods: fpod("p", "n1", "", antiWeb, 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5),
		want: []string{webNever}, why: "2 nodes: pod anti-affinity"},
	"anti-affinity of the pods already there": {nodes: threeNodes, pods: fpod("p", "n1", "", "", 5) + other("x", "n2", "app: x", antiWeb) + other("z", "n3", "app: z", antiWeb),
		want: []string{webNever}, why: "pod anti-affinity of pod ns/x"},
	"anti-affinity on the zone: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", strings.Replace(antiWeb, "kubernetes.io/hostname", "topology.kubernetes.io/zone", 1), 5),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "required pod anti-affinity on topology key topology.kubernetes.io/zone"},
	"another pod's anti-affinity on the zone: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", "", 5) + other("x", "n3", "app: x", strings.Replace(antiWeb, "kubernetes.io/hostname", "topology.kubernetes.io/zone", 1)),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "anti-affinity of pod ns/x"},
	"anti-affinity by namespaceSelector: unknown": {nodes: fnode("n1", "", "") + fnode("n2", "", ""), pods: fpod("p", "n1", "", strings.Replace(antiWeb, "topologyKey:", "namespaceSelector: {matchLabels: {team: a}}, topologyKey:", 1), 5) + strings.Replace(other("q", "n2", "app: web", ""), "namespace: ns", "namespace: other", 1),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "namespaceSelector"},
	"unjudged pod affinity, but no node has the cpu: never": {nodes: threeNodes,
		pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {cpu: "5"}}}], affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}`, 5),
		want: []string{webNever}},
	"pod affinity: unknown": {nodes: threeNodes,
		pods: fpod("p", "n1", "", `, affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}`, 5),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "required pod affinity"},
	// n1 is drained: under the default nodeTaintsPolicy Ignore it stays
	// a domain, and its count drops to 0 with p gone.
	"spread on the hostname, the drained node still a domain": {nodes: threeNodes, pods: fpod("p", "n1", "", spreadWeb(""), 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5),
		want: []string{webNever}, why: "2 nodes: topology spread (maxSkew 1)"},
	"spread, nodeTaintsPolicy Honor: the cordoned node is no domain": {nodes: threeNodes, pods: fpod("p", "n1", "", spreadWeb(", nodeTaintsPolicy: Honor"), 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5), want: []string{}},
	"spread met": {nodes: threeNodes, pods: fpod("p", "n1", "", spreadWeb(""), 5) + fpod("q", "n2", "", "", 5), want: []string{}},
	"spread, minDomains above the domains": {nodes: fnode("n1", "", "") + fnode("n2", "", ""), pods: fpod("p", "n1", "", spreadWeb(", minDomains: 3, nodeTaintsPolicy: Honor"), 5) + fpod("q", "n2", "", "", 5),
		want: []string{webNever}, why: "topology spread"},
	"spread ScheduleAnyway is no constraint": {nodes: threeNodes, pods: fpod("p", "n1", "", strings.Replace(spreadWeb(""), "DoNotSchedule", "ScheduleAnyway", 1), 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5), want: []string{}},
	"spread on the zone: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", strings.Replace(spreadWeb(""), "kubernetes.io/hostname", "topology.kubernetes.io/zone", 1), 5),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "topology spread on topology key topology.kubernetes.io/zone"},
	"hostPort: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", ", containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 8080}]}]", 5),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "hostPort 8080/TCP"},
	"volume with node affinity: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]", 5),
		more: map[string]string{"persistentVolumeClaims": "\n- {metadata: {name: data, namespace: ns, uid: pvc-1}, spec: {accessModes: [ReadWriteMany], volumeName: pv-1}}",
			"persistentVolumes": "\n- {metadata: {name: pv-1, uid: pv-1}, spec: {accessModes: [ReadWriteMany], csi: {driver: d, volumeHandle: h}, nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}}"},
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "volume topology of PersistentVolume pv-1"},
	"volume without topology": {nodes: threeNodes, pods: fpod("p", "n1", "", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]", 5),
		more: map[string]string{"persistentVolumeClaims": "\n- {metadata: {name: data, namespace: ns, uid: pvc-1}, spec: {accessModes: [ReadWriteMany], volumeName: pv-1}}",
			"persistentVolumes": "\n- {metadata: {name: pv-1, uid: pv-1}, spec: {accessModes: [ReadWriteMany], nfs: {server: s, path: /x}}}"},
		want: []string{}},
	"other resources: unknown": {nodes: threeNodes, pods: fpod("p", "n1", "", `, containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: "1"}}}]`, 5),
		want: []string{"unknown constraint-not-modelled Deployment ns/web"}, why: "requests of nvidia.com/gpu"},
	"a pod nothing re-creates is not placed": {nodes: fnode("n1", "", ""), pods: other("x", "n1", "app: x", ""), want: []string{}},
}

// TestPlacement: placementCases, each judged as it says.
func TestPlacement(t *testing.T) {
	for name, tc := range placementCases {
		t.Run(name, func(t *testing.T) {
			s, err := decode.Snapshot(tc.doc())
			if err != nil {
				t.Fatal(err)
			}
			f := forecastOf(t, s, ForecastOptions{})
			if diff := cmp.Diff(tc.want, causeKeys(f)); diff != "" {
				t.Errorf("causes (-want +got):\n%s\n%+v", diff, f.Causes)
			}
			wantVerdict := VerdictOK
			switch {
			case len(tc.want) > 0 && strings.HasPrefix(tc.want[0], "never"):
				wantVerdict = VerdictNever
			case len(tc.want) > 0:
				wantVerdict = VerdictUnknown
			}
			if f.Verdict != wantVerdict {
				t.Errorf("verdict %s, want %s", f.Verdict, wantVerdict)
			}
			if (f.P50 == nil) != (wantVerdict == VerdictNever) {
				t.Errorf("p50 %v with verdict %s: want it exactly when the verdict is not never", f.P50, f.Verdict)
			}
			if tc.why != "" && (len(f.Causes) == 0 || !strings.Contains(f.Causes[0].Message, tc.why)) {
				t.Errorf("first cause's message does not say %q: %+v", tc.why, f.Causes)
			}
		})
	}
}

// antiWeb is required anti-affinity against app=web on the hostname.
const antiWeb = `, affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}`

// spreadWeb is a DoNotSchedule hostname spread of app=web, maxSkew 1, and
// more fields.
func spreadWeb(more string) string {
	return `, topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}` + more + `}]`
}

// TestForecastRounds: the PDB rounds and the learned times to Ready, through
// the analysis: p50, p90 and the critical path.
func TestForecastRounds(t *testing.T) {
	d := func(s string) metav1.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.Duration{Duration: v}
	}
	pdb := func(allowed int) string {
		return pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", fmt.Sprintf("disruptionsAllowed: %d, currentHealthy: 4, desiredHealthy: 3, expectedPods: 4", allowed))
	}
	// Nothing learned of a pod's exit: the prior, 2s at p50 and the
	// grace (30s, the longest) at p90.
	prior30 := ExitTime{P50: d("2s"), P90: d("30s")}
	// Ready 10s, 20s, 40s and 80s after scheduling: p50 20s, p90 80s.
	four := fpod("p", "n1", "", "", 10) + fpod("q", "n1", "", "", 20) + fpod("r", "n1", "", ", terminationGracePeriodSeconds: 5", 40) + fpod("s", "n2", "", "", 80)
	for name, tc := range map[string]struct {
		pods, pdbs string
		opts       ForecastOptions
		p50, p90   string
		path       *CriticalPath
	}{
		"budget of 1, three pods: three rounds": {pods: four, pdbs: pdb(1),
			// A ReplicaSet starts a replacement as soon as its pod
			// terminates: p, q and r are evicted 20s apart (their
			// replacements' time to Ready at p50, 80s at p90); nothing
			// learned of their exits, each is gone after the prior 2s at
			// p50, after its grace at p90: q (30s) is gone last at p90,
			// 30s after its eviction at 80s.
			p50: "42s", p90: "2m45s",
			path: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 3, RoundTime: d("20s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("1m20s"), Samples: 4}}},
		"budget of 3: one round, the exit": {pods: four, pdbs: pdb(3), p50: "2s", p90: "30s",
			path: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 1, RoundTime: d("20s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("1m20s"), Samples: 4}}},
		"no budget: the workload, one round": {pods: four, p50: "2s", p90: "30s",
			path: &CriticalPath{Kind: "Deployment", Namespace: "ns", Name: "web", Pods: 3, Rounds: 1, RoundTime: d("20s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("1m20s"), Samples: 4}}},
		"no budget, one eviction at a time": {pods: four, opts: ForecastOptions{Concurrency: 1}, p50: "6s", p90: "1m5s",
			path: &CriticalPath{Kind: "Deployment", Namespace: "ns", Name: "web", Pods: 3, Rounds: 3, RoundTime: d("20s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("1m20s"), Samples: 4}}},
		"nothing learned: the default time to Ready": {pods: strings.ReplaceAll(four, `type: PodScheduled, status: "True"`, `type: PodScheduled, status: "False"`), pdbs: pdb(1),
			opts: ForecastOptions{DefaultReady: 45 * time.Second}, p50: "1m32s", p90: "1m35s",
			path: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 3, RoundTime: d("45s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("45s"), P90: d("45s")}}},
		// Watched exits time every pod of the workload (r's grace of 5s
		// too), and watched times to Ready take the place of the pods'
		// own: evictions at 0, 10s and 20s at p50, gone 1s later; at 0,
		// 30s and 60s at p90, gone 4s later.
		"learned: the workload's exits and times to Ready": {pods: four, pdbs: pdb(1),
			opts: ForecastOptions{Learned: map[Workload]Learned{{Kind: "Deployment", Namespace: "ns", Name: "web"}: {
				ExitP50: time.Second, ExitP90: 4 * time.Second, ExitSamples: 5, ReadyP50: 10 * time.Second, ReadyP90: 30 * time.Second, ReadySamples: 6}}},
			p50: "21s", p90: "1m4s",
			path: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 3, RoundTime: d("10s"), Grace: d("30s"),
				Exit:  ExitTime{P50: d("1s"), P90: d("4s"), Samples: 5},
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("10s"), P90: d("30s"), Samples: 6}}},
		// Learned of another workload: web's exits are the prior's.
		"learned of another workload only": {pods: four, pdbs: pdb(3),
			opts: ForecastOptions{Learned: map[Workload]Learned{{Kind: "Deployment", Namespace: "ns", Name: "api"}: {ExitP50: time.Minute, ExitP90: time.Minute, ExitSamples: 3}}},
			p50:  "2s", p90: "30s",
			path: &CriticalPath{Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Pods: 3, Rounds: 1, RoundTime: d("20s"), Grace: d("30s"), Exit: prior30,
				Ready: ReadyTime{Workload: "Deployment ns/web", P50: d("20s"), P90: d("1m20s"), Samples: 4}}},
	} {
		t.Run(name, func(t *testing.T) {
			f := forecastOf(t, fbuild(t, threeNodes, map[string]string{"pods": tc.pods, "podDisruptionBudgets": tc.pdbs}), tc.opts)
			want := &Forecast{Verdict: VerdictOK, P50: ptr(d(tc.p50)), P90: ptr(d(tc.p90)), CriticalPath: tc.path, Pods: 3, Concurrency: cmpOr(tc.opts.Concurrency, DefaultConcurrency)}
			if diff := cmp.Diff(want, f); diff != "" {
				t.Errorf("forecast (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestForecastBudgets: overlapping PDBs and a PDB that can never allow make
// the forecast never; a budget that allows none now, or whose status is
// stale, unknown with an estimate; pods without a controller that the
// budget cannot spare, never.
func TestForecastBudgets(t *testing.T) {
	web := fpod("p", "n1", "", "", 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5)
	one := pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3")
	for name, tc := range map[string]struct {
		pods, pdbs string
		want       []string
		p50        string // "" for none
	}{
		"overlapping PDBs": {pods: web, pdbs: one + pdbYAML("all", "maxUnavailable: 1, selector: {}", "disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3"),
			want: []string{"never pdb-overlap Pod ns/p"}},
		"maxUnavailable 0": {pods: web, pdbs: pdbYAML("web", "maxUnavailable: 0, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 3"),
			want: []string{"never pdb-never-allows PodDisruptionBudget ns/web"}},
		"minAvailable equal to the replicas": {pods: web, pdbs: pdbYAML("web", "minAvailable: 3, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 3"),
			want: []string{"never pdb-never-allows PodDisruptionBudget ns/web"}},
		"a zero-spec PDB the pod goes without (AlwaysAllow, not Ready)": {pods: strings.Replace(web, `type: Ready, status: "True"`, `type: Ready, status: "False"`, 1),
			pdbs: pdbYAML("web", "minAvailable: 3, unhealthyPodEvictionPolicy: AlwaysAllow, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 3, expectedPods: 3"),
			want: []string{}, p50: "2s"},
		"exhausted now": {pods: web, pdbs: pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3"),
			// the refill after one time to Ready (5s), then the exit's
			// prior (2s)
			want: []string{"unknown pdb-exhausted PodDisruptionBudget ns/web"}, p50: "7s"},
		"stale": {pods: web, pdbs: `
- {metadata: {name: web, namespace: ns, uid: pdb-web, generation: 2}, spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}, status: {observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3}}`,
			want: []string{"unknown pdb-stale PodDisruptionBudget ns/web"}, p50: "2s"},
		"pods without a controller the budget cannot spare": {pods: other("x1", "n1", "app: web", "") + other("x2", "n1", "app: web", ""), pdbs: one,
			want: []string{"never pdb-never-refills PodDisruptionBudget ns/web"}},
		"one such pod the budget spares": {pods: other("x", "n1", "app: web", ""), pdbs: one, want: []string{}, p50: "2s"},
	} {
		t.Run(name, func(t *testing.T) {
			pods := strings.ReplaceAll(tc.pods, "phase: Running}", `phase: Running, conditions: [{type: Ready, status: "True"}]}`)
			f := forecastOf(t, fbuild(t, threeNodes, map[string]string{"pods": pods, "podDisruptionBudgets": tc.pdbs}), ForecastOptions{})
			if diff := cmp.Diff(tc.want, causeKeys(f)); diff != "" {
				t.Errorf("causes (-want +got):\n%s\n%+v", diff, f.Causes)
			}
			got := ""
			if f.P50 != nil {
				got = f.P50.Duration.String()
			}
			if got != tc.p50 {
				t.Errorf("p50 = %q, want %q", got, tc.p50)
			}
		})
	}
}

// TestForecastScoped: a node-scoped snapshot cannot tell where replacements
// go: unknown, with no times (nor a critical path), the message naming the
// pipe that gives them; other unknown causes beside it give none either; a
// budget that never refills is never all the same; and a Placement of the
// whole cluster gives the times back.
func TestForecastScoped(t *testing.T) {
	web := fpod("p", "n1", "", "", 5) + fpod("q", "n2", "", "", 5) + fpod("r", "n3", "", "", 5)
	for name, tc := range map[string]struct {
		pods, pdbs string
		placement  bool
		want       []string
		p50        string // "" for none
	}{
		"a replacement to place": {pods: fpod("p", "n1", "", "", 5), want: []string{"unknown nodes-out-of-scope Node n1"}},
		"and an exhausted budget": {pods: web, pdbs: pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3"),
			want: []string{"unknown nodes-out-of-scope Node n1", "unknown pdb-exhausted PodDisruptionBudget ns/web"}},
		"a budget that never refills": {pods: other("x1", "n1", "app: web", "") + other("x2", "n1", "app: web", "") + fpod("p", "n1", "", "", 5),
			pdbs: pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3"),
			want: []string{"never pdb-never-refills PodDisruptionBudget ns/web", "unknown nodes-out-of-scope Node n1"}},
		"nothing to place":                 {pods: other("x", "n1", "app: web", ""), want: []string{}, p50: "2s"},
		"a placement of the whole cluster": {pods: fpod("p", "n1", "", "", 5), placement: true, want: []string{}, p50: "2s"},
	} {
		t.Run(name, func(t *testing.T) {
			pods := strings.ReplaceAll(tc.pods, "phase: Running}", `phase: Running, conditions: [{type: Ready, status: "True"}]}`)
			s := fbuild(t, threeNodes, map[string]string{"pods": pods, "podDisruptionBudgets": tc.pdbs})
			var opts ForecastOptions
			if tc.placement {
				opts.Placement = NewPlacement(s)
			}
			s.Metadata.Scope.Nodes = []string{"n1"}
			f := forecastOf(t, s, opts)
			if diff := cmp.Diff(tc.want, causeKeys(f)); diff != "" {
				t.Errorf("causes (-want +got):\n%s\n%+v", diff, f.Causes)
			}
			got := ""
			if f.P50 != nil {
				got = f.P50.Duration.String()
			}
			if got != tc.p50 || (f.P90 == nil) != (f.P50 == nil) || (f.P50 == nil && f.CriticalPath != nil) {
				t.Errorf("p50 %q, p90 %v, critical path %+v; want p50 %q, p90 with it, no critical path without it", got, f.P90, f.CriticalPath, tc.p50)
			}
			for _, c := range f.Causes {
				if c.Reason == ReasonNodesOutOfScope && !strings.Contains(c.Message, "no time is given; a whole-cluster snapshot gives one: k8s-snapshot | k8s-analyze --node n1") {
					t.Errorf("message %q names no pipe that gives a forecast", c.Message)
				}
			}
		})
	}
}

// TestNoForecastWithoutTheOption: the library's report has no forecast
// unless asked (maintd's), and nothing to evict is an ok of 0s.
func TestNoForecastWithoutTheOption(t *testing.T) {
	s := fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n2", "", "", 5)})
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Nodes {
		if n.Forecast != nil {
			t.Errorf("node %s has a forecast without Options.Forecast", n.Name)
		}
	}
	f := forecastOf(t, s, ForecastOptions{})
	want := &Forecast{Verdict: VerdictOK, P50: &metav1.Duration{}, P90: &metav1.Duration{}, Concurrency: DefaultConcurrency}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("forecast of an empty node (-want +got):\n%s", diff)
	}
}
