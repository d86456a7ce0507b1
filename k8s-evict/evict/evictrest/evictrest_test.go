package evictrest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
)

const (
	staleBody   = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web is still being processed by the server."}],"retryAfterSeconds":10},"code":429}`
	overlapBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}`
)

// client is a core/v1 REST client like the command's: protobuf for
// built-in kinds, so the JSON of the eviction is the poster's own doing.
func client(t *testing.T, host string) rest.Interface {
	t.Helper()
	cfg := kubeclient.Options{Tool: "test"}.Tune(&rest.Config{Host: host})
	c, _, err := kubeclient.CoreV1(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type answer struct {
	status      int
	contentType string
	retryAfter  string
	body        string
}

// TestPostEviction checks the wire: exactly one POST to the eviction
// subresource with the Eviction as JSON, dry run as a query parameter,
// no retry of an answer that carries Retry-After (client-go's default
// would retry it up to ten times), and the answer's code, Status and
// Retry-After classified as they came.
func TestPostEviction(t *testing.T) {
	tests := map[string]struct {
		req       evict.Request
		answer    answer
		wantQuery string
		want      *evict.Result
	}{
		"stale pdb with Retry-After: not retried": {
			req:    evict.Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			answer: answer{429, "application/json", "10", staleBody},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: evict.PDBStale, HTTPStatus: 429, RetryAfterSeconds: 10,
				PDB: &evict.Budget{Name: "web"}, Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web is still being processed by the server."},
		},
		"priority and fairness: plain text with Retry-After": {
			req:    evict.Request{Namespace: "shop", Name: "web-1"},
			answer: answer{429, "text/plain; charset=utf-8", "3", "Too many requests, please try again later.\n"},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", Outcome: evict.Throttled, HTTPStatus: 429, RetryAfterSeconds: 3,
				Message: "the server has received too many requests and has asked us to try again later (post pods web-1) Too many requests, please try again later."},
		},
		"a Status without retryAfterSeconds keeps the header's": {
			req:    evict.Request{Namespace: "shop", Name: "web-1"},
			answer: answer{429, "application/json", "4", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"slow down","reason":"TooManyRequests","code":429}`},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", Outcome: evict.Throttled, HTTPStatus: 429, RetryAfterSeconds: 4,
				Message: "slow down"},
		},
		"5xx with Retry-After: not retried": {
			req:    evict.Request{Namespace: "shop", Name: "web-1"},
			answer: answer{503, "application/json", "1", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"unavailable","reason":"ServiceUnavailable","code":503}`},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", Outcome: evict.Unknown, HTTPStatus: 503, RetryAfterSeconds: 1,
				Message: "unavailable"},
		},
		"overlap": {
			req:    evict.Request{Namespace: "shop", Name: "web-1"},
			answer: answer{500, "application/json", "", overlapBody},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", Outcome: evict.PDBOverlap, HTTPStatus: 500,
				Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
		},
		"uid precondition failed": {
			req:    evict.Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			answer: answer{409, "application/json", "", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on Pod \"web-1\": the UID in the precondition (u1) does not match the UID in record (u2). The object might have been deleted and then recreated","reason":"Conflict","details":{"name":"web-1","kind":"Pod"},"code":409}`},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: evict.Gone, Reason: evict.ReasonReplaced, HTTPStatus: 409,
				Message: `Operation cannot be fulfilled on Pod "web-1": the UID in the precondition (u1) does not match the UID in record (u2). The object might have been deleted and then recreated`},
		},
		"dry run accepted": {
			req:       evict.Request{Namespace: "shop", Name: "web-1", DryRun: true},
			answer:    answer{201, "application/json", "", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`},
			wantQuery: "dryRun=All",
			want: &evict.Result{Namespace: "shop", Pod: "web-1", DryRun: true, Outcome: evict.Accepted, HTTPStatus: 201,
				Message: "eviction accepted: the pod is being deleted"},
		},
		"a proxy's HTML": {
			req:    evict.Request{Namespace: "shop", Name: "web-1"},
			answer: answer{502, "text/html", "", "<html>bad gateway</html>"},
			want: &evict.Result{Namespace: "shop", Pod: "web-1", Outcome: evict.Unknown, HTTPStatus: 502,
				Message: `an error on the server ("<html>bad gateway</html>") has prevented the request from succeeding (post pods web-1)`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var posts atomic.Int32
			var gotEv policyv1.Eviction
			var gotReq, gotQuery, gotType, gotAccept string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				gotReq, gotQuery = r.Method+" "+r.URL.Path, r.URL.RawQuery
				gotType, gotAccept = r.Header.Get("Content-Type"), r.Header.Get("Accept")
				body, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(body, &gotEv); err != nil {
					t.Errorf("request body %q: %v", body, err)
				}
				if tc.answer.retryAfter != "" {
					w.Header().Set("Retry-After", tc.answer.retryAfter)
				}
				w.Header().Set("Content-Type", tc.answer.contentType)
				w.WriteHeader(tc.answer.status)
				io.WriteString(w, tc.answer.body)
			}))
			defer srv.Close()
			got, err := evict.Pod(context.Background(), New(client(t, srv.URL+"/prefix")), tc.req)
			if err != nil {
				t.Fatalf("Pod: %v", err)
			}
			tc.want.Header = document.NewHeader(evict.Kind)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pod (-want +got):\n%s", diff)
			}
			if n := posts.Load(); n != 1 {
				t.Errorf("requests = %d, want exactly 1", n)
			}
			if want := "POST /prefix/api/v1/namespaces/shop/pods/web-1/eviction"; gotReq != want {
				t.Errorf("request = %q, want %q", gotReq, want)
			}
			if gotQuery != tc.wantQuery || gotType != "application/json" || gotAccept != "application/json" {
				t.Errorf("query %q, content type %q, accept %q; want %q, application/json, application/json", gotQuery, gotType, gotAccept, tc.wantQuery)
			}
			if diff := cmp.Diff(evict.Eviction(tc.req), &gotEv); diff != "" {
				t.Errorf("eviction sent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostEvictionTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := evict.Pod(ctx, New(client(t, srv.URL)), evict.Request{Namespace: "shop", Name: "web-1"})
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	if got.Outcome != evict.Unknown || got.Reason != evict.ReasonTimeout {
		t.Errorf("outcome %s/%s, want unknown/timeout", got.Outcome, got.Reason)
	}
}

// TestPostEvictionAnswerLost: the server reads the whole eviction, then
// the connection ends without a whole answer: closed before it, closed in
// the middle of its body, or reset. The request was sent, so the outcome
// is unknown (answer-lost), not an error, and it was sent once.
func TestPostEvictionAnswerLost(t *testing.T) {
	tests := map[string]struct {
		hangUp  func(w http.ResponseWriter) (net.Conn, error)
		wantErr string
	}{
		"closed before the answer": {
			hangUp:  func(w http.ResponseWriter) (net.Conn, error) { c, _, err := w.(http.Hijacker).Hijack(); return c, err },
			wantErr: `: EOF)`,
		},
		"closed in the middle of the body": {
			hangUp: func(w http.ResponseWriter) (net.Conn, error) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "200")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, `{"kind":"Status",`)
				w.(http.Flusher).Flush()
				c, _, err := w.(http.Hijacker).Hijack()
				return c, err
			},
			wantErr: `: unexpected EOF)`,
		},
		"reset": {
			hangUp: func(w http.ResponseWriter) (net.Conn, error) {
				c, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					err = c.(*net.TCPConn).SetLinger(0) // close sends RST
				}
				return c, err
			},
			wantErr: `: connection reset by peer)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				io.Copy(io.Discard, r.Body)
				conn, err := tc.hangUp(w)
				if err != nil {
					t.Errorf("hang up: %v", err)
				}
				if conn != nil {
					conn.Close()
				}
			}))
			defer srv.Close()
			got, err := evict.Pod(context.Background(), New(client(t, srv.URL)), evict.Request{Namespace: "shop", Name: "web-1", UID: "u1"})
			if err != nil {
				t.Fatalf("Pod: %v", err)
			}
			if got.Outcome != evict.Unknown || got.Reason != evict.ReasonAnswerLost || got.UID != "u1" || got.HTTPStatus != 0 {
				t.Errorf("outcome %s/%s uid %q HTTP %d, want unknown/answer-lost u1 0", got.Outcome, got.Reason, got.UID, got.HTTPStatus)
			}
			if !strings.HasPrefix(got.Message, "the answer was lost (") || !strings.Contains(got.Message, tc.wantErr) {
				t.Errorf("message %q, want the answer lost with %q", got.Message, tc.wantErr)
			}
			if n := posts.Load(); n != 1 {
				t.Errorf("requests = %d, want exactly 1", n)
			}
		})
	}
}

// TestPostEvictionUnreachable: nothing listens, nothing was sent: an error
// marked evict.ErrNotSent, not an outcome.
func TestPostEvictionUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := evict.Pod(context.Background(), New(client(t, url)), evict.Request{Namespace: "shop", Name: "web-1"})
	if err == nil || !strings.HasPrefix(err.Error(), "evict pod shop/web-1: ") || !errors.Is(err, evict.ErrNotSent) {
		t.Errorf("Pod error = %v, want one naming the pod, marked not sent", err)
	}
}

var _ evict.Poster = (*Poster)(nil)
