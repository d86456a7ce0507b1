package evict

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Outcome is the class of an eviction answer.
type Outcome string

const (
	// Accepted (200/201): the pod is being deleted.
	Accepted Outcome = "accepted"
	// AcceptedNotGone: accepted, but the pod was still there when the wait ended.
	AcceptedNotGone Outcome = "accepted-not-gone"
	// Gone: 404 (Reason NotFound), or 409 on the UID precondition (Reason
	// Replaced: the name is held by a new pod now).
	Gone Outcome = "gone"
	// PDBStale: 429, the PDB's status lags its spec; retry after RetryAfterSeconds.
	PDBStale Outcome = "pdb-stale"
	// BudgetExhausted: 429, the PDB allows no disruption now.
	BudgetExhausted Outcome = "budget-exhausted"
	// Throttled: any other 429.
	Throttled Outcome = "throttled"
	// PDBOverlap: 500, more than one PDB selects the pod.
	PDBOverlap Outcome = "pdb-overlap"
	// Forbidden: 403 (RBAC, negative budget, too many pending evictions,
	// namespace terminating, an admission webhook: see Reason).
	Forbidden Outcome = "forbidden"
	// Contention: 504 after the API server's own conflict retries, or the
	// pod changing under a precondition the API server set.
	Contention Outcome = "contention"
	// Invalid: the request itself was refused (400, 401, 422, an unknown
	// namespace); nothing was done and retrying will not help.
	Invalid Outcome = "invalid"
	// Unknown: any other answer, or none after the request may have
	// reached the API server (the timeout ended, the connection closed);
	// the eviction may or may not have happened.
	Unknown Outcome = "unknown"
)

// Code is the exit code of an outcome (package exitcode's table).
func (o Outcome) Code() exitcode.Code {
	switch o {
	case Accepted, Gone:
		return exitcode.OK
	case PDBStale, BudgetExhausted, Throttled, Contention, AcceptedNotGone:
		return exitcode.NotNow
	case PDBOverlap, Forbidden:
		return exitcode.Blocked
	}
	return exitcode.Error
}

// Reasons refine an outcome.
const (
	ReasonNotFound             = "not-found"             // gone: 404
	ReasonReplaced             = "replaced"              // gone: 409 on the UID precondition
	ReasonRBAC                 = "rbac"                  // forbidden: the user may not create pods/eviction
	ReasonNegativeBudget       = "negative-budget"       // forbidden: disruptionsAllowed < 0
	ReasonTooManyPending       = "too-many-pending"      // forbidden: disruptedPods map too big
	ReasonNamespaceTerminating = "namespace-terminating" // forbidden
	ReasonDenied               = "denied"                // forbidden, anything else (e.g. a webhook)
	ReasonPDBConflicts         = "pdb-conflicts"         // contention: 504
	ReasonPodChanged           = "pod-changed"           // contention: 409 on a resourceVersion precondition
	ReasonNamespaceNotFound    = "namespace-not-found"   // invalid: 404 for the namespace
	ReasonBadRequest           = "bad-request"           // invalid: 400, 422
	ReasonUnauthorized         = "unauthorized"          // invalid: 401
	ReasonTimeout              = "timeout"               // unknown: no answer in time
	ReasonAnswerLost           = "answer-lost"           // unknown: the connection closed before the answer
	ReasonWaitTimeout          = "wait-timeout"          // accepted-not-gone
)

// Kind is the document kind of a Result.
const Kind = "EvictionResult"

// Result is the EvictionResult document.
type Result struct {
	document.Header `json:",inline"`

	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	UID       types.UID `json:"uid,omitempty"`
	DryRun    bool      `json:"dryRun,omitempty"`
	Outcome   Outcome   `json:"outcome"`
	Reason    string    `json:"reason,omitempty"`
	// HTTPStatus is the answer's status code, 0 when there was none.
	HTTPStatus int `json:"httpStatus"`
	// RetryAfterSeconds is the Retry-After the API server asked for (the
	// header, else the Status details), capped by the caller.
	RetryAfterSeconds int `json:"retryAfterSeconds"`
	// PDB is the budget the answer names, with need/have when it says so.
	PDB *Budget `json:"pdb,omitempty"`
	// PDBs names the budgets that select the pod, read after a pdb-overlap
	// answer (which does not name them), when they could be read.
	PDBs []string `json:"pdbs,omitempty"`
	// Gone is true when the pod with UID was seen gone after the eviction.
	Gone    bool   `json:"gone,omitempty"`
	Message string `json:"message"`
}

// Budget is a PodDisruptionBudget as an eviction answer names it.
type Budget struct {
	Name string `json:"name"`
	// Need is the healthy pods the budget needs (desiredHealthy).
	Need *int32 `json:"need,omitempty"`
	// Have is the healthy pods it has (currentHealthy).
	Have *int32 `json:"have,omitempty"`
}

// Code is the exit code of the result.
func (r *Result) Code() exitcode.Code { return r.Outcome.Code() }

// NewResult is an empty Result for pod namespace/name with its header set.
func NewResult(namespace, name string) *Result {
	return &Result{Header: document.NewHeader(Kind), Namespace: namespace, Pod: name}
}

// The messages of the Eviction API that tell its answers apart (kube-apiserver
// v1.37.2; docs/eviction-api.md has each answer and the test that shows it).
const (
	overlapMessage = "more than one PodDisruptionBudget"
	staleCause     = "is still being processed by the server"
	budgetPrefix   = "The disruption budget "
)

// Classify classifies one answer to POST pods/{name}/eviction: its HTTP
// status code, its Status body (nil when the body was not a Status) and its
// headers. The Result has Outcome, Reason, HTTPStatus, RetryAfterSeconds,
// PDB and Message set; the caller adds what it asked (pod, UID, dry run).
func Classify(code int, st *metav1.Status, h http.Header) Result {
	if st == nil {
		st = &metav1.Status{}
	}
	r := Result{HTTPStatus: code, RetryAfterSeconds: retryAfter(st, h), Message: message(code, st)}
	msg := strings.ToLower(st.Message)
	switch {
	case code == http.StatusOK || code == http.StatusCreated:
		r.Outcome = Accepted
	case code == http.StatusNotFound && st.Details != nil && st.Details.Kind == "namespaces":
		r.Outcome, r.Reason = Invalid, ReasonNamespaceNotFound
	case code == http.StatusNotFound:
		r.Outcome, r.Reason = Gone, ReasonNotFound
	case code == http.StatusConflict && (strings.Contains(msg, "uid in the precondition") || strings.Contains(msg, "uid in precondition")):
		r.Outcome, r.Reason = Gone, ReasonReplaced
	case code == http.StatusConflict && strings.Contains(msg, "resourceversion in"):
		r.Outcome, r.Reason = Contention, ReasonPodChanged
	case code == http.StatusTooManyRequests:
		r.Outcome = Throttled
		if cause, ok := budgetCause(st); ok {
			r.PDB = parseBudget(cause)
			r.Outcome = BudgetExhausted
			if strings.Contains(cause, staleCause) {
				r.Outcome = PDBStale
			}
		}
	case code == http.StatusInternalServerError && strings.Contains(st.Message, overlapMessage):
		r.Outcome = PDBOverlap
	case code == http.StatusForbidden:
		r.Outcome, r.Reason = Forbidden, forbiddenReason(st)
		if cause, ok := budgetCause(st); ok {
			r.PDB = parseBudget(cause)
		} else if st.Details != nil && st.Details.Kind == "poddisruptionbudget" && st.Details.Name != "" {
			r.PDB = &Budget{Name: st.Details.Name}
		}
	case code == http.StatusGatewayTimeout:
		r.Outcome, r.Reason = Contention, ReasonPDBConflicts
		if name, ok := quoted(st.Message); ok {
			r.PDB = &Budget{Name: name}
		}
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		r.Outcome, r.Reason = Invalid, ReasonBadRequest
	case code == http.StatusUnauthorized:
		r.Outcome, r.Reason = Invalid, ReasonUnauthorized
	default:
		r.Outcome = Unknown
	}
	return r
}

func forbiddenReason(st *metav1.Status) string {
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == "NamespaceTerminating" {
				return ReasonNamespaceTerminating
			}
		}
	}
	switch m := st.Message; {
	case strings.Contains(m, "disruptions allowed is negative"):
		return ReasonNegativeBudget
	case strings.Contains(m, "DisruptedPods map too big"):
		return ReasonTooManyPending
	case strings.Contains(m, "because it is being terminated"):
		return ReasonNamespaceTerminating
	case strings.Contains(m, "User \"") && strings.Contains(m, " cannot "):
		return ReasonRBAC
	}
	return ReasonDenied
}

// budgetCause is the first DisruptionBudget cause's message.
func budgetCause(st *metav1.Status) (string, bool) {
	if st.Details == nil {
		return "", false
	}
	for _, c := range st.Details.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			return c.Message, true
		}
	}
	return "", false
}

// parseBudget reads "The disruption budget NAME ..." and, when present,
// "... needs N healthy pods and has M currently".
func parseBudget(cause string) *Budget {
	rest, ok := strings.CutPrefix(cause, budgetPrefix)
	if !ok {
		return nil
	}
	name, rest, _ := strings.Cut(rest, " ")
	if name == "" {
		return nil
	}
	b := &Budget{Name: name}
	var need, have int32
	if n, _ := fmt.Sscanf(rest, "needs %d healthy pods and has %d currently", &need, &have); n == 2 {
		b.Need, b.Have = &need, &have
	}
	return b
}

// quoted is the first double-quoted word of s.
func quoted(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, `"`)
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, `"`)
	return name, ok && name != ""
}

// retryAfter is the Retry-After header in seconds, else the Status's
// details.retryAfterSeconds, else 0.
func retryAfter(st *metav1.Status, h http.Header) int {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		return int(st.Details.RetryAfterSeconds)
	}
	return 0
}

// message is the Status message, followed by its causes' messages.
func message(code int, st *metav1.Status) string {
	parts := []string{}
	if st.Message != "" {
		parts = append(parts, st.Message)
	}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Message != "" && !strings.Contains(st.Message, c.Message) {
				parts = append(parts, c.Message)
			}
		}
	}
	if len(parts) == 0 {
		switch code {
		case 0:
			return ""
		case http.StatusOK, http.StatusCreated:
			return "eviction accepted: the pod is being deleted"
		}
		return fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	}
	return strings.Join(parts, " ")
}

// CapRetryAfter caps RetryAfterSeconds at limit (limit <= 0: no cap).
func (r *Result) CapRetryAfter(limit time.Duration) {
	if s := int(limit / time.Second); limit > 0 && r.RetryAfterSeconds > s {
		r.RetryAfterSeconds = s
	}
}

// ParseStatus reads a Status from an answer's body: JSON with kind Status.
// Anything else (an empty body, HTML from a proxy, another kind) is nil.
func ParseStatus(body []byte) *metav1.Status {
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
		return nil
	}
	return &st
}
