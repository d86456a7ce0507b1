package cordon

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sentinel-go/sentinel/plumbing/document"
)

// The fake clientset only tests Apply's wiring (read, decide, guarded
// patch, conflict handling, read back); real API behaviour is tested
// against the control plane in the k8s-cordon command's tests.

// conflicts makes the first n patches fail with 409 after changing the
// stored node as a competitor would (via mutate, and a new resourceVersion
// as the API server would give it). It records the patches' types, the
// resourceVersions they carry and the last one's body.
func conflicts(cs *fake.Clientset, n int, mutate func(*corev1.Node)) *patches {
	seen := &patches{}
	cs.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		seen.n++
		seen.typ, seen.last = p.GetPatchType(), p.GetPatch()
		var guard struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &guard); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		seen.versions = append(seen.versions, guard.Metadata.ResourceVersion)
		if seen.n > n {
			return false, nil, nil
		}
		if mutate != nil {
			obj, err := cs.Tracker().Get(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "", "n1")
			if err != nil {
				return true, nil, err
			}
			other := obj.(*corev1.Node).DeepCopy()
			mutate(other)
			other.ResourceVersion = strconv.Itoa(41 + seen.n)
			if err := cs.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, other, ""); err != nil {
				return true, nil, err
			}
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", nil)
	})
	return seen
}

type patches struct {
	n        int
	typ      types.PatchType
	versions []string
	last     []byte
}

func TestApply(t *testing.T) {
	tests := map[string]struct {
		node        *corev1.Node
		req         Request
		conflicts   int
		competitor  func(*corev1.Node)
		want        *Result
		wantErr     string
		wantPatches int
		// wantVersions are the resourceVersions the patches carry: the one
		// read last each time.
		wantVersions []string
		// wantLastPatch is the last patch sent, when one is.
		wantLastPatch string
	}{
		"cordon": {
			node:        node(false, nil),
			req:         Request{Owner: "chg-1", Reason: "kernel"},
			wantPatches: 1,
			wantLastPatch: `{"metadata":{"annotations":{"maintenance.sentinel.dev/cordon-owner":"chg-1","maintenance.sentinel.dev/cordon-reason":"kernel",` +
				`"maintenance.sentinel.dev/cordoned-at":"` + nowText + `"},"resourceVersion":"41"},"spec":{"unschedulable":true}}`,
			want: &Result{Node: "n1", NodeUID: "uid-1", Action: Cordoned, Owner: "chg-1", Reason: "kernel",
				CordonedAt: nowText, Unschedulable: true, Observed: true, Message: "node n1 cordoned by chg-1"},
		},
		"already owned: no update": {
			node: node(true, owned("chg-1")),
			req:  Request{Owner: "chg-1"},
			want: &Result{Node: "n1", NodeUID: "uid-1", Action: AlreadyOwned, Owner: "chg-1", PreviousOwner: "chg-1",
				CordonedAt: "2026-01-01T00:00:00Z", Unschedulable: true, Observed: true, ResourceVersion: "41",
				Message: "node n1 is already cordoned by chg-1"},
		},
		"conflict, then the competitor's cordon is seen: occupied": {
			node:        node(false, nil),
			req:         Request{Owner: "chg-1"},
			conflicts:   1,
			competitor:  func(n *corev1.Node) { n.Spec.Unschedulable = true; n.Annotations = owned("chg-2") },
			wantPatches: 1,
			want: &Result{Node: "n1", NodeUID: "uid-1", Action: Occupied, Owner: "chg-1", PreviousOwner: "chg-2",
				CordonedAt: "2026-01-01T00:00:00Z", Unschedulable: true, Conflicts: 1, ResourceVersion: "42",
				Message: "node n1 is cordoned by owner chg-2"},
		},
		"conflict on a status change: decide again and cordon": {
			node:         node(false, nil),
			req:          Request{Owner: "chg-1"},
			conflicts:    2,
			competitor:   func(n *corev1.Node) { n.Labels["heartbeat"] = "x" },
			wantPatches:  3,
			wantVersions: []string{"41", "42", "43"},
			want: &Result{Node: "n1", NodeUID: "uid-1", Action: Cordoned, Owner: "chg-1", CordonedAt: nowText,
				Unschedulable: true, Observed: true, Conflicts: 2, Message: "node n1 cordoned by chg-1"},
		},
		"conflicts are bounded": {
			node:        node(false, nil),
			req:         Request{Owner: "chg-1"},
			conflicts:   100,
			wantPatches: MaxConflicts + 1,
			wantErr:     "node n1 kept changing: 6 conflicts",
		},
		"uncordon ours": {
			node:        node(true, owned("chg-1", ReasonAnnotation, "kernel")),
			req:         Request{Owner: "chg-1", Uncordon: true},
			wantPatches: 1,
			want: &Result{Node: "n1", NodeUID: "uid-1", Action: Uncordoned, Owner: "chg-1", PreviousOwner: "chg-1",
				Observed: true, Message: "node n1 uncordoned by chg-1"},
		},
		"missing node": {
			req:     Request{Owner: "chg-1"},
			wantErr: `node "n1" not found`,
		},
		"no owner": {
			node:    node(false, nil),
			req:     Request{},
			wantErr: "cordon: an owner is required",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.node != nil {
				objs = append(objs, tc.node)
			}
			cs := fake.NewClientset(objs...)
			seen := conflicts(cs, tc.conflicts, tc.competitor)
			got, err := Apply(context.Background(), cs.CoreV1().Nodes(), "n1", tc.req, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if tc.want != nil {
				tc.want.Header = document.NewHeader(Kind)
				if got != nil && tc.want.Action.Writes() {
					tc.want.ResourceVersion = got.ResourceVersion // the fake's counter
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			if seen.n != tc.wantPatches {
				t.Errorf("patches = %d, want %d", seen.n, tc.wantPatches)
			}
			if seen.n > 0 && seen.typ != types.MergePatchType {
				t.Errorf("patch type %s, want %s", seen.typ, types.MergePatchType)
			}
			if tc.wantVersions != nil && !cmp.Equal(tc.wantVersions, seen.versions) {
				t.Errorf("patches carry resourceVersions %q, want %q", seen.versions, tc.wantVersions)
			}
			if tc.wantLastPatch != "" && string(seen.last) != tc.wantLastPatch {
				t.Errorf("last patch\n%s, want\n%s", seen.last, tc.wantLastPatch)
			}
		})
	}
}

// TestPureImports fences the package: the decision code and its shell use
// only API types and interfaces, never client-go's transport.
func TestPureImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/client-go") {
			t.Errorf("package cordon depends on %s", pkg)
		}
	}
}
