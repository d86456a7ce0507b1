package evict

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

func ptr(n int32) *int32 { return &n }

// The bodies are the API server's own answers (kube-apiserver v1.37.2), as
// JSON on the wire; docs/eviction-api.md says which of them the local
// control plane reproduces.
func TestClassify(t *testing.T) {
	tests := map[string]struct {
		code   int
		body   string
		header http.Header
		want   Result
	}{
		"created": {
			code: 201, body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`,
			want: Result{Outcome: Accepted, HTTPStatus: 201, Message: "eviction accepted: the pod is being deleted"},
		},
		"ok without body": {
			code: 200,
			want: Result{Outcome: Accepted, HTTPStatus: 200, Message: "eviction accepted: the pod is being deleted"},
		},
		"pod not found": {
			code: 404, body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-1\" not found","reason":"NotFound","details":{"name":"web-1","kind":"pods"},"code":404}`,
			want: Result{Outcome: Gone, Reason: ReasonNotFound, HTTPStatus: 404, Message: `pods "web-1" not found`},
		},
		"namespace not found": {
			code: 404, body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"namespaces"},"code":404}`,
			want: Result{Outcome: Invalid, Reason: ReasonNamespaceNotFound, HTTPStatus: 404, Message: `namespaces "nope" not found`},
		},
		"uid precondition": {
			code: 409, body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on Pod \"web-1\": the UID in the precondition (a) does not match the UID in record (b). The object might have been deleted and then recreated","reason":"Conflict","details":{"name":"web-1","kind":"Pod"},"code":409}`,
			want: Result{Outcome: Gone, Reason: ReasonReplaced, HTTPStatus: 409,
				Message: `Operation cannot be fulfilled on Pod "web-1": the UID in the precondition (a) does not match the UID in record (b). The object might have been deleted and then recreated`},
		},
		"uid precondition, dry run (storage wording)": {
			code: 409, body: `{"kind":"Status","status":"Failure","message":"Operation cannot be fulfilled on pods \"web-1\": Precondition failed: UID in precondition: a, UID in object meta: b","reason":"Conflict","code":409}`,
			want: Result{Outcome: Gone, Reason: ReasonReplaced, HTTPStatus: 409,
				Message: `Operation cannot be fulfilled on pods "web-1": Precondition failed: UID in precondition: a, UID in object meta: b`},
		},
		"resourceVersion precondition": {
			code: 409, body: `{"kind":"Status","status":"Failure","message":"Operation cannot be fulfilled on Pod \"web-1\": the ResourceVersion in the precondition (5) does not match the ResourceVersion in record (6). The object might have been modified","reason":"Conflict","code":409}`,
			want: Result{Outcome: Contention, Reason: ReasonPodChanged, HTTPStatus: 409,
				Message: `Operation cannot be fulfilled on Pod "web-1": the ResourceVersion in the precondition (5) does not match the ResourceVersion in record (6). The object might have been modified`},
		},
		"other conflict": {
			code: 409, body: `{"kind":"Status","status":"Failure","message":"something else","reason":"Conflict","code":409}`,
			want: Result{Outcome: Unknown, HTTPStatus: 409, Message: "something else"},
		},
		"stale pdb": {
			code: 429, header: http.Header{"Retry-After": {"10"}},
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web is still being processed by the server."}],"retryAfterSeconds":10},"code":429}`,
			want: Result{Outcome: PDBStale, HTTPStatus: 429, RetryAfterSeconds: 10, PDB: &Budget{Name: "web"},
				Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web is still being processed by the server."},
		},
		"stale pdb, Retry-After only in the body": {
			code: 429,
			body: `{"kind":"Status","status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web is still being processed by the server."}],"retryAfterSeconds":7},"code":429}`,
			want: Result{Outcome: PDBStale, HTTPStatus: 429, RetryAfterSeconds: 7, PDB: &Budget{Name: "web"},
				Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web is still being processed by the server."},
		},
		"budget exhausted": {
			code: 429,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web needs 3 healthy pods and has 3 currently"}]},"code":429}`,
			want: Result{Outcome: BudgetExhausted, HTTPStatus: 429, PDB: &Budget{Name: "web", Need: ptr(3), Have: ptr(3)},
				Message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 3 healthy pods and has 3 currently"},
		},
		"budget exhausted, failed sync": {
			code: 429,
			body: `{"kind":"Status","status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod \"web-1\""}]},"code":429}`,
			want: Result{Outcome: BudgetExhausted, HTTPStatus: 429, PDB: &Budget{Name: "web"},
				Message: `Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod "web-1"`},
		},
		"throttled by priority and fairness": {
			code: 429, header: http.Header{"Retry-After": {"1"}},
			body: `{"kind":"Status","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}`,
			want: Result{Outcome: Throttled, HTTPStatus: 429, RetryAfterSeconds: 1, Message: "Too many requests, please try again later."},
		},
		"throttled, not a Status": {
			code: 429, header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, body: `<html>slow down</html>`,
			want: Result{Outcome: Throttled, HTTPStatus: 429, Message: "HTTP 429 Too Many Requests"},
		},
		"overlapping pdbs": {
			code: 500,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}`,
			want: Result{Outcome: PDBOverlap, HTTPStatus: 500, Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
		},
		"other 500": {
			code: 500, body: `{"kind":"Status","status":"Failure","message":"Internal error occurred: etcdserver: request timed out","reason":"InternalError","code":500}`,
			want: Result{Outcome: Unknown, HTTPStatus: 500, Message: "Internal error occurred: etcdserver: request timed out"},
		},
		"rbac": {
			code: 403,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-1\" is forbidden: User \"noevict\" cannot create resource \"pods/eviction\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","details":{"name":"web-1","kind":"pods"},"code":403}`,
			want: Result{Outcome: Forbidden, Reason: ReasonRBAC, HTTPStatus: 403,
				Message: `pods "web-1" is forbidden: User "noevict" cannot create resource "pods/eviction" in API group "" in the namespace "shop"`},
		},
		"negative budget": {
			code: 403,
			body: `{"kind":"Status","status":"Failure","message":"poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative","reason":"Forbidden","details":{"name":"web","group":"policy","kind":"poddisruptionbudget","causes":[{"reason":"DisruptionBudget","message":"The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative"}]},"code":403}`,
			want: Result{Outcome: Forbidden, Reason: ReasonNegativeBudget, HTTPStatus: 403, PDB: &Budget{Name: "web"},
				Message: `poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative`},
		},
		"too many pending": {
			code: 403,
			body: `{"kind":"Status","status":"Failure","message":"poddisruptionbudget.policy \"web\" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller","reason":"Forbidden","details":{"name":"web","group":"policy","kind":"poddisruptionbudget"},"code":403}`,
			want: Result{Outcome: Forbidden, Reason: ReasonTooManyPending, HTTPStatus: 403, PDB: &Budget{Name: "web"},
				Message: `poddisruptionbudget.policy "web" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`},
		},
		"namespace terminating": {
			code: 403,
			body: `{"kind":"Status","status":"Failure","message":"pods \"web-1\" is forbidden: unable to create new content in namespace shop because it is being terminated","reason":"Forbidden","details":{"name":"web-1","kind":"pods","causes":[{"reason":"NamespaceTerminating","message":"namespace shop is being terminated","field":"metadata.namespace"}]},"code":403}`,
			want: Result{Outcome: Forbidden, Reason: ReasonNamespaceTerminating, HTTPStatus: 403,
				Message: `pods "web-1" is forbidden: unable to create new content in namespace shop because it is being terminated namespace shop is being terminated`},
		},
		"webhook": {
			code: 403, body: `{"kind":"Status","status":"Failure","message":"admission webhook \"guard.example\" denied the request: no","reason":"Forbidden","code":403}`,
			want: Result{Outcome: Forbidden, Reason: ReasonDenied, HTTPStatus: 403, Message: `admission webhook "guard.example" denied the request: no`},
		},
		"pdb conflicts": {
			code: 504, header: http.Header{"Retry-After": {"10"}},
			body: `{"kind":"Status","status":"Failure","message":"couldn't update PodDisruptionBudget \"web\" due to conflicts","reason":"Timeout","details":{"retryAfterSeconds":10},"code":504}`,
			want: Result{Outcome: Contention, Reason: ReasonPDBConflicts, HTTPStatus: 504, RetryAfterSeconds: 10, PDB: &Budget{Name: "web"},
				Message: `couldn't update PodDisruptionBudget "web" due to conflicts`},
		},
		"bad request": {
			code: 400, body: `{"kind":"Status","status":"Failure","message":"name in URL does not match name in Eviction object","reason":"BadRequest","code":400}`,
			want: Result{Outcome: Invalid, Reason: ReasonBadRequest, HTTPStatus: 400, Message: "name in URL does not match name in Eviction object"},
		},
		"unauthorized": {
			code: 401, body: `{"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`,
			want: Result{Outcome: Invalid, Reason: ReasonUnauthorized, HTTPStatus: 401, Message: "Unauthorized"},
		},
		"bad gateway from a proxy": {
			code: 502, body: "<html>bad gateway</html>",
			want: Result{Outcome: Unknown, HTTPStatus: 502, Message: "HTTP 502 Bad Gateway"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.code, ParseStatus([]byte(tc.body)), tc.header)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcomeCode(t *testing.T) {
	got := map[Outcome]exitcode.Code{}
	all := []Outcome{Accepted, AcceptedNotGone, Gone, PDBStale, BudgetExhausted, Throttled, PDBOverlap, Forbidden, Contention, Invalid, Unknown, "bogus"}
	for _, o := range all {
		got[o] = o.Code()
	}
	want := map[Outcome]exitcode.Code{
		Accepted: 0, Gone: 0,
		AcceptedNotGone: 2, PDBStale: 2, BudgetExhausted: 2, Throttled: 2, Contention: 2,
		PDBOverlap: 3, Forbidden: 3,
		Invalid: 1, Unknown: 1, "bogus": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
}

func TestCapRetryAfter(t *testing.T) {
	tests := map[string]struct {
		seconds int
		limit   time.Duration
		want    int
	}{
		"below":  {10, time.Minute, 10},
		"above":  {120, time.Minute, 60},
		"no cap": {120, 0, 120},
		"sub-second cap": {
			5, 500 * time.Millisecond, 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Result{RetryAfterSeconds: tc.seconds}
			r.CapRetryAfter(tc.limit)
			if r.RetryAfterSeconds != tc.want {
				t.Errorf("RetryAfterSeconds = %d, want %d", r.RetryAfterSeconds, tc.want)
			}
		})
	}
}

// FuzzClassify feeds arbitrary answers (outside input) through ParseStatus
// and Classify: they must never panic and always give a known outcome.
func FuzzClassify(f *testing.F) {
	f.Add(429, "10", `{"kind":"Status","message":"x","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web needs 3 healthy pods and has 2 currently"}]}}`)
	f.Add(409, "", `{"kind":"Status","message":"the UID in the precondition"}`)
	f.Add(403, "", `{"kind":"Status","details":{"kind":"poddisruptionbudget","causes":[{"reason":"DisruptionBudget","message":"The disruption budget "}]}}`)
	f.Add(403, "", `{"kind":"Status","details":{"kind":"poddisruptionbudget"}}`)
	f.Add(504, "x", `{"kind":"Status","message":"\""}`)
	f.Add(201, "", ``)
	f.Fuzz(func(t *testing.T, code int, retry, body string) {
		r := Classify(code, ParseStatus([]byte(body)), http.Header{"Retry-After": {retry}})
		if r.Outcome == "" || r.RetryAfterSeconds < 0 {
			t.Fatalf("Classify(%d, %q, %q) = %+v", code, body, retry, r)
		}
		if r.PDB != nil && r.PDB.Name == "" {
			t.Fatalf("Classify(%d, %q) names an empty PDB", code, body)
		}
	})
}

// TestPureImports fences the package: API types only, never client-go.
func TestPureImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/client-go") {
			t.Errorf("package evict depends on %s", pkg)
		}
	}
}
