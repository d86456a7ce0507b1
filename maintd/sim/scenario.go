// The scenario a seed draws (nodes, workloads, budgets, plans) and how the
// world sets it up.

package sim

import (
	"maps"

	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Scenario options a schedule can set before Setup.
type Scenario struct {
	Nodes int
	// Workloads are Deployments: replicas, and the PDB kind: "max1"
	// (maxUnavailable 1), "min-1" (minAvailable replicas-1), "never"
	// (minAvailable replicas), "none", "overlap" (two PDBs).
	Workloads []Workload
	Plans     []api.MaintenancePlanSpec
	// FromFirstNode places the pods: each workload's replicas go
	// round-robin over the nodes starting at node-1 (false: starting at a
	// drawn node).
	FromFirstNode bool
	// Selectors, when set, start one maintd per label selector (the first
	// leads) instead of one for every plan.
	Selectors []string
	// Labels are extra labels of nodes, by name.
	Labels map[string]map[string]string
	// Autoscaled names the workloads a HorizontalPodAutoscaler scales.
	Autoscaled []string
	// Campaign, when set, is created (as campaign "fleet") after the
	// plans.
	Campaign *api.MaintenanceCampaignSpec
	// Taints and CPU (allocatable, "8" when unset) of nodes, by name.
	Taints map[string][]corev1.Taint
	CPU    map[string]string
	// Scheduled has the scheduler place the workloads' first pods (else
	// they are bound round-robin).
	Scheduled bool
	// Storage, when set, adds volumes and their storage system.
	Storage *Storage
}

// Workload is one Deployment of a scenario, or a workload of another
// kind.
type Workload struct {
	Name string
	// Kind is "" for a Deployment, or StatefulSet, Job (its ReadyAfter is
	// how long its pod runs), Pod (a bare pod).
	Kind     string
	Replicas int
	PDB      string
	// ReadyAfter is the seconds a replacement takes to be Ready (-1: never).
	ReadyAfter int
	// NodeSelector pins the pods to the nodes it matches: they are placed
	// round-robin on those, and their replacements fit only there.
	NodeSelector map[string]string
	// On, when set, is the node its pods are placed on first.
	On string
	// CPU is what each pod requests ("" none); Tolerate names a taint key
	// its pods tolerate; Affinity requires of a node the label pairs
	// (key In value); Spread spreads them over the hostnames, maxSkew 1,
	// DoNotSchedule.
	CPU      string
	Tolerate string
	Affinity map[string]string
	Spread   bool
	// Drain is its pods' maintenance.sentinel.dev/drain annotation ("":
	// none).
	Drain string
	// Together places every pod of a StatefulSet on its first node.
	Together bool
}

// constrain sets in spec what the workload asks of where its pods run.
func (wl Workload) constrain(spec *corev1.PodSpec) {
	if wl.CPU != "" {
		spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(wl.CPU)}
	}
	if wl.Tolerate != "" {
		spec.Tolerations = []corev1.Toleration{{Key: wl.Tolerate, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	if len(wl.Affinity) > 0 {
		var reqs []corev1.NodeSelectorRequirement
		for _, k := range sortedKeys(wl.Affinity) {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{wl.Affinity[k]}})
		}
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
	}
	if wl.Spread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": wl.Name}}}}
	}
}

// draw draws a scenario from the seed.
func (w *World) draw() Scenario {
	r := w.rng
	sc := Scenario{Nodes: 3 + r.IntN(3)}
	pdbs := []string{"max1", "max1", "max1", "min-1", "min-1", "none", "never", "overlap"}
	for i := range 1 + r.IntN(3) {
		wl := Workload{Name: fmt.Sprintf("app%d", i+1), Replicas: 1 + r.IntN(4), PDB: pdbs[r.IntN(len(pdbs))], ReadyAfter: r.IntN(20)}
		if r.IntN(20) == 0 {
			wl.ReadyAfter = -1
		}
		sc.Workloads = append(sc.Workloads, wl)
	}
	nodes := r.Perm(sc.Nodes)
	for i := range 1 + r.IntN(3) {
		spec := api.MaintenancePlanSpec{NodeName: fmt.Sprintf("node-%d", nodes[i%len(nodes)]+1), AllowAllWorkloads: true,
			Deadline: &metav1.Duration{Duration: time.Duration(5+r.IntN(25)) * time.Minute}}
		if r.IntN(10) == 0 {
			spec.DryRun = true
		}
		sc.Plans = append(sc.Plans, spec)
	}
	w.MaxNodes = 1 + r.IntN(2)
	if pr := w.pinning; pr.IntN(6) == 0 {
		// A workload pinned by a node selector to the nodes labelled
		// disk=ssd: the first plan's node, and each other node at 1 in 3.
		// When the plan's node is the only one, the drain never completes.
		w.pinned = true
		sc.Labels = map[string]map[string]string{sc.Plans[0].NodeName: {"disk": "ssd"}}
		for i := range sc.Nodes {
			if name := fmt.Sprintf("node-%d", i+1); name != sc.Plans[0].NodeName && pr.IntN(3) == 0 {
				sc.Labels[name] = map[string]string{"disk": "ssd"}
			}
		}
		sc.Workloads = append(sc.Workloads, Workload{Name: "pinned", Replicas: 1 + pr.IntN(2), PDB: "max1", ReadyAfter: pr.IntN(20), NodeSelector: map[string]string{"disk": "ssd"}})
	}
	w.pauses = w.pausing.IntN(5) == 0
	w.faulty = w.faulting.IntN(2) == 0
	w.overlap = w.leading.IntN(3) == 0
	w.budgets = w.budgeting.IntN(3) == 0
	if sr := w.surging; sr.IntN(3) == 0 {
		// The plans move with a surge the pods whose budget never allows
		// their eviction; a single-replica app with such a budget is
		// added, and an autoscaler scales one of the apps at 1 in 4.
		w.surge = true
		for i := range sc.Plans {
			sc.Plans[i].Surge = api.SurgeIfNeeded
		}
		sc.Workloads = append(sc.Workloads, Workload{Name: "single", Replicas: 1 + sr.IntN(2), PDB: "never", ReadyAfter: sr.IntN(20), On: sc.Plans[0].NodeName})
		if sr.IntN(4) == 0 {
			sc.Autoscaled = append(sc.Autoscaled, "single")
		}
	}
	if cr := w.campaigning; cr.IntN(4) == 0 {
		// A campaign over 2 to 4 of the nodes, in waves when the slots
		// are fewer; released as its nodes drain at 1 in 2 (else a person
		// releases it later).
		w.campaign = true
		perm := cr.Perm(sc.Nodes)
		spec := &api.MaintenanceCampaignSpec{AllowAllWorkloads: true, Release: cr.IntN(2) == 0,
			Deadline: &metav1.Duration{Duration: time.Duration(30+cr.IntN(60)) * time.Minute},
			Breaker: api.Breaker{MaxNotReadyNodes: int32(cr.IntN(2)), PodReadyTimeout: &metav1.Duration{Duration: time.Duration(2+cr.IntN(10)) * time.Minute},
				HoldDown: &metav1.Duration{Duration: time.Minute}}}
		for _, i := range perm[:min(sc.Nodes-1, 2+cr.IntN(3))] {
			spec.Nodes = append(spec.Nodes, fmt.Sprintf("node-%d", i+1))
		}
		sc.Campaign = spec
	}
	w.drawKinds(&sc)
	w.drawPlacement(&sc)
	if ar := w.autoscaling; ar.IntN(4) == 0 {
		// An autoscaler scales one of the apps (not the surge's own app,
		// which has one at 1 in 4 of the surge seeds), between 1 and 4
		// replicas, as its controller decides.
		var apps []string
		for _, wl := range sc.Workloads {
			if wl.Kind == "" && wl.Name != "single" && !slices.Contains(sc.Autoscaled, wl.Name) {
				apps = append(apps, wl.Name)
			}
		}
		if len(apps) > 0 {
			w.hpa = true
			sc.Autoscaled = append(sc.Autoscaled, apps[ar.IntN(len(apps))])
		}
	}
	w.drawStorage(&sc)
	w.drawRules(&sc)
	w.drawBreakGlass(&sc)
	w.drawBudget(&sc)
	w.drawGates(&sc)
	return sc
}

// Setup creates the scenario's objects, runs the cluster until its pods are
// Ready and starts one maintd; Plans are created after.
func (w *World) Setup(sc Scenario) {
	w.mu.Lock()
	for i := range sc.Nodes {
		name := fmt.Sprintf("node-%d", i+1)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
		maps.Copy(node.Labels, sc.Labels[name])
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		cpu := "8"
		if c, ok := sc.CPU[name]; ok {
			cpu = c
		}
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
		node.Spec.Taints = sc.Taints[name]
		w.must(w.s.create(nodesR, node))
	}
	start := 0
	w.scheduled = sc.Scheduled
	for _, wl := range sc.Workloads {
		w.workload(wl, sc.Nodes, start)
		if !sc.FromFirstNode {
			start = w.rng.IntN(sc.Nodes)
		}
	}
	for _, name := range sc.Autoscaled {
		w.must(w.s.create(hpasR, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: name, APIVersion: "apps/v1"}, MaxReplicas: 10}}))
	}
	if sc.Storage != nil {
		w.storage(sc.Storage, sc.Nodes)
	}
	for range 10 {
		w.cluster()
	}
	w.clock.Step(time.Minute)
	for range 5 {
		w.cluster()
	}
	w.mu.Unlock()
	if len(sc.Selectors) == 0 {
		w.start(labels.Everything(), "")
	}
	for _, s := range sc.Selectors {
		sel, err := labels.Parse(s)
		if err != nil {
			w.failf("selector %q: %v", s, err)
			return
		}
		w.start(sel, "maintd-"+s)
	}
	for i, spec := range sc.Plans {
		w.createPlan(fmt.Sprintf("plan-%d", i+1), spec)
	}
	if sc.Campaign != nil {
		if err := w.gates.read(sc.Campaign); err != nil {
			w.failf("%v", err)
		}
		w.mu.Lock()
		o, err := w.s.create(campsR, &api.MaintenanceCampaign{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}, Spec: *sc.Campaign})
		w.logf("person: create campaign fleet over %v (release %t%s) -> %s", sc.Campaign.Nodes, sc.Campaign.Release, budgetText(sc.Campaign.Budget)+gateText(sc.Campaign), errText(err))
		w.madeCampaign(o, sc.Campaign)
		w.mu.Unlock()
	}
}

func (w *World) must(_ runtime.Object, err error) {
	if err != nil {
		w.failf("setup: %v", err)
	}
}

// workload creates a Deployment, its ReplicaSet, its pods on the nodes
// (round-robin from node start) and its PDB.
func (w *World) workload(wl Workload, nodes, start int) {
	if wl.Kind != "" {
		w.other(wl, nodes, start)
		return
	}
	sel := map[string]string{"app": wl.Name}
	grace := int64(30)
	replicas := int32(wl.Replicas)
	ready := fmt.Sprint(wl.ReadyAfter)
	if wl.ReadyAfter < 0 {
		ready = "never"
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: map[string]string{readyAfter: ready, exitAfter: fmt.Sprint(w.rng.IntN(10))}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, NodeSelector: wl.NodeSelector, Containers: []corev1.Container{{Name: "c", Image: "app"}}}}
	wl.constrain(&tmpl.Spec)
	if wl.Drain != "" {
		tmpl.Annotations[analyze.DrainAnnotation] = wl.Drain
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	o, err := w.s.create(depsR, dep)
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	dep = o.(*appsv1.Deployment)
	w.replicas[dep.Name] = replicas
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name + "-5d8f",
		Labels: sel, OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	o, err = w.s.create(rsR, rs)
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	rs = o.(*appsv1.ReplicaSet)
	var fit []string // the nodes its pods go to, round-robin from start
	if wl.On != "" {
		fmt.Sscanf(wl.On, "node-%d", &start)
		start--
	}
	for i := range nodes {
		name := fmt.Sprintf("node-%d", (start+i)%nodes+1)
		if o, err := w.s.get(nodesR, "", name); err == nil && labels.SelectorFromSet(wl.NodeSelector).Matches(labels.Set(o.(*corev1.Node).Labels)) {
			fit = append(fit, name)
		}
	}
	for i := range wl.Replicas {
		ann := maps.Clone(tmpl.Annotations)
		ann[readyAfter] = "0"
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprintf("%s-%d", rs.Name, i), Labels: sel,
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: podSpec(tmpl.Spec)}
		if !w.scheduled {
			pod.Spec.NodeName = fit[i%len(fit)]
		}
		w.must(w.s.create(podsR, pod))
	}
	w.pdbs(wl, sel, replicas)
}

// pdbs creates a workload's budgets, by its PDB kind; w.mu is held.
func (w *World) pdbs(wl Workload, sel map[string]string, replicas int32) {
	pdb := func(name string, min, maxU *intstr.IntOrString) {
		w.must(w.s.create(pdbsR, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, MinAvailable: min, MaxUnavailable: maxU}}))
	}
	one := intstr.FromInt32(1)
	switch wl.PDB {
	case "max1":
		pdb(wl.Name, nil, &one)
	case "min-1":
		n := intstr.FromInt32(max(replicas-1, 0))
		pdb(wl.Name, &n, nil)
	case "never":
		n := intstr.FromInt32(replicas)
		pdb(wl.Name, &n, nil)
	case "overlap":
		pdb(wl.Name, nil, &one)
		pdb(wl.Name+"-extra", nil, &one)
	}
}

// readyDelay draws a replacement's readiness delay (its ReplicaSet's
// template annotation, sometimes never).
func (w *World) readyDelay() string {
	if w.Faults && w.rng.IntN(25) == 0 {
		return "never"
	}
	return fmt.Sprint(w.rng.IntN(30))
}
