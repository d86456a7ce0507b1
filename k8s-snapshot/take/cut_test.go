package take

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sentinel-go/sentinel/k8s-snapshot/internal/snapshottest"
)

// revisions is a Source over client-go's fake clientset that plays an API
// server's revisions: a list without a resourceVersion answers at the
// current revision (and the next one is one higher, as if the cluster
// changed meanwhile); an exact list at a revision below compacted answers
// 410 Expired, and expire says how many revisions get compacted away just
// after they are fixed. It records every list's options.
type revisions struct {
	clientset
	mu        sync.Mutex
	current   int
	compacted int
	expire    int
	requests  []metav1.ListOptions
}

func (r *revisions) List(ctx context.Context, resource, ns string, opts metav1.ListOptions, into runtime.Object) error {
	r.mu.Lock()
	r.requests = append(r.requests, opts)
	rv := opts.ResourceVersion
	switch {
	case rv == "":
		r.current++
		rv = strconv.Itoa(r.current)
		if r.expire > 0 {
			r.expire--
			r.compacted = r.current + 1
		}
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		if n, _ := strconv.Atoi(rv); n < r.compacted {
			r.mu.Unlock()
			return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
		}
	}
	r.mu.Unlock()
	if err := r.clientset.List(ctx, resource, ns, metav1.ListOptions{}, into); err != nil {
		return err
	}
	into.(interface{ SetResourceVersion(string) }).SetResourceVersion(rv)
	return nil
}

func TestTakeConsistentCut(t *testing.T) {
	_, objs := snapshottest.Load(t, "../snapshot/testdata/cluster.yaml")
	tests := map[string]struct {
		opts       Options
		expire     int
		wantRV     string
		wantCons   bool
		wantErr    string
		wantEvents []Event
	}{
		"whole cluster at one revision": {opts: Options{}, wantRV: "1", wantCons: true},
		"node scope at one revision":    {opts: Options{Nodes: []string{"n1"}}, wantRV: "1", wantCons: true},
		"one revision compacted": {opts: Options{}, expire: 1, wantRV: "2", wantCons: true,
			wantEvents: []Event{{Revision: "1", Restarts: 1}}},
		"node scope, two revisions compacted": {opts: Options{Nodes: []string{"n2"}}, expire: 2, wantRV: "3", wantCons: true,
			wantEvents: []Event{{Revision: "1", Restarts: 1}, {Revision: "2", Restarts: 2}}},
		"compacted past the bound": {opts: Options{}, expire: 99,
			wantErr:    "410 Gone: the API server compacted the snapshot's revision away 4 times in a row, last 4 (The resourceVersion for the provided list is too old.)",
			wantEvents: []Event{{Revision: "1", Restarts: 1}, {Revision: "2", Restarts: 2}, {Revision: "3", Restarts: 3}}},
		"latest: no exact lists": {opts: Options{Latest: true}, expire: 99, wantRV: "", wantCons: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := &revisions{clientset: clientset{fake.NewClientset(objs...)}, expire: tc.expire}
			var events []Event
			opts := tc.opts
			opts.Parallel = 3
			opts.Notify = func(e Event) {
				if e.Restart != nil {
					events = append(events, Event{Revision: e.Revision, Restarts: e.Restarts})
				}
			}
			s, err := Take(context.Background(), src, opts)
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("restarts (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tc.wantErr) || s != nil {
					t.Fatalf("Take = %v, %v; want no snapshot and an error ending %q", s != nil, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Metadata.ResourceVersion != tc.wantRV || s.Metadata.Consistent != tc.wantCons {
				t.Errorf("metadata resourceVersion %q consistent %v, want %q %v", s.Metadata.ResourceVersion, s.Metadata.Consistent, tc.wantRV, tc.wantCons)
			}
			if tc.opts.Latest {
				for _, r := range src.requests {
					if r.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
						t.Errorf("an exact list with Latest: %+v", r)
					}
				}
				return
			}
			// After the last fixing list, every list is exact at the revision.
			last := 0
			for i, r := range src.requests {
				if r.ResourceVersion == "" {
					last = i
				}
			}
			for _, r := range src.requests[last+1:] {
				want := metav1.ListOptions{ResourceVersion: tc.wantRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
				got := metav1.ListOptions{ResourceVersion: r.ResourceVersion, ResourceVersionMatch: r.ResourceVersionMatch}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("list after the revision was fixed (-want +got):\n%s", diff)
				}
			}
			for k, rv := range s.Metadata.ResourceVersions {
				if rv != tc.wantRV {
					t.Errorf("resourceVersions[%s] = %q, want %q", k, rv, tc.wantRV)
				}
			}
		})
	}
}
