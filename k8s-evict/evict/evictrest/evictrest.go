// Package evictrest posts evictions through client-go's REST client with
// its retries switched off, for package evict.
//
// client-go retries, inside one call, every answer that carries a
// Retry-After header (up to ten times by default): the stale-PDB 429
// (Retry-After 10) would be hidden for about 100 s, and a 5xx with the
// header sent again. Poster sets MaxRetries(0), so exactly one request is
// sent, and returns the status code and the Status body as they came. No
// header is needed: the API server's own 429s carry retryAfterSeconds in
// the Status details, and for an answer that is not a Status (the 429 of
// API Priority and Fairness is plain text) client-go turns the Retry-After
// header into the error's Status, which Poster uses.
//
// An error before the request's headers were written (no connection, a
// failed TLS handshake, ctx ended first) wraps evict.ErrNotSent: the API
// server cannot have acted on it. An error after that (the connection
// closed or reset before the answer, ctx ended while waiting for it) is an
// answer lost, which package evict reports as the outcome unknown.
package evictrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync/atomic"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
)

// Poster implements evict.Poster on a REST client.
type Poster struct {
	client rest.Interface
}

// New posts through client, a REST client of any API group of the
// cluster (e.g. a clientset's CoreV1().RESTClient(), or one from
// rest.RESTClientFor): the request goes to the absolute path
// /api/v1/namespaces/NS/pods/NAME/eviction, as JSON whatever content type
// client is configured for.
func New(client rest.Interface) *Poster {
	return &Poster{client: client}
}

// PostEviction implements evict.Poster: one POST, no retry. An error wraps
// evict.ErrNotSent unless the request's headers were written, so that the
// request may have reached the API server.
func (p *Poster) PostEviction(ctx context.Context, ev *policyv1.Eviction) (evict.Answer, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return evict.Answer{}, fmt.Errorf("encode eviction: %w (%w)", err, evict.ErrNotSent)
	}
	// The headers go out before any of the body: the API server cannot
	// act on a request before they are written, and may once they are.
	// (An HTTP/1 attempt the transport retries because nothing of it
	// reached the connection still counts: unknown errs on the safe side.)
	var written atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { written.Store(true) }})
	req := p.client.Post().
		AbsPath("/api/v1").
		Namespace(ev.Namespace).
		Resource("pods").
		Name(ev.Name).
		SubResource("eviction").
		SetHeader("Content-Type", "application/json").
		SetHeader("Accept", "application/json").
		MaxRetries(0).
		Body(body)
	if ev.DeleteOptions != nil {
		for _, d := range ev.DeleteOptions.DryRun {
			req.Param("dryRun", d)
		}
	}
	var code int
	raw, err := req.Do(ctx).StatusCode(&code).Raw()
	st := evict.ParseStatus(raw)
	var api apierrors.APIStatus
	switch {
	case errors.As(err, &api):
		// An answer other than 2xx; client-go made its Status from the
		// body, or from the code and Retry-After header when the body
		// is not a Status.
		from := api.Status()
		if code == 0 {
			code = int(from.Code)
		}
		if st == nil {
			st = &from
		} else if retry := retryAfter(&from); retry > 0 && retryAfter(st) == 0 {
			if st.Details == nil {
				st.Details = &metav1.StatusDetails{}
			}
			st.Details.RetryAfterSeconds = retry
		}
	case err != nil && !written.Load():
		return evict.Answer{}, fmt.Errorf("%w (%w)", err, evict.ErrNotSent)
	case err != nil:
		return evict.Answer{}, err
	}
	return evict.Answer{Code: code, Status: st}, nil
}

func retryAfter(st *metav1.Status) int32 {
	if st.Details == nil {
		return 0
	}
	return st.Details.RetryAfterSeconds
}
