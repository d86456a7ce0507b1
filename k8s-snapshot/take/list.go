package take

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxRestarts is how many times Take starts a consistent snapshot again
// after its revision expired (410), or, with Options.Latest, one list
// after its continue token expired, before it gives up.
const MaxRestarts = 3

// Event tells Options.Notify about a finished or restarted list.
type Event struct {
	// Resource is the listed resource, e.g. "pods".
	Resource string
	// Selector is the list's field or label selector, "" for all objects.
	Selector string
	// Count and Pages describe a finished list.
	Count, Pages int
	// Took is how long the finished list took.
	Took time.Duration
	// Restart is the 410 answer that made the list, or with Revision set
	// the whole snapshot, start again; nil for a finished list.
	Restart error
	// Revision is the snapshot's revision that expired; "" when only one
	// list restarts (Options.Latest).
	Revision string
	// Restarts counts the snapshot's restarts so far, this one included.
	Restarts int
}

// ListError is a failed list: the resource and the API's answer.
type ListError struct {
	Resource string
	// Selector is the list's field or label selector, "" for all objects.
	Selector string
	// Revision is the exact revision the list was made at, "" for a list
	// at the latest revision.
	Revision string
	// Expired counts the revisions (in a consistent snapshot) or the
	// continue tokens (with Options.Latest) that expired in a row before
	// Take gave up.
	Expired int
	Err     error
}

// expired reports whether the list failed because its revision or its
// continue token was too old (410 Expired or Gone).
func (e *ListError) expired() bool {
	return apierrors.IsResourceExpired(e.Err) || apierrors.IsGone(e.Err)
}

func (e *ListError) Error() string {
	what := "list " + e.Resource
	var status apierrors.APIStatus
	switch {
	case errors.As(e.Err, &status):
		s := status.Status()
		text := fmt.Sprintf("%d %s", s.Code, http.StatusText(int(s.Code)))
		msg := e.Err.Error()
		switch s.Code {
		case http.StatusUnauthorized:
			msg = "the server rejected the credentials (" + msg + ")"
		case http.StatusGone:
			if e.Expired > 0 && e.Revision != "" {
				msg = fmt.Sprintf("the API server compacted the snapshot's revision away %d times in a row, last %s (%s)", e.Expired, e.Revision, msg)
			} else if e.Expired > 0 {
				msg = fmt.Sprintf("the continue token expired %d times in a row (%s)", e.Expired, msg)
			}
		}
		return fmt.Sprintf("%s: %s: %s", what, text, msg)
	case errors.Is(e.Err, context.DeadlineExceeded):
		return fmt.Sprintf("%s: no answer in time: %v", what, e.Err)
	case isUnreachable(e.Err):
		return fmt.Sprintf("%s: API server unreachable: %v", what, e.Err)
	}
	return fmt.Sprintf("%s: %v", what, e.Err)
}

func (e *ListError) Unwrap() error { return e.Err }

func isUnreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns)
}

// listObject is what every typed list (*corev1.PodList, ...) offers.
type listObject interface {
	GetContinue() string
	GetResourceVersion() string
	GetRemainingItemCount() *int64
}

// metaObject is a pointer to a typed object.
type metaObject[T any] interface {
	*T
	metav1.Object
}

// lister lists one resource page by page.
type lister[T any, L listObject] struct {
	resource string
	list     func(context.Context, metav1.ListOptions) (L, error)
	items    func(L) []T
}

// listed is one finished list.
type listed[T any] struct {
	items           []T
	resourceVersion string
}

// all lists every object matching sel, opts.ChunkSize at a time, and
// restarts from the first page when a continue token expires (410).
func all[T any, PT metaObject[T], L listObject](ctx context.Context, l lister[T, L], sel metav1.ListOptions, t *taker) (listed[T], error) {
	start := time.Now()
	selector := sel.FieldSelector + sel.LabelSelector
	if sel.FieldSelector != "" && sel.LabelSelector != "" {
		selector = sel.FieldSelector + "," + sel.LabelSelector
	}
	restarts := 0
	for {
		var out listed[T]
		req := sel
		req.Limit = t.chunkSize()
		pages := 0
		for {
			page, err := l.list(ctx, req)
			// Only a list at the latest revision may start again on its
			// own: a consistent snapshot starts again whole (Take).
			if err != nil && t.cut == nil && req.Continue != "" && apierrors.IsResourceExpired(err) && restarts < MaxRestarts {
				restarts++
				t.notify(Event{Resource: l.resource, Selector: selector, Restart: err})
				break
			}
			if err != nil {
				le := &ListError{Resource: l.resource, Selector: selector, Err: err}
				if t.cut != nil {
					le.Revision = cmp.Or(sel.ResourceVersion, out.resourceVersion)
				}
				if t.cut == nil && req.Continue != "" && apierrors.IsResourceExpired(err) {
					le.Expired = restarts + 1
				}
				return listed[T]{}, le
			}
			pages++
			if out.resourceVersion == "" {
				out.resourceVersion = page.GetResourceVersion()
				if t.cut != nil {
					t.cut.fix(out.resourceVersion)
				}
			}
			items := l.items(page)
			for i := range items {
				if !t.opts.Full {
					strip(PT(&items[i]))
				}
			}
			switch {
			case out.items == nil && page.GetContinue() == "":
				out.items = items // a single page: keep its slice
			case out.items == nil:
				size := len(items)
				if n := page.GetRemainingItemCount(); n != nil && *n > 0 && *n < 1<<24 {
					size += int(*n)
				}
				out.items = append(make([]T, 0, size), items...)
			default:
				out.items = append(out.items, items...)
			}
			if page.GetContinue() == "" {
				if out.items == nil {
					out.items = []T{}
				}
				t.notify(Event{Resource: l.resource, Selector: selector, Count: len(out.items), Pages: pages, Took: time.Since(start)})
				return out, nil
			}
			// the continue token carries the list's resourceVersion
			req.Continue, req.ResourceVersion, req.ResourceVersionMatch = page.GetContinue(), "", ""
		}
	}
}

// LastAppliedAnnotation is the annotation kubectl apply keeps its input in.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// strip drops managedFields and the last-applied annotation.
func strip(obj metav1.Object) {
	obj.SetManagedFields(nil)
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[LastAppliedAnnotation]; ok {
			delete(a, LastAppliedAnnotation)
			if len(a) == 0 {
				obj.SetAnnotations(nil)
			}
		}
	}
}
