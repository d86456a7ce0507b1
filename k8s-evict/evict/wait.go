package evict

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Pods lists and watches the pods of one namespace; the typed client's
// CoreV1().Pods(namespace) satisfies it.
type Pods interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// WaitGone returns nil once no pod called name with uid exists: deleted, or
// its name taken by a pod with another UID (a new pod with the same name is
// not it). It lists, then watches from the list's resourceVersion, and
// lists again whenever the watch ends. It returns ctx's error when ctx ends
// first.
func WaitGone(ctx context.Context, pods Pods, name string, uid types.UID) error {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	for {
		list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return fmt.Errorf("list pod %s: %w", name, err)
		}
		if !holds(list.Items, uid) {
			return nil
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return fmt.Errorf("watch pod %s: %w", name, err)
		}
		gone, err := watchGone(ctx, w, uid)
		w.Stop()
		if gone || err != nil {
			return err
		}
	}
}

func holds(pods []corev1.Pod, uid types.UID) bool {
	for _, p := range pods {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// watchGone reads w until the pod with uid is deleted or replaced (true),
// the watch ends (false: list again) or ctx ends (its error).
func watchGone(ctx context.Context, w watch.Interface, uid types.UID) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, nil // closed, or e.g. 410 Gone: list again
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && (pod.UID != uid || ev.Type == watch.Deleted) {
				return true, nil
			}
		}
	}
}
