package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/drain"
)

// surgeOwners fills f.Owners from the caches: the owners that p's surges
// name and those that the pods needing a surge would scale, with their
// pods on other nodes than p's.
func (c *Controller) surgeOwners(p *api.MaintenancePlan, f *drain.Facts) error {
	f.Owners = map[string]drain.SurgeOwner{}
	add := func(kind, namespace, name string) error {
		key := drain.OwnerKey(kind, namespace, name)
		if _, ok := f.Owners[key]; ok {
			return nil
		}
		m, replicas, sel, err := c.scalable(kind, namespace, name)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("read %s %s/%s: %w", kind, namespace, name, err)
		}
		o := drain.SurgeOwner{UID: m.UID, Replicas: replicas, SurgedBy: m.Annotations[drain.SurgeAnnotation]}
		pods, err := c.pods.list(namespace, sel)
		if err != nil {
			return fmt.Errorf("pods of %s %s/%s: %w", kind, namespace, name, err)
		}
		for _, pod := range pods {
			switch {
			case pod.NodeName == p.Spec.NodeName || pod.DeletionTimestamp != nil || pod.Phase == corev1.PodSucceeded || pod.Phase == corev1.PodFailed:
			case pod.NodeName == "":
				o.Unscheduled++
			case ready(pod):
				o.Ready++
			default:
				o.Unready++
			}
		}
		f.Owners[key] = o
		return nil
	}
	if ep := p.Status.EvictionProgress; ep != nil {
		for _, s := range ep.Surges {
			if err := add(s.Kind, s.Namespace, s.Name); err != nil {
				return err
			}
		}
	}
	if f.Analysis != nil {
		for _, v := range f.Analysis.Pods {
			if v.Surge != nil {
				if err := add(v.Surge.Kind, v.Namespace, v.Surge.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func ready(p *cachedPod) bool {
	for _, c := range p.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// scalable reads an owner a surge scales from the cache: its metadata, its
// spec.replicas (1 when unset, as the API defaults it) and its selector.
func (c *Controller) scalable(kind, namespace, name string) (*metav1.ObjectMeta, int32, labels.Selector, error) {
	var m *metav1.ObjectMeta
	var replicas *int32
	var sel *metav1.LabelSelector
	switch kind {
	case "Deployment":
		d, err := c.deployments.Deployments(namespace).Get(name)
		if err != nil {
			return nil, 0, nil, err
		}
		m, replicas, sel = &d.ObjectMeta, d.Spec.Replicas, d.Spec.Selector
	case "ReplicaSet":
		rs, err := c.replicaSets.ReplicaSets(namespace).Get(name)
		if err != nil {
			return nil, 0, nil, err
		}
		m, replicas, sel = &rs.ObjectMeta, rs.Spec.Replicas, rs.Spec.Selector
	default:
		return nil, 0, nil, fmt.Errorf("a surge cannot scale a %s", kind)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("selector of %s %s/%s: %w", kind, namespace, name, err)
	}
	return m, ptr.Deref(replicas, 1), s, nil
}

// liveOwner is an owner a surge scales as the API server shows it now.
type liveOwner struct {
	meta     metav1.ObjectMeta
	replicas int32
}

// readOwner reads an owner live.
func (c *Controller) readOwner(ctx context.Context, kind, namespace, name string) (*liveOwner, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	switch kind {
	case "Deployment":
		d, err := c.cfg.Clients.Apps.Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &liveOwner{meta: d.ObjectMeta, replicas: ptr.Deref(d.Spec.Replicas, 1)}, nil
	case "ReplicaSet":
		rs, err := c.cfg.Clients.Apps.ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &liveOwner{meta: rs.ObjectMeta, replicas: ptr.Deref(rs.Spec.Replicas, 1)}, nil
	}
	return nil, fmt.Errorf("a surge cannot scale a %s", kind)
}

// patchOwner applies ops, a JSON patch, to an owner. Its test operations
// are the write's preconditions on the fields the surge reads (the UID, the
// replica count, the annotation): a status the owner's controller wrote
// meanwhile does not make it fail, as a resourceVersion would. A failed
// test is an error, and the surge is decided again.
func (c *Controller) patchOwner(ctx context.Context, kind, namespace, name string, ops []patchOp) error {
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	switch kind {
	case "Deployment":
		_, err = c.cfg.Clients.Apps.Deployments(namespace).Patch(ctx, name, types.JSONPatchType, data, metav1.PatchOptions{})
	case "ReplicaSet":
		_, err = c.cfg.Clients.Apps.ReplicaSets(namespace).Patch(ctx, name, types.JSONPatchType, data, metav1.PatchOptions{})
	default:
		err = fmt.Errorf("a surge cannot scale a %s", kind)
	}
	return err
}

// patchOp is one operation of a JSON patch (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// annotationPath is the JSON pointer of annotation key.
func annotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// scaleUpOps add one replica to an owner read live (o) with from replicas,
// and the annotations naming the plan (owner) and from.
func scaleUpOps(o *liveOwner, owner string, from int32) []patchOp {
	ops := []patchOp{{"test", "/metadata/uid", o.meta.UID}, {"test", "/spec/replicas", from}}
	marks := map[string]string{drain.SurgeAnnotation: owner, drain.SurgeFromAnnotation: strconv.Itoa(int(from))}
	if o.meta.Annotations == nil {
		// An add of the whole map replaces one that someone wrote since
		// the read: it is made only while there is none (a test of null).
		ops = append(ops, patchOp{"test", "/metadata/annotations", json.RawMessage("null")}, patchOp{"add", "/metadata/annotations", marks})
	} else {
		for _, k := range []string{drain.SurgeAnnotation, drain.SurgeFromAnnotation} {
			ops = append(ops, patchOp{"add", annotationPath(k), marks[k]})
		}
	}
	return append(ops, patchOp{"replace", "/spec/replicas", from + 1})
}

// restoreOps remove the surge annotations of an owner read live (o) that
// carries the surge of owner, and set its count to to when write.
func restoreOps(o *liveOwner, owner string, to int32, write bool) []patchOp {
	ops := []patchOp{{"test", "/metadata/uid", o.meta.UID}, {"test", annotationPath(drain.SurgeAnnotation), owner},
		{"test", "/spec/replicas", o.replicas}, {Op: "remove", Path: annotationPath(drain.SurgeAnnotation)}}
	if _, ok := o.meta.Annotations[drain.SurgeFromAnnotation]; ok {
		ops = append(ops, patchOp{Op: "remove", Path: annotationPath(drain.SurgeFromAnnotation)})
	}
	if write {
		ops = append(ops, patchOp{"replace", "/spec/replicas", to})
	}
	return ops
}

// scale writes the surges' replica counts Decide asked for, live and each
// once (the annotation naming the plan is the proof of a surge), then
// records what each write did.
func (c *Controller) scale(ctx context.Context, p *api.MaintenancePlan, dec drain.Decision) error {
	owner := drain.Owner(p)
	answers := make([]drain.ScaleAnswer, len(dec.Scales))
	errs := make([]error, len(dec.Scales))
	var wg sync.WaitGroup
	send := wg.Go
	if c.cfg.Serial {
		send = func(f func()) { f() }
	}
	for i, s := range dec.Scales {
		send(func() { answers[i], errs[i] = c.scaleOne(ctx, p, owner, s) })
	}
	wg.Wait()
	// What the others did is recorded; one that failed is decided again.
	done := answers[:0]
	for i, a := range answers {
		if errs[i] == nil {
			done = append(done, a)
		}
	}
	if err := c.recordScales(ctx, p, done); err != nil {
		return err
	}
	return errors.Join(errs...)
}

func (c *Controller) recordScales(ctx context.Context, p *api.MaintenancePlan, answers []drain.ScaleAnswer) error {
	if len(answers) == 0 {
		return nil
	}
	return c.record(ctx, p, func(q *api.MaintenancePlan) api.MaintenancePlanStatus {
		return drain.RecordScales(q, q.Status, answers, c.cfg.Now())
	})
}

// scaleOne writes one scale-up or restore. An error leaves the surge as the
// status holds it: the cache lagged, or the owner changed under the write.
func (c *Controller) scaleOne(ctx context.Context, p *api.MaintenancePlan, owner string, s drain.OwnerScale) (drain.ScaleAnswer, error) {
	sg := s.Surge
	name := fmt.Sprintf("%s %s/%s", sg.Kind, sg.Namespace, sg.Name)
	a := drain.ScaleAnswer{Scale: s}
	o, err := c.readOwner(ctx, sg.Kind, sg.Namespace, sg.Name)
	switch {
	case apierrors.IsNotFound(err), err == nil && o.meta.UID != sg.UID:
		a.Message = name + " is gone or was replaced: nothing to scale"
		a.Outcome = drain.OwnerGone
		if s.Restore {
			a.Outcome = drain.Restored
		}
		c.surgeEvent(p, sg, corev1.EventTypeNormal, a.Message)
		return a, nil
	case err != nil:
		return a, fmt.Errorf("read %s: %w", name, err)
	}
	mark := o.meta.Annotations[drain.SurgeAnnotation]
	if !s.Restore {
		switch {
		case mark == owner:
			a.Outcome, a.Message = drain.Scaled, name+" already carries this plan's surge"
			return a, nil
		case mark != "":
			a.Outcome, a.Message = drain.Busy, fmt.Sprintf("%s carries the surge of %s: this plan's waits until it is restored", name, mark)
			return a, nil
		case o.replicas != sg.From:
			return a, fmt.Errorf("%s has %d replicas, the surge was decided on %d: deciding again", name, o.replicas, sg.From)
		}
		to := sg.From + 1
		err := c.patchOwner(ctx, sg.Kind, sg.Namespace, sg.Name, scaleUpOps(o, owner, sg.From))
		switch {
		case apierrors.IsForbidden(err):
			a.Outcome, a.Message = drain.Forbidden, fmt.Sprintf("maintd may not scale %s: %v", name, err)
			c.surgeEvent(p, sg, corev1.EventTypeWarning, a.Message)
			return a, nil
		case err != nil:
			return a, fmt.Errorf("scale %s up: %w", name, err)
		}
		a.Outcome, a.Message = drain.Scaled, fmt.Sprintf("%s scaled from %d to %d replicas so that its pods on node %s can go with no downtime", name, sg.From, to, p.Spec.NodeName)
		c.cfg.Log.Info("surge", "plan", p.Name, "owner", name, "from", sg.From, "to", to)
		c.surgeEvent(p, sg, corev1.EventTypeNormal, a.Message)
		return a, nil
	}
	if mark != owner {
		a.Outcome, a.Message = drain.Restored, name+" does not carry this plan's surge: nothing to restore"
		return a, nil
	}
	to, write, msg := drain.RestoreTo(sg.From, o.replicas)
	err = c.patchOwner(ctx, sg.Kind, sg.Namespace, sg.Name, restoreOps(o, owner, to, write))
	if err != nil {
		return a, fmt.Errorf("restore %s: %w", name, err)
	}
	a.Outcome, a.Message = drain.Restored, name+": "+msg
	typ := corev1.EventTypeNormal
	if !write || to != sg.From {
		typ = corev1.EventTypeWarning
	}
	c.cfg.Log.Info("surge restored", "plan", p.Name, "owner", name, "message", msg)
	c.surgeEvent(p, sg, typ, a.Message)
	return a, nil
}

// restoreSurges restores, live, the surges of a plan being deleted that
// its status does not show restored.
func (c *Controller) restoreSurges(ctx context.Context, p *api.MaintenancePlan) error {
	ep := p.Status.EvictionProgress
	if ep == nil {
		return nil
	}
	owner := drain.Owner(p)
	for _, s := range ep.Surges {
		if s.State == drain.SurgeRestored {
			continue
		}
		if _, err := c.scaleOne(ctx, p, owner, drain.OwnerScale{Surge: s, Restore: true}); err != nil {
			return err
		}
	}
	return nil
}

// surgeEvent records an Event on the owner a surge scales, related to the
// plan.
func (c *Controller) surgeEvent(p *api.MaintenancePlan, s api.Surge, typ, note string) {
	if c.cfg.Events == nil {
		return
	}
	meta := metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, UID: s.UID}
	var o runtime.Object = &appsv1.Deployment{ObjectMeta: meta, TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"}}
	if s.Kind == "ReplicaSet" {
		o = &appsv1.ReplicaSet{ObjectMeta: meta, TypeMeta: metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"}}
	}
	c.cfg.Events.Eventf(o, p, typ, "Surge", "scale", "%s (plan %s)", truncate(note, 900), p.Name)
}
