package evict

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

const staleBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web is still being processed by the server."}],"retryAfterSeconds":120},"code":429}`

// TestPod checks the wire: one POST to the eviction subresource with the
// Eviction as JSON, preconditions and dry run as asked, no retry of a 429
// that carries Retry-After, and the answer classified.
func TestPod(t *testing.T) {
	tests := map[string]struct {
		req       Request
		status    int
		body      string
		wantQuery string
		wantEv    *policyv1.Eviction
		want      *Result
	}{
		"stale pdb is not retried, Retry-After capped": {
			req:    Request{Namespace: "shop", Name: "web-1", UID: "u1", MaxRetryAfter: time.Minute},
			status: 429, body: staleBody,
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta:    metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: uidp("u1")}}},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: PDBStale, HTTPStatus: 429, RetryAfterSeconds: 60,
				PDB: &Budget{Name: "web"}, Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web is still being processed by the server."},
		},
		"dry run": {
			req:    Request{Namespace: "shop", Name: "web-1", DryRun: true},
			status: 201, body: `{"kind":"Status","apiVersion":"v1","status":"Success","code":201}`,
			wantQuery: "dryRun=All",
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta:    metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
				DeleteOptions: &metav1.DeleteOptions{DryRun: []string{"All"}}},
			want: &Result{Namespace: "shop", Pod: "web-1", DryRun: true, Outcome: Accepted, HTTPStatus: 201,
				Message: "eviction accepted: the pod is being deleted"},
		},
		"plain": {
			req:    Request{Namespace: "shop", Name: "web-1"},
			status: 201,
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}},
			want: &Result{Namespace: "shop", Pod: "web-1", Outcome: Accepted, HTTPStatus: 201,
				Message: "eviction accepted: the pod is being deleted"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var posts atomic.Int32
			var gotEv policyv1.Eviction
			var gotPath, gotQuery, gotType string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				gotPath, gotQuery, gotType = r.Method+" "+r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type")
				body, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(body, &gotEv); err != nil {
					t.Errorf("request body: %v", err)
				}
				if tc.status == 429 {
					w.Header().Set("Retry-After", "120")
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			base, _ := url.Parse(srv.URL + "/prefix")
			got, err := Pod(context.Background(), NewHTTP(srv.Client(), base), tc.req)
			if err != nil {
				t.Fatalf("Pod: %v", err)
			}
			tc.want.Header = document.NewHeader(Kind)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pod (-want +got):\n%s", diff)
			}
			if n := posts.Load(); n != 1 {
				t.Errorf("requests = %d, want exactly 1", n)
			}
			if want := "POST /prefix/api/v1/namespaces/shop/pods/web-1/eviction"; gotPath != want {
				t.Errorf("request = %q, want %q", gotPath, want)
			}
			if gotQuery != tc.wantQuery || gotType != "application/json" {
				t.Errorf("query %q, content type %q; want %q, application/json", gotQuery, gotType, tc.wantQuery)
			}
			if diff := cmp.Diff(tc.wantEv, &gotEv); diff != "" {
				t.Errorf("eviction sent (-want +got):\n%s", diff)
			}
		})
	}
}

func uidp(s string) *types.UID { u := types.UID(s); return &u }

func TestPodTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	base, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := Pod(ctx, NewHTTP(srv.Client(), base), Request{Namespace: "shop", Name: "web-1"})
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	if got.Outcome != Unknown || got.Reason != ReasonTimeout {
		t.Errorf("outcome %s/%s, want unknown/timeout", got.Outcome, got.Reason)
	}
}

func TestPodUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base, _ := url.Parse(srv.URL)
	srv.Close()
	_, err := Pod(context.Background(), NewHTTP(http.DefaultClient, base), Request{Namespace: "shop", Name: "web-1"})
	if err == nil || !strings.Contains(err.Error(), "evict pod shop/web-1: ") {
		t.Errorf("Pod error = %v, want one naming the pod", err)
	}
}

func pod(name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(uid)}}
}

// TestWaitGone checks the wiring of WaitGone over a fake clientset; the
// real watch is tested against the control plane by the command's tests.
func TestWaitGone(t *testing.T) {
	tests := map[string]struct {
		objects []runtime.Object
		events  []watch.Event
		wantErr error
	}{
		"already gone":            {objects: []runtime.Object{pod("web-2", "u2")}},
		"replaced before listing": {objects: []runtime.Object{pod("web-1", "new")}},
		"deleted while watching": {
			objects: []runtime.Object{pod("web-1", "u1")},
			events:  []watch.Event{{Type: watch.Modified, Object: pod("web-1", "u1")}, {Type: watch.Deleted, Object: pod("web-1", "u1")}},
		},
		"replacement seen while watching": {
			objects: []runtime.Object{pod("web-1", "u1")},
			events:  []watch.Event{{Type: watch.Added, Object: pod("web-1", "u9")}},
		},
		"still there": {
			objects: []runtime.Object{pod("web-1", "u1")},
			events:  []watch.Event{{Type: watch.Modified, Object: pod("web-1", "u1")}},
			wantErr: context.DeadlineExceeded,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objects...)
			fw := watch.NewFakeWithChanSize(len(tc.events), false)
			for _, ev := range tc.events {
				fw.Action(ev.Type, ev.Object)
			}
			cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) { return true, fw, nil })
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := WaitGone(ctx, cs.CoreV1().Pods("shop"), "web-1", "u1")
			if err != tc.wantErr {
				t.Errorf("WaitGone = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
