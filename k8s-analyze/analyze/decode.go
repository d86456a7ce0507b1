package analyze

import (
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// DecodeSnapshot decodes a Snapshot document, JSON or YAML, strictly.
func DecodeSnapshot(data []byte) (*snapshot.Snapshot, error) {
	var s snapshot.Snapshot // no preset header: a missing kind must fail
	if err := document.Unmarshal(data, snapshot.Kind, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
