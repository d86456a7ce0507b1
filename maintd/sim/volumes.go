// Volumes: a CSI driver whose volumes attach to nodes, the attach-detach
// controller and the driver's external-attacher, the storage providers
// that serve the volumes, and what maintd promises about them.

package sim

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Storage is a scenario's volumes: a CSI driver whose volumes attach (the
// attach-detach controller makes their VolumeAttachments, as for a
// CSIDriver with attachRequired; no CSIDriver object is served: maintd
// reads none, and takes an unknown driver's volumes as attachable), a
// StatefulSet "vol" whose replicas each use a ReadWriteOnce claim of it,
// bound in advance to a CSI PersistentVolume, and, when Providers is set,
// the pods that serve the driver's volumes.
type Storage struct {
	Driver string
	// Replicas and PDB ("max1", "none") of the StatefulSet, its first pod
	// on node On, the others round-robin after it.
	Replicas int
	PDB      string
	On       string
	// Providers is how maintd may recognise the storage providers (""
	// none: a cloud provider's disks): "plugin" (they run in the namespace
	// of the driver's node plugin), "annotation" (they carry
	// analyze.StorageProviderAnnotation), "label" (Rook's app=rook-ceph-osd,
	// the driver a *.csi.ceph.com). One provider pod per node, of a
	// Deployment or (ProviderKind) a StatefulSet.
	Providers    string
	ProviderKind string
}

// Where the storage system runs.
const (
	// storageNS holds the storage providers, and the node plugin of the
	// "plugin" seeds; pluginNS the node plugin of the others.
	storageNS = "storage"
	pluginNS  = "csi-system"
	// claimTemplate is the StatefulSet's volumeClaimTemplate.
	claimTemplate = "data"
)

// Annotations on a VolumeAttachment that say how its driver's attacher
// treats it (drawn when the attach-detach controller makes it).
const (
	// attachAfter is how long after its creation it is attached (seconds).
	attachAfter = "sim.sentinel.dev/attach-after"
	// detachAfter is how long after its deletion the attacher lets it go
	// (seconds); "never": its detach keeps failing (status.detachError).
	detachAfter = "sim.sentinel.dev/detach-after"
)

// csi is the store's CSI driver and its storage system.
type csi struct {
	driver string
	// providers is the namespace of the pods (not DaemonSet pods) that
	// serve the driver's volumes, "" when none do.
	providers string
}

// attachmentName is the name the attach-detach controller gives the
// VolumeAttachment of a CSI volume on a node.
func attachmentName(handle, driver, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(handle+driver+node)))
}

// attachedName is how node.status.volumesAttached names a CSI volume.
func attachedName(driver, handle string) corev1.UniqueVolumeName {
	return corev1.UniqueVolumeName("kubernetes.io/csi/" + driver + "^" + handle)
}

// drawStorage adds to a scenario, from w.storing, volumes (1 seed in 3):
// the StatefulSet with a claim per replica on the first plan's node, and
// at 1 in 2 storage providers. People accept the volumes' re-attach
// (rwo-reattach, high) on most plans, and list the new workloads on most
// plans that list theirs; half the plans wait for a detach 30 s to 3 min
// (spec.volumeDetachTimeout) before they say it is stuck.
func (w *World) drawStorage(sc *Scenario) {
	vr := w.storing
	if vr.IntN(3) != 0 {
		return
	}
	w.volumes = true
	st := &Storage{Driver: "disk.csi.sim.dev", Replicas: 1 + vr.IntN(3), PDB: []string{"max1", "none"}[vr.IntN(2)], On: sc.Plans[0].NodeName}
	if vr.IntN(2) == 0 {
		st.Providers = []string{"plugin", "plugin", "annotation", "label"}[vr.IntN(4)]
		st.ProviderKind = []string{"Deployment", statefulSet}[vr.IntN(2)]
		st.Driver = "blk.csi.sim.dev"
		if st.Providers == "label" {
			st.Driver = "rbd.csi.ceph.com"
		}
	}
	sc.Storage = st
	for i := range sc.Plans {
		if vr.IntN(5) != 0 {
			sc.Plans[i].AcceptedRisks = append(sc.Plans[i].AcceptedRisks, string(analyze.RWOReattach))
		}
		if vr.IntN(2) == 0 {
			sc.Plans[i].VolumeDetachTimeout = &metav1.Duration{Duration: time.Duration(30+vr.IntN(151)) * time.Second}
		}
		if len(sc.Plans[i].Workloads) > 0 {
			for _, ref := range st.workloads() {
				if vr.IntN(3) != 0 {
					sc.Plans[i].Workloads = append(sc.Plans[i].Workloads, ref)
				}
			}
		}
	}
	if sc.Campaign != nil {
		sc.Campaign.AcceptedRisks = append(sc.Campaign.AcceptedRisks, string(analyze.RWOReattach))
	}
}

// provider is the name of the storage providers' workload.
func (st *Storage) provider() string {
	if st.Providers == "label" {
		return "rook-ceph-osd"
	}
	return "storage-server"
}

// workloads are the workloads the storage adds, as a plan lists them.
func (st *Storage) workloads() []api.WorkloadRef {
	refs := []api.WorkloadRef{{Kind: statefulSet, Namespace: Namespace, Name: "vol"}}
	if st.Providers != "" {
		refs = append(refs, api.WorkloadRef{Kind: st.ProviderKind, Namespace: storageNS, Name: st.provider()})
	}
	return refs
}

// storage creates a scenario's volumes on nodes: the driver's node plugin
// (a DaemonSet pod on every node), the claims and volumes, the StatefulSet
// and its pods, and the providers (one pod on every node). w.mu is held.
func (w *World) storage(st *Storage, nodes int) {
	vr := w.storing
	node := func(i int) string { return fmt.Sprintf("node-%d", i%nodes+1) }
	w.s.csi = &csi{driver: st.Driver}
	if st.Providers != "" {
		w.s.csi.providers = storageNS
	}
	grace := int64(30)
	// The node plugin: a DaemonSet pod on every node that registers the
	// driver with its kubelet (the node-driver-registrar's path).
	ns := pluginNS
	if st.Providers == "plugin" {
		ns = storageNS
	}
	sel := map[string]string{"app": "csi-node"}
	plugin := corev1.PodSpec{TerminationGracePeriodSeconds: &grace,
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "node-driver-registrar", Image: "csi-node-driver-registrar",
			Args: []string{"--kubelet-registration-path=/var/lib/kubelet/plugins/" + st.Driver + "/csi.sock"}}}}
	o, err := w.s.create(dsR, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "csi-node"},
		Spec:   appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: plugin}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: int32(nodes), CurrentNumberScheduled: int32(nodes), NumberReady: int32(nodes), NumberAvailable: int32(nodes), UpdatedNumberScheduled: int32(nodes)}})
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	ds := o.(*appsv1.DaemonSet)
	for i := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "csi-node-" + node(i), Labels: sel, Annotations: map[string]string{readyAfter: "0", exitAfter: "0"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}}, Spec: *plugin.DeepCopy()}
		pod.Spec.NodeName = node(i)
		w.must(w.s.create(podsR, pod))
	}
	// The StatefulSet, a claim per replica bound to its volume.
	start := 0
	fmt.Sscanf(st.On, "node-%d", &start)
	start--
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	for i := range st.Replicas {
		claim := fmt.Sprintf("%s-vol-%d", claimTemplate, i)
		pvName := "pv-" + Namespace + "-" + claim
		o, err := w.s.create(pvcsR, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: claim},
			Spec:   corev1.PersistentVolumeClaimSpec{AccessModes: rwo, VolumeName: pvName, Resources: corev1.VolumeResourceRequirements{Requests: size}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: rwo, Capacity: size}})
		if err != nil {
			w.failf("setup: %v", err)
			return
		}
		w.must(w.s.create(pvsR, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
			Spec: corev1.PersistentVolumeSpec{AccessModes: rwo, Capacity: size, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: Namespace, Name: claim, UID: o.(*corev1.PersistentVolumeClaim).UID},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: st.Driver, VolumeHandle: "vol-" + pvName}}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}))
	}
	sel = map[string]string{"app": "vol"}
	ann := map[string]string{readyAfter: "0", exitAfter: fmt.Sprint(vr.IntN(10))}
	replicas := int32(st.Replicas)
	o, err = w.s.create(stsR, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "vol"},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, ServiceName: "vol", PodManagementPolicy: appsv1.ParallelPodManagement,
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: ann}, Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "c", Image: "vol"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: claimTemplate}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: rwo, Resources: corev1.VolumeResourceRequirements{Requests: size}}}}}})
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	for i := range st.Replicas {
		pod := statefulPod(o.(*appsv1.StatefulSet), i)
		pod.Spec.NodeName = node(start + i)
		w.must(w.s.create(podsR, pod))
	}
	w.pdbs(Workload{Name: "vol", PDB: st.PDB}, sel, replicas)
	if st.Providers == "" {
		return
	}
	// The providers: one pod on every node.
	name := st.provider()
	sel = map[string]string{"app": name}
	ann = map[string]string{readyAfter: "0", exitAfter: fmt.Sprint(vr.IntN(10))}
	if st.Providers == "annotation" {
		ann[analyze.StorageProviderAnnotation] = st.Driver
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: ann},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "c", Image: name}}}}
	replicas = int32(nodes)
	if st.ProviderKind == statefulSet {
		o, err := w.s.create(stsR, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: storageNS, Name: name},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, ServiceName: name, PodManagementPolicy: appsv1.ParallelPodManagement, Template: tmpl}})
		if err != nil {
			w.failf("setup: %v", err)
			return
		}
		for i := range nodes {
			pod := statefulPod(o.(*appsv1.StatefulSet), i)
			pod.Spec.NodeName = node(i)
			w.must(w.s.create(podsR, pod))
		}
		return
	}
	o, err = w.s.create(depsR, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: storageNS, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}})
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	dep := o.(*appsv1.Deployment)
	o, err = w.s.create(rsR, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: storageNS, Name: name + "-7c4b", Labels: sel,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}})
	if err != nil {
		w.failf("setup: %v", err)
		return
	}
	rs := o.(*appsv1.ReplicaSet)
	for i := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: storageNS, Name: fmt.Sprintf("%s-%d", rs.Name, i), Labels: sel, Annotations: maps.Clone(ann),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: podSpec(tmpl.Spec)}
		pod.Spec.NodeName = node(i)
		w.must(w.s.create(podsR, pod))
	}
}

// --- the volume controllers -------------------------------------------------

// volumesOf are the PersistentVolumes of the store's driver that pod's
// claims are bound to (the claim's volumeName), by name.
func (s *store) volumesOf(pod *corev1.Pod) []*corev1.PersistentVolume {
	if s.csi == nil {
		return nil
	}
	var out []*corev1.PersistentVolume
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		c, err := s.get(pvcsR, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			continue
		}
		o, err := s.get(pvsR, "", c.(*corev1.PersistentVolumeClaim).Spec.VolumeName)
		if err != nil {
			continue
		}
		if pv := o.(*corev1.PersistentVolume); pv.Spec.CSI != nil && pv.Spec.CSI.Driver == s.csi.driver {
			out = append(out, pv)
		}
	}
	return out
}

// attachDetach is the attach-detach controller: a VolumeAttachment for
// each volume of the driver that a pod on a node uses (a pod that exists
// and has not ended), made once no VolumeAttachment of that volume for
// another node is left (a ReadWriteOnce volume attaches to one node: the
// Multi-Attach error), and a VolumeAttachment no pod on its node needs any
// more deleted (the attacher's finalizer then holds it until the volume is
// detached). delays draws a new VolumeAttachment's attach and detach
// delays. It returns the writes it made.
func (s *store) attachDetach(delays func() (attach, detach string)) int {
	if s.csi == nil {
		return 0
	}
	type want struct{ pv, handle, node string }
	wanted := map[string]want{}
	for _, o := range s.list(podsR, "", nil) {
		pod := o.(*corev1.Pod)
		if pod.Spec.NodeName == "" || ended(pod) {
			continue
		}
		for _, pv := range s.volumesOf(pod) {
			wanted[attachmentName(pv.Spec.CSI.VolumeHandle, s.csi.driver, pod.Spec.NodeName)] = want{pv.Name, pv.Spec.CSI.VolumeHandle, pod.Spec.NodeName}
		}
	}
	vas := map[string]*storagev1.VolumeAttachment{}
	onNode := map[string]string{} // PV -> a node it has a VolumeAttachment for
	for _, o := range s.list(vasR, "", nil) {
		va := o.(*storagev1.VolumeAttachment)
		vas[va.Name] = va
		onNode[ptrOr(va.Spec.Source.PersistentVolumeName, "")] = va.Spec.NodeName
	}
	n := 0
	for _, name := range sortedKeys(wanted) {
		wt := wanted[name]
		if _, ok := vas[name]; ok {
			continue
		}
		if other, ok := onNode[wt.pv]; ok && other != wt.node {
			continue // Multi-Attach: still attached to another node
		}
		attach, detach := delays()
		pv := wt.pv
		_, err := s.create(vasR, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{attachAfter: attach, detachAfter: detach}},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: s.csi.driver, NodeName: wt.node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}})
		s.logf("attach-detach controller: attach %s to %s (VolumeAttachment %.12s, attach %ss, detach %ss) -> %s", pv, wt.node, name, attach, detach, errText(err))
		if err == nil {
			n++
			onNode[wt.pv] = wt.node
		}
	}
	for _, name := range sortedKeys(vas) {
		if _, ok := wanted[name]; ok || vas[name].DeletionTimestamp != nil {
			continue
		}
		_, err := s.remove(vasR, "", name, "", false)
		s.logf("attach-detach controller: detach %s from %s (VolumeAttachment %.12s) -> %s", ptrOr(vas[name].Spec.Source.PersistentVolumeName, ""), vas[name].Spec.NodeName, name, errText(err))
		if err == nil {
			n++
		}
	}
	return n
}

// attacherFinalizer is the finalizer the driver's external-attacher puts
// on its VolumeAttachments.
func attacherFinalizer(driver string) string {
	return "external-attacher/" + regexp.MustCompile("[^a-zA-Z0-9-]").ReplaceAllString(driver, "-")
}

// attacher is the driver's external-attacher: it puts its finalizer on a
// new VolumeAttachment and attaches it once its attach delay passed
// (status.attached); a VolumeAttachment being deleted it lets go (the
// finalizer removed: it is gone) once its detach delay passed, or, for a
// volume that never detaches, sets status.detachError and keeps it. next
// is the earliest time something of it is due later (zero: nothing).
func (s *store) attacher(act bool) (n int, next time.Time) {
	if s.csi == nil {
		return 0, next
	}
	now := s.now().Time
	due := dueAt(now, act, &next)
	fin := attacherFinalizer(s.csi.driver)
	for _, o := range s.list(vasR, "", nil) {
		va := o.(*storagev1.VolumeAttachment)
		if va.Spec.Attacher != s.csi.driver {
			continue
		}
		changed, what := false, ""
		switch {
		case va.DeletionTimestamp != nil && va.Annotations[detachAfter] == "never":
			if va.Status.DetachError == nil && due(now) {
				t := metav1.NewTime(now)
				va.Status.DetachError = &storagev1.VolumeError{Time: t, Message: "rpc error: code = DeadlineExceeded desc = context deadline exceeded"}
				changed, what = true, "detach failed"
			}
		case va.DeletionTimestamp != nil:
			d, _ := strconv.Atoi(va.Annotations[detachAfter])
			if due(va.DeletionTimestamp.Add(time.Duration(d) * time.Second)) {
				va.Finalizers = slices.DeleteFunc(va.Finalizers, func(f string) bool { return f == fin })
				changed, what = true, "detached"
			}
		default:
			if !slices.Contains(va.Finalizers, fin) && due(now) {
				va.Finalizers = append(va.Finalizers, fin)
				changed = true
			}
			d, _ := strconv.Atoi(va.Annotations[attachAfter])
			if !va.Status.Attached && slices.Contains(va.Finalizers, fin) && due(va.CreationTimestamp.Add(time.Duration(d)*time.Second)) {
				va.Status.Attached = true
				changed, what = true, "attached"
			}
		}
		if changed {
			_, err := s.update(vasR, va, false)
			if what != "" {
				s.logf("attacher: %s %s on %s (VolumeAttachment %.12s) -> %s", what, ptrOr(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName, va.Name, errText(err))
			}
			if err == nil {
				n++
			}
		}
	}
	return n, next
}

// nodeVolumes is the attach-detach controller's node status updater: each
// node's status.volumesAttached lists the volumes attached to it, but
// those whose detach has begun (the controller takes them out before it
// detaches), and again those whose detach failed.
func (s *store) nodeVolumes() int {
	if s.csi == nil {
		return 0
	}
	byNode := map[string][]corev1.AttachedVolume{}
	for _, o := range s.list(vasR, "", nil) {
		va := o.(*storagev1.VolumeAttachment)
		if !va.Status.Attached || va.DeletionTimestamp != nil && va.Status.DetachError == nil {
			continue
		}
		pv, err := s.get(pvsR, "", ptrOr(va.Spec.Source.PersistentVolumeName, ""))
		if err != nil || pv.(*corev1.PersistentVolume).Spec.CSI == nil {
			continue
		}
		byNode[va.Spec.NodeName] = append(byNode[va.Spec.NodeName], corev1.AttachedVolume{Name: attachedName(va.Spec.Attacher, pv.(*corev1.PersistentVolume).Spec.CSI.VolumeHandle)})
	}
	n := 0
	for _, o := range s.list(nodesR, "", nil) {
		node := o.(*corev1.Node)
		want := byNode[node.Name]
		slices.SortFunc(want, func(a, b corev1.AttachedVolume) int { return cmp.Compare(a.Name, b.Name) })
		if jsonEqual(want, node.Status.VolumesAttached) || len(want) == 0 && len(node.Status.VolumesAttached) == 0 {
			continue
		}
		node.Status.VolumesAttached = want
		if _, err := s.update(nodesR, node, true); err == nil {
			n++
		}
	}
	return n
}

// mounted reports whether every volume of the driver that pod uses is
// attached to its node: its kubelet starts it only then.
func (s *store) mounted(pod *corev1.Pod) bool {
	for _, pv := range s.volumesOf(pod) {
		o, err := s.get(vasR, "", attachmentName(pv.Spec.CSI.VolumeHandle, s.csi.driver, pod.Spec.NodeName))
		if err != nil || !o.(*storagev1.VolumeAttachment).Status.Attached || o.(*storagev1.VolumeAttachment).DeletionTimestamp != nil {
			return false
		}
	}
	return true
}

// provider reports whether pod is a storage provider of the driver, by
// the world's record: a pod of the providers' namespace that no DaemonSet
// runs.
func (s *store) provider(pod *corev1.Pod) bool {
	if s.csi == nil || s.csi.providers == "" || pod.Namespace != s.csi.providers {
		return false
	}
	ref := metav1.GetControllerOf(pod)
	return ref == nil || ref.Kind != "DaemonSet"
}

// hung reports whether a deleted pod cannot go: it started (its volumes
// were mounted) and uses a volume served by the storage providers, and no
// provider runs on its node (running, not deleting) to let its kubelet
// unmount it (the Ceph hang).
func (s *store) hung(pod *corev1.Pod) bool {
	if s.csi == nil || s.csi.providers == "" || pod.Status.StartTime == nil || len(s.volumesOf(pod)) == 0 {
		return false
	}
	for _, o := range s.list(podsR, s.csi.providers, nil) {
		if p := o.(*corev1.Pod); p.Spec.NodeName == pod.Spec.NodeName && s.provider(p) && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			return false
		}
	}
	return true
}

// --- what maintd promises about volumes -------------------------------------

// gone is a volume of a pod maintd evicted: the node it was evicted from,
// the pod, the PersistentVolume and how the node's status names it, and
// when.
type gone struct {
	node, pv string
	pod      types.UID
	name     corev1.UniqueVolumeName
	at       time.Time
}

// evictedVolumes records the volumes of a pod maintd evicted (the world's
// claims and volumes as they are now); w.mu is held.
func (w *World) evictedVolumes(pod *corev1.Pod) {
	for _, pv := range w.s.volumesOf(pod) {
		w.gone = append(w.gone, gone{node: pod.Spec.NodeName, pv: pv.Name, pod: pod.UID, name: attachedName(pv.Spec.CSI.Driver, pv.Spec.CSI.VolumeHandle), at: w.clock.Now()})
	}
}

// checkDetached checks a plan's status written Drained against the
// world's records: no VolumeAttachment of its node is left for a volume of
// a pod maintd evicted from that node since the plan was made, nor does
// the node's status.volumesAttached list one, unless a pod on the node
// that maintd did not evict uses that volume (the attachment is that
// pod's). w.mu is held.
func (w *World) checkDetached(in *instance, p *api.MaintenancePlan) {
	node := p.Spec.NodeName
	var listed []corev1.UniqueVolumeName
	if o, err := w.s.get(nodesR, "", node); err == nil {
		for _, v := range o.(*corev1.Node).Status.VolumesAttached {
			listed = append(listed, v.Name)
		}
	}
	vas := map[string]string{} // PV -> its VolumeAttachment on node
	for _, o := range w.s.list(vasR, "", nil) {
		if va := o.(*storagev1.VolumeAttachment); va.Spec.NodeName == node {
			vas[ptrOr(va.Spec.Source.PersistentVolumeName, "")] = va.Name
		}
	}
	for _, g := range w.gone {
		if g.node != node || g.at.Before(p.CreationTimestamp.Time) || w.usedBy(node, g.pv) {
			continue
		}
		if va, ok := vas[g.pv]; ok {
			w.violate("%s wrote plan %s Drained while VolumeAttachment %s of node %s (PV %s, of pod uid %s it evicted %s ago) is not gone", in.name, p.Name, va, node, g.pv, g.pod, w.clock.Now().Sub(g.at))
		} else if slices.Contains(listed, g.name) {
			w.violate("%s wrote plan %s Drained while node %s's status.volumesAttached lists %s (PV %s, of pod uid %s it evicted %s ago)", in.name, p.Name, node, g.name, g.pv, g.pod, w.clock.Now().Sub(g.at))
		}
	}
}

// usedBy reports whether a pod on node that maintd did not evict uses
// the PersistentVolume pv; w.mu is held.
func (w *World) usedBy(node, pv string) bool {
	for _, o := range w.s.list(podsR, "", nil) {
		pod := o.(*corev1.Pod)
		if pod.Spec.NodeName != node || w.evictions[pod.UID] > 0 {
			continue
		}
		if slices.ContainsFunc(w.s.volumesOf(pod), func(v *corev1.PersistentVolume) bool { return v.Name == pv }) {
			return true
		}
	}
	return false
}

// checkProvider checks an eviction of maintd that was applied, by the
// world's records: a storage provider is not evicted while a consumer of
// its driver's volumes (a pod that uses one) is still on its node, not
// gone, nor while a VolumeAttachment of its driver is left on that node.
// w.mu is held.
func (w *World) checkProvider(in *instance, pod *corev1.Pod) {
	if !w.s.provider(pod) {
		return
	}
	for _, o := range w.s.list(podsR, "", nil) {
		if c := o.(*corev1.Pod); c.Spec.NodeName == pod.Spec.NodeName && len(w.s.volumesOf(c)) > 0 {
			w.violate("%s evicted storage provider %s/%s while consumer %s/%s of driver %s is still on node %s (deleting %t)", in.name, pod.Namespace, pod.Name, c.Namespace, c.Name, w.s.csi.driver, c.Spec.NodeName, c.DeletionTimestamp != nil)
			return
		}
	}
	for _, o := range w.s.list(vasR, "", nil) {
		if va := o.(*storagev1.VolumeAttachment); va.Spec.NodeName == pod.Spec.NodeName && va.Spec.Attacher == w.s.csi.driver {
			w.violate("%s evicted storage provider %s/%s while VolumeAttachment %s (PV %s) of driver %s is still on node %s", in.name, pod.Namespace, pod.Name, va.Name, ptrOr(va.Spec.Source.PersistentVolumeName, ""), va.Spec.Attacher, va.Spec.NodeName)
			return
		}
	}
}

// volumeControllers runs the attach-detach controller's parts and the
// attacher: which (0 the controller, 1 the attacher, 2 the node status
// updater), or every one (-1). It returns the writes they made; w.mu is
// held.
func (w *World) volumeControllers(which int) int {
	n := 0
	if which < 0 || which == 0 {
		n += w.s.attachDetach(w.attachDelays)
	}
	if which < 0 || which == 1 {
		k, _ := w.s.attacher(true)
		n += k
	}
	if which < 0 || which == 2 {
		n += w.s.nodeVolumes()
	}
	return n
}

// attachDelays draws a new VolumeAttachment's attach delay (0-10 s) and
// detach delay: mostly under 20 s, at 1 in 4 from 1 to 8 minutes (past
// spec.volumeDetachTimeout's default at times), at 1 in 25 never.
func (w *World) attachDelays() (attach, detach string) {
	vr := w.storing
	attach = fmt.Sprint(vr.IntN(11))
	switch n := vr.IntN(150); {
	case n < 6:
		detach = "never"
	case n < 43:
		detach = fmt.Sprint(60 + vr.IntN(421))
	default:
		detach = fmt.Sprint(vr.IntN(20))
	}
	return attach, detach
}
