package analyze

import (
	"bytes"

	"github.com/sentinel-go/sentinel/k8s-analyze/strictjson"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// DecodeSnapshot decodes a Snapshot document, JSON or YAML, strictly
// (document.Unmarshal's rules: unknown kind, apiVersion or field is an
// error naming it).
//
// JSON goes through strictjson first, several times faster on big
// snapshots: it stores only the fields the analysis reads (Needs) and
// validates the others without keeping them, and its strings alias data,
// which must not change afterwards. When the fast path refuses the input,
// the canonical decoder decodes it again, whole, and gives the accepted
// document or the error to show; the analysis of either is the same.
func DecodeSnapshot(data []byte) (*snapshot.Snapshot, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var s snapshot.Snapshot
		if strictjson.UnmarshalFields(data, &s, Needs()) == nil && s.APIVersion == document.APIVersion && s.Kind == snapshot.Kind {
			return &s, nil
		}
	}
	var s snapshot.Snapshot // no preset header: a missing kind must fail
	if err := document.Unmarshal(data, snapshot.Kind, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
