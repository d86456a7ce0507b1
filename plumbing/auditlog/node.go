package auditlog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CordonOwnerAnnotation is the annotation k8s-cordon and maintd write on
// the node they cordon, naming the owner of the cordon
// (k8s-cordon/cordon.OwnerAnnotation; that module depends on this one).
const CordonOwnerAnnotation = "maintenance.sentinel.dev/cordon-owner"

// NodeChange is what a write of a node (a PATCH or UPDATE of the node
// itself, with its body logged) does to its cordon.
type NodeChange struct {
	// Unschedulable is spec.unschedulable as the write sets it; nil when
	// the write leaves it as it was.
	Unschedulable *bool
	// Owner is the cordon-owner annotation as the write sets it ("" when
	// it removes it); nil when it leaves it as it was.
	Owner *string
}

// Cordon is what a node write does to the node's cordon. ok is false when
// the body was not logged (level Metadata) or cannot be read. A merge or
// strategic-merge patch is an object in which an absent field is
// unchanged and null removes it (spec.unschedulable null is false, as
// kubectl uncordon sends it); a JSON patch (an array of operations) is
// read for /spec/unschedulable and the owner annotation; an UPDATE sends
// the whole node, so an absent field is false or removed.
func (e *Event) Cordon() (c NodeChange, ok bool) {
	body := bytes.TrimSpace(e.Body)
	if len(body) == 0 {
		return c, false
	}
	if body[0] == '[' {
		return jsonPatch(body)
	}
	var o struct {
		Metadata *struct {
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return c, false
	}
	if e.Verb == "update" {
		f, none := false, ""
		c.Unschedulable, c.Owner = &f, &none
	}
	if v, in := o.Spec["unschedulable"]; in {
		// null removes the field: false (kubectl uncordon sends that).
		var b *bool
		if json.Unmarshal(v, &b) != nil {
			return NodeChange{}, false
		}
		if b == nil {
			b = new(bool)
		}
		c.Unschedulable = b
	}
	if o.Metadata != nil {
		if v, in := o.Metadata.Annotations[CordonOwnerAnnotation]; in {
			s := ""
			if v != nil {
				s = *v
			}
			c.Owner = &s
		}
	}
	return c, true
}

// jsonPatch reads an RFC 6902 patch's operations on the cordon.
func jsonPatch(body []byte) (c NodeChange, ok bool) {
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &ops); err != nil {
		return c, false
	}
	owner := "/metadata/annotations/" + escapePointer(CordonOwnerAnnotation)
	for _, op := range ops {
		switch {
		case op.Path == "/spec/unschedulable" && (op.Op == "add" || op.Op == "replace"):
			var b bool
			if json.Unmarshal(op.Value, &b) == nil {
				c.Unschedulable = &b
			}
		case op.Path == "/spec/unschedulable" && op.Op == "remove":
			b := false
			c.Unschedulable = &b
		case op.Path == owner && (op.Op == "add" || op.Op == "replace"):
			var s string
			if json.Unmarshal(op.Value, &s) == nil {
				c.Owner = &s
			}
		case op.Path == owner && op.Op == "remove":
			s := ""
			c.Owner = &s
		}
	}
	return c, true
}

// escapePointer escapes a JSON pointer token (RFC 6901): ~ as ~0, / as ~1.
func escapePointer(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// String is the change for people: "cordon (owner X)", "uncordon", "no
// cordon change".
func (c NodeChange) String() string {
	s := "no cordon change"
	if c.Unschedulable != nil {
		s = "uncordon"
		if *c.Unschedulable {
			s = "cordon"
		}
	}
	if c.Owner != nil {
		s += fmt.Sprintf(" (owner %q)", *c.Owner)
	}
	return s
}
