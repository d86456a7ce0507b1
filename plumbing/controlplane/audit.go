package controlplane

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The API server's /metrics does not count requests that authorization
// denies (a 403 from RBAC never reaches the instrumented handler). The audit
// log sees every request, so "exactly these requests were sent, with these
// answers" is asserted from it. The control-plane components' own users are
// left out; reads and writes of every other user are kept.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  users: ["system:kube-controller-manager", "system:kube-scheduler", "system:kwok"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/metrics", "/version", "/api", "/api/*", "/apis", "/apis/*", "/openapi/*"]
- level: Request
  resources: [{group: "", resources: ["pods/eviction"]}]
- level: Metadata
`

func (cp *ControlPlane) auditLog() string { return filepath.Join(cp.dir, "audit.log") }

// AuditEvent is one request as the API server's audit log records it.
type AuditEvent struct {
	Verb      string `json:"verb"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Sub       string `json:"subresource,omitempty"`
	Name      string `json:"name,omitempty"`
	Code      int    `json:"code"`
	DryRun    bool   `json:"dryRun,omitempty"`
	URI       string `json:"uri"`
	// UID is an eviction's UID precondition (the pod instance it was
	// meant for), from the request body the policy records for
	// pods/eviction.
	UID string `json:"uid,omitempty"`
	// Disconnected: the client went away before the API server had read
	// the request (a process killed while sending): nothing was done.
	Disconnected bool `json:"disconnected,omitempty"`
	// Received is when the API server received the request
	// (requestReceivedTimestamp, to the microsecond): a request took
	// effect no earlier.
	Received time.Time `json:"received,omitzero"`
}

// Audit is every request recorded so far, oldest first, except those of the
// control-plane components. The log is written before each response is sent.
func (cp *ControlPlane) Audit() ([]AuditEvent, error) {
	data, err := os.ReadFile(cp.auditLog())
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return ParseAudit(data)
}

// ParseAudit reads audit.k8s.io/v1 events, one JSON object per line.
func ParseAudit(data []byte) ([]AuditEvent, error) {
	var out []AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e struct {
			Received   time.Time `json:"requestReceivedTimestamp"`
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
			RequestObject *struct {
				DeleteOptions *struct {
					DryRun        []string `json:"dryRun"`
					Preconditions *struct {
						UID string `json:"uid"`
					} `json:"preconditions"`
				} `json:"deleteOptions"`
			} `json:"requestObject"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		ev := AuditEvent{Verb: e.Verb, User: e.User.Username, URI: e.RequestURI, Received: e.Received}
		if r := e.ObjectRef; r != nil {
			ev.Resource, ev.Namespace, ev.Name, ev.Sub = r.Resource, r.Namespace, r.Name, r.Subresource
		}
		if e.ResponseStatus != nil {
			ev.Code = e.ResponseStatus.Code
			ev.Disconnected = e.RequestObject == nil && e.ResponseStatus.Message == "client disconnected"
		}
		ev.DryRun = bytes.Contains([]byte(e.RequestURI), []byte("dryRun=All"))
		if r := e.RequestObject; r != nil && r.DeleteOptions != nil {
			if p := r.DeleteOptions.Preconditions; p != nil {
				ev.UID = p.UID
			}
			ev.DryRun = ev.DryRun || len(r.DeleteOptions.DryRun) > 0
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
