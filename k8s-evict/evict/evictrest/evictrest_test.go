package evictrest

import (
	"context"
	"encoding/json"
	"io"
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

func TestPostEvictionUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := evict.Pod(context.Background(), New(client(t, url)), evict.Request{Namespace: "shop", Name: "web-1"})
	if err == nil || !strings.Contains(err.Error(), "evict pod shop/web-1: ") {
		t.Errorf("Pod error = %v, want one naming the pod", err)
	}
}

var _ evict.Poster = (*Poster)(nil)
