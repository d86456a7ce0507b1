package snapshot

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

func TestEncodeIsDocumentEncode(t *testing.T) {
	cluster, _ := load(t, "testdata/cluster.yaml")
	cluster.Metadata = Metadata{
		CapturedAt:        metav1.Unix(1700000000, 0),
		Server:            "https://127.0.0.1:6443?a=<b>&c",
		KubernetesVersion: "v1.37.2",
		Scope:             Scope{Nodes: []string{"n1"}},
		ResourceVersions:  map[string]string{"pods": "12", "nodes": "7"},
	}
	cluster.Pods[0].Annotations = map[string]string{"html": "<script>&</script>", "empty": ""}
	empty := New()
	empty.Pods = []corev1.Pod{}
	tests := map[string]*Snapshot{
		"populated":           cluster,
		"nil lists":           New(),
		"empty and nil lists": empty,
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := document.Encode(&want, document.JSON, s); err != nil {
				t.Fatal(err)
			}
			if err := Encode(&got, document.JSON, s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("Encode (-want +got):\n%s", diff)
			}
			var back Snapshot
			if err := document.Unmarshal(got.Bytes(), Kind, &back); err != nil {
				t.Fatalf("the encoded snapshot does not decode: %v", err)
			}
		})
	}
}

func TestEncodeRefusesNoHeader(t *testing.T) {
	var out bytes.Buffer
	if err := Encode(&out, document.JSON, &Snapshot{}); err == nil {
		t.Fatal("Encode of a snapshot without a header succeeded")
	}
	if out.Len() > 0 {
		t.Errorf("Encode wrote %q", out.String())
	}
}

// BenchmarkEncode encodes a snapshot of 6,000 pods.
func BenchmarkEncode(b *testing.B) {
	s := New()
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-abc-xyz", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}
	for range 6000 {
		s.Pods = append(s.Pods, pod)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := Encode(&out, document.JSON, s); err != nil {
			b.Fatal(err)
		}
	}
}
