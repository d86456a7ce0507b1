// Package follow watches one MaintenancePlan until its outcome (or its
// node until the plan's cordon is lifted): a watch (with the list that
// starts it, and relists when the watch expires), not polling. It also says when an outcome is reached and what exit code it
// means: Outcome is pure.
package follow

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Goal is what a follow waits for.
type Goal int

const (
	// Drained: the drain's end (Drained, or Completed when the plan was
	// released meanwhile).
	Drained Goal = iota
	// Completed: the release's end.
	Completed
	// DryRun: the dry run's verdicts are recorded.
	DryRun
)

// Outcome reports whether p has reached goal or stopped short of it
// (Blocked, Failed, or expired before its start), and the exit code that
// means: 0 reached, 3 Blocked, Failed or expired; for a dry run the worst
// code of its verdicts (2 for a refusal that passes, such as a budget
// exhausted now). A status that does not
// yet reflect the plan's spec (observedGeneration) is never an outcome.
func Outcome(p *api.MaintenancePlan, goal Goal) (done bool, code exitcode.Code) {
	st := &p.Status
	if st.ObservedGeneration < p.Generation || st.Phase == "" {
		return false, exitcode.NotNow
	}
	switch {
	case st.Phase == api.Blocked, st.Phase == api.Failed:
		return true, exitcode.Blocked
	case st.Phase == api.Completed && st.Reason == api.Expired && goal != Completed:
		// It did not start by its start-by: nothing was drained.
		return true, exitcode.Blocked
	case goal == Drained && (st.Phase == api.Drained || st.Phase == api.Completed):
		return true, exitcode.OK
	case goal == Completed && st.Phase == api.Completed:
		return true, exitcode.OK
	case goal == DryRun && st.Reason == api.DryRunDone && len(st.DryRun) == int(st.Pods.Total):
		code := exitcode.OK
		for _, v := range st.DryRun {
			code = max(code, evict.Outcome(v.Outcome).Code())
		}
		return true, code
	}
	return false, exitcode.NotNow
}

// GoalOf is what following p means: its drain's end (Drained), or once it
// is released its release's end (Completed).
func GoalOf(p *api.MaintenancePlan) Goal {
	if p.Spec.Release {
		return Completed
	}
	return Drained
}

// Code is the exit code of p as it is now, as a follow to GoalOf(p) would
// end: 0 reached, 3 Blocked, Failed or expired, 2 on its way.
func Code(p *api.MaintenancePlan) exitcode.Code {
	if done, code := Outcome(p, GoalOf(p)); done {
		return code
	}
	return exitcode.NotNow
}

// ErrDeleted is the error of a follow whose plan was deleted.
var ErrDeleted = errors.New("the plan was deleted")

// Watch calls seen with plan name as it is now and after each change, until
// seen returns true (Watch returns the plan then) or an error, the plan is
// deleted (ErrDeleted) or not found, or ctx ends.
func Watch(ctx context.Context, plans maintenancev1alpha1.MaintenancePlanInterface, name string, seen func(*api.MaintenancePlan) (bool, error)) (*api.MaintenancePlan, error) {
	var last *api.MaintenancePlan
	_, err := watchtools.UntilWithSync(ctx, listWatch(plans, name), &api.MaintenancePlan{}, exists(name, "maintenanceplans"), func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Deleted:
			return false, ErrDeleted
		case watch.Added, watch.Modified:
			p, ok := e.Object.(*api.MaintenancePlan)
			if !ok {
				return false, fmt.Errorf("watch plan %s: unexpected %T", name, e.Object)
			}
			last = p
			return seen(p)
		}
		return false, nil
	})
	if err != nil {
		return last, err
	}
	return last, nil
}

// Gone waits until plan name with uid no longer exists.
func Gone(ctx context.Context, plans maintenancev1alpha1.MaintenancePlanInterface, name string) error {
	absent := func(store cache.Store) (bool, error) {
		_, ok, err := store.GetByKey(name)
		return !ok, err
	}
	_, err := watchtools.UntilWithSync(ctx, listWatch(plans, name), &api.MaintenancePlan{}, absent, func(e watch.Event) (bool, error) {
		return e.Type == watch.Deleted, nil
	})
	return err
}

// Uncordoned waits until node no longer carries the cordon of owner (its
// cordon-owner annotation names another owner, or none), or is gone.
func Uncordoned(ctx context.Context, nodes corev1client.NodeInterface, node, owner string) error {
	lw := byName(node, nodes.List, nodes.Watch)
	lifted := func(n *corev1.Node) bool { return n.Annotations[cordon.OwnerAnnotation] != owner }
	synced := func(store cache.Store) (bool, error) {
		o, ok, err := store.GetByKey(node)
		if err != nil || !ok {
			return err == nil, err
		}
		n, isNode := o.(*corev1.Node)
		return isNode && lifted(n), nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, synced, func(e watch.Event) (bool, error) {
		if e.Type == watch.Deleted {
			return true, nil
		}
		n, ok := e.Object.(*corev1.Node)
		return ok && lifted(n), nil
	})
	return err
}

func listWatch(plans maintenancev1alpha1.MaintenancePlanInterface, name string) cache.ListerWatcher {
	return byName(name, plans.List, plans.Watch)
}

// byName lists and watches the one object called name with list and
// watchf.
func byName[L runtime.Object](name string, list func(context.Context, metav1.ListOptions) (L, error), watchf func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchf(ctx, o)
		},
	}
}

// exists is a watch's first check that the object called name (of
// resource) is there: not found is an error.
func exists(name, resource string) func(cache.Store) (bool, error) {
	return func(store cache.Store) (bool, error) {
		if _, ok, err := store.GetByKey(name); err != nil || !ok {
			return false, cmpErr(err, apierrors.NewNotFound(api.Resource(resource), name))
		}
		return false, nil
	}
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
