package cordon

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// Kind is the document kind of a Result.
const Kind = "CordonResult"

// MaxConflicts bounds how many times Apply re-reads and decides again after
// its write met a conflict (409).
const MaxConflicts = 5

// Result is the CordonResult document: what Apply did and what it read back.
type Result struct {
	document.Header `json:",inline"`

	Node    string    `json:"node"`
	NodeUID types.UID `json:"nodeUID"`
	// Action is the outcome.
	Action Outcome `json:"action"`
	Owner  string  `json:"owner"`
	// PreviousOwner is the owner annotation found before the write, if any.
	PreviousOwner string `json:"previousOwner,omitempty"`
	// Reason and CordonedAt are the node's annotations as read back.
	Reason     string `json:"reason,omitempty"`
	CordonedAt string `json:"cordonedAt,omitempty"`
	// Unschedulable is spec.unschedulable as read back.
	Unschedulable bool `json:"unschedulable"`
	// Observed is true when the last read shows what was asked for:
	// cordoned by Owner, or (uncordon) schedulable without an owner.
	Observed bool `json:"observed"`
	// ResourceVersion is the node's resourceVersion as last read.
	ResourceVersion string `json:"resourceVersion"`
	// Conflicts counts the 409 answers met on the way.
	Conflicts int    `json:"conflicts,omitempty"`
	Message   string `json:"message"`
}

// Code is the exit code of the result: the outcome's, except that a write
// that cannot be read back is an error (nothing reliable was done).
func (r *Result) Code() exitcode.Code {
	if r.Action.Writes() && !r.Observed {
		return exitcode.Error
	}
	return r.Action.Code()
}

// Client reads and patches nodes; the typed client's CoreV1().Nodes()
// satisfies it.
type Client interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error)
}

// Apply carries out req on the node called name: read, Decide, at most one
// successful merge patch guarded by the read resourceVersion, then read
// back.
// On a conflict it re-reads and decides again, at most MaxConflicts times.
// An error means nothing reliable was done or decided.
func Apply(ctx context.Context, nodes Client, name string, req Request, now time.Time) (*Result, error) {
	if req.Owner == "" {
		return nil, errors.New("cordon: an owner is required")
	}
	res := &Result{Header: document.NewHeader(Kind), Node: name, Owner: req.Owner}
	for {
		node, err := get(ctx, nodes, name)
		if err != nil {
			return nil, err
		}
		d := Decide(node, req, now)
		res.Action, res.PreviousOwner, res.Message = d.Outcome, d.PreviousOwner, d.Message
		if d.Patch == nil {
			res.read(node, req)
			return res, nil
		}
		_, err = nodes.Patch(ctx, name, types.MergePatchType, d.Patch, metav1.PatchOptions{FieldManager: "sentinel-cordon"})
		if apierrors.IsConflict(err) {
			if res.Conflicts >= MaxConflicts {
				return nil, fmt.Errorf("node %s kept changing: %d conflicts: %w", name, res.Conflicts+1, err)
			}
			res.Conflicts++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("patch node %s: %w", name, err)
		}
		back, err := get(ctx, nodes, name)
		if err != nil {
			res.NodeUID, res.Observed = node.UID, false
			res.Message += fmt.Sprintf("; the patch was sent but not read back: %v", err)
			return res, nil
		}
		res.read(back, req)
		if !res.Observed {
			res.Message += "; the read back does not show it"
		}
		return res, nil
	}
}

func get(ctx context.Context, nodes Client, name string) (*corev1.Node, error) {
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("node %q not found", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read node %s: %w", name, err)
	}
	return node, nil
}

// read records what node, as read, shows.
func (r *Result) read(node *corev1.Node, req Request) {
	r.NodeUID = node.UID
	r.ResourceVersion = node.ResourceVersion
	r.Unschedulable = node.Spec.Unschedulable
	r.Reason = node.Annotations[ReasonAnnotation]
	r.CordonedAt = node.Annotations[CordonedAtAnnotation]
	switch r.Action {
	case Occupied, NotOwner, UIDMismatch:
		r.Observed = false
	default:
		r.Observed = Shows(node, req)
	}
}
