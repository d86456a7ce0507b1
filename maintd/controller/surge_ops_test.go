package controller

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/maintd/drain"
)

// TestScaleUpKeepsOthersAnnotations: a scale-up read from an owner without
// annotations must not replace those someone wrote since: the API server
// applies JSON patches with the library applied here.
func TestScaleUpKeepsOthersAnnotations(t *testing.T) {
	read := &liveOwner{meta: metav1.ObjectMeta{UID: "u1"}, replicas: 2}
	patch, err := json.Marshal(scaleUpOps(read, "maintenanceplan/p/u", 2))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	// As read: no annotations. The surge's marks are added.
	got, err := ops.Apply([]byte(`{"metadata":{"uid":"u1"},"spec":{"replicas":2}}`))
	if err != nil {
		t.Fatalf("apply to the owner as read: %v", err)
	}
	var o struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(got, &o); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{drain.SurgeAnnotation: "maintenanceplan/p/u", drain.SurgeFromAnnotation: "2"}
	if diff := cmp.Diff(want, o.Metadata.Annotations); diff != "" || o.Spec.Replicas != 3 {
		t.Errorf("replicas %d, annotations (-want +got):\n%s", o.Spec.Replicas, diff)
	}
	// Someone annotated the owner since the read: the patch fails, and
	// their annotation stays.
	_, err = ops.Apply([]byte(`{"metadata":{"uid":"u1","annotations":{"team":"a"}},"spec":{"replicas":2}}`))
	if !errors.Is(err, jsonpatch.ErrTestFailed) {
		t.Errorf("applied over annotations written since the read: %v, want a failed test", err)
	}
}
