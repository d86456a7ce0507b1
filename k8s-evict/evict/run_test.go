package evict

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

const overlapBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}`

func labelled(p *corev1.Pod, labels map[string]string) *corev1.Pod { p.Labels = labels; return p }

func pdbNamed(name string, selector map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}}}
}

// TestRun checks Run's flow over a fake clientset (its wiring only; the
// API's answers are tested against the control plane by the command's
// tests): the read before the eviction and the UID check that sends
// nothing on a mismatch, the UID learnt for --wait, the wait, the PDBs
// named after a pdb-overlap answer.
func TestRun(t *testing.T) {
	tests := map[string]struct {
		objects []runtime.Object
		req     Request
		opts    Options
		ans     Answer
		// goneOnPost deletes the pod when the eviction is posted.
		goneOnPost bool
		// getErr makes every pod read fail; listErr every PDB list.
		getErr, listErr error
		noBudgets       bool
		want            *Result
		wantErr         string
		// wantUIDs are the preconditions of the evictions sent, in order
		// ("" for none); nil: no eviction sent.
		wantUIDs []types.UID
		// wantReads are the pod reads (get) made.
		wantReads int
	}{
		"uid matches: one eviction with it": {
			objects:   []runtime.Object{pod("web-1", "u1")},
			req:       Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			ans:       Answer{Code: 201},
			want:      &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: Accepted, HTTPStatus: 201, Message: "eviction accepted: the pod is being deleted"},
			wantUIDs:  []types.UID{"u1"},
			wantReads: 1,
		},
		"uid differs: gone, replaced, nothing sent": {
			objects: []runtime.Object{pod("web-1", "u2")},
			req:     Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: Gone, Reason: ReasonReplaced,
				Message: "pod shop/web-1 is now uid u2, not u1: the pod asked for is gone, no eviction sent"},
			wantReads: 1,
		},
		"uid differs, dry run: nothing sent either": {
			objects: []runtime.Object{pod("web-1", "u2")},
			req:     Request{Namespace: "shop", Name: "web-1", UID: "u1", DryRun: true},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", DryRun: true, Outcome: Gone, Reason: ReasonReplaced,
				Message: "pod shop/web-1 is now uid u2, not u1: the pod asked for is gone, no eviction sent"},
			wantReads: 1,
		},
		"uid given, pod absent: gone, not-found, nothing sent": {
			objects: []runtime.Object{pod("web-2", "u1")},
			req:     Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			want: &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: Gone, Reason: ReasonNotFound,
				Message: "pod shop/web-1 not found: nothing to evict, no eviction sent"},
			wantReads: 1,
		},
		"no uid, no wait: no read, one eviction": {
			req:      Request{Namespace: "shop", Name: "web-1"},
			ans:      answer(404, `{"kind":"Status","status":"Failure","message":"pods \"web-1\" not found","reason":"NotFound","details":{"name":"web-1","kind":"pods"},"code":404}`),
			want:     &Result{Namespace: "shop", Pod: "web-1", Outcome: Gone, Reason: ReasonNotFound, HTTPStatus: 404, Message: `pods "web-1" not found`},
			wantUIDs: []types.UID{""},
		},
		"wait: the uid is read, sent, and waited for": {
			objects:    []runtime.Object{pod("web-1", "u1")},
			req:        Request{Namespace: "shop", Name: "web-1"},
			opts:       Options{Wait: time.Minute},
			ans:        Answer{Code: 201},
			goneOnPost: true,
			want:       &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: Accepted, HTTPStatus: 201, Gone: true, Message: "evicted: the pod is gone"},
			wantUIDs:   []types.UID{"u1"},
			wantReads:  1,
		},
		"wait ends with the pod still there": {
			objects:   []runtime.Object{pod("web-1", "u1")},
			req:       Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			opts:      Options{Wait: 100 * time.Millisecond},
			ans:       Answer{Code: 201},
			want:      &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: AcceptedNotGone, Reason: ReasonWaitTimeout, HTTPStatus: 201, Message: "eviction accepted, but the pod was still there after 100ms"},
			wantUIDs:  []types.UID{"u1"},
			wantReads: 1,
		},
		"wait, dry run: no read, no wait": {
			objects:  []runtime.Object{pod("web-1", "u1")},
			req:      Request{Namespace: "shop", Name: "web-1", DryRun: true},
			opts:     Options{Wait: time.Minute},
			ans:      Answer{Code: 201},
			want:     &Result{Namespace: "shop", Pod: "web-1", DryRun: true, Outcome: Accepted, HTTPStatus: 201, Message: "eviction accepted: the pod is being deleted"},
			wantUIDs: []types.UID{""},
		},
		"the read fails: an error, nothing sent": {
			objects:   []runtime.Object{pod("web-1", "u1")},
			req:       Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			getErr:    apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-1", nil),
			wantErr:   `read pod shop/web-1: pods "web-1" is forbidden: <nil>`,
			wantReads: 1,
		},
		"overlap: the PDBs are named": {
			objects: []runtime.Object{labelled(pod("web-1", "u1"), map[string]string{"app": "web"}),
				pdbNamed("web", map[string]string{"app": "web"}), pdbNamed("all", nil), pdbNamed("api", map[string]string{"app": "api"})},
			req:       Request{Namespace: "shop", Name: "web-1"},
			ans:       answer(500, overlapBody),
			want:      &Result{Namespace: "shop", Pod: "web-1", Outcome: PDBOverlap, HTTPStatus: 500, PDBs: []string{"all", "web"}, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support. PDBs selecting the pod: all, web."},
			wantUIDs:  []types.UID{""},
			wantReads: 1,
		},
		"overlap with a uid: the pod read before is used": {
			objects: []runtime.Object{labelled(pod("web-1", "u1"), map[string]string{"app": "web"}),
				pdbNamed("web", map[string]string{"app": "web"}), pdbNamed("all", nil)},
			req:       Request{Namespace: "shop", Name: "web-1", UID: "u1"},
			ans:       answer(500, overlapBody),
			want:      &Result{Namespace: "shop", Pod: "web-1", UID: "u1", Outcome: PDBOverlap, HTTPStatus: 500, PDBs: []string{"all", "web"}, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support. PDBs selecting the pod: all, web."},
			wantUIDs:  []types.UID{"u1"},
			wantReads: 1,
		},
		"overlap, the PDBs cannot be listed": {
			objects:   []runtime.Object{pod("web-1", "u1")},
			req:       Request{Namespace: "shop", Name: "web-1"},
			ans:       answer(500, overlapBody),
			listErr:   apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", nil),
			want:      &Result{Namespace: "shop", Pod: "web-1", Outcome: PDBOverlap, HTTPStatus: 500, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support. (the PDBs could not be named: poddisruptionbudgets.policy is forbidden: <nil>)"},
			wantUIDs:  []types.UID{""},
			wantReads: 1,
		},
		"overlap without a PDB lister: unnamed, no read": {
			objects:   []runtime.Object{pod("web-1", "u1")},
			req:       Request{Namespace: "shop", Name: "web-1"},
			ans:       answer(500, overlapBody),
			noBudgets: true,
			want:      &Result{Namespace: "shop", Pod: "web-1", Outcome: PDBOverlap, HTTPStatus: 500, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
			wantUIDs:  []types.UID{""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objects...)
			reads := 0
			cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				reads++
				return tc.getErr != nil, nil, tc.getErr
			})
			if tc.listErr != nil {
				cs.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.listErr
				})
			}
			p := &poster{ans: tc.ans}
			if tc.goneOnPost {
				p.post = func(ctx context.Context) error {
					return cs.CoreV1().Pods("shop").Delete(ctx, "web-1", metav1.DeleteOptions{})
				}
			}
			deps := Deps{Poster: p, Pods: cs.CoreV1().Pods("shop"), Budgets: cs.PolicyV1().PodDisruptionBudgets("shop")}
			if tc.noBudgets {
				deps.Budgets = nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := Run(ctx, deps, tc.req, tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("Run error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tc.want != nil {
				tc.want.Header = document.NewHeader(Kind)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run (-want +got):\n%s", diff)
			}
			var uids []types.UID
			for _, ev := range p.sent {
				var uid types.UID
				if ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil {
					uid = *ev.DeleteOptions.Preconditions.UID
				}
				uids = append(uids, uid)
			}
			if diff := cmp.Diff(tc.wantUIDs, uids); diff != "" {
				t.Errorf("evictions sent, by UID precondition (-want +got):\n%s", diff)
			}
			if reads != tc.wantReads {
				t.Errorf("pod reads = %d, want %d", reads, tc.wantReads)
			}
		})
	}
}

// TestRunNeedsPods: a UID to check without a pod client is an error, not
// an eviction sent unchecked.
func TestRunNeedsPods(t *testing.T) {
	p := &poster{ans: Answer{Code: 201}}
	_, err := Run(context.Background(), Deps{Poster: p}, Request{Namespace: "shop", Name: "web-1", UID: "u1"}, Options{})
	if err == nil || len(p.sent) != 0 {
		t.Errorf("Run = %v with %d evictions sent, want an error and none", err, len(p.sent))
	}
}

func TestCheck(t *testing.T) {
	tests := map[string]struct {
		req        Request
		pod        *corev1.Pod
		wantOK     bool
		wantReason string
	}{
		"same uid":             {req: Request{Namespace: "shop", Name: "web-1", UID: "u1"}, pod: pod("web-1", "u1"), wantOK: true},
		"no uid asked":         {req: Request{Namespace: "shop", Name: "web-1"}, pod: pod("web-1", "u1"), wantOK: true},
		"other uid":            {req: Request{Namespace: "shop", Name: "web-1", UID: "u1"}, pod: pod("web-1", "u2"), wantReason: ReasonReplaced},
		"absent":               {req: Request{Namespace: "shop", Name: "web-1", UID: "u1"}, wantReason: ReasonNotFound},
		"absent, no uid asked": {req: Request{Namespace: "shop", Name: "web-1"}, wantReason: ReasonNotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, ok := Check(tc.req, tc.pod)
			if ok != tc.wantOK || (ok && res != nil) {
				t.Fatalf("Check = %+v, %v; want ok %v", res, ok, tc.wantOK)
			}
			if !ok && (res.Outcome != Gone || res.Reason != tc.wantReason || res.HTTPStatus != 0 || res.Code() != 0) {
				t.Errorf("Check = %s/%s HTTP %d exit %d, want gone/%s, no HTTP status, exit 0", res.Outcome, res.Reason, res.HTTPStatus, res.Code(), tc.wantReason)
			}
		})
	}
}
