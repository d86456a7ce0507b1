package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// The resources the simulated API serves, with their kinds.
var (
	nodesR    = corev1.SchemeGroupVersion.WithResource("nodes")
	podsR     = corev1.SchemeGroupVersion.WithResource("pods")
	pvsR      = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcsR     = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	pdbsR     = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	rsR       = appsv1.SchemeGroupVersion.WithResource("replicasets")
	depsR     = appsv1.SchemeGroupVersion.WithResource("deployments")
	stsR      = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	dsR       = appsv1.SchemeGroupVersion.WithResource("daemonsets")
	jobsR     = batchv1.SchemeGroupVersion.WithResource("jobs")
	cronJobsR = batchv1.SchemeGroupVersion.WithResource("cronjobs")
	plansR    = api.SchemeGroupVersion.WithResource("maintenanceplans")
	campsR    = api.SchemeGroupVersion.WithResource("maintenancecampaigns")
	hpasR     = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	cmsR      = corev1.SchemeGroupVersion.WithResource("configmaps")
	vasR      = storagev1.SchemeGroupVersion.WithResource("volumeattachments")
	nssR      = corev1.SchemeGroupVersion.WithResource("namespaces")
	resources = []schema.GroupVersionResource{nodesR, podsR, pvsR, pvcsR, pdbsR, rsR, depsR, stsR, dsR, jobsR, cronJobsR, plansR, hpasR, cmsR, campsR, vasR, nssR}
	listKinds = map[schema.GroupVersionResource]func() runtime.Object{}
	scheme    = runtime.NewScheme()
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme, api.AddToScheme, autoscalingv2.AddToScheme, storagev1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	listKinds[nodesR] = func() runtime.Object { return &corev1.NodeList{} }
	listKinds[podsR] = func() runtime.Object { return &corev1.PodList{} }
	listKinds[pvsR] = func() runtime.Object { return &corev1.PersistentVolumeList{} }
	listKinds[pvcsR] = func() runtime.Object { return &corev1.PersistentVolumeClaimList{} }
	listKinds[pdbsR] = func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} }
	listKinds[rsR] = func() runtime.Object { return &appsv1.ReplicaSetList{} }
	listKinds[depsR] = func() runtime.Object { return &appsv1.DeploymentList{} }
	listKinds[stsR] = func() runtime.Object { return &appsv1.StatefulSetList{} }
	listKinds[dsR] = func() runtime.Object { return &appsv1.DaemonSetList{} }
	listKinds[jobsR] = func() runtime.Object { return &batchv1.JobList{} }
	listKinds[cronJobsR] = func() runtime.Object { return &batchv1.CronJobList{} }
	listKinds[plansR] = func() runtime.Object { return &api.MaintenancePlanList{} }
	listKinds[hpasR] = func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} }
	listKinds[cmsR] = func() runtime.Object { return &corev1.ConfigMapList{} }
	listKinds[campsR] = func() runtime.Object { return &api.MaintenanceCampaignList{} }
	listKinds[vasR] = func() runtime.Object { return &storagev1.VolumeAttachmentList{} }
	listKinds[nssR] = func() runtime.Object { return &corev1.NamespaceList{} }
}

// store holds the objects of the simulated cluster, by resource and
// namespace/name, with one resourceVersion counter as etcd has. Every
// write makes a watch event for every controller instance. The client-go
// fake clientset's ObjectTracker is not used: it keeps no
// resourceVersions, so it can neither refuse a stale write (409) nor tell
// a cache that lags from one that does not.
type store struct {
	objects map[schema.GroupVersionResource]map[string]runtime.Object
	rv      int64
	uids    int
	// watch receives each change (resource, event) once it is made; status
	// says it was a write of the status subresource.
	watch func(r schema.GroupVersionResource, ev watch.Event, status bool)
	// now is the simulated time, for creation and deletion timestamps.
	now func() metav1.Time
	// lineage is the world's record of which pod replaces which: a pod
	// the ReplicaSet controller made for a missing replica continues the
	// lineage of the evicted pod it replaces (by pod UID; a pod absent
	// here is the first of its own, named by its UID). holes are, per
	// ReplicaSet UID, the lineages of its evicted pods not yet replaced,
	// oldest first.
	lineage map[types.UID]types.UID
	holes   map[types.UID][]types.UID
	// named are the lineages of evicted StatefulSet pods, by namespace/name:
	// the pod of that name made next continues it.
	named map[string]types.UID
	// csi is the CSI driver of a world with volumes, nil without.
	csi *csi
	// logf traces what the volume controllers do; hanging are the pods
	// the kubelet found hung (traced once).
	logf    func(format string, args ...any)
	hanging map[types.UID]bool
}

func newStore(now func() metav1.Time) *store {
	s := &store{objects: map[schema.GroupVersionResource]map[string]runtime.Object{}, now: now,
		lineage: map[types.UID]types.UID{}, holes: map[types.UID][]types.UID{}, named: map[string]types.UID{}, logf: func(string, ...any) {}, hanging: map[types.UID]bool{}}
	for _, r := range resources {
		s.objects[r] = map[string]runtime.Object{}
	}
	return s
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func keyOf(o runtime.Object) string {
	m, _ := meta.Accessor(o)
	return key(m.GetNamespace(), m.GetName())
}

func (s *store) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func notFound(r schema.GroupVersionResource, name string) error {
	return apierrors.NewNotFound(r.GroupResource(), name)
}

// lineageOf is the lineage pod uid continues (its own UID for the first
// of one).
func (s *store) lineageOf(uid types.UID) types.UID {
	if l, ok := s.lineage[uid]; ok {
		return l
	}
	return uid
}

// get is a copy of the object, or NotFound.
func (s *store) get(r schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	o, ok := s.objects[r][key(namespace, name)]
	if !ok {
		return nil, notFound(r, name)
	}
	return o.DeepCopyObject(), nil
}

// list is copies of the objects of r in namespace ("" all) that sel
// selects, in key order.
func (s *store) list(r schema.GroupVersionResource, namespace string, sel labels.Selector) []runtime.Object {
	var out []runtime.Object
	for _, k := range sortedKeys(s.objects[r]) {
		o := s.objects[r][k]
		m, _ := meta.Accessor(o)
		if namespace != "" && m.GetNamespace() != namespace {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		out = append(out, o.DeepCopyObject())
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// create stores a new object: it gets a UID, a resourceVersion, a creation
// time and generation 1.
func (s *store) create(r schema.GroupVersionResource, o runtime.Object) (runtime.Object, error) {
	o = o.DeepCopyObject()
	m, _ := meta.Accessor(o)
	if m.GetName() == "" && m.GetGenerateName() != "" {
		s.uids++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), s.uids))
	}
	k := key(m.GetNamespace(), m.GetName())
	if _, ok := s.objects[r][k]; ok {
		return nil, apierrors.NewAlreadyExists(r.GroupResource(), m.GetName())
	}
	s.uids++
	m.SetUID(types.UID(fmt.Sprintf("%s-%d", strings.TrimSuffix(r.Resource, "s"), s.uids)))
	m.SetResourceVersion(s.nextRV())
	m.SetCreationTimestamp(s.now())
	m.SetGeneration(1)
	s.objects[r][k] = o
	s.emit(r, watch.Added, o)
	return o.DeepCopyObject(), nil
}

func (s *store) emit(r schema.GroupVersionResource, t watch.EventType, o runtime.Object) {
	s.emitStatus(r, t, o, false)
}

func (s *store) emitStatus(r schema.GroupVersionResource, t watch.EventType, o runtime.Object, status bool) {
	if s.watch != nil {
		s.watch(r, watch.Event{Type: t, Object: o.DeepCopyObject()}, status)
	}
}

// update replaces an object, guarded by its resourceVersion when the new
// one carries one. status says which part is written: a status write keeps
// the stored spec and metadata, a write of the object keeps the stored
// status of the kinds with a status subresource. A change of the spec
// raises the generation. An object being deleted whose last finalizer goes
// is removed.
func (s *store) update(r schema.GroupVersionResource, o runtime.Object, status bool) (runtime.Object, error) {
	m, _ := meta.Accessor(o)
	k := key(m.GetNamespace(), m.GetName())
	old, ok := s.objects[r][k]
	if !ok {
		return nil, notFound(r, m.GetName())
	}
	om, _ := meta.Accessor(old)
	if rv := m.GetResourceVersion(); rv != "" && rv != om.GetResourceVersion() {
		return nil, apierrors.NewConflict(r.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := m.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, apierrors.NewConflict(r.GroupResource(), m.GetName(), fmt.Errorf("uid mismatch"))
	}
	next := o.DeepCopyObject()
	nm, _ := meta.Accessor(next)
	if status {
		next = old.DeepCopyObject()
		setStatus(next, o)
		nm, _ = meta.Accessor(next)
	} else {
		nm.SetUID(om.GetUID())
		nm.SetCreationTimestamp(om.GetCreationTimestamp())
		nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
		nm.SetGeneration(om.GetGeneration())
		if hasStatus(r) {
			setStatus(next, old)
		}
		if !equalSpec(old, next) {
			nm.SetGeneration(om.GetGeneration() + 1)
		}
	}
	if nm.GetDeletionTimestamp() != nil && len(nm.GetFinalizers()) == 0 {
		delete(s.objects[r], k)
		nm.SetResourceVersion(s.nextRV())
		s.emit(r, watch.Deleted, next)
		return next.DeepCopyObject(), nil
	}
	nm.SetResourceVersion(s.nextRV())
	s.objects[r][k] = next
	s.emitStatus(r, watch.Modified, next, status)
	return next.DeepCopyObject(), nil
}

// hasStatus reports whether r's status is written only through its status
// subresource.
func hasStatus(r schema.GroupVersionResource) bool {
	return r == plansR || r == pdbsR || r == rsR || r == depsR || r == campsR || r == stsR || r == jobsR || r == hpasR
}

// setStatus copies from's status into to (same kind).
func setStatus(to, from runtime.Object) {
	switch t := to.(type) {
	case *api.MaintenancePlan:
		t.Status = *from.(*api.MaintenancePlan).Status.DeepCopy()
	case *api.MaintenanceCampaign:
		t.Status = *from.(*api.MaintenanceCampaign).Status.DeepCopy()
	case *policyv1.PodDisruptionBudget:
		t.Status = *from.(*policyv1.PodDisruptionBudget).Status.DeepCopy()
	case *appsv1.ReplicaSet:
		t.Status = *from.(*appsv1.ReplicaSet).Status.DeepCopy()
	case *appsv1.Deployment:
		t.Status = *from.(*appsv1.Deployment).Status.DeepCopy()
	case *appsv1.StatefulSet:
		t.Status = *from.(*appsv1.StatefulSet).Status.DeepCopy()
	case *batchv1.Job:
		t.Status = *from.(*batchv1.Job).Status.DeepCopy()
	case *autoscalingv2.HorizontalPodAutoscaler:
		t.Status = *from.(*autoscalingv2.HorizontalPodAutoscaler).Status.DeepCopy()
	case *corev1.Pod:
		t.Status = *from.(*corev1.Pod).Status.DeepCopy()
	case *corev1.Node:
		t.Status = *from.(*corev1.Node).Status.DeepCopy()
	}
}

// equalSpec reports whether two objects of a kind with a generation have the
// same spec.
func equalSpec(a, b runtime.Object) bool {
	switch a := a.(type) {
	case *api.MaintenancePlan:
		return jsonEqual(a.Spec, b.(*api.MaintenancePlan).Spec)
	case *api.MaintenanceCampaign:
		return jsonEqual(a.Spec, b.(*api.MaintenanceCampaign).Spec)
	case *policyv1.PodDisruptionBudget:
		return jsonEqual(a.Spec, b.(*policyv1.PodDisruptionBudget).Spec)
	case *appsv1.ReplicaSet:
		return jsonEqual(a.Spec, b.(*appsv1.ReplicaSet).Spec)
	case *appsv1.Deployment:
		return jsonEqual(a.Spec, b.(*appsv1.Deployment).Spec)
	case *appsv1.StatefulSet:
		return jsonEqual(a.Spec, b.(*appsv1.StatefulSet).Spec)
	case *batchv1.Job:
		return jsonEqual(a.Spec, b.(*batchv1.Job).Spec)
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// patch applies a JSON merge patch; a resourceVersion in the patch is a
// precondition, as the API server treats it.
func (s *store) patch(r schema.GroupVersionResource, namespace, name string, patch []byte) (runtime.Object, error) {
	return s.apply(r, namespace, name, func(raw []byte) ([]byte, error) {
		patched, err := jsonpatch.MergePatch(raw, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, nil
	})
}

// jsonPatch applies a JSON patch (RFC 6902); a failed test operation is
// refused as the API server refuses it (422).
func (s *store) jsonPatch(r schema.GroupVersionResource, namespace, name string, patch []byte) (runtime.Object, error) {
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return s.apply(r, namespace, name, func(raw []byte) ([]byte, error) {
		patched, err := ops.Apply(raw)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", r.GroupResource(), name, err.Error(), 0, false)
		}
		return patched, nil
	})
}

// apply writes the object that patch makes of the stored one's JSON.
func (s *store) apply(r schema.GroupVersionResource, namespace, name string, patch func(raw []byte) ([]byte, error)) (runtime.Object, error) {
	old, err := s.get(r, namespace, name)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	patched, err := patch(raw)
	if err != nil {
		return nil, err
	}
	// A new object: unmarshalling into the old one would keep the map
	// entries the patch removes.
	next := reflect.New(reflect.TypeOf(old).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(patched, next); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// As the API server stores it: a map the patch emptied is no map (its
	// JSON omits it), so the next patch's test of it is a test of null.
	if nm, _ := meta.Accessor(next); len(nm.GetAnnotations()) == 0 {
		nm.SetAnnotations(nil)
	}
	return s.update(r, next, false)
}

// remove deletes an object: one with finalizers, or a pod with a grace
// period, only gets its deletionTimestamp (a pod's kubelet removes it
// later). uid, when set, is a precondition.
func (s *store) remove(r schema.GroupVersionResource, namespace, name string, uid types.UID, graceful bool) (runtime.Object, error) {
	k := key(namespace, name)
	old, ok := s.objects[r][k]
	if !ok {
		return nil, notFound(r, name)
	}
	om, _ := meta.Accessor(old)
	if uid != "" && uid != om.GetUID() {
		return nil, apierrors.NewConflict(r.GroupResource(), name, // the API server's message
			fmt.Errorf("%s: UID in precondition: %s, UID in object meta: %s", "Precondition failed", uid, om.GetUID()))
	}
	if len(om.GetFinalizers()) > 0 || graceful {
		if om.GetDeletionTimestamp() != nil {
			return old.DeepCopyObject(), nil
		}
		next := old.DeepCopyObject()
		nm, _ := meta.Accessor(next)
		now := s.now()
		nm.SetDeletionTimestamp(&now)
		nm.SetResourceVersion(s.nextRV())
		s.objects[r][k] = next
		s.emit(r, watch.Modified, next)
		return next.DeepCopyObject(), nil
	}
	delete(s.objects[r], k)
	gone := old.DeepCopyObject()
	gm, _ := meta.Accessor(gone)
	gm.SetResourceVersion(s.nextRV())
	s.emit(r, watch.Deleted, gone)
	return gone, nil
}

// react serves a fake clientset's actions from the store: what a typed
// client of the controller calls.
func (s *store) react(action k8stesting.Action) (runtime.Object, error) {
	r := action.GetResource()
	if _, ok := s.objects[r]; !ok {
		return nil, fmt.Errorf("sim: resource %s is not served", r)
	}
	switch action.GetVerb() {
	case "get":
		a := action.(k8stesting.GetAction)
		return s.get(r, a.GetNamespace(), a.GetName())
	case "list":
		a := action.(k8stesting.ListAction)
		list := listKinds[r]()
		if err := meta.SetList(list, s.list(r, a.GetNamespace(), a.GetListRestrictions().Labels)); err != nil {
			return nil, err
		}
		lm, _ := meta.ListAccessor(list)
		lm.SetResourceVersion(strconv.FormatInt(s.rv, 10))
		return list, nil
	case "create":
		return s.create(r, action.(k8stesting.CreateAction).GetObject())
	case "update":
		return s.update(r, action.(k8stesting.UpdateAction).GetObject(), action.GetSubresource() == "status")
	case "patch":
		a := action.(k8stesting.PatchAction)
		switch a.GetPatchType() {
		case types.MergePatchType:
			return s.patch(r, a.GetNamespace(), a.GetName(), a.GetPatch())
		case types.JSONPatchType:
			return s.jsonPatch(r, a.GetNamespace(), a.GetName(), a.GetPatch())
		}
		return nil, apierrors.NewBadRequest("sim: only merge and JSON patches are served")
	case "delete":
		a := action.(k8stesting.DeleteAction)
		var uid types.UID
		if p := a.GetDeleteOptions().Preconditions; p != nil && p.UID != nil {
			uid = *p.UID
		}
		return s.remove(r, a.GetNamespace(), a.GetName(), uid, false)
	}
	return nil, fmt.Errorf("sim: verb %s is not served", action.GetVerb())
}
