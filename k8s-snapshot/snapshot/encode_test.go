package snapshot_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-snapshot/internal/snapshottest"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

func TestEncodeIsDocumentEncode(t *testing.T) {
	cluster, _ := snapshottest.Load(t, "testdata/cluster.yaml")
	cluster.Metadata = snapshot.Metadata{
		CapturedAt:        metav1.Unix(1700000000, 0),
		Server:            "https://127.0.0.1:6443?a=<b>&c",
		KubernetesVersion: "v1.37.2",
		Scope:             snapshot.Scope{Nodes: []string{"n1"}},
		ResourceVersions:  map[string]string{"pods": "12", "nodes": "7"},
	}
	cluster.Pods[0].Annotations = map[string]string{"html": "<script>&</script>", "empty": ""}
	empty := snapshot.New()
	empty.Pods = []corev1.Pod{}
	long := snapshot.New() // several chunks, encoded in parallel, must stay in order
	for i := range 5*snapshot.ChunkSize + 3 {
		long.Pods = append(long.Pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%04d", i), Namespace: "ns"}})
	}
	long.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}
	tests := map[string]*snapshot.Snapshot{
		"populated":           cluster,
		"nil lists":           snapshot.New(),
		"empty and nil lists": empty,
		"long lists":          long,
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := document.Encode(&want, document.JSON, s); err != nil {
				t.Fatal(err)
			}
			if err := snapshot.Encode(&got, document.JSON, s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("Encode (-want +got):\n%s", diff)
			}
			var back snapshot.Snapshot
			if err := document.Unmarshal(got.Bytes(), snapshot.Kind, &back); err != nil {
				t.Fatalf("the encoded snapshot does not decode: %v", err)
			}
		})
	}
}

// failAfter is a writer that fails once n bytes were written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestEncodeWriteError(t *testing.T) {
	s := snapshot.New()
	for i := range 20 * snapshot.ChunkSize {
		s.Pods = append(s.Pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%04d", i), Namespace: "ns"}})
	}
	var all bytes.Buffer
	if err := snapshot.Encode(&all, document.JSON, s); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, all.Len() / 2, all.Len() - 1} {
		if err := snapshot.Encode(&failAfter{n}, document.JSON, s); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Encode to a writer failing after %d bytes: err = %v, want disk full", n, err)
		}
	}
}

func TestEncodeRefusesNoHeader(t *testing.T) {
	var out bytes.Buffer
	if err := snapshot.Encode(&out, document.JSON, &snapshot.Snapshot{}); err == nil {
		t.Fatal("Encode of a snapshot without a header succeeded")
	}
	if out.Len() > 0 {
		t.Errorf("Encode wrote %q", out.String())
	}
}

// BenchmarkEncode encodes a snapshot of 6,000 pods.
func BenchmarkEncode(b *testing.B) {
	s := snapshot.New()
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-abc-xyz", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}
	for range 6000 {
		s.Pods = append(s.Pods, pod)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := snapshot.Encode(&out, document.JSON, s); err != nil {
			b.Fatal(err)
		}
	}
}
