package cordon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.FixedZone("CET", 3600))

const nowText = "2026-11-29T11:00:00Z"

func node(unschedulable bool, annotations map[string]string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-1", ResourceVersion: "41", Annotations: annotations,
			Labels: map[string]string{"sentinel.dev/pool": "p"}},
		Spec: corev1.NodeSpec{Unschedulable: unschedulable},
	}
}

func owned(owner string, extra ...string) map[string]string {
	a := map[string]string{OwnerAnnotation: owner, CordonedAtAnnotation: "2026-01-01T00:00:00Z"}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = extra[i+1]
	}
	return a
}

func TestDecide(t *testing.T) {
	cordon := Request{Owner: "chg-1", Reason: "kernel"}
	uncordon := Request{Owner: "chg-1", Uncordon: true}
	tests := map[string]struct {
		node *corev1.Node
		req  Request
		want Decision
		// wantNode is the node with the decision's patch applied.
		wantNode *corev1.Node
	}{
		"fresh node is cordoned": {
			node:     node(false, map[string]string{"other": "x"}),
			req:      cordon,
			want:     Decision{Outcome: Cordoned, Message: "node n1 cordoned by chg-1"},
			wantNode: node(true, map[string]string{"other": "x", OwnerAnnotation: "chg-1", ReasonAnnotation: "kernel", CordonedAtAnnotation: nowText}),
		},
		"fresh node without annotations, no reason": {
			node:     node(false, nil),
			req:      Request{Owner: "chg-1"},
			want:     Decision{Outcome: Cordoned, Message: "node n1 cordoned by chg-1"},
			wantNode: node(true, map[string]string{OwnerAnnotation: "chg-1", CordonedAtAnnotation: nowText}),
		},
		"ours and cordoned: no write": {
			node: node(true, owned("chg-1")),
			req:  cordon,
			want: Decision{Outcome: AlreadyOwned, PreviousOwner: "chg-1", Message: "node n1 is already cordoned by chg-1"},
		},
		"ours but uncordoned outside: cordon again, old reason dropped": {
			node:     node(false, owned("chg-1", ReasonAnnotation, "old")),
			req:      Request{Owner: "chg-1"},
			want:     Decision{Outcome: Cordoned, PreviousOwner: "chg-1", Message: "node n1 cordoned by chg-1"},
			wantNode: node(true, map[string]string{OwnerAnnotation: "chg-1", CordonedAtAnnotation: nowText}),
		},
		"kubectl cordon: occupied": {
			node: node(true, nil),
			req:  cordon,
			want: Decision{Outcome: Occupied, Message: "node n1 is cordoned without an owner"},
		},
		"other owner: occupied": {
			node: node(true, owned("chg-2")),
			req:  cordon,
			want: Decision{Outcome: Occupied, PreviousOwner: "chg-2", Message: "node n1 is cordoned by owner chg-2"},
		},
		"other owner's claim on a schedulable node: occupied": {
			node: node(false, owned("chg-2")),
			req:  cordon,
			want: Decision{Outcome: Occupied, PreviousOwner: "chg-2",
				Message: "node n1 is claimed by owner chg-2 (its cordon was lifted outside sentinel; that owner must uncordon to release the claim)"},
		},
		"uid mismatch comes first": {
			node: node(true, owned("chg-1")),
			req:  Request{Owner: "chg-1", ExpectUID: "uid-0"},
			want: Decision{Outcome: UIDMismatch, PreviousOwner: "chg-1",
				Message: "node n1 has uid uid-1, not the expected uid-0: it was deleted and re-created"},
		},
		"uid matches": {
			node: node(true, owned("chg-1")),
			req:  Request{Owner: "chg-1", ExpectUID: "uid-1"},
			want: Decision{Outcome: AlreadyOwned, PreviousOwner: "chg-1", Message: "node n1 is already cordoned by chg-1"},
		},
		"uncordon ours": {
			node:     node(true, owned("chg-1", ReasonAnnotation, "kernel", "other", "x")),
			req:      uncordon,
			want:     Decision{Outcome: Uncordoned, PreviousOwner: "chg-1", Message: "node n1 uncordoned by chg-1"},
			wantNode: node(false, map[string]string{"other": "x"}),
		},
		"uncordon ours, lifted outside: annotations cleared": {
			node:     node(false, owned("chg-1")),
			req:      uncordon,
			want:     Decision{Outcome: Uncordoned, PreviousOwner: "chg-1", Message: "node n1 uncordoned by chg-1"},
			wantNode: node(false, map[string]string{}),
		},
		"uncordon foreign owner": {
			node: node(true, owned("chg-2")),
			req:  uncordon,
			want: Decision{Outcome: NotOwner, PreviousOwner: "chg-2", Message: "node n1 is cordoned by owner chg-2, not by chg-1"},
		},
		"uncordon kubectl cordon": {
			node: node(true, nil),
			req:  uncordon,
			want: Decision{Outcome: NotOwner, Message: "node n1 is cordoned without an owner: not lifting a cordon chg-1 did not set"},
		},
		"uncordon schedulable node": {
			node: node(false, nil),
			req:  uncordon,
			want: Decision{Outcome: NotCordoned, Message: "node n1 is not cordoned"},
		},
		"uncordon uid mismatch": {
			node: node(true, owned("chg-1")),
			req:  Request{Owner: "chg-1", Uncordon: true, ExpectUID: "uid-0"},
			want: Decision{Outcome: UIDMismatch, PreviousOwner: "chg-1",
				Message: "node n1 has uid uid-1, not the expected uid-0: it was deleted and re-created"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.node.DeepCopy()
			got := Decide(tc.node, tc.req, now)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Decision{}, "Patch")); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.node); diff != "" {
				t.Errorf("Decide modified its input (-before +after):\n%s", diff)
			}
			if (got.Patch != nil) != got.Outcome.Writes() {
				t.Errorf("outcome %s writes = %v, but patch = %s", got.Outcome, got.Outcome.Writes(), got.Patch)
			}
			if got.Patch == nil {
				if tc.wantNode != nil {
					t.Errorf("no patch, want one giving %+v", tc.wantNode)
				}
				return
			}
			if rv := patchedVersion(t, got.Patch); rv != "41" {
				t.Errorf("patch carries resourceVersion %q, want the read one 41: %s", rv, got.Patch)
			}
			patched := applyPatch(t, tc.node, got.Patch)
			if diff := cmp.Diff(tc.wantNode, patched); diff != "" {
				t.Errorf("node after the patch (-want +got):\n%s", diff)
			}
			if !Shows(patched, tc.req) {
				t.Errorf("the patched node does not show what was asked for: %+v", patched)
			}
		})
	}
}

// TestDecidePatch pins the bytes on the wire: only the fields sentinel
// owns, with the read resourceVersion; null removes an annotation.
func TestDecidePatch(t *testing.T) {
	tests := map[string]struct {
		node *corev1.Node
		req  Request
		want string
	}{
		"cordon": {
			node: node(false, nil),
			req:  Request{Owner: "chg-1", Reason: "kernel"},
			want: `{"metadata":{"annotations":{"maintenance.sentinel.dev/cordon-owner":"chg-1","maintenance.sentinel.dev/cordon-reason":"kernel","maintenance.sentinel.dev/cordoned-at":"` + nowText + `"},"resourceVersion":"41"},"spec":{"unschedulable":true}}`,
		},
		"cordon without a reason removes an old one": {
			node: node(false, owned("chg-1", ReasonAnnotation, "old")),
			req:  Request{Owner: "chg-1"},
			want: `{"metadata":{"annotations":{"maintenance.sentinel.dev/cordon-owner":"chg-1","maintenance.sentinel.dev/cordon-reason":null,"maintenance.sentinel.dev/cordoned-at":"` + nowText + `"},"resourceVersion":"41"},"spec":{"unschedulable":true}}`,
		},
		"uncordon": {
			node: node(true, owned("chg-1")),
			req:  Request{Owner: "chg-1", Uncordon: true},
			want: `{"metadata":{"annotations":{"maintenance.sentinel.dev/cordon-owner":null,"maintenance.sentinel.dev/cordon-reason":null,"maintenance.sentinel.dev/cordoned-at":null},"resourceVersion":"41"},"spec":{"unschedulable":false}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := string(Decide(tc.node, tc.req, now).Patch)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

// applyPatch applies a JSON merge patch to node the way the API server does.
func applyPatch(t *testing.T, node *corev1.Node, patch []byte) *corev1.Node {
	t.Helper()
	doc, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		t.Fatalf("merge patch %s: %v", patch, err)
	}
	var n corev1.Node
	if err := json.Unmarshal(out, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func patchedVersion(t *testing.T, patch []byte) string {
	t.Helper()
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	return p.Metadata.ResourceVersion
}

func TestOutcomeCode(t *testing.T) {
	got := map[Outcome]exitcode.Code{}
	for _, o := range []Outcome{Cordoned, AlreadyOwned, Occupied, UIDMismatch, Uncordoned, NotCordoned, NotOwner, "bogus"} {
		got[o] = o.Code()
	}
	want := map[Outcome]exitcode.Code{
		Cordoned: exitcode.OK, AlreadyOwned: exitcode.OK, Uncordoned: exitcode.OK, NotCordoned: exitcode.OK,
		Occupied: exitcode.Blocked, UIDMismatch: exitcode.Blocked, NotOwner: exitcode.Blocked,
		"bogus": exitcode.Error,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
}
