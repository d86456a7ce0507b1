// Package auditlog reads the Kubernetes API server's audit log: events of
// audit.k8s.io/v1, one JSON object per line, as the log backend writes
// them (--audit-log-path). It keeps what a test or a verifier asks of a
// request: who sent it, what it named, what the API server answered and
// when, and from the request body (when the policy logs it at level
// Request) the UID precondition of an eviction or a DELETE, a DELETE's
// grace period, and the body of a PATCH or UPDATE.
package auditlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Stages of an audit event: a request logged with omitStages
// [RequestReceived, ResponseStarted] appears once, at ResponseComplete
// (or Panic).
const (
	StageRequestReceived  = "RequestReceived"
	StageResponseStarted  = "ResponseStarted"
	StageResponseComplete = "ResponseComplete"
	StagePanic            = "Panic"
)

// Event is one request as the audit log records it.
type Event struct {
	// Line is the event's line in the log, from 1.
	Line int `json:"line,omitempty"`
	// AuditID is the request's ID (every stage of one request shares it).
	AuditID string `json:"auditID,omitempty"`
	// Stage and Level as logged; Stage "" in a hand-written line counts as
	// ResponseComplete for Complete.
	Stage     string `json:"stage,omitempty"`
	Level     string `json:"level,omitempty"`
	Verb      string `json:"verb"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Sub       string `json:"subresource,omitempty"`
	Name      string `json:"name,omitempty"`
	// Code is the response's HTTP status code (0 before a response).
	Code   int    `json:"code"`
	DryRun bool   `json:"dryRun,omitempty"`
	URI    string `json:"uri"`
	// UID is the UID precondition of an eviction
	// (requestObject.deleteOptions.preconditions.uid) or of a DELETE
	// (requestObject.preconditions.uid: the body of a DELETE is a
	// DeleteOptions): the object instance the request was meant for.
	UID string `json:"uid,omitempty"`
	// GracePeriodSeconds is the grace period a DELETE (or an eviction's
	// deleteOptions) asked for; nil when it asked for none.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	// Disconnected: the client went away before the API server had read
	// the request (a process killed while sending): nothing was done.
	Disconnected bool `json:"disconnected,omitempty"`
	// Received is when the API server received the request
	// (requestReceivedTimestamp, to the microsecond): a request took
	// effect no earlier.
	Received time.Time `json:"received,omitzero"`
	// Completed is the time of the event's stage (stageTimestamp): for
	// ResponseComplete, when the response was written.
	Completed time.Time `json:"completed,omitzero"`
	// Body is the request body of a PATCH or an UPDATE (requestObject),
	// as raw JSON, when the policy logs it (level Request or above): a
	// merge or strategic-merge patch is an object, a JSON patch an array,
	// an UPDATE the whole object.
	Body json.RawMessage `json:"body,omitempty"`
}

// Complete reports whether e is the event of a request's end: stage
// ResponseComplete (or unset, in hand-written logs).
func (e *Event) Complete() bool { return e.Stage == StageResponseComplete || e.Stage == "" }

// Succeeded reports whether the request ended with a 2xx answer.
func (e *Event) Succeeded() bool { return e.Complete() && e.Code >= 200 && e.Code < 300 }

// raw is the part of an audit.k8s.io/v1 Event that is read.
type raw struct {
	Level      string    `json:"level"`
	AuditID    string    `json:"auditID"`
	Stage      string    `json:"stage"`
	Received   time.Time `json:"requestReceivedTimestamp"`
	StageTime  time.Time `json:"stageTimestamp"`
	Verb       string    `json:"verb"`
	RequestURI string    `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestObject json.RawMessage `json:"requestObject"`
}

// deleteOptions is the part of a DeleteOptions that is read: the body of
// a DELETE, and an eviction's deleteOptions.
type deleteOptions struct {
	DryRun             []string `json:"dryRun"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"`
	Preconditions      *struct {
		UID *string `json:"uid"`
	} `json:"preconditions"`
}

// Parse reads audit.k8s.io/v1 events, one JSON object per line; blank
// lines are skipped. A line that is not an event is an error naming its
// line number.
func Parse(data []byte) ([]Event, error) { return Read(bytes.NewReader(data)) }

// Read is Parse from r.
func Read(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n, err)
		}
		ev.Line = n
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log line %d: %w", n+1, err)
	}
	return out, nil
}

func parseLine(line []byte) (Event, error) {
	if line[0] != '{' {
		return Event{}, fmt.Errorf("not a JSON object")
	}
	var e raw
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, err
	}
	if e.Verb == "" {
		return Event{}, fmt.Errorf("not an audit event: no verb")
	}
	ev := Event{AuditID: e.AuditID, Stage: e.Stage, Level: e.Level, Verb: e.Verb, User: e.User.Username, URI: e.RequestURI,
		Received: e.Received, Completed: e.StageTime}
	if r := e.ObjectRef; r != nil {
		ev.Resource, ev.Namespace, ev.Name, ev.Sub = r.Resource, r.Namespace, r.Name, r.Subresource
	}
	body := e.RequestObject
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		body = nil
	}
	if e.ResponseStatus != nil {
		ev.Code = e.ResponseStatus.Code
		ev.Disconnected = body == nil && e.ResponseStatus.Message == "client disconnected"
	}
	ev.DryRun = dryRunQuery(e.RequestURI)
	if body == nil {
		return ev, nil
	}
	switch {
	case ev.Sub == "eviction":
		var o struct {
			DeleteOptions *deleteOptions `json:"deleteOptions"`
		}
		if err := json.Unmarshal(body, &o); err == nil && o.DeleteOptions != nil {
			ev.read(o.DeleteOptions)
		}
	case ev.Verb == "delete" || ev.Verb == "deletecollection":
		var o deleteOptions
		if err := json.Unmarshal(body, &o); err == nil {
			ev.read(&o)
		}
	case ev.Verb == "patch" || ev.Verb == "update":
		ev.Body = append(json.RawMessage(nil), body...)
	}
	return ev, nil
}

func (ev *Event) read(o *deleteOptions) {
	if p := o.Preconditions; p != nil && p.UID != nil {
		ev.UID = *p.UID
	}
	ev.GracePeriodSeconds = o.GracePeriodSeconds
	ev.DryRun = ev.DryRun || len(o.DryRun) > 0
}

// dryRunQuery reports whether the request URI asks for a dry run.
func dryRunQuery(uri string) bool {
	_, q, ok := strings.Cut(uri, "?")
	if !ok {
		return false
	}
	for kv := range strings.SplitSeq(q, "&") {
		if kv == "dryRun=All" {
			return true
		}
	}
	return false
}
