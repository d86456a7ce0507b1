// The simulated scheduler's filters: where a pod may run, judged as
// kube-scheduler's filters judge it.

package sim

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// cluster is what the scheduler reads at one moment: the nodes by name
// order, and per node the pods bound there that it counts (not ended:
// its informer leaves Succeeded and Failed pods out).
type cluster struct {
	nodes []*corev1.Node
	on    map[string][]*corev1.Pod
}

// readCluster reads the cluster for the scheduler.
func (s *store) readCluster() *cluster {
	c := &cluster{on: map[string][]*corev1.Pod{}}
	for _, o := range s.list(nodesR, "", nil) {
		c.nodes = append(c.nodes, o.(*corev1.Node))
	}
	for _, o := range s.list(podsR, "", nil) {
		if p := o.(*corev1.Pod); p.Spec.NodeName != "" && !ended(p) {
			c.on[p.Spec.NodeName] = append(c.on[p.Spec.NodeName], p)
		}
	}
	return c
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// bind records pod on node (a placement being tried).
func (c *cluster) bind(pod *corev1.Pod, node string) {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	c.on[node] = append(c.on[node], p)
}

// unbind takes the pods of node out as if they were going (terminating:
// neither their requests nor the spread count them).
func (c *cluster) unbind(node string) { c.on[node] = nil }

// fit is why pod cannot be bound to node now, "" when it can: the node is
// cordoned (NodeUnschedulable), or fitsNode says no, or the requests of
// the pods bound there leave too little of its allocatable
// (NodeResourcesFit: CPU, memory, pods), or binding it there would skew a
// DoNotSchedule topology spread on the hostname beyond its maxSkew
// (PodTopologySpread: the domains are the nodes with a hostname label that
// its node selector and affinity select, cordoned or tainted or not; the
// pods counted are those its selector matches in its namespace, not
// terminating).
func (c *cluster) fit(pod *corev1.Pod, node *corev1.Node) string {
	if node.Spec.Unschedulable && !tolerates(pod, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return "cordoned"
	}
	if why := fitsNode(pod, node); why != "" {
		return why
	}
	var cpu, mem int64
	n := 0
	for _, p := range c.on[node.Name] {
		r := requests(p)
		cpu, mem, n = cpu+r.Cpu().MilliValue(), mem+r.Memory().Value(), n+1
	}
	r, a := requests(pod), node.Status.Allocatable
	switch {
	case cpu+r.Cpu().MilliValue() > a.Cpu().MilliValue():
		return "insufficient cpu"
	case mem+r.Memory().Value() > a.Memory().Value():
		return "insufficient memory"
	case int64(n+1) > a.Pods().Value():
		return "too many pods"
	}
	for _, sc := range pod.Spec.TopologySpreadConstraints {
		if sc.TopologyKey != corev1.LabelHostname || sc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(sc.LabelSelector)
		if err != nil {
			return "bad spread selector"
		}
		count := func(n string) int {
			k := 0
			for _, p := range c.on[n] {
				if p.Namespace == pod.Namespace && p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
					k++
				}
			}
			return k
		}
		lowest := -1
		for _, d := range c.nodes {
			if _, ok := d.Labels[corev1.LabelHostname]; ok && selects(pod, d) {
				if k := count(d.Name); lowest < 0 || k < lowest {
					lowest = k
				}
			}
		}
		self := 0
		if sel.Matches(labels.Set(pod.Labels)) {
			self = 1
		}
		if _, ok := node.Labels[corev1.LabelHostname]; !ok || count(node.Name)+self-lowest > int(sc.MaxSkew) {
			return fmt.Sprintf("topology spread (maxSkew %d)", sc.MaxSkew)
		}
	}
	return ""
}

// fitsNode is why pod can never run on node as it is, whatever runs there
// and whether it is cordoned, "" when it can: the node selector and the
// required node affinity select it (NodeAffinity), its pod tolerates the
// node's NoSchedule and NoExecute taints (TaintToleration), and its
// requests are within the node's allocatable.
func fitsNode(pod *corev1.Pod, node *corev1.Node) string {
	if !selects(pod, node) {
		return "node selector or affinity"
	}
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectPreferNoSchedule && !tolerates(pod, t) {
			return "taint " + t.Key
		}
	}
	r, a := requests(pod), node.Status.Allocatable
	if r.Cpu().MilliValue() > a.Cpu().MilliValue() || r.Memory().Value() > a.Memory().Value() {
		return "requests beyond allocatable"
	}
	return ""
}

// selects reports whether pod's node selector and required node affinity
// (terms ORed, expressions ANDed; In, NotIn, Exists, DoesNotExist) select
// node.
func selects(pod *corev1.Pod, node *corev1.Node) bool {
	set := labels.Set(node.Labels)
	if !labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(set) {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	ops := map[corev1.NodeSelectorOperator]selection.Operator{corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
		corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist}
	return slices.ContainsFunc(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, func(t corev1.NodeSelectorTerm) bool {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			return false
		}
		for _, e := range t.MatchExpressions {
			op, ok := ops[e.Operator]
			if !ok {
				return false
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil || !r.Matches(set) {
				return false
			}
		}
		return len(t.MatchFields) == 0
	})
}

// tolerates reports whether one of pod's tolerations tolerates taint: its
// effect empty or the taint's, and its key empty (Exists: every taint) or
// the taint's, with the taint's value (Equal) or any (Exists).
func tolerates(pod *corev1.Pod, taint corev1.Taint) bool {
	return slices.ContainsFunc(pod.Spec.Tolerations, func(t corev1.Toleration) bool {
		if t.Effect != "" && t.Effect != taint.Effect {
			return false
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return t.Key == "" || t.Key == taint.Key
		case "", corev1.TolerationOpEqual:
			return t.Key == taint.Key && t.Value == taint.Value
		}
		return false
	})
}

// requests are a pod's requests, its containers' summed (no init
// containers or overhead are simulated).
func requests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceCPU: resource.Quantity{}, corev1.ResourceMemory: resource.Quantity{}}
	for _, c := range pod.Spec.Containers {
		for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[k]; ok {
				sum := out[k]
				sum.Add(q)
				out[k] = sum
			}
		}
	}
	return out
}

// place binds pod, in c, to the node the scheduler would pick for it among
// those it fits (but skip): the one with the fewest pods, then by name; ""
// when none takes it, with why for each node.
func (c *cluster) place(pod *corev1.Pod, skip string) (string, string) {
	best, load := "", 0
	var why []string
	for _, node := range c.nodes {
		if node.Name == skip {
			continue
		}
		if no := c.fit(pod, node); no != "" {
			why = append(why, node.Name+": "+no)
			continue
		}
		if best == "" || len(c.on[node.Name]) < load {
			best, load = node.Name, len(c.on[node.Name])
		}
	}
	if best != "" {
		c.bind(pod, best)
	}
	return best, strings.Join(why, "; ")
}

// drawPlacement adds to a scenario, from w.placing, what the scheduler
// then has to honour (1 seed in 4): nodes with half the CPU, apps whose
// pods request CPU, a node tainted dedicated=infra (at 1 in 2 the first
// plan's) that only an app "infra" tolerates and requires by affinity, and
// an app "spread" over the hostnames (maxSkew 1, DoNotSchedule). The
// scheduler places the first pods. Drains meet never for real there:
// infra's pods have one node, the spread's replacement skews, requests
// exceed the room left.
func (w *World) drawPlacement(sc *Scenario) {
	pr := w.placing
	if pr.IntN(4) != 0 {
		return
	}
	w.placed, sc.Scheduled = true, true
	sc.CPU = map[string]string{}
	for i := range sc.Nodes {
		if pr.IntN(3) == 0 {
			sc.CPU[fmt.Sprintf("node-%d", i+1)] = "4"
		}
	}
	for i := range sc.Workloads {
		if sc.Workloads[i].Kind == "" && pr.IntN(2) == 0 {
			sc.Workloads[i].CPU = fmt.Sprintf("%dm", 500*(1+pr.IntN(6)))
		}
	}
	tainted := fmt.Sprintf("node-%d", 1+pr.IntN(sc.Nodes))
	if pr.IntN(2) == 0 {
		tainted = sc.Plans[0].NodeName
	}
	sc.Taints = map[string][]corev1.Taint{tainted: {{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}}
	if sc.Labels == nil {
		sc.Labels = map[string]map[string]string{}
	}
	if sc.Labels[tainted] == nil {
		sc.Labels[tainted] = map[string]string{}
	}
	sc.Labels[tainted]["dedicated"] = "infra"
	sc.Workloads = append(sc.Workloads,
		Workload{Name: "infra", Replicas: 1 + pr.IntN(2), PDB: "max1", ReadyAfter: pr.IntN(20), Tolerate: "dedicated", Affinity: map[string]string{"dedicated": "infra"}},
		Workload{Name: "spread", Replicas: sc.Nodes - 2 + pr.IntN(2), PDB: "max1", ReadyAfter: pr.IntN(20), Spread: true, CPU: []string{"", "1"}[pr.IntN(2)]})
}

// makeRoom plays a person who gives the workloads more room, never less
// (so a replacement that fits in maintd's caches fits on the server): a
// node labelled dedicated=infra (infra's pods may run there), a taint
// taken off, or a small node's CPU back to 8 (its kubelet reports it
// after a resize). w.mu is held.
func (w *World) makeRoom() {
	pr := w.placing
	nodes := w.s.list(nodesR, "", nil)
	node := nodes[pr.IntN(len(nodes))].(*corev1.Node)
	switch pr.IntN(3) {
	case 0:
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"metadata":{"labels":{"dedicated":"infra"}}}`))
		w.logf("person: label %s dedicated=infra -> %s", node.Name, errText(err))
	case 1:
		_, err := w.s.patch(nodesR, "", node.Name, []byte(`{"spec":{"taints":null}}`))
		w.logf("person: untaint %s -> %s", node.Name, errText(err))
	default:
		node.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("8")
		_, err := w.s.update(nodesR, node, true)
		w.logf("node %s: allocatable cpu 8 -> %s", node.Name, errText(err))
	}
}

// moves are the pods of node a drain moves, as the world sees them: not
// going, not ended, made again by a controller (a bare pod blocks the
// drain instead) other than a DaemonSet (its pod stays), by namespace and
// name. w.mu is held.
func (w *World) moves(node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range w.s.list(podsR, "", nil) {
		if pod := o.(*corev1.Pod); pod.Spec.NodeName == node && pod.DeletionTimestamp == nil && !ended(pod) && metav1.GetControllerOf(pod) != nil && metav1.GetControllerOf(pod).Kind != "DaemonSet" {
			out = append(out, pod)
		}
	}
	return out
}

// seen are the pods of moves that in's caches show on node: what maintd
// decided on (a pod bound there since is news its watch has not brought
// yet). w.mu is held.
func (w *World) seen(in *instance, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range w.moves(node) {
		if o, ok := in.mirror[podsR][key(pod.Namespace, pod.Name)]; ok && o.(*corev1.Pod).UID == pod.UID && o.(*corev1.Pod).Spec.NodeName == node {
			out = append(out, pod)
		}
	}
	return out
}
