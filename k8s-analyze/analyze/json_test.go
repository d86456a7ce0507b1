package analyze

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
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
	withCapacity := *full
	if withCapacity.Capacity, err = Capacity(build(t, map[string]string{"pods": spread}), []string{"n1", "n2"}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Report{"full": full, "no nodes": &empty, "with a capacity": &withCapacity} {
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

// TestWriteJSONGenerated compares the writers on a generated cluster, with
// strings that need escaping and invalid UTF-8.
func TestWriteJSONGenerated(t *testing.T) {
	s := view.Of(bench.Generate(bench.Size{Nodes: 150, Namespaces: 3, DeploymentsPerNamespace: 4, Replicas: 5}))
	s.Pods[7].Annotations = map[string]string{DoNotDisruptAnnotation: "<b>&\"é\u2028\u2029\xff"}
	s.Pods[9].Spec.Volumes = append(s.Pods[9].Spec.Volumes, view.Volume{Name: "é<x>", HostPath: &corev1.HostPathVolumeSource{Path: "/a\tb"}})
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
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
}
