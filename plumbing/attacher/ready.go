package attacher

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// The Ready gate. kwok makes a pod Ready whether or not its volumes are
// attached; a kubelet starts its containers only once they are. A pod
// labelled WaitForAttachLabel "true" (on a control plane started with
// controlplane.Options{Volumes: true}) stays Pending until it is annotated
// VolumesAttachedAnnotation "true", and the attacher so annotates it once
// every CSI volume of its driver the pod uses has its VolumeAttachment on
// the pod's node attached. The pod's ready delay counts from then: a pod
// that moves with its volume is Ready no earlier than the volume's detach
// from the old node, its attach to the new one and the ready delay. A
// gated pod's CSI volumes must be of one driver (the attacher of the first
// driver to attach them all opens the gate); a gated pod with none stays
// Pending.
const (
	WaitForAttachLabel        = controlplane.PodWaitForAttachLabel
	VolumesAttachedAnnotation = controlplane.PodVolumesAttachedAnnotation
)

// gate opens the Ready gate of the labelled pods.
type gate struct {
	client kubernetes.Interface
	driver string
	va     interface {
		Get(name string) (*storagev1.VolumeAttachment, error)
	}
	pods  corelisters.PodLister
	pvcs  corelisters.PersistentVolumeClaimLister
	pvs   corelisters.PersistentVolumeLister
	queue workqueue.TypedRateLimitingInterface[string] // pods' namespace/name
}

// startGate starts the informers of labelled pods, claims and volumes; the
// caller starts the factories and waits for their caches.
func (a *Attacher) startGate(core, gated informers.SharedInformerFactory) error {
	g := &gate{
		client: a.client,
		driver: a.cfg.Driver,
		va:     a.lister,
		pods:   gated.Core().V1().Pods().Lister(),
		pvcs:   core.Core().V1().PersistentVolumeClaims().Lister(),
		pvs:    core.Core().V1().PersistentVolumes().Lister(),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			g.queue.Add(key)
		}
	}
	_, err := gated.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	if err != nil {
		return err
	}
	// Listers only: the pods' events, and the VolumeAttachments' (attached),
	// bring the pods to look at.
	core.Core().V1().PersistentVolumeClaims().Informer()
	core.Core().V1().PersistentVolumes().Informer()
	a.gate = g
	return nil
}

// attachedOn queues the gated pods of node: a volume was attached there.
func (g *gate) attachedOn(node string) {
	pods, err := g.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.Spec.NodeName == node {
			g.queue.Add(p.Namespace + "/" + p.Name)
		}
	}
}

func (g *gate) next(ctx context.Context) bool {
	key, shutdown := g.queue.Get()
	if shutdown {
		return false
	}
	defer g.queue.Done(key)
	if err := g.sync(ctx, key); err != nil && ctx.Err() == nil {
		g.queue.AddRateLimited(key)
		return true
	}
	g.queue.Forget(key)
	return true
}

// sync annotates pod key once its volumes of the driver are attached to
// its node.
func (g *gate) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := g.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || pod.Annotations[VolumesAttachedAnnotation] == "true" {
		return nil
	}
	attached, err := g.attached(pod)
	if err != nil || !attached {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID,
		"annotations": map[string]string{VolumesAttachedAnnotation: "true"},
	}})
	if err != nil {
		return err
	}
	_, err = g.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another pod of the same name
	}
	return err
}

// attached tells whether pod uses a CSI volume of the driver and every
// one is attached to its node; an error when a claim or its volume is not
// in the caches yet.
func (g *gate) attached(pod *corev1.Pod) (bool, error) {
	ours := false
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := g.pvcs.PersistentVolumeClaims(pod.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return false, err
		}
		if pvc.Spec.VolumeName == "" {
			return false, fmt.Errorf("claim %s/%s is not bound", pod.Namespace, pvc.Name)
		}
		pv, err := g.pvs.Get(pvc.Spec.VolumeName)
		if err != nil {
			return false, err
		}
		if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != g.driver {
			continue
		}
		ours = true
		va, err := g.va.Get(AttachmentName(pv.Spec.CSI.VolumeHandle, g.driver, pod.Spec.NodeName))
		if apierrors.IsNotFound(err) || err == nil && (!va.Status.Attached || va.DeletionTimestamp != nil) {
			return false, nil // its attach event queues the pod again
		}
		if err != nil {
			return false, err
		}
	}
	return ours, nil
}
