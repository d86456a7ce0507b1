package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// TestChurn takes 20 snapshots (whole cluster and --node, alternately)
// while a goroutine scales Deployments up and down and relabels their pods,
// 20 changes a second; then re-lists every kind at each document's
// resourceVersion R and compares: the document holds exactly the cluster at
// R, object for object (for --node, the closure of the cluster at R).
func TestChurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns, node := setupChurn(ctx, t)
	client := cp.Clientset(controlplane.Admin)

	churnCtx, stopChurn := context.WithCancel(ctx)
	var changes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { churn(churnCtx, client, ns, &changes) })
	defer func() { stopChurn(); wg.Wait() }()

	// Let the churn get going first.
	for changes.Load() < 20 {
		select {
		case <-ctx.Done():
			t.Fatalf("churn: only %d changes: %v", changes.Load(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}

	type taken struct {
		args []string
		doc  []byte
	}
	var docs []taken
	before := changes.Load()
	for i := range 20 {
		args := []string{name}
		if i%2 == 1 {
			args = append(args, "--node", node)
		}
		var stdout, stderr bytes.Buffer
		argv := append(slicesClone(args), "--kubeconfig", cp.Kubeconfig(controlplane.Admin))
		if code := command.Run(ctx, app(), argv, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d, stderr:\n%s", args, code, stderr.String())
		}
		docs = append(docs, taken{args, stdout.Bytes()})
	}
	during := changes.Load() - before
	stopChurn()
	wg.Wait()
	if during < 10 {
		t.Fatalf("only %d changes while the snapshots were taken: no churn to speak of", during)
	}
	t.Logf("%d changes during 20 snapshots", during)

	seen := map[string]bool{}
	for i, d := range docs {
		var s snapshot.Snapshot
		if err := document.Unmarshal(d.doc, snapshot.Kind, &s); err != nil {
			t.Fatalf("snapshot %d %v: %v", i, d.args, err)
		}
		rv := s.Metadata.ResourceVersion
		if !s.Metadata.Consistent || rv == "" {
			t.Fatalf("snapshot %d %v: consistent %v, resourceVersion %q", i, d.args, s.Metadata.Consistent, rv)
		}
		seen[rv] = true
		for kind, v := range s.Metadata.ResourceVersions {
			if v != rv {
				t.Errorf("snapshot %d %v: %s listed at %s, not at the snapshot's %s", i, d.args, kind, v, rv)
			}
		}
		want, err := relist(ctx, client, rv)
		if err != nil {
			t.Fatalf("snapshot %d: re-list at %s: %v", i, rv, err)
		}
		if len(d.args) > 1 {
			if want, err = snapshot.ForNodes(want, node); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(objects(want), objects(&s)); diff != "" {
			t.Errorf("snapshot %d %v at %s against the cluster re-listed at %s (-want +got):\n%s", i, d.args, rv, rv, diff)
		}
	}
	if len(seen) < 10 {
		t.Errorf("20 snapshots under churn at only %d revisions", len(seen))
	}
}

// setupChurn makes a namespace, three nodes and the Deployments of
// snapshot-churn.yaml, Ready; it returns the namespace and a node to
// snapshot with --node.
func setupChurn(ctx context.Context, t *testing.T) (namespace, node string) {
	t.Helper()
	ns, err := cp.Namespace(ctx, "snap-churn")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, ns, ns+"-a", ns+"-b", ns+"-c"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(scenarios, "snapshot-churn.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Apply(ctx, data, map[string]string{"NAMESPACE": ns, "POOL": ns}); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, ns, "", 12); err != nil {
		t.Fatal(err)
	}
	return ns, ns + "-a"
}

// churn changes the namespace 20 times a second until ctx ends: it scales
// one of the Deployments to between 1 and 5 replicas, or relabels one of
// their pods. Changes that fail (a pod gone meanwhile) are not counted.
func churn(ctx context.Context, c kubernetes.Interface, ns string, changes *atomic.Int64) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var err error
		if i%2 == 0 {
			patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+(i/8)%5)
			_, err = c.AppsV1().Deployments(ns).Patch(ctx, "churn-"+string(rune('a'+(i/2)%4)), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		} else {
			pods, lerr := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if lerr != nil || len(pods.Items) == 0 {
				continue
			}
			p := pods.Items[i%len(pods.Items)]
			patch := fmt.Sprintf(`{"metadata":{"labels":{"churn":"%d"}}}`, i)
			_, err = c.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
		if err == nil {
			changes.Add(1)
		}
	}
}

// relist reads every kind a snapshot holds at exactly revision rv, with the
// typed client, independently of package take.
func relist(ctx context.Context, c kubernetes.Interface, rv string) (*snapshot.Snapshot, error) {
	at := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	s := snapshot.New()
	var first error
	ok := func(err error) bool {
		if err != nil && first == nil {
			first = err
		}
		return err == nil
	}
	if l, err := c.CoreV1().Nodes().List(ctx, at); ok(err) {
		s.Nodes = l.Items
	}
	if l, err := c.CoreV1().Pods("").List(ctx, at); ok(err) {
		s.Pods = l.Items
	}
	if l, err := c.AppsV1().ReplicaSets("").List(ctx, at); ok(err) {
		s.ReplicaSets = l.Items
	}
	if l, err := c.AppsV1().Deployments("").List(ctx, at); ok(err) {
		s.Deployments = l.Items
	}
	if l, err := c.AppsV1().StatefulSets("").List(ctx, at); ok(err) {
		s.StatefulSets = l.Items
	}
	if l, err := c.AppsV1().DaemonSets("").List(ctx, at); ok(err) {
		s.DaemonSets = l.Items
	}
	if l, err := c.BatchV1().Jobs("").List(ctx, at); ok(err) {
		s.Jobs = l.Items
	}
	if l, err := c.BatchV1().CronJobs("").List(ctx, at); ok(err) {
		s.CronJobs = l.Items
	}
	if l, err := c.PolicyV1().PodDisruptionBudgets("").List(ctx, at); ok(err) {
		s.PodDisruptionBudgets = l.Items
	}
	if l, err := c.CoreV1().PersistentVolumeClaims("").List(ctx, at); ok(err) {
		s.PersistentVolumeClaims = l.Items
	}
	if l, err := c.CoreV1().PersistentVolumes().List(ctx, at); ok(err) {
		s.PersistentVolumes = l.Items
	}
	if l, err := c.StorageV1().StorageClasses().List(ctx, at); ok(err) {
		s.StorageClasses = l.Items
	}
	if l, err := c.AutoscalingV2().HorizontalPodAutoscalers("").List(ctx, at); ok(err) {
		s.HorizontalPodAutoscalers = l.Items
	}
	if l, err := c.StorageV1().VolumeAttachments().List(ctx, at); ok(err) {
		s.VolumeAttachments = l.Items
	}
	if l, err := c.StorageV1().CSIDrivers().List(ctx, at); ok(err) {
		s.CSIDrivers = l.Items
	}
	if l, err := c.StorageV1().CSINodes().List(ctx, at); ok(err) {
		s.CSINodes = l.Items
	}
	if l, err := c.CoreV1().Namespaces().List(ctx, at); ok(err) {
		s.Namespaces = l.Items
	}
	if first != nil {
		return nil, first
	}
	return s, nil
}

// objects is every object of s as JSON, by list and namespace/name, without
// managedFields and the last-applied annotation (as k8s-snapshot writes
// them without --full) and without the type fields lists leave empty.
func objects(s *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Slice {
			continue
		}
		list := v.Type().Field(i).Tag.Get("json")
		for j := range f.Len() {
			item := f.Index(j).Addr().Interface()
			m := item.(metav1.Object)
			m.SetManagedFields(nil)
			if a := m.GetAnnotations(); a != nil {
				delete(a, take.LastAppliedAnnotation)
				if len(a) == 0 {
					m.SetAnnotations(nil)
				}
			}
			b, err := json.Marshal(item)
			if err != nil {
				panic(err)
			}
			var generic map[string]any
			if err := json.Unmarshal(b, &generic); err != nil {
				panic(err)
			}
			delete(generic, "kind")
			delete(generic, "apiVersion")
			b, _ = json.Marshal(generic)
			out[list+" "+m.GetNamespace()+"/"+m.GetName()] = string(b)
		}
	}
	return out
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestCompaction forces 410 Expired for real: a proxy in front of the API
// server compacts etcd past the snapshot's revision R when the first list
// at exactly R arrives, waits until the API server answers that list 410,
// and forwards it. Compacted once, the snapshot starts again at a new
// revision and succeeds; compacted every time, it gives up after 3
// restarts: exit 1, nothing on stdout.
func TestCompaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	_, node := setupChurn(ctx, t)

	tests := map[string]struct {
		compactions int // -1: every revision
		wantCode    int
		wantStderr  []string
	}{
		"compacted once": {1, 0, []string{
			`^k8s-snapshot: [a-z]+( \(.*\))?: revision [0-9]+ expired \(410 Gone, compacted by the API server\), starting the snapshot again at a new revision \(restart 1 of 3\)$`,
		}},
		"compacted every time": {-1, 1, []string{
			`restart 3 of 3\)$`,
			`^k8s-snapshot: list [a-z]+( \(.*\))?: 410 Gone: the API server compacted the snapshot's revision away 4 times in a row, last [0-9]+ \(.*\)$`,
		}},
	}
	for test, tc := range tests {
		t.Run(test, func(t *testing.T) {
			p := newCompactingProxy(t, tc.compactions)
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			if err := writeKubeconfig(kc, p.url, "", nil); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			argv := []string{name, "--kubeconfig", kc, "--node", node, "--timeout", "5m"}
			code := command.Run(ctx, app(), argv, strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			for _, re := range tc.wantStderr {
				if !matchLine(re, stderr.String()) {
					t.Errorf("stderr lacks a line matching %s:\n%s", re, stderr.String())
				}
			}
			compacted := p.compacted()
			t.Logf("compacted to %v; stderr:\n%s", compacted, stderr.String())
			if tc.wantCode != 0 {
				if stdout.Len() != 0 {
					t.Errorf("exit %d with %d bytes on stdout", code, stdout.Len())
				}
				if len(compacted) != take.MaxRestarts+1 {
					t.Errorf("%d compactions, want %d", len(compacted), take.MaxRestarts+1)
				}
				return
			}
			var s snapshot.Snapshot
			if err := document.Unmarshal(stdout.Bytes(), snapshot.Kind, &s); err != nil {
				t.Fatal(err)
			}
			rv, err := strconv.ParseInt(s.Metadata.ResourceVersion, 10, 64)
			if err != nil || !s.Metadata.Consistent || len(compacted) != 1 || rv < compacted[0] {
				t.Errorf("snapshot at %q (consistent %v) after compactions to %v: want one compaction and a revision after it", s.Metadata.ResourceVersion, s.Metadata.Consistent, compacted)
			}
		})
	}
}

func matchLine(re, text string) bool {
	return regexp.MustCompile("(?m)" + re).MatchString(text)
}

// compactingProxy forwards to the control plane as the admin. The first
// list at exactly a revision it has not seen yet makes it compact etcd past
// that revision (while it has compactions left) and hold the list until
// the API server answers it 410.
type compactingProxy struct {
	url   string
	mu    sync.Mutex
	left  int
	seen  map[string]bool
	revs  []int64
	probe http.RoundTripper
}

func (p *compactingProxy) compacted() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.revs...)
}

func newCompactingProxy(t *testing.T, compactions int) *compactingProxy {
	t.Helper()
	cfg := cp.Config(controlplane.Admin)
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &compactingProxy{left: compactions, seen: map[string]bool{}, probe: transport}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	proxy.ErrorLog = log.New(io.Discard, "", 0) // lists the snapshot gave up on
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if rv := q.Get("resourceVersion"); q.Get("resourceVersionMatch") == string(metav1.ResourceVersionMatchExact) && rv != "" {
			p.mu.Lock()
			compact := !p.seen[rv] && p.left != 0
			if compact {
				p.seen[rv] = true
				p.left--
			}
			p.mu.Unlock()
			if compact {
				if err := p.compact(r.Context(), target.String()+r.URL.RequestURI()); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// compact compacts etcd and polls the list at u until the API server
// answers it 410 (its watch cache notices a compaction within 15 s).
func (p *compactingProxy) compact(ctx context.Context, u string) error {
	// Once asked, the compaction completes and is counted even if the
	// snapshot has given up on this list meanwhile.
	rev, err := cp.CompactEtcd(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.revs = append(p.revs, rev)
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		res, err := p.probe.RoundTrip(req)
		if err != nil {
			return fmt.Errorf("probe after compacting to %d: %w", rev, err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusGone {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API server still answers %s after compacting to %d: %w", res.Status, rev, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
