package auditlog

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestParseEvictions: an eviction's UID precondition is read from the
// request body; a request whose client went away before it was read (a
// process killed while sending: no body, 500 "client disconnected") is
// marked so, and a refusal with a body is not; the time the request was
// received is read to the microsecond.
func TestParseEvictions(t *testing.T) {
	const log = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-1/eviction","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Failure","message":"client disconnected","code":500}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-1/eviction","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Success","code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.123456Z","stageTimestamp":"2026-12-05T10:00:00.130000Z","requestObject":{"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"web-1","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"u1"}}}}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-2/eviction?dryRun=All","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-2","apiVersion":"v1","subresource":"eviction"},"responseStatus":{"metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429},"requestObject":{"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"web-2","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"u2"}}}}
`
	got, err := Parse([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(line int, name string, code int, uri, uid string, dry, gone bool) Event {
		return Event{Line: line, Stage: StageResponseComplete, Level: "Request", Verb: "create", User: "admin", Namespace: "shop", Resource: "pods", Sub: "eviction", Name: name,
			Code: code, URI: "/api/v1/namespaces/shop/pods/" + name + "/eviction" + uri, UID: uid, DryRun: dry, Disconnected: gone}
	}
	accepted := ev(2, "web-1", 201, "", "u1", false, false)
	accepted.Received = time.Date(2026, 12, 5, 10, 0, 0, 123456000, time.UTC)
	accepted.Completed = time.Date(2026, 12, 5, 10, 0, 0, 130000000, time.UTC)
	want := []Event{
		ev(1, "web-1", 500, "", "", false, true),
		accepted,
		ev(4, "web-2", 429, "?dryRun=All", "u2", true, false),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// TestParseSample: a DELETE's UID precondition and grace period come from
// its DeleteOptions body, a dry-run DELETE is marked so (from the URI and
// from the body), a node PATCH keeps its body, and a create logged at
// Metadata has its name and code, no body.
func TestParseSample(t *testing.T) {
	data, err := os.ReadFile("testdata/sample.log")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	type short struct {
		Verb, User, Namespace, Resource, Name, UID string
		Code                                       int
		DryRun                                     bool
		Grace                                      int64
		Body                                       bool
		Received                                   string
	}
	var shorts []short
	for _, e := range got {
		s := short{e.Verb, e.User, e.Namespace, e.Resource, e.Name, e.UID, e.Code, e.DryRun, -1, e.Body != nil, e.Received.Format(time.RFC3339Nano)}
		if e.GracePeriodSeconds != nil {
			s.Grace = *e.GracePeriodSeconds
		}
		shorts = append(shorts, s)
		if !e.Succeeded() {
			t.Errorf("line %d: not Succeeded", e.Line)
		}
	}
	const md = "system:serviceaccount:maintd-system:maintd"
	want := []short{
		{"patch", "ops-alice", "", "nodes", "node-1", "", 200, false, -1, true, "2026-12-05T10:00:00.0001Z"},
		{"patch", md, "", "nodes", "node-2", "", 200, false, -1, true, "2026-12-05T10:00:01.0002Z"},
		{"delete", md, "shop", "pods", "db-0", "0b6c2a55-1f0e-4d7a-9c3b-6a1e2d3c4b5a", 200, false, 45, false, "2026-12-05T10:31:00.12Z"},
		{"delete", "ops-bob", "shop", "pods", "db-1", "", 200, true, -1, false, "2026-12-05T10:32:00Z"},
		{"create", "ops-bob", "", "maintenanceoverrides", "node-2-x7k2p-override-4kq9z", "", 201, false, -1, false, "2026-12-05T10:29:00Z"},
	}
	if diff := cmp.Diff(want, shorts); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	t1 := true
	owner := "maintenanceplan/node-2-x7k2p/8d1f0c7e-3b9a-4c55-a1de-2f6b7c0e9a11"
	wantChanges := []NodeChange{{Unschedulable: &t1}, {Unschedulable: &t1, Owner: &owner}}
	for i, w := range wantChanges {
		c, ok := got[i].Cordon()
		if !ok {
			t.Fatalf("line %d: Cordon not ok", got[i].Line)
		}
		if diff := cmp.Diff(w, c); diff != "" {
			t.Errorf("line %d: Cordon (-want +got):\n%s", got[i].Line, diff)
		}
	}
	if _, ok := got[2].Cordon(); ok {
		t.Errorf("a DELETE without a body read as a cordon change")
	}
}

// TestCordon: merge patches (null removes), JSON patches and UPDATEs.
func TestCordon(t *testing.T) {
	tr, fa := true, false
	none, bob := "", "bob"
	for _, tc := range []struct {
		verb, body string
		want       NodeChange
		ok         bool
	}{
		{"patch", `{"spec":{"unschedulable":false},"metadata":{"annotations":{"maintenance.sentinel.dev/cordon-owner":null}}}`, NodeChange{Unschedulable: &fa, Owner: &none}, true},
		{"patch", `{"metadata":{"labels":{"a":"b"}}}`, NodeChange{}, true},
		{"patch", `{"spec":{"unschedulable":null}}`, NodeChange{Unschedulable: &fa}, true},
		{"patch", `{"spec":{"unschedulable":"yes"}}`, NodeChange{}, false},
		{"patch", `[{"op":"replace","path":"/spec/unschedulable","value":true},{"op":"add","path":"/metadata/annotations/maintenance.sentinel.dev~1cordon-owner","value":"bob"}]`, NodeChange{Unschedulable: &tr, Owner: &bob}, true},
		{"patch", `[{"op":"remove","path":"/spec/unschedulable"}]`, NodeChange{Unschedulable: &fa}, true},
		{"update", `{"kind":"Node","metadata":{"name":"n"},"spec":{}}`, NodeChange{Unschedulable: &fa, Owner: &none}, true},
		{"update", `{"kind":"Node","metadata":{"name":"n","annotations":{"maintenance.sentinel.dev/cordon-owner":"bob"}},"spec":{"unschedulable":true}}`, NodeChange{Unschedulable: &tr, Owner: &bob}, true},
		{"patch", `"text"`, NodeChange{}, false},
		{"patch", ``, NodeChange{}, false},
	} {
		e := Event{Verb: tc.verb, Body: json.RawMessage(tc.body)}
		got, ok := e.Cordon()
		if ok != tc.ok {
			t.Errorf("%s %s: ok %v, want %v", tc.verb, tc.body, ok, tc.ok)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s\n%s", tc.verb, tc.body, diff, got)
		}
	}
}

// TestParseErrors: a bad line is named by its number.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"{\"verb\":\"get\"}\n\n{\"verb\":", "audit log line 3: unexpected end of JSON input"},
		{"{\"verb\":\"get\"}\nhello\n", "audit log line 2: not a JSON object"},
		{"{\"kind\":\"Policy\"}\n", "audit log line 1: not an audit event: no verb"},
		{"{\"verb\":\"get\",\"requestReceivedTimestamp\":\"yesterday\"}\n", "audit log line 1: parsing time"},
	} {
		_, err := Parse([]byte(tc.log))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q): error %v, want %q...", tc.log, err, tc.want)
		}
	}
	got, err := Parse(nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Parse(nil) = %v, %v; want nothing", got, err)
	}
}

// FuzzParse: any input is parsed or refused with an error naming a line,
// never a panic; what parses, parses again the same from each event's own
// line.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/sample.log"); err == nil {
		f.Add(data)
		for l := range strings.SplitSeq(string(data), "\n") {
			f.Add([]byte(l))
		}
	}
	f.Add([]byte(`{"verb":"patch","objectRef":{"resource":"nodes"},"requestObject":[{"op":"add","path":"/spec/unschedulable","value":true}]}`))
	f.Add([]byte(`{"verb":"delete","requestObject":{"preconditions":{"uid":null},"gracePeriodSeconds":-1}}`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "audit log line ") {
				t.Fatalf("error %q does not name a line", err)
			}
			return
		}
		lines := strings.Split(string(data), "\n")
		for _, e := range events {
			if e.Line < 1 || e.Line > len(lines) {
				t.Fatalf("event line %d of %d", e.Line, len(lines))
			}
			again, err := Parse([]byte(lines[e.Line-1]))
			if err != nil || len(again) != 1 {
				t.Fatalf("line %d alone: %v, %d events", e.Line, err, len(again))
			}
			again[0].Line = e.Line
			if diff := cmp.Diff(e, again[0], cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("line %d alone parses differently:\n%s", e.Line, diff)
			}
			e.Cordon()
		}
	})
}
