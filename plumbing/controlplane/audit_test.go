package controlplane

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseAudit: an eviction's UID precondition is read from the request
// body; a request whose client went away before it was read (a process
// killed while sending: no body, 500 "client disconnected") is marked so,
// and a refusal with a body is not; the time the request was received is
// read to the microsecond.
func TestParseAudit(t *testing.T) {
	const log = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-1/eviction","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Failure","message":"client disconnected","code":500}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-1/eviction","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Success","code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.123456Z","stageTimestamp":"2026-12-05T10:00:00.130000Z","requestObject":{"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"web-1","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"u1"}}}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-2/eviction?dryRun=All","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-2","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429},"requestObject":{"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"web-2","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"u2"}}}}
`
	got, err := ParseAudit([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(name string, code int, uri, uid string, dry, gone bool) AuditEvent {
		return AuditEvent{Verb: "create", User: "admin", Namespace: "shop", Resource: "pods", Sub: "eviction", Name: name,
			Code: code, URI: "/api/v1/namespaces/shop/pods/" + name + "/eviction" + uri, UID: uid, DryRun: dry, Disconnected: gone}
	}
	accepted := ev("web-1", 201, "", "u1", false, false)
	accepted.Received = time.Date(2026, 12, 5, 10, 0, 0, 123456000, time.UTC)
	want := []AuditEvent{
		ev("web-1", 500, "", "", false, true),
		accepted,
		ev("web-2", 429, "?dryRun=All", "u2", true, false),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseAudit (-want +got):\n%s", diff)
	}
}
