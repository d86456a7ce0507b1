package evict

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// poster is a Poster that answers every request with ans (or err) and
// records the evictions it was given; post runs first when set.
type poster struct {
	ans  Answer
	err  error
	post func(ctx context.Context) error
	sent []*policyv1.Eviction
}

func (p *poster) PostEviction(ctx context.Context, ev *policyv1.Eviction) (Answer, error) {
	p.sent = append(p.sent, ev)
	if p.post != nil {
		if err := p.post(ctx); err != nil {
			return Answer{}, err
		}
	}
	return p.ans, p.err
}

func answer(code int, body string) Answer {
	return Answer{Code: code, Status: ParseStatus([]byte(body))}
}

// TestPod checks the shell: one eviction built from the request
// (precondition, dry run), the answer classified, Retry-After capped;
// the wire is evictrest's.
func TestPod(t *testing.T) {
	tests := map[string]struct {
		req    Request
		ans    Answer
		err    error
		wantEv *policyv1.Eviction
		want   *Result
	}{
		"stale pdb, Retry-After capped": {
			req: Request{Namespace: "shop", Name: "web-1", UID: "u1", MaxRetryAfter: time.Minute},
			ans: answer(429, staleBody),
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta:    metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: uidp("u1")}}},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: PDBStale, HTTPStatus: 429, RetryAfterSeconds: 60,
				PDB: &Budget{Name: "web"}, Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web is still being processed by the server."},
		},
		"dry run": {
			req: Request{Namespace: "shop", Name: "web-1", DryRun: true},
			ans: answer(201, `{"kind":"Status","apiVersion":"v1","status":"Success","code":201}`),
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta:    metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
				DeleteOptions: &metav1.DeleteOptions{DryRun: []string{"All"}}},
			want: &Result{Namespace: "shop", Pod: "web-1", DryRun: true, Outcome: Accepted, HTTPStatus: 201,
				Message: "eviction accepted: the pod is being deleted"},
		},
		"plain": {
			req: Request{Namespace: "shop", Name: "web-1"},
			ans: Answer{Code: 201},
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}},
			want: &Result{Namespace: "shop", Pod: "web-1", Outcome: Accepted, HTTPStatus: 201,
				Message: "eviction accepted: the pod is being deleted"},
		},
		"no answer in time": {
			req: Request{Namespace: "shop", Name: "web-1"},
			err: fmt.Errorf("post: %w", context.DeadlineExceeded),
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}},
			want: &Result{Namespace: "shop", Pod: "web-1", Outcome: Unknown, Reason: ReasonTimeout,
				Message: "no answer before the timeout: the eviction may or may not have happened; read the pod again before sending anything again"},
		},
		"the connection closed before the answer": {
			req: Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			err: fmt.Errorf("Post %q: %w", "https://api/v1/namespaces/shop/pods/web-1/eviction", io.EOF),
			wantEv: &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
				ObjectMeta:    metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: uidp("u1")}}},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: Unknown, Reason: ReasonAnswerLost,
				Message: `the answer was lost (Post "https://api/v1/namespaces/shop/pods/web-1/eviction": EOF): the eviction may or may not have happened; read the pod again before sending anything again`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &poster{ans: tc.ans, err: tc.err}
			got, err := Pod(context.Background(), p, tc.req)
			if err != nil {
				t.Fatalf("Pod: %v", err)
			}
			tc.want.Header = document.NewHeader(Kind)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pod (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]*policyv1.Eviction{tc.wantEv}, p.sent); diff != "" {
				t.Errorf("evictions sent (-want +got):\n%s", diff)
			}
		})
	}
}

func uidp(s string) *types.UID { u := types.UID(s); return &u }

// TestPodNotSent: an error the Poster marks as not sent (nothing reached
// the API server, even when the deadline ended the attempt) is an error,
// not an outcome.
func TestPodNotSent(t *testing.T) {
	for _, cause := range []error{errors.New("connection refused"), context.DeadlineExceeded} {
		res, err := Pod(context.Background(), &poster{err: fmt.Errorf("dial: %w (%w)", cause, ErrNotSent)}, Request{Namespace: "shop", Name: "web-1"})
		want := "evict pod shop/web-1: dial: " + cause.Error() + " (the eviction was not sent)"
		if res != nil || err == nil || err.Error() != want {
			t.Errorf("Pod = %+v, %v; want no result and the error %q", res, err, want)
		}
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
