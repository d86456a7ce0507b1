// Package attacher plays a CSI driver's external-attacher against the local
// control plane, for tests of drains of nodes with volumes.
//
// The local control plane started with controlplane.Options{Volumes: true}
// runs kube-controller-manager's attach-detach controller, and kwok nodes
// are annotated controller-managed-attach-detach: that controller creates a
// VolumeAttachment for each CSI volume of a pod scheduled to a node, keeps
// node.status.volumesAttached, and deletes the VolumeAttachment once no pod
// on the node uses the volume. This package does not create or delete
// VolumeAttachments: it plays what the controller leaves to the driver's
// external-attacher, for one driver:
//
//   - a new VolumeAttachment of the driver gets the attacher's finalizer
//     (Finalizer), and AttachDelay after it was first seen, status.attached
//     true (the driver's ControllerPublishVolume took that long);
//   - a VolumeAttachment being deleted loses that finalizer DetachDelay
//     after its deletionTimestamp was first seen, and so goes
//     (ControllerUnpublishVolume took that long);
//   - a volume that never detaches instead gets status.detachError and
//     keeps its finalizer, as with a driver whose detach keeps failing.
//
// It also plays the one part of a kubelet's volume manager kwok lacks: a
// pod labelled WaitForAttachLabel "true" becomes Ready only once its
// volumes are attached to its node (see WaitForAttachLabel).
//
// It watches VolumeAttachments with an informer; the delays are timers of a
// workqueue, nothing polls. Every step is recorded with its time (Events),
// so that a test can hold a drain's moments against the volumes' moments.
//
// Unlike the real external-attacher it puts no finalizer on the
// PersistentVolume.
package attacher

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Config configures an Attacher.
type Config struct {
	// Driver is the CSI driver's name: the attacher handles the
	// VolumeAttachments whose spec.attacher is Driver.
	Driver string
	// AttachDelay is the time from a VolumeAttachment's first sight to its
	// status.attached true.
	AttachDelay time.Duration
	// DetachDelay is the time from the first sight of a VolumeAttachment's
	// deletionTimestamp to the removal of the attacher's finalizer.
	DetachDelay time.Duration
	// Volumes overrides, by PersistentVolume name, AttachDelay and
	// DetachDelay (an entry's zero delay means at once), and names the
	// volumes that never detach.
	Volumes map[string]Volume
}

// Volume is how one PersistentVolume attaches and detaches.
type Volume struct {
	AttachDelay time.Duration
	DetachDelay time.Duration
	// NeverDetach: once its VolumeAttachment is being deleted it gets
	// status.detachError (DetachErrorMessage) and keeps the finalizer.
	NeverDetach bool
}

// DetachErrorMessage is the detachError a volume that never detaches gets,
// the message of a driver whose ControllerUnpublishVolume timed out.
const DetachErrorMessage = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"

// Kind is what happened to a VolumeAttachment.
type Kind string

// The kinds of events. At of those the attacher writes is when it sent the
// write that succeeded: the change was made at the API server no earlier,
// and before its answer came, a few milliseconds later (a watch may show it
// before the answer).
const (
	// Attached: status.attached was set true.
	Attached Kind = "Attached"
	// DetachRequested: the attacher first saw the deletionTimestamp (At is
	// when its watch brought it).
	DetachRequested Kind = "DetachRequested"
	// DetachFailed: status.detachError was set (a volume that never detaches).
	DetachFailed Kind = "DetachFailed"
	// Detached: the attacher's finalizer was removed; it was the last, so
	// the VolumeAttachment was gone at once.
	Detached Kind = "Detached"
)

// Event is one step of one VolumeAttachment.
type Event struct {
	Kind Kind
	// VA is the VolumeAttachment's name, PV its spec.source's
	// PersistentVolume, Node its spec.nodeName.
	VA, PV, Node string
	At           time.Time
}

// Finalizer is the finalizer the external-attacher of driver puts on its
// VolumeAttachments: "external-attacher/" and the driver's name with every
// character other than a letter, a digit or '-' replaced by '-' (and an
// 'X' appended if it then ends with '-').
func Finalizer(driver string) string {
	name := regexp.MustCompile("[^a-zA-Z0-9-]").ReplaceAllString(driver, "-")
	if strings.HasSuffix(name, "-") {
		name += "X"
	}
	return "external-attacher/" + name
}

// Attacher is a running external-attacher of one driver.
type Attacher struct {
	client    kubernetes.Interface
	cfg       Config
	finalizer string
	lister    storagelisters.VolumeAttachmentLister
	queue     workqueue.TypedRateLimitingInterface[string]
	gate      *gate
	cancel    context.CancelFunc
	done      sync.WaitGroup

	mu      sync.Mutex
	seen    map[types.UID]*seen // by the UID of a VolumeAttachment
	events  []Event
	changed chan struct{} // closed and replaced at each new event
}

// seen holds when the attacher first saw a VolumeAttachment and its
// deletionTimestamp, and what it wrote (its cache may not show it yet).
type seen struct {
	created, deleting time.Time
	attached, failed  bool
}

// workers is how many VolumeAttachments are worked on at once.
const workers = 4

// Start starts an attacher for cfg.Driver and returns once its informers'
// caches have synced. Stop ends it; so does the end of ctx.
func Start(ctx context.Context, client kubernetes.Interface, cfg Config) (*Attacher, error) {
	if cfg.Driver == "" {
		return nil, fmt.Errorf("attacher: no driver named")
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Storage().V1().VolumeAttachments()
	a := &Attacher{
		client:    client,
		cfg:       cfg,
		finalizer: Finalizer(cfg.Driver),
		lister:    informer.Lister(),
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		cancel:    cancel,
		seen:      map[types.UID]*seen{},
		changed:   make(chan struct{}),
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    a.observe,
		UpdateFunc: func(_, obj any) { a.observe(obj) },
		DeleteFunc: a.forget,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("attacher: %w", err)
	}
	gated := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = WaitForAttachLabel + "=true" }))
	if err := a.startGate(factory, gated); err != nil {
		cancel()
		return nil, fmt.Errorf("attacher: %w", err)
	}
	stop := func() {
		a.queue.ShutDown()
		a.gate.queue.ShutDown()
		factory.Shutdown()
		gated.Shutdown()
	}
	factory.Start(ctx.Done())
	gated.Start(ctx.Done())
	for _, synced := range []map[reflect.Type]bool{factory.WaitForCacheSync(ctx.Done()), gated.WaitForCacheSync(ctx.Done())} {
		for typ, ok := range synced {
			if !ok {
				cancel()
				stop()
				return nil, fmt.Errorf("attacher %s: the cache of %s did not sync: %w", cfg.Driver, typ, ctx.Err())
			}
		}
	}
	for range workers {
		a.done.Go(func() {
			for a.next(ctx) {
			}
		})
		a.done.Go(func() {
			for a.gate.next(ctx) {
			}
		})
	}
	a.done.Go(func() {
		<-ctx.Done()
		stop()
	})
	return a, nil
}

// Stop ends the attacher and waits for its goroutines. VolumeAttachments
// keep what it did to them.
func (a *Attacher) Stop() {
	a.cancel()
	a.done.Wait()
}

// Events are the steps so far, in the order they happened.
func (a *Attacher) Events() []Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

// Wait returns once cond holds for the events so far (it is asked again
// at each new event), or with ctx's error.
func (a *Attacher) Wait(ctx context.Context, cond func([]Event) bool) error {
	for {
		a.mu.Lock()
		events, changed := slices.Clone(a.events), a.changed
		a.mu.Unlock()
		if cond(events) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("attacher %s: %w; events: %v", a.cfg.Driver, ctx.Err(), events)
		case <-changed:
		}
	}
}

// observe notes when a VolumeAttachment of the driver and its deletion are
// first seen, and queues it.
func (a *Attacher) observe(obj any) {
	va, ok := obj.(*storagev1.VolumeAttachment)
	if !ok || va.Spec.Attacher != a.cfg.Driver {
		return
	}
	now := time.Now()
	a.mu.Lock()
	s := a.seen[va.UID]
	if s == nil {
		s = &seen{created: now}
		a.seen[va.UID] = s
	}
	if va.DeletionTimestamp != nil && s.deleting.IsZero() {
		s.deleting = now
		a.recordLocked(DetachRequested, va, now)
	}
	a.mu.Unlock()
	a.queue.Add(va.Name)
	if va.Status.Attached && va.DeletionTimestamp == nil && a.gate != nil {
		a.gate.attachedOn(va.Spec.NodeName)
	}
}

func (a *Attacher) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if va, ok := obj.(*storagev1.VolumeAttachment); ok {
		a.mu.Lock()
		delete(a.seen, va.UID)
		a.mu.Unlock()
	}
}

func (a *Attacher) record(kind Kind, va *storagev1.VolumeAttachment, at time.Time) {
	a.mu.Lock()
	a.recordLocked(kind, va, at)
	a.mu.Unlock()
}

func (a *Attacher) recordLocked(kind Kind, va *storagev1.VolumeAttachment, at time.Time) {
	if s := a.seen[va.UID]; s != nil {
		s.attached = s.attached || kind == Attached
		s.failed = s.failed || kind == DetachFailed
	}
	a.events = append(a.events, Event{Kind: kind, VA: va.Name, PV: pvName(va), Node: va.Spec.NodeName, At: at})
	close(a.changed)
	a.changed = make(chan struct{})
}

func pvName(va *storagev1.VolumeAttachment) string {
	if va.Spec.Source.PersistentVolumeName == nil {
		return ""
	}
	return *va.Spec.Source.PersistentVolumeName
}

// volume is how the VolumeAttachment's volume behaves.
func (a *Attacher) volume(va *storagev1.VolumeAttachment) Volume {
	if v, ok := a.cfg.Volumes[pvName(va)]; ok {
		return v
	}
	return Volume{AttachDelay: a.cfg.AttachDelay, DetachDelay: a.cfg.DetachDelay}
}

func (a *Attacher) next(ctx context.Context) bool {
	name, shutdown := a.queue.Get()
	if shutdown {
		return false
	}
	defer a.queue.Done(name)
	if err := a.sync(ctx, name); err != nil && ctx.Err() == nil {
		// A conflict or a failed request: try again (the informer also
		// brings the newer version that a conflict was about).
		a.queue.AddRateLimited(name)
		return true
	}
	a.queue.Forget(name)
	return true
}

// sync takes the VolumeAttachment name one step further, or queues it for
// when its next step is due.
func (a *Attacher) sync(ctx context.Context, name string) error {
	va, err := a.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if va.Spec.Attacher != a.cfg.Driver {
		return nil
	}
	a.mu.Lock()
	s := a.seen[va.UID]
	var st seen
	if s != nil {
		st = *s
	}
	a.mu.Unlock()
	if s == nil {
		return nil // deleted meanwhile
	}
	vol := a.volume(va)
	vas := a.client.StorageV1().VolumeAttachments()
	if va.DeletionTimestamp == nil {
		if !slices.Contains(va.Finalizers, a.finalizer) {
			va = va.DeepCopy()
			va.Finalizers = append(va.Finalizers, a.finalizer)
			_, err := vas.Update(ctx, va, metav1.UpdateOptions{})
			return err
		}
		if va.Status.Attached || st.attached {
			return nil
		}
		if wait := time.Until(st.created.Add(vol.AttachDelay)); wait > 0 {
			a.queue.AddAfter(name, wait)
			return nil
		}
		sent := time.Now()
		if err := a.patchStatus(ctx, va, map[string]any{"attached": true}); err != nil {
			return err
		}
		a.record(Attached, va, sent)
		return nil
	}
	if !slices.Contains(va.Finalizers, a.finalizer) {
		return nil // never attached by us, or already let go
	}
	if vol.NeverDetach {
		if va.Status.DetachError != nil || st.failed {
			return nil
		}
		sent := time.Now()
		detachError := map[string]any{"time": metav1.NewTime(sent), "message": DetachErrorMessage}
		if err := a.patchStatus(ctx, va, map[string]any{"detachError": detachError}); err != nil {
			return err
		}
		a.record(DetachFailed, va, sent)
		return nil
	}
	if wait := time.Until(st.deleting.Add(vol.DetachDelay)); wait > 0 {
		a.queue.AddAfter(name, wait)
		return nil
	}
	va = va.DeepCopy()
	va.Finalizers = slices.DeleteFunc(va.Finalizers, func(f string) bool { return f == a.finalizer })
	sent := time.Now()
	if _, err := vas.Update(ctx, va, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone without us
		}
		return err
	}
	a.record(Detached, va, sent)
	return nil
}

// patchStatus merges status into the VolumeAttachment's status, as the
// external-attacher does (a merge patch of the status subresource), with
// the UID as precondition.
func (a *Attacher) patchStatus(ctx context.Context, va *storagev1.VolumeAttachment, status map[string]any) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": va.UID},
		"status":   status,
	})
	if err != nil {
		return err
	}
	_, err = a.client.StorageV1().VolumeAttachments().Patch(ctx, va.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
