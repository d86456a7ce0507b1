package view

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/sentinel-go/sentinel/k8s-analyze/strictjson"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// Decode decodes a Snapshot document, JSON or YAML, strictly (document.Unmarshal's
// rules: an unknown kind, apiVersion or field is an error naming it) into
// its view.
//
// JSON goes through strictjson first, several times faster on big
// snapshots: it validates the document against snapshot.Snapshot and stores
// only the view, with strings that alias data, which must not change
// afterwards. When the fast path refuses the input, the canonical decoder
// decodes it again, whole, and gives the accepted document's view or the
// error to show; either way the view is the same.
func Decode(data []byte) (*Snapshot, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var s Snapshot
		if strictjson.UnmarshalProjection(data, &s, reflect.TypeFor[snapshot.Snapshot]()) == nil && s.APIVersion == document.APIVersion && s.Kind == snapshot.Kind {
			return &s, nil
		}
	}
	var full snapshot.Snapshot // no preset header: a missing kind must fail
	if err := document.Unmarshal(data, snapshot.Kind, &full); err != nil {
		return nil, err
	}
	return Of(&full), nil
}

// Of is the view of s. It shares s's strings, maps and the values of the
// types it keeps whole.
func Of(s *snapshot.Snapshot) *Snapshot {
	var v Snapshot
	if err := strictjson.Project(&v, s); err != nil {
		panic(fmt.Sprintf("view: Snapshot is not a projection of snapshot.Snapshot: %v", err))
	}
	return &v
}
