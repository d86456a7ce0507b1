package cordon

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Annotations that record who cordoned a node, why and when.
const (
	OwnerAnnotation      = "maintenance.sentinel.dev/cordon-owner"
	ReasonAnnotation     = "maintenance.sentinel.dev/cordon-reason"
	CordonedAtAnnotation = "maintenance.sentinel.dev/cordoned-at"
)

// Outcome is what a cordon or uncordon request came to.
type Outcome string

const (
	// Cordoned: the node was schedulable and is now cordoned by the owner.
	Cordoned Outcome = "cordoned"
	// AlreadyOwned: the node is already cordoned by the same owner; no write.
	AlreadyOwned Outcome = "already-owned"
	// Occupied: the node is cordoned, or claimed, by someone else; no write.
	Occupied Outcome = "occupied"
	// UIDMismatch: the node's UID is not the expected one; no write.
	UIDMismatch Outcome = "uid-mismatch"
	// Uncordoned: the owner's cordon and annotations were removed.
	Uncordoned Outcome = "uncordoned"
	// NotCordoned: uncordon found nothing to release; no write.
	NotCordoned Outcome = "not-cordoned"
	// NotOwner: uncordon of a cordon that is not the owner's; no write.
	NotOwner Outcome = "not-owner"
)

// Code is the exit code of an outcome (package exitcode's table).
func (o Outcome) Code() exitcode.Code {
	switch o {
	case Cordoned, AlreadyOwned, Uncordoned, NotCordoned:
		return exitcode.OK
	case Occupied, UIDMismatch, NotOwner:
		return exitcode.Blocked
	}
	return exitcode.Error
}

// Writes reports whether the outcome comes with a Patch.
func (o Outcome) Writes() bool { return o == Cordoned || o == Uncordoned }

// Request is what the caller asks for.
type Request struct {
	// Uncordon releases the owner's cordon instead of setting one.
	Uncordon bool
	// Owner identifies who holds the cordon, e.g. a change ticket or a plan.
	Owner string
	// Reason is recorded on the node with a cordon; empty removes an old one.
	Reason string
	// ExpectUID, when set, must be the node's UID: the node the caller
	// means, not another one re-created under the same name.
	ExpectUID types.UID
}

// Decision is what Decide concluded.
type Decision struct {
	Outcome Outcome
	// Patch is the JSON merge patch (RFC 7386) to send, or nil when nothing
	// is written. It carries only spec.unschedulable, the three annotations
	// and the resourceVersion the node was read at, so the API server
	// refuses it with 409 if the node changed since, and fields this client
	// does not know are never sent back, let alone dropped.
	Patch []byte
	// PreviousOwner is the owner annotation found on the node, if any.
	PreviousOwner string
	// Message says what was found, for people.
	Message string
}

// Decide decides what req does to node, as read. now is the time recorded
// in CordonedAtAnnotation. node is not modified.
func Decide(node *corev1.Node, req Request, now time.Time) Decision {
	owner := node.Annotations[OwnerAnnotation]
	d := Decision{PreviousOwner: owner}
	cordoned := node.Spec.Unschedulable
	switch {
	case req.ExpectUID != "" && node.UID != req.ExpectUID:
		d.Outcome = UIDMismatch
		d.Message = fmt.Sprintf("node %s has uid %s, not the expected %s: it was deleted and re-created", node.Name, node.UID, req.ExpectUID)

	case !req.Uncordon && owner == req.Owner && cordoned:
		d.Outcome = AlreadyOwned
		d.Message = fmt.Sprintf("node %s is already cordoned by %s", node.Name, owner)
	case !req.Uncordon && owner != "" && owner != req.Owner:
		d.Outcome = Occupied
		d.Message = fmt.Sprintf("node %s is cordoned by owner %s", node.Name, owner)
		if !cordoned {
			d.Message = fmt.Sprintf("node %s is claimed by owner %s (its cordon was lifted outside sentinel; that owner must uncordon to release the claim)", node.Name, owner)
		}
	case !req.Uncordon && cordoned:
		d.Outcome = Occupied
		d.Message = fmt.Sprintf("node %s is cordoned without an owner", node.Name)
	case !req.Uncordon:
		d.Outcome = Cordoned
		d.Patch = cordonPatch(node, req, now)
		d.Message = fmt.Sprintf("node %s cordoned by %s", node.Name, req.Owner)

	case owner == req.Owner:
		d.Outcome = Uncordoned
		d.Patch = uncordonPatch(node)
		d.Message = fmt.Sprintf("node %s uncordoned by %s", node.Name, req.Owner)
	case owner != "":
		d.Outcome = NotOwner
		d.Message = fmt.Sprintf("node %s is cordoned by owner %s, not by %s", node.Name, owner, req.Owner)
	case cordoned:
		d.Outcome = NotOwner
		d.Message = fmt.Sprintf("node %s is cordoned without an owner: not lifting a cordon %s did not set", node.Name, req.Owner)
	default:
		d.Outcome = NotCordoned
		d.Message = fmt.Sprintf("node %s is not cordoned", node.Name)
	}
	return d
}

// cordonPatch sets spec.unschedulable and the owner's annotations; an
// empty reason removes an old one.
func cordonPatch(node *corev1.Node, req Request, now time.Time) []byte {
	var reason any // null: remove
	if req.Reason != "" {
		reason = req.Reason
	}
	return patch(node.ResourceVersion, true, map[string]any{
		OwnerAnnotation:      req.Owner,
		ReasonAnnotation:     reason,
		CordonedAtAnnotation: now.UTC().Format(time.RFC3339),
	})
}

// uncordonPatch clears spec.unschedulable and removes the annotations.
func uncordonPatch(node *corev1.Node) []byte {
	return patch(node.ResourceVersion, false, map[string]any{
		OwnerAnnotation:      nil,
		ReasonAnnotation:     nil,
		CordonedAtAnnotation: nil,
	})
}

// patch is the merge patch guarded by resourceVersion; a nil annotation
// value removes that annotation.
func patch(resourceVersion string, unschedulable bool, annotations map[string]any) []byte {
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion, "annotations": annotations},
		"spec":     map[string]any{"unschedulable": unschedulable},
	})
	if err != nil {
		panic(fmt.Sprintf("cordon: encode a patch of strings and bools: %v", err)) // cannot happen
	}
	return data
}

// Shows reports whether node, as read, shows what req asked for: cordoned
// with the owner's annotation, or (uncordon) schedulable without it.
func Shows(node *corev1.Node, req Request) bool {
	owner := node.Annotations[OwnerAnnotation]
	if req.Uncordon {
		return !node.Spec.Unschedulable && owner == ""
	}
	return node.Spec.Unschedulable && owner == req.Owner
}
