// Package bench generates large, realistic Snapshot documents for
// k8s-analyze's benchmarks: Deployments with ReplicaSets and PDBs,
// StatefulSets with ReadWriteOnce PVCs, and one DaemonSet pod per node,
// spread over the nodes deterministically.
package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Size is the shape of a generated snapshot.
type Size struct {
	Nodes int
	// Namespaces each hold DeploymentsPerNamespace Deployments of Replicas
	// pods (each with a PDB) and one StatefulSet of Replicas pods with a PVC each.
	Namespaces              int
	DeploymentsPerNamespace int
	Replicas                int
}

// Full is the size: 5,000 nodes and 150,000 pods.
var Full = Size{Nodes: 5000, Namespaces: 500, DeploymentsPerNamespace: 28, Replicas: 10}

// Scaled is s with nodes and namespaces divided by div.
func (s Size) Scaled(div int) Size {
	s.Nodes /= div
	s.Namespaces /= div
	return s
}

// Pods is the number of pods s generates.
func (s Size) Pods() int {
	return s.Nodes + s.Namespaces*(s.DeploymentsPerNamespace+1)*s.Replicas
}

// CapturedAt is the capture time of every generated snapshot.
var capturedAt = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Generate builds a snapshot of size s; the same s always gives the same snapshot.
func Generate(s Size) *snapshot.Snapshot {
	g := &gen{rng: rand.New(rand.NewPCG(1, uint64(s.Nodes))), s: s, snap: snapshot.New()}
	g.snap.Metadata = snapshot.Metadata{
		CapturedAt:        metav1.NewTime(capturedAt),
		Server:            "https://127.0.0.1:6443",
		KubernetesVersion: "v1.37.2",
		ResourceVersions:  map[string]string{"pods": "123456"},
	}
	g.nodes()
	g.daemonSet()
	for n := range s.Namespaces {
		ns := fmt.Sprintf("team-%04d", n)
		for d := range s.DeploymentsPerNamespace {
			g.deployment(ns, fmt.Sprintf("svc-%02d", d))
		}
		g.statefulSet(ns, "db")
	}
	return g.snap
}

type gen struct {
	rng  *rand.Rand
	s    Size
	snap *snapshot.Snapshot
	seq  uint64
}

func (g *gen) uid() types.UID {
	g.seq++
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", g.seq))
}

func (g *gen) meta(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: g.uid(), ResourceVersion: fmt.Sprint(1000 + g.seq),
		Generation: 1, CreationTimestamp: metav1.NewTime(capturedAt.Add(-72 * time.Hour)), Labels: labels,
	}
}

func (g *gen) node() string { return fmt.Sprintf("node-%05d", g.rng.IntN(g.s.Nodes)) }

func (g *gen) nodes() {
	for i := range g.s.Nodes {
		name := fmt.Sprintf("node-%05d", i)
		n := corev1.Node{ObjectMeta: g.meta("", name, map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
			"topology.kubernetes.io/zone": fmt.Sprintf("zone-%c", 'a'+i%3),
		})}
		n.Generation = 0
		n.Spec.ProviderID = "kwok://" + name
		n.Status = corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("31"), corev1.ResourceMemory: resource.MustParse("120Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: metav1.NewTime(capturedAt), LastTransitionTime: metav1.NewTime(capturedAt.Add(-72 * time.Hour)),
			}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.1.0"},
		}
		g.snap.Nodes = append(g.snap.Nodes, n)
	}
}

func (g *gen) pod(ns, name, node string, labels map[string]string, owner metav1.OwnerReference) *corev1.Pod {
	p := corev1.Pod{ObjectMeta: g.meta(ns, name, labels)}
	p.Generation = 0
	yes := true
	owner.Controller, owner.BlockOwnerDeletion = &yes, &yes
	p.OwnerReferences = []metav1.OwnerReference{owner}
	grace := int64(30)
	p.Spec = corev1.PodSpec{
		NodeName: node, ServiceAccountName: "default", TerminationGracePeriodSeconds: &grace,
		RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.example.com/" + ns + "/app:v1.2.3", ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			},
		}}}},
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
	}
	started := metav1.NewTime(capturedAt.Add(-48 * time.Hour))
	ready := corev1.ConditionTrue
	if g.rng.IntN(100) == 0 {
		ready = corev1.ConditionFalse
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: fmt.Sprintf("10.244.%d.%d", g.seq>>8&255, g.seq&255), StartTime: &started,
		QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: started},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: ready == corev1.ConditionTrue, Image: "registry.example.com/" + ns + "/app:v1.2.3",
			ImageID:     "registry.example.com/" + ns + "/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			ContainerID: fmt.Sprintf("containerd://%064x", g.seq), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		}},
	}
	g.snap.Pods = append(g.snap.Pods, p)
	return &g.snap.Pods[len(g.snap.Pods)-1]
}

func (g *gen) daemonSet() {
	labels := map[string]string{"app": "node-agent"}
	ds := appsv1.DaemonSet{ObjectMeta: g.meta("kube-system", "node-agent", labels)}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: int32(g.s.Nodes), NumberReady: int32(g.s.Nodes), ObservedGeneration: 1}
	g.snap.DaemonSets = append(g.snap.DaemonSets, ds)
	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID}
	for i := range g.s.Nodes {
		g.pod("kube-system", fmt.Sprintf("node-agent-%05d", i), fmt.Sprintf("node-%05d", i), labels, ref)
	}
}

func (g *gen) deployment(ns, name string) {
	labels := map[string]string{"app": name, "team": ns}
	replicas := int32(g.s.Replicas)
	d := appsv1.Deployment{ObjectMeta: g.meta(ns, name, labels)}
	d.Spec.Replicas = &replicas
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, UpdatedReplicas: replicas}
	g.snap.Deployments = append(g.snap.Deployments, d)

	hash := fmt.Sprintf("%08x", g.seq)
	rsLabels := map[string]string{"app": name, "team": ns, "pod-template-hash": hash}
	rs := appsv1.ReplicaSet{ObjectMeta: g.meta(ns, name+"-"+hash, rsLabels)}
	yes := true
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
	rs.Spec.Replicas = &replicas
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name, "pod-template-hash": hash}}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, ObservedGeneration: 1}
	g.snap.ReplicaSets = append(g.snap.ReplicaSets, rs)

	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID}
	healthy := int32(0)
	for i := range g.s.Replicas {
		p := g.pod(ns, fmt.Sprintf("%s-%s-%05x", name, hash, i), g.node(), rsLabels, ref)
		if p.Status.Conditions[1].Status == corev1.ConditionTrue {
			healthy++
		}
	}
	g.pdb(ns, name, labels, healthy)
}

func (g *gen) pdb(ns, name string, labels map[string]string, healthy int32) {
	pdb := policyv1.PodDisruptionBudget{ObjectMeta: g.meta(ns, name, labels)}
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	expected := int32(g.s.Replicas)
	desired := expected - 1
	if g.seq%2 == 0 {
		pdb.Spec.MaxUnavailable = &intstr.IntOrString{Type: intstr.Int, IntVal: 1}
	} else {
		pdb.Spec.MinAvailable = &intstr.IntOrString{Type: intstr.String, StrVal: "90%"}
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: 1, ExpectedPods: expected, DesiredHealthy: desired, CurrentHealthy: healthy,
		DisruptionsAllowed: max(0, healthy-desired),
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
			ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(capturedAt.Add(-time.Hour))}},
	}
	g.snap.PodDisruptionBudgets = append(g.snap.PodDisruptionBudgets, pdb)
}

func (g *gen) statefulSet(ns, name string) {
	labels := map[string]string{"app": name, "team": ns}
	replicas := int32(g.s.Replicas)
	ss := appsv1.StatefulSet{ObjectMeta: g.meta(ns, name, labels)}
	ss.Spec.Replicas = &replicas
	ss.Spec.ServiceName = name
	ss.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	ss.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	g.snap.StatefulSets = append(g.snap.StatefulSets, ss)
	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: ss.Name, UID: ss.UID}
	sc := "standard"
	healthy := int32(0)
	for i := range g.s.Replicas {
		claim := fmt.Sprintf("data-%s-%d", name, i)
		pvName := fmt.Sprintf("pv-%s-%s-%d", ns, name, i)
		pvc := corev1.PersistentVolumeClaim{ObjectMeta: g.meta(ns, claim, labels)}
		pvc.Generation = 0
		pvc.Spec = corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &sc, VolumeName: pvName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		}
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}
		g.snap.PersistentVolumeClaims = append(g.snap.PersistentVolumeClaims, pvc)
		pv := corev1.PersistentVolume{ObjectMeta: g.meta("", pvName, nil)}
		pv.Generation = 0
		pv.Spec = corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: sc,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim, UID: pvc.UID},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "pd.csi.example.com", VolumeHandle: pvName}},
		}
		pv.Status.Phase = corev1.VolumeBound
		g.snap.PersistentVolumes = append(g.snap.PersistentVolumes, pv)

		p := g.pod(ns, fmt.Sprintf("%s-%d", name, i), g.node(), labels, ref)
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
		if p.Status.Conditions[1].Status == corev1.ConditionTrue {
			healthy++
		}
	}
	g.pdb(ns, name, labels, healthy)
}

// Constrain gives the pods of s the scheduling constraints the drain
// forecast judges, so that its cost can be measured on a big snapshot: each
// Deployment's pods a DoNotSchedule topology spread on the hostname
// (maxSkew 1, nodeTaintsPolicy Honor, over the pods of their ReplicaSet),
// each StatefulSet's pods a required anti-affinity on the hostname against
// each other. DaemonSet pods are left alone.
func Constrain(s *snapshot.Snapshot) {
	honor := corev1.NodeInclusionPolicyHonor
	for i := range s.Pods {
		p := &s.Pods[i]
		if len(p.OwnerReferences) == 0 {
			continue
		}
		app := p.Labels["app"]
		switch p.OwnerReferences[0].Kind {
		case "StatefulSet":
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}
		case "ReplicaSet":
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.DoNotSchedule, NodeTaintsPolicy: &honor,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "pod-template-hash": p.Labels["pod-template-hash"]}}}}
		}
	}
}
