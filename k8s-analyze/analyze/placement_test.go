package analyze

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rogpeppe/go-internal/txtar"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// The shared placement model (NewPlacement) must change no verdict: the
// forecast of a node judged on the whole cluster equals the forecast of the
// node's scoped snapshot (snapshot.ForNodes, as k8s-snapshot --node and
// maintd's caches make it) judged on a Placement of the whole cluster; so
// does the capacity of a set of nodes.

// TestSharedPlacement compares, for every node of every whole-cluster
// snapshot the tests hold (the script tests' documents, TestPlacement's
// clusters, and a generated cluster with every constraint the model
// judges), Analyze of the whole snapshot with Analyze of the node's scoped
// snapshot on a Placement of the whole, with and without --surge; and the
// capacity of sets of its nodes the same two ways. Two evictions at a time
// make the rounds, and so the critical paths, depend on every workload's
// time to Ready.
func TestSharedPlacement(t *testing.T) {
	clusters := scriptSnapshots(t)
	for name, tc := range placementCases {
		s, err := decode.Full(bytes.NewReader(tc.doc()), 0)
		if err != nil {
			t.Fatalf("TestPlacement %q: %v", name, err)
		}
		clusters["TestPlacement/"+name] = s
	}
	clusters["varied"] = varied()
	for name, raw := range clusters {
		t.Run(name, func(t *testing.T) {
			for _, surge := range []bool{false, true} {
				opts := Options{Surge: surge, Forecast: &ForecastOptions{Concurrency: 2, Reaction: 300 * time.Millisecond}}
				sameForecasts(t, raw, opts)
				sameCapacities(t, raw, opts)
			}
		})
	}
}

// TestVariedExercisesTheModel: the generated cluster of TestSharedPlacement
// gets every verdict of the placement model, for the reasons it is made
// for, so that the equivalence covers them.
func TestVariedExercisesTheModel(t *testing.T) {
	full := view.Of(varied())
	r, err := Analyze(full, Options{Forecast: &ForecastOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	for _, n := range r.Nodes {
		for _, c := range n.Forecast.Causes {
			fmt.Fprintf(&said, "%s %s: %s\n", c.Verdict, c.Reason, c.Message)
		}
	}
	for _, want := range []string{
		"never " + ReasonUnschedulable + ":", "never " + ReasonNoCapacity + ":", "unknown " + ReasonNotModelled + ":",
		"insufficient cpu", "node selector", "taint dedicated=infra:NoSchedule not tolerated", "topology spread (maxSkew 1)",
		"pod anti-affinity of pod", "on topology key topology.kubernetes.io/zone", "volume topology of PersistentVolume",
		"not bound", "not in the snapshot", "required pod affinity", "hostPort 8080/TCP",
	} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("no forecast of the varied cluster says %q; they say:\n%s", want, said.String())
		}
	}
}

// sameForecasts checks, for each node of raw, that its forecast with opts
// on the whole snapshot equals the one of its scoped snapshot on a
// Placement of the whole.
func sameForecasts(t *testing.T, raw *snapshot.Snapshot, opts Options) {
	t.Helper()
	full := view.Of(raw)
	shared := placementOf(full)
	for _, n := range full.Nodes {
		want := forecastIn(t, full, n.Name, opts)
		scoped, err := snapshot.ForNodes(raw, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		got := forecastIn(t, view.Of(scoped), n.Name, withPlacement(opts, shared))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("surge %t: node %s's forecast, whole snapshot (-) and scoped on a shared Placement (+):\n%s", opts.Surge, n.Name, diff)
		}
	}
}

// sameCapacities checks that the capacity of sets of raw's nodes (each
// node, each two neighbours by name, every third node) on the whole
// snapshot equals the one of the set's scoped snapshot on a Placement of
// the whole.
func sameCapacities(t *testing.T, raw *snapshot.Snapshot, opts Options) {
	t.Helper()
	full := view.Of(raw)
	shared := placementOf(full)
	var names, third []string
	for i, n := range full.Nodes {
		names = append(names, n.Name)
		if i%3 == 0 {
			third = append(third, n.Name)
		}
	}
	slices.Sort(names)
	sets := [][]string{third}
	for i := range names {
		sets = append(sets, names[i:i+1])
		if i+1 < len(names) {
			sets = append(sets, names[i:i+2])
		}
	}
	for _, set := range sets {
		want, err := Capacity(full, set, opts)
		if err != nil {
			t.Fatal(err)
		}
		scoped, err := snapshot.ForNodes(raw, set...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := shared.Capacity(view.Of(scoped), set, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("surge %t: capacity of %v, whole snapshot (-) and scoped on a shared Placement (+):\n%s", opts.Surge, set, diff)
		}
	}
}

// placementOf is the Placement of s made of its nodes and pods alone (as
// maintd's caches of every node and pod could make it): NewPlacement reads
// nothing else, and what a replacement needs, its volumes' topology
// included, comes from the analysed snapshot.
func placementOf(s *view.Snapshot) *Placement {
	return NewPlacement(&view.Snapshot{Nodes: s.Nodes, Pods: s.Pods})
}

// forecastIn is node's forecast in s with opts.
func forecastIn(t *testing.T, s *view.Snapshot, node string, opts Options) *Forecast {
	t.Helper()
	opts.Nodes = []string{node}
	r, err := Analyze(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.Nodes[0].Forecast
}

// withPlacement is opts forecasting on p.
func withPlacement(opts Options, p *Placement) Options {
	f := *opts.Forecast
	f.Placement = p
	opts.Forecast = &f
	return opts
}

// scriptSnapshots are the whole-cluster Snapshot documents of the script
// tests (../testdata/script), by archive and file: those that decode, are
// not node-scoped, and hold a node and a valid cluster (bad input is
// skipped: the command rejects it before any forecast).
func scriptSnapshots(t *testing.T) map[string]*snapshot.Snapshot {
	t.Helper()
	files, err := filepath.Glob("../testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no script tests: %v", err)
	}
	out := map[string]*snapshot.Snapshot{}
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range a.Files {
			s, err := decode.Full(bytes.NewReader(m.Data), 0)
			if err != nil || len(s.Nodes) == 0 || len(s.Metadata.Scope.Nodes) > 0 {
				continue
			}
			if _, err := Analyze(view.Of(s), Options{}); err != nil {
				continue
			}
			out[filepath.Base(f)+"/"+m.Name] = s
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d whole-cluster snapshots in the script tests, want the 5 or more they hold", len(out))
	}
	return out
}

// varied is a generated cluster (bench.Generate: 40 nodes, 8 namespaces of
// 8 Deployments and a StatefulSet, 10 replicas each: 760 pods) with the
// constraints of bench.Constrain (hostname spread on every Deployment's
// pods, hostname anti-affinity on every StatefulSet's) and, namespace by
// namespace, the other things the placement model judges or names:
//
//   - nodes: node-00000 to 2 are pool=small with 4 CPUs, node-00005 is
//     cordoned, node-00007 has no allocatable, every seventh role=infra
//     with a taint dedicated=infra:NoSchedule, every eleventh a NoExecute
//     taint, node-00030 to 39 rack=r1;
//   - team-0001: spread under nodeTaintsPolicy Ignore (the drained node
//     stays a domain), svc-01 one pod on each node of the rack, which it
//     selects: no room under maxSkew 1;
//   - team-0002: svc-00 also anti-affinity on the zone against itself,
//     svc-01 required pod affinity, svc-02 a PDB of minAvailable 100%
//     (surge);
//   - team-0003: svc-00 on the pool (node selector, 800m CPU each, 4, 4
//     and 2 on its nodes, nothing else there but the DaemonSet): insufficient
//     capacity or unschedulable;
//   - team-0004: tolerates dedicated=infra, svc-00 node affinity on
//     zone-a, svc-01 selects role=infra;
//   - team-0005: svc-00 selects disk=ssd, which no node has, svc-01
//     role=infra, whose taint it does not tolerate;
//   - team-0006: the StatefulSet's volumes have node affinity;
//   - team-0007: a claim not bound, a volume not in the snapshot, svc-00 a
//     hostPort.
//
// Every Deployment's pod became Ready 0 to 89 s after it was scheduled.
func varied() *snapshot.Snapshot {
	s := bench.Generate(bench.Size{Nodes: 40, Namespaces: 8, DeploymentsPerNamespace: 8, Replicas: 10})
	bench.Constrain(s)
	const pool, rack = 3, 30
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if i >= rack {
			n.Labels["rack"] = "r1"
		}
		switch {
		case i < pool:
			n.Labels["pool"] = "small"
			n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("4")
		case i == 5:
			n.Spec.Unschedulable = true
		case i == 7:
			n.Status.Allocatable = nil
		case i%7 == 6:
			n.Labels["role"] = "infra"
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}
		case i%11 == 10:
			n.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
		}
	}
	poolPods, rackPods := 0, 0
	for i := range s.Pods {
		p := &s.Pods[i]
		app, kind := p.Labels["app"], p.OwnerReferences[0].Kind
		if kind == "DaemonSet" {
			continue
		}
		key := p.Namespace + "/" + app
		if kind == "ReplicaSet" {
			scheduled := p.Status.Conditions[3].LastTransitionTime
			p.Status.Conditions[1].LastTransitionTime = metav1.NewTime(scheduled.Add(time.Duration(hash(p.Name)%90) * time.Second))
		}
		if key == "team-0003/svc-00" {
			p.Spec.NodeName = fmt.Sprintf("node-%05d", []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}[poolPods])
			poolPods++
			p.Spec.NodeSelector = map[string]string{"pool": "small"}
			p.Spec.TopologySpreadConstraints = nil
			p.Spec.Containers = slices.Clone(p.Spec.Containers)
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m")}
			continue
		}
		if key == "team-0001/svc-01" {
			p.Spec.NodeName = fmt.Sprintf("node-%05d", rack+rackPods)
			rackPods++
			p.Spec.NodeSelector = map[string]string{"rack": "r1"}
		}
		if n := nodeIndex(p.Spec.NodeName); n < pool {
			p.Spec.NodeName = fmt.Sprintf("node-%05d", pool+int(hash(p.Name))%(len(s.Nodes)-pool))
		}
		switch {
		case p.Namespace == "team-0001" && kind == "ReplicaSet":
			p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = nil
		case key == "team-0002/svc-00":
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: corev1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}
		case key == "team-0002/svc-01":
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}}
		case p.Namespace == "team-0004":
			p.Spec.Tolerations = append(slices.Clone(p.Spec.Tolerations), corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra", Effect: corev1.TaintEffectNoSchedule})
			if app == "svc-01" {
				p.Spec.NodeSelector = map[string]string{"role": "infra"}
			}
			if app == "svc-00" {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}}}}}}}
			}
		case key == "team-0005/svc-00":
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		case key == "team-0005/svc-01":
			p.Spec.NodeSelector = map[string]string{"role": "infra"}
		case key == "team-0007/svc-00":
			p.Spec.Containers = slices.Clone(p.Spec.Containers)
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		}
	}
	for i := range s.PodDisruptionBudgets {
		if pdb := &s.PodDisruptionBudgets[i]; pdb.Namespace == "team-0002" && pdb.Name == "svc-02" {
			pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable = nil, &intstr.IntOrString{Type: intstr.String, StrVal: "100%"}
			pdb.Status.DisruptionsAllowed = 0
		}
	}
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		if strings.HasPrefix(pv.Name, "pv-team-0006-") {
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}}}}}}}
		}
	}
	for i := range s.PersistentVolumeClaims {
		if c := &s.PersistentVolumeClaims[i]; c.Namespace == "team-0007" && c.Name == "data-db-0" {
			c.Spec.VolumeName = ""
		}
	}
	s.PersistentVolumes = slices.DeleteFunc(s.PersistentVolumes, func(pv corev1.PersistentVolume) bool { return pv.Name == "pv-team-0007-db-1" })
	return s
}

// cronJob adds to s a CronJob name in namespace with three runs (Jobs), one
// pod each, on nodes node-00010 to 12: the first two Succeeded, the last
// Running and Ready; each became Ready 20, 40 and 60 s after it was
// scheduled.
func cronJob(s *snapshot.Snapshot, namespace, name string) {
	yes := true
	uid := func(kind, name string) types.UID { return types.UID(kind + "-" + namespace + "-" + name) }
	cj := batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: uid("cronjob", name)}}
	s.CronJobs = append(s.CronJobs, cj)
	template := s.Pods[len(s.Pods)-1]
	for run := range 3 {
		jobName := fmt.Sprintf("%s-%d", name, run)
		job := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: jobName, Namespace: namespace, UID: uid("job", jobName),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: name, UID: cj.UID, Controller: &yes}}}}
		s.Jobs = append(s.Jobs, job)
		p := template.DeepCopy()
		p.Name, p.Namespace, p.UID = jobName+"-x", namespace, uid("pod", jobName)
		p.Labels = map[string]string{"job-name": jobName}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: jobName, UID: job.UID, Controller: &yes}}
		p.Spec.NodeName = fmt.Sprintf("node-%05d", 10+run)
		p.Spec.Volumes, p.Spec.Affinity, p.Spec.TopologySpreadConstraints = nil, nil, nil
		p.Spec.Containers[0].VolumeMounts = nil
		scheduled := metav1.NewTime(s.Metadata.CapturedAt.Add(-time.Duration(3-run) * time.Hour))
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: scheduled},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled.Add(time.Duration(20*(run+1)) * time.Second))},
		}
		if run < 2 {
			p.Status.Phase = corev1.PodSucceeded
		}
		s.Pods = append(s.Pods, *p)
	}
}

// TestSharedPlacementCronJob pins the one difference between a node's
// forecast on the whole snapshot and on its scoped one that is not where
// replacements go: a CronJob's pods learn their time to Ready from the pods
// of every run (Job) the snapshot holds, and a node-scoped snapshot holds
// only the runs with a pod on the node (snapshot.ForNodes keeps a Job's
// pods, not its CronJob's other Jobs). On node-00012 of the varied cluster
// with a CronJob, its running pod is the critical path: learned from its
// three runs on the whole snapshot (20, 40, 60 s: p50 40s), from its own
// run on the scoped one (60s). A Placement does not hold it: it is not
// where pods go, and maintd's forecasts, whose widened views hold every pod
// but only the scoped snapshot's owners (the other runs' pods have no
// verified owner chain there), learn from the same run only today.
func TestSharedPlacementCronJob(t *testing.T) {
	raw := varied()
	cronJob(raw, "team-0000", "nightly")
	full := view.Of(raw)
	opts := Options{Forecast: &ForecastOptions{Concurrency: 1000}}
	want := forecastIn(t, full, "node-00012", opts)
	scoped, err := snapshot.ForNodes(raw, "node-00012")
	if err != nil {
		t.Fatal(err)
	}
	got := forecastIn(t, view.Of(scoped), "node-00012", withPlacement(opts, NewPlacement(full)))
	type learned struct {
		Workload  string
		Samples   int
		P50       time.Duration
		RoundTime time.Duration
	}
	of := func(f *Forecast) learned {
		cp := f.CriticalPath
		return learned{cp.Ready.Workload, cp.Ready.Samples, cp.Ready.P50.Duration, cp.RoundTime.Duration}
	}
	if diff := cmp.Diff([2]learned{{"CronJob team-0000/nightly", 3, 40 * time.Second, 40 * time.Second}, {"CronJob team-0000/nightly", 1, time.Minute, time.Minute}},
		[2]learned{of(want), of(got)}); diff != "" {
		t.Errorf("the critical path's learned time to Ready, whole and scoped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(CriticalPath{}, "Ready", "RoundTime")); diff != "" {
		t.Errorf("node-00012's forecast beyond the CronJob's time to Ready, whole snapshot (-) and scoped on a shared Placement (+):\n%s", diff)
	}
}

// nodeIndex is the number of a generated node's name.
func nodeIndex(name string) int {
	var n int
	fmt.Sscanf(name, "node-%05d", &n)
	return n
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// TestPlacementConcurrent runs the forecasts of every node of a
// constrained cluster at once, three times each, each on its scoped
// snapshot, all on one fresh Placement (its spread caches are built by
// whichever comes first): each equals the same forecast made alone. Run it
// with -race.
func TestPlacementConcurrent(t *testing.T) {
	raw := varied()
	full := view.Of(raw)
	opts := Options{Forecast: &ForecastOptions{}}
	scoped := make([]*view.Snapshot, len(full.Nodes))
	want := make([]*Forecast, len(full.Nodes))
	alone := NewPlacement(full)
	for i, n := range full.Nodes {
		s, err := snapshot.ForNodes(raw, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		scoped[i] = view.Of(s)
		want[i] = forecastIn(t, scoped[i], n.Name, withPlacement(opts, alone))
	}
	shared := withPlacement(opts, NewPlacement(full))
	const rounds = 3
	got := make([]*Forecast, rounds*len(full.Nodes))
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for k := range got {
		wg.Go(func() {
			i := k % len(full.Nodes)
			o := shared
			o.Nodes = []string{full.Nodes[i].Name}
			r, err := Analyze(scoped[i], o)
			if err != nil {
				errs[k] = err
				return
			}
			got[k] = r.Nodes[0].Forecast
		})
	}
	wg.Wait()
	for k := range got {
		i := k % len(full.Nodes)
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		if diff := cmp.Diff(want[i], got[k]); diff != "" {
			t.Errorf("node %s's forecast alone (-) and among the others (+):\n%s", full.Nodes[i].Name, diff)
		}
	}
}

// TestPlacementErrors: a node the Placement does not hold is an error, for
// the forecast and the capacity; a node-scoped snapshot without one is
// still out of scope.
func TestPlacementErrors(t *testing.T) {
	whole := fbuild(t, threeNodes, map[string]string{"pods": fpod("p", "n1", "", "", 5)})
	small := NewPlacement(fbuild(t, fnode("n2", "", "")+fnode("n3", "", ""), nil))
	_, err := Analyze(whole, Options{Nodes: []string{"n1"}, Forecast: &ForecastOptions{Placement: small}})
	if err == nil || !strings.Contains(err.Error(), `node "n1" is not in the placement model`) {
		t.Errorf("Analyze: err %v, want node n1 not in the placement model", err)
	}
	if _, err := small.Capacity(whole, []string{"n1"}, Options{}); err == nil || !strings.Contains(err.Error(), `node "n1" is not in the placement model`) {
		t.Errorf("Capacity: err %v, want node n1 not in the placement model", err)
	}
}

// TestPlacementScoped: a node-scoped snapshot on a Placement of the whole
// cluster gets a placement verdict, not nodes-out-of-scope.
func TestPlacementScoped(t *testing.T) {
	whole := fbuild(t, fnode("n1", "", "")+fnode("n2", "", `, spec: {taints: [{key: dedicated, value: db, effect: NoSchedule}]}`),
		map[string]string{"pods": fpod("p", "n1", "", "", 5)})
	scoped := fbuild(t, fnode("n1", "", ""), map[string]string{"pods": fpod("p", "n1", "", "", 5)})
	scoped.Metadata.Scope.Nodes = []string{"n1"}
	f := forecastOf(t, scoped, ForecastOptions{Placement: NewPlacement(whole)})
	if diff := cmp.Diff([]string{webNever}, causeKeys(f)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}
