package view

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Of is the view of s, pods with their Scheduling. It shares s's strings, maps and the values it keeps
// whole.
func Of(s *snapshot.Snapshot) *Snapshot {
	return &Snapshot{
		Header:                   s.Header,
		Metadata:                 s.Metadata,
		Nodes:                    each(s.Nodes, NodeOf),
		Pods:                     each(s.Pods, PodWithSchedulingOf),
		ReplicaSets:              each(s.ReplicaSets, ReplicaSetOf),
		Deployments:              each(s.Deployments, DeploymentOf),
		StatefulSets:             each(s.StatefulSets, StatefulSetOf),
		DaemonSets:               each(s.DaemonSets, DaemonSetOf),
		Jobs:                     each(s.Jobs, JobOf),
		CronJobs:                 each(s.CronJobs, CronJobOf),
		PodDisruptionBudgets:     each(s.PodDisruptionBudgets, PodDisruptionBudgetOf),
		PersistentVolumeClaims:   each(s.PersistentVolumeClaims, PersistentVolumeClaimOf),
		PersistentVolumes:        each(s.PersistentVolumes, PersistentVolumeOf),
		StorageClasses:           each(s.StorageClasses, StorageClassOf),
		HorizontalPodAutoscalers: each(s.HorizontalPodAutoscalers, HorizontalPodAutoscalerOf),
		VolumeAttachments:        each(s.VolumeAttachments, VolumeAttachmentOf),
		CSIDrivers:               each(s.CSIDrivers, CSIDriverOf),
		CSINodes:                 each(s.CSINodes, CSINodeOf),
		Namespaces:               each(s.Namespaces, NamespaceOf),
	}
}

// each is the views of objs: nil for nil, as a decoded null list.
func each[T, V any](objs []T, of func(*T) V) []V {
	if objs == nil {
		return nil
	}
	out := make([]V, len(objs))
	for i := range objs {
		out[i] = of(&objs[i])
	}
	return out
}

// MetaOf is the view of m.
func MetaOf(m *metav1.ObjectMeta) ObjectMeta {
	return ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, Generation: m.Generation,
		Labels: m.Labels, Annotations: m.Annotations, DeletionTimestamp: m.DeletionTimestamp, OwnerReferences: m.OwnerReferences,
	}
}

// NodeOf keeps of a node its metadata, whether it is cordoned, its taints,
// its allocatable resources and the volumes attached to it.
func NodeOf(n *corev1.Node) Node {
	v := Node{ObjectMeta: MetaOf(&n.ObjectMeta)}
	v.Spec.Unschedulable, v.Spec.Taints = n.Spec.Unschedulable, n.Spec.Taints
	v.Status.VolumesAttached = n.Status.VolumesAttached
	if a := n.Status.Allocatable; len(a) > 0 {
		v.Status.Allocatable = &Resources{
			MilliCPU: a.Cpu().MilliValue(), Memory: a.Memory().Value(),
			EphemeralStorage: a.StorageEphemeral().Value(), Pods: a.Pods().Value(),
		}
	}
	return v
}

func DaemonSetOf(d *appsv1.DaemonSet) Object          { return Object{MetaOf(&d.ObjectMeta)} }
func JobOf(j *batchv1.Job) Object                     { return Object{MetaOf(&j.ObjectMeta)} }
func CronJobOf(j *batchv1.CronJob) Object             { return Object{MetaOf(&j.ObjectMeta)} }
func StorageClassOf(c *storagev1.StorageClass) Object { return Object{MetaOf(&c.ObjectMeta)} }
func CSINodeOf(n *storagev1.CSINode) Object           { return Object{MetaOf(&n.ObjectMeta)} }
func NamespaceOf(n *corev1.Namespace) Object          { return Object{MetaOf(&n.ObjectMeta)} }

// VolumeAttachmentOf keeps of a VolumeAttachment its metadata, driver,
// node, persistent volume, whether it is attached and its detach error.
func VolumeAttachmentOf(a *storagev1.VolumeAttachment) VolumeAttachment {
	v := VolumeAttachment{ObjectMeta: MetaOf(&a.ObjectMeta)}
	v.Spec.Attacher, v.Spec.NodeName = a.Spec.Attacher, a.Spec.NodeName
	if pv := a.Spec.Source.PersistentVolumeName; pv != nil {
		v.Spec.PersistentVolumeName = *pv
	}
	v.Status.Attached = a.Status.Attached
	if e := a.Status.DetachError; e != nil {
		v.Status.DetachError = e.Message
	}
	return v
}

// CSIDriverOf keeps of a CSIDriver its metadata and attachRequired.
func CSIDriverOf(d *storagev1.CSIDriver) CSIDriver {
	v := CSIDriver{ObjectMeta: MetaOf(&d.ObjectMeta)}
	v.Spec.AttachRequired = d.Spec.AttachRequired
	return v
}

// HorizontalPodAutoscalerOf keeps of an autoscaler its metadata, the object
// it scales and its bounds.
func HorizontalPodAutoscalerOf(h *autoscalingv2.HorizontalPodAutoscaler) HorizontalPodAutoscaler {
	v := HorizontalPodAutoscaler{ObjectMeta: MetaOf(&h.ObjectMeta)}
	v.Spec.ScaleTargetRef, v.Spec.MinReplicas, v.Spec.MaxReplicas = h.Spec.ScaleTargetRef, h.Spec.MinReplicas, h.Spec.MaxReplicas
	return v
}

func scalable(m *metav1.ObjectMeta, replicas *int32, ready int32) Scalable {
	s := Scalable{ObjectMeta: MetaOf(m)}
	s.Spec.Replicas, s.Status.ReadyReplicas = replicas, ready
	return s
}

func ReplicaSetOf(r *appsv1.ReplicaSet) Scalable {
	return scalable(&r.ObjectMeta, r.Spec.Replicas, r.Status.ReadyReplicas)
}

func DeploymentOf(d *appsv1.Deployment) Scalable {
	return scalable(&d.ObjectMeta, d.Spec.Replicas, d.Status.ReadyReplicas)
}

func StatefulSetOf(s *appsv1.StatefulSet) Scalable {
	return scalable(&s.ObjectMeta, s.Spec.Replicas, s.Status.ReadyReplicas)
}

// PodOf keeps of a pod what the checks read: the metadata, the node, the
// grace period, the volumes that tie its data to the node or to its life
// (local and claim sources, see Volume), the phase, the start time and the
// Ready condition. Other volumes and conditions weigh on no check.
func PodOf(p *corev1.Pod) Pod {
	v := Pod{ObjectMeta: MetaOf(&p.ObjectMeta)}
	v.Spec.NodeName = p.Spec.NodeName
	v.Spec.TerminationGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
	v.Spec.PluginPaths = PluginPathsOf(&p.Spec)
	for i := range p.Spec.Volumes {
		if vol := &p.Spec.Volumes[i]; KeepsVolume(vol) {
			out := Volume{Name: vol.Name, EmptyDir: vol.EmptyDir, HostPath: vol.HostPath, PersistentVolumeClaim: vol.PersistentVolumeClaim}
			if vol.Ephemeral != nil {
				out.Ephemeral = &struct{}{}
			}
			v.Spec.Volumes = append(v.Spec.Volumes, out)
		}
	}
	v.Status.Phase, v.Status.StartTime = p.Status.Phase, p.Status.StartTime
	for _, c := range p.Status.Conditions {
		if KeepsCondition(c.Type) {
			v.Status.Conditions = append(v.Status.Conditions, PodCondition{Type: c.Type, Status: c.Status})
		}
	}
	return v
}

// PodWithSchedulingOf is PodOf with the pod's Scheduling, what the drain
// forecast reads. Of and the decoding keep it; a pod cache that keeps only
// what PodOf keeps (maintd's) gives the checks what they read but no
// forecast.
func PodWithSchedulingOf(p *corev1.Pod) Pod {
	v := PodOf(p)
	v.Scheduling = SchedulingOf(p)
	return v
}

// SchedulingOf is what the drain forecast reads of p, or nil when p has
// none of it.
func SchedulingOf(p *corev1.Pod) *Scheduling {
	s := Scheduling{
		Requests: requests(&p.Spec), NodeSelector: p.Spec.NodeSelector, Affinity: p.Spec.Affinity,
		Tolerations: p.Spec.Tolerations, TopologySpreadConstraints: p.Spec.TopologySpreadConstraints,
		ResourceClaims: len(p.Spec.ResourceClaims),
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			for _, port := range cs[i].Ports {
				if port.HostPort != 0 {
					s.HostPorts = append(s.HostPorts, port)
				}
			}
		}
	}
	for _, c := range p.Status.Conditions {
		switch {
		case c.Status != corev1.ConditionTrue:
		case c.Type == corev1.PodScheduled:
			s.Scheduled = c.LastTransitionTime
		case c.Type == corev1.PodReady:
			s.Ready = c.LastTransitionTime
		}
	}
	if restarted(p) {
		// The Ready condition's time is its last transition: after a
		// container's restart it is the pod's Ready again, not its first,
		// and would time the workload by how long it ran before. The pod
		// gives no time of its first Ready then: it is no sample.
		s.Ready = metav1.Time{}
	}
	r := s.Requests
	if r.MilliCPU == 0 && r.Memory == 0 && r.EphemeralStorage == 0 && r.Other == nil && s.NodeSelector == nil && s.Affinity == nil &&
		s.Tolerations == nil && s.TopologySpreadConstraints == nil && s.HostPorts == nil && s.ResourceClaims == 0 &&
		s.Scheduled.IsZero() && s.Ready.IsZero() {
		return nil
	}
	s.Requests.Pods = 1
	return &s
}

// restarted says whether a container of p has restarted (restartCount above
// 0): its Ready condition's lastTransitionTime then follows the restart (an
// init container's retries come before the first Ready, and are not
// counted). A
// flap of a readiness probe alone leaves no trace in the pod's status; a
// pod's Ready that flapped that way is told apart only by watching it, as
// maintd does (its learned times to Ready are each replacement's first).
func restarted(p *corev1.Pod) bool {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].RestartCount > 0 {
			return true
		}
	}
	return false
}

// requests are a pod's effective requests as the scheduler counts them
// (the Kubernetes resource helper's PodRequests, without in-place resize):
// the containers' sum, or more if an init container needs more (sidecars,
// init containers with restartPolicy Always, run alongside and add up), the
// pod-level requests instead for CPU, memory and hugepages when set, plus
// the overhead. Pods is 0: the caller counts the pod.
func requests(spec *corev1.PodSpec) Resources {
	sum := map[corev1.ResourceName]int64{}
	add := func(to map[corev1.ResourceName]int64, l corev1.ResourceList) {
		for name, q := range l {
			to[name] += amount(name, q)
		}
	}
	for i := range spec.Containers {
		add(sum, spec.Containers[i].Resources.Requests)
	}
	sidecars, initMax := map[corev1.ResourceName]int64{}, map[corev1.ResourceName]int64{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		var need map[corev1.ResourceName]int64
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(sum, c.Resources.Requests)
			add(sidecars, c.Resources.Requests)
			need = sidecars
		} else {
			need = map[corev1.ResourceName]int64{}
			add(need, c.Resources.Requests)
			for name, v := range sidecars {
				need[name] += v
			}
		}
		for name, v := range need {
			initMax[name] = max(initMax[name], v)
		}
	}
	for name, v := range initMax {
		sum[name] = max(sum[name], v)
	}
	if spec.Resources != nil {
		for name, q := range spec.Resources.Requests {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				sum[name] = amount(name, q)
			}
		}
	}
	add(sum, spec.Overhead)
	var r Resources
	for name, v := range sum {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU = v
		case corev1.ResourceMemory:
			r.Memory = v
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage = v
		case corev1.ResourcePods:
		default:
			if v > 0 {
				r.Other = append(r.Other, name)
			}
		}
	}
	slices.Sort(r.Other)
	return r
}

// amount is q in the unit Resources counts name in: millicores for CPU,
// whole units (bytes) otherwise, rounded up.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// KeepsVolume reports whether PodOf keeps a volume: one with a local or
// claim source, which the analysis reads.
func KeepsVolume(v *corev1.Volume) bool {
	return v.EmptyDir != nil || v.HostPath != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil
}

// PluginPathsOf is the args and env values of spec's containers (init
// containers too) that name a CSI node plugin's directory: they contain
// "/plugins/", as the node-driver-registrar's
// --kubelet-registration-path=/var/lib/kubelet/plugins/<driver>/csi.sock
// does. PodOf keeps them; a pod cache that keeps them too gives the
// analysis what it reads (maintd: write them back as one container's args).
func PluginPathsOf(spec *corev1.PodSpec) []string {
	var out []string
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for _, a := range cs[i].Args {
				if strings.Contains(a, "/plugins/") {
					out = append(out, a)
				}
			}
			for _, e := range cs[i].Env {
				if strings.Contains(e.Value, "/plugins/") {
					out = append(out, e.Value)
				}
			}
		}
	}
	return out
}

// KeepsCondition reports whether PodOf keeps a pod condition of type t:
// Ready, the one the analysis reads.
func KeepsCondition(t corev1.PodConditionType) bool { return t == corev1.PodReady }

func PodDisruptionBudgetOf(p *policyv1.PodDisruptionBudget) PodDisruptionBudget {
	return PodDisruptionBudget{ObjectMeta: MetaOf(&p.ObjectMeta), Spec: p.Spec, Status: p.Status}
}

func PersistentVolumeClaimOf(c *corev1.PersistentVolumeClaim) PersistentVolumeClaim {
	v := PersistentVolumeClaim{ObjectMeta: MetaOf(&c.ObjectMeta)}
	v.Spec.AccessModes, v.Spec.VolumeName = c.Spec.AccessModes, c.Spec.VolumeName
	return v
}

func PersistentVolumeOf(pv *corev1.PersistentVolume) PersistentVolume {
	v := PersistentVolume{ObjectMeta: MetaOf(&pv.ObjectMeta)}
	v.Spec.AccessModes, v.Spec.NodeAffinity = pv.Spec.AccessModes, pv.Spec.NodeAffinity
	if c := pv.Spec.CSI; c != nil {
		v.Spec.CSI = &CSIVolume{Driver: c.Driver, VolumeHandle: c.VolumeHandle}
	}
	if r := pv.Spec.ClaimRef; r != nil {
		v.Spec.ClaimRef = &ClaimRef{Namespace: r.Namespace, Name: r.Name, UID: r.UID}
	}
	if pv.Spec.Local != nil {
		v.Spec.Local = &struct{}{}
	}
	if pv.Spec.HostPath != nil {
		v.Spec.HostPath = &struct{}{}
	}
	return v
}
