package evict

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Request names the pod to evict.
type Request struct {
	Namespace, Name string
	// UID, when set, is sent as the precondition preconditions.uid: a pod
	// re-created under the same name is not evicted (the answer is gone,
	// reason replaced).
	UID types.UID
	// DryRun asks for dryRun=All: the API server checks everything and
	// changes nothing.
	DryRun bool
	// MaxRetryAfter caps Result.RetryAfterSeconds (0: no cap).
	MaxRetryAfter time.Duration
}

// Answer is the raw answer to one eviction request.
type Answer struct {
	Code int
	// Header holds the answer's headers when the Poster keeps them (nil
	// otherwise: the API server's Status carries retryAfterSeconds).
	Header http.Header
	// Status is the body as a Status, nil when it is not one.
	Status *metav1.Status
}

// Poster sends one eviction request and returns the answer as it came:
// no retries of any kind. An answer with any HTTP status is an Answer, not
// an error; an error is no answer (unreachable, timeout: wrap ctx's error).
// evictrest.Poster is one, over client-go's REST client.
type Poster interface {
	PostEviction(ctx context.Context, ev *policyv1.Eviction) (Answer, error)
}

// Eviction is the object Pod sends for req.
func Eviction(req Request) *policyv1.Eviction {
	ev := &policyv1.Eviction{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace},
	}
	if req.UID != "" || req.DryRun {
		ev.DeleteOptions = &metav1.DeleteOptions{}
	}
	if req.UID != "" {
		uid := req.UID
		ev.DeleteOptions.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if req.DryRun {
		ev.DeleteOptions.DryRun = []string{metav1.DryRunAll}
	}
	return ev
}

// Pod sends exactly one eviction request for req and classifies the answer.
// It reads nothing first: a caller that knows the pod (Run, or maintd from
// its cache) calls Check before, so that a stale UID is never sent.
// No answer before ctx's deadline is the outcome unknown (reason timeout):
// the request may have been acted on. Any other failure to get an answer
// is an error.
func Pod(ctx context.Context, p Poster, req Request) (*Result, error) {
	res := NewResult(req.Namespace, req.Name)
	res.UID, res.DryRun = req.UID, req.DryRun
	ans, err := p.PostEviction(ctx, Eviction(req))
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		res.Outcome, res.Reason = Unknown, ReasonTimeout
		res.Message = "no answer before the timeout: the eviction may or may not have happened"
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("evict pod %s/%s: %w", req.Namespace, req.Name, err)
	}
	c := Classify(ans.Code, ans.Status, ans.Header)
	res.Outcome, res.Reason, res.HTTPStatus, res.RetryAfterSeconds, res.PDB, res.Message =
		c.Outcome, c.Reason, c.HTTPStatus, c.RetryAfterSeconds, c.PDB, c.Message
	res.CapRetryAfter(req.MaxRetryAfter)
	return res, nil
}
