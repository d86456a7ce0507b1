package analyze

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

// TestWriteJSONIsDocumentEncode: the streaming writer's output is byte for
// byte document.Encode's.
func TestWriteJSONIsDocumentEncode(t *testing.T) {
	full, err := Analyze(build(t, map[string]string{"pods": spread + webPod("x", "n1", `, volumes: [{name: c, emptyDir: {}}]`),
		"podDisruptionBudgets": pdbYAML("web", "maxUnavailable: 1, selector: {matchLabels: {app: web}}", "disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3")}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	empty := *full
	empty.Nodes = []Node{}
	for name, r := range map[string]*Report{"full": full, "no nodes": &empty} {
		t.Run(name, func(t *testing.T) {
			var got, want bytes.Buffer
			if err := WriteJSON(&got, r); err != nil {
				t.Fatal(err)
			}
			if err := document.Encode(&want, document.JSON, r); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("WriteJSON (-want +got):\n%s", diff)
			}
		})
	}
}
