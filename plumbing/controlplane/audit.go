package controlplane

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sentinel-go/sentinel/plumbing/auditlog"
)

// The API server's /metrics does not count requests that authorization
// denies (a 403 from RBAC never reaches the instrumented handler). The audit
// log sees every request, so "exactly these requests were sent, with these
// answers" is asserted from it. The control-plane components' own users are
// left out; reads and writes of every other user are kept. Evictions, pod
// DELETEs (their body is a DeleteOptions: the UID precondition and the
// grace period) and writes of nodes (the patch: a cordon, its owner) are
// logged with their request body, level Request.
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
- level: Request
  verbs: ["delete"]
  resources: [{group: "", resources: ["pods"]}]
- level: Request
  verbs: ["patch", "update"]
  resources: [{group: "", resources: ["nodes"]}]
- level: Metadata
`

func (cp *ControlPlane) auditLog() string { return filepath.Join(cp.dir, "audit.log") }

// AuditEvent is one request as the API server's audit log records it
// (package auditlog reads the log).
type AuditEvent = auditlog.Event

// Audit is every request recorded so far, oldest first, except those of the
// control-plane components. The log is written before each response is sent.
func (cp *ControlPlane) Audit() ([]AuditEvent, error) {
	data, err := os.ReadFile(cp.auditLog())
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return auditlog.Parse(data)
}

// AuditLog is the path of the API server's audit log.
func (cp *ControlPlane) AuditLog() string { return cp.auditLog() }
