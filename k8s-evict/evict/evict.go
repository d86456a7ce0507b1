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
// an error; an error is no answer. An error that wraps ErrNotSent says the
// request cannot have reached the API server (unreachable: no connection,
// nothing written); any other error is an answer lost after the request
// may have reached it (the connection closed, ctx ended: wrap ctx's error),
// and Pod reports it as the outcome unknown. evictrest.Poster is one, over
// client-go's REST client.
type Poster interface {
	PostEviction(ctx context.Context, ev *policyv1.Eviction) (Answer, error)
}

// ErrNotSent marks a Poster's error when the eviction request cannot have
// reached the API server: nothing was done, and Pod returns the error.
var ErrNotSent = errors.New("the eviction was not sent")

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
//
// A request that may have reached the API server without an answer coming
// back is the outcome unknown, not an error: the eviction may or may not
// have been applied, and the pod must be read again before anything is
// sent again. Reason timeout when ctx's deadline (or another timeout) ended
// the wait, answer-lost otherwise (the connection closed or was reset
// before the answer, ctx was canceled). Only an error the Poster marks with
// ErrNotSent (nothing reached the API server) is returned as an error.
func Pod(ctx context.Context, p Poster, req Request) (*Result, error) {
	res := NewResult(req.Namespace, req.Name)
	res.UID, res.DryRun = req.UID, req.DryRun
	ans, err := p.PostEviction(ctx, Eviction(req))
	switch {
	case err != nil && errors.Is(err, ErrNotSent):
		return nil, fmt.Errorf("evict pod %s/%s: %w", req.Namespace, req.Name, err)
	case err != nil && isTimeout(err):
		res.Outcome, res.Reason = Unknown, ReasonTimeout
		res.Message = "no answer before the timeout: the eviction may or may not have happened; " + readAgain
		return res, nil
	case err != nil:
		res.Outcome, res.Reason = Unknown, ReasonAnswerLost
		res.Message = fmt.Sprintf("the answer was lost (%v): the eviction may or may not have happened; %s", err, readAgain)
		return res, nil
	}
	c := Classify(ans.Code, ans.Status, ans.Header)
	res.Outcome, res.Reason, res.HTTPStatus, res.RetryAfterSeconds, res.PDB, res.Message =
		c.Outcome, c.Reason, c.HTTPStatus, c.RetryAfterSeconds, c.PDB, c.Message
	res.CapRetryAfter(req.MaxRetryAfter)
	return res, nil
}

// readAgain ends the message of an unknown outcome without an answer.
const readAgain = "read the pod again before sending anything again"

// isTimeout is whether err is a deadline or another timeout (a net.Error's,
// http.Client's).
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &t) && t.Timeout())
}
