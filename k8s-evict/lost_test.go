package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

// loopbackAPI answers on 127.0.0.1 like kube-apiserver would for the one
// pod shop/web-1: GET of the pod is the pod as JSON, anything else a 404
// Status; the eviction POST, once its body is read, goes to post. It
// records every request and the evictions it was sent.
type loopbackAPI struct {
	srv     *httptest.Server
	pod     *corev1.Pod
	getPod  func(w http.ResponseWriter) // instead of the pod, when set
	post    func(w http.ResponseWriter, r *http.Request, release <-chan struct{})
	release chan struct{}

	mu        sync.Mutex
	requests  []string
	evictions []policyv1.Eviction
}

const podPath = "/api/v1/namespaces/shop/pods/web-1"

func newLoopbackAPI(t *testing.T, getPod func(http.ResponseWriter), post func(http.ResponseWriter, *http.Request, <-chan struct{})) *loopbackAPI {
	t.Helper()
	a := &loopbackAPI{
		getPod: getPod,
		post:   post,
		pod: &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64",
				ResourceVersion: "4711", CreationTimestamp: metav1.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Labels: map[string]string{"app": "web"}},
			Spec:   corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		},
		release: make(chan struct{}),
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.stop)
	return a
}

func (a *loopbackAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.Path)
	a.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == podPath:
		if a.getPod != nil {
			a.getPod(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a.pod)
	case r.Method == http.MethodPost && r.URL.Path == podPath+"/eviction":
		var ev policyv1.Eviction
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &ev)
		a.mu.Lock()
		a.evictions = append(a.evictions, ev)
		a.mu.Unlock()
		a.post(w, r, a.release)
	default:
		status(w, http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`)
	}
}

func status(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// stop releases any handler still waiting and closes the server, which
// returns once every handler has returned.
func (a *loopbackAPI) stop() {
	select {
	case <-a.release:
	default:
		close(a.release)
	}
	a.srv.Close()
}

// kubeconfig is a kubeconfig file for the server at url.
func kubeconfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + url + `"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// hangUp closes the connection, the request read, without an answer.
func hangUp(t *testing.T) func(http.ResponseWriter, *http.Request, <-chan struct{}) {
	return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}
}

// neverAnswer holds the request until the client gives up on it (its
// connection closes) or the test ends.
func neverAnswer(_ http.ResponseWriter, r *http.Request, release <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-release:
	}
}

// TestLostAnswer runs k8s-evict against a loopback API server whose answer
// to the eviction never comes: the connection is closed once the request
// is read, or the answer is held past --timeout. The eviction reached the
// server, so it may have been applied: k8s-evict says unknown in an
// EvictionResult on stdout (the pod's namespace, name and UID), names the
// lost answer on stderr and exits 1. It is sent once; nothing is retried.
// A read of the pod that fails, and a server that is not there, stay
// errors with nothing on stdout: no eviction reached a server. (It needs
// no control plane, only the loopback server.)
func TestLostAnswer(t *testing.T) {
	const evictURL = podPath + "/eviction"
	readAgain := ": the eviction may or may not have happened; read the pod again before sending anything again"
	forbidden := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-1\" is forbidden: User \"system:anonymous\" cannot get resource \"pods\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","details":{"name":"web-1","kind":"pods"},"code":403}`
	tests := map[string]struct {
		args     []string
		post     func(http.ResponseWriter, *http.Request, <-chan struct{})
		getPod   func(http.ResponseWriter)
		closed   bool // nothing listens
		want     func(url string) *evict.Result
		wantErr  func(url string) string // stderr when there is no result
		wantReqs []string
		wantUIDs []types.UID // the UID preconditions of the evictions sent
	}{
		"the connection closes before the answer": {
			args: []string{"--uid", "0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64"},
			post: hangUp(t),
			want: func(url string) *evict.Result {
				return &evict.Result{Namespace: "shop", Pod: "web-1", UID: "0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64", Outcome: evict.Unknown, Reason: evict.ReasonAnswerLost,
					Message: `the answer was lost (Post "` + url + evictURL + `": EOF)` + readAgain}
			},
			wantReqs: []string{"GET " + podPath, "POST " + evictURL},
			wantUIDs: []types.UID{"0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64"},
		},
		"no answer before --timeout": {
			// --wait: the pod is read first for its UID, which is in the
			// document; there is nothing to wait for.
			args: []string{"--wait", "1m", "--timeout", "1s"},
			post: neverAnswer,
			want: func(string) *evict.Result {
				return &evict.Result{Namespace: "shop", Pod: "web-1", UID: "0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64", Outcome: evict.Unknown, Reason: evict.ReasonTimeout,
					Message: "no answer before the timeout" + readAgain}
			},
			wantReqs: []string{"GET " + podPath, "POST " + evictURL},
			wantUIDs: []types.UID{"0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64"},
		},
		"the read of the pod fails: no eviction": {
			args:   []string{"--uid", "0f9c8a52-3d1e-4b7a-9c3f-5e2d1a0b7c64"},
			getPod: func(w http.ResponseWriter) { status(w, http.StatusForbidden, forbidden) },
			wantErr: func(string) string {
				return `k8s-evict: read pod shop/web-1: pods "web-1" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "shop"` + "\n"
			},
			wantReqs: []string{"GET " + podPath},
		},
		"nothing listens: not sent": {
			closed: true,
			wantErr: func(url string) string {
				return `k8s-evict: evict pod shop/web-1: Post "` + url + evictURL + `": dial tcp ` + strings.TrimPrefix(url, "http://") + ": connect: connection refused (the eviction was not sent)\n"
			},
		},
	}
	for desc, tc := range tests {
		t.Run(desc, func(t *testing.T) {
			a := newLoopbackAPI(t, tc.getPod, tc.post)
			url := a.srv.URL
			if tc.closed {
				a.stop()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			args := append([]string{name, "--kubeconfig", kubeconfig(t, url), "-n", "shop", "--pod", "web-1"}, tc.args...)
			code := command.Run(ctx, app(), args, strings.NewReader(""), &stdout, &stderr)
			a.stop() // every handler has returned: the records are complete

			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if tc.want != nil {
				want := tc.want(url)
				want.Header = document.NewHeader(evict.Kind)
				var got evict.Result
				if err := document.Unmarshal(stdout.Bytes(), evict.Kind, &got); err != nil {
					t.Fatalf("stdout is not an EvictionResult: %v\n%s\nstderr: %s", err, stdout.String(), stderr.String())
				}
				if diff := cmp.Diff(want, &got); diff != "" {
					t.Errorf("EvictionResult (-want +got):\n%s", diff)
				}
				if w := "k8s-evict: shop/web-1: unknown: " + want.Message + "\n"; stderr.String() != w {
					t.Errorf("stderr\n%q, want\n%q", stderr.String(), w)
				}
			} else {
				if stdout.Len() != 0 {
					t.Errorf("stdout %q, want nothing", stdout.String())
				}
				if w := tc.wantErr(url); stderr.String() != w {
					t.Errorf("stderr\n%q, want\n%q", stderr.String(), w)
				}
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if diff := cmp.Diff(tc.wantReqs, a.requests); diff != "" {
				t.Errorf("requests the server saw (-want +got):\n%s", diff)
			}
			var uids []types.UID
			for _, ev := range a.evictions {
				var uid types.UID
				if ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil && ev.DeleteOptions.Preconditions.UID != nil {
					uid = *ev.DeleteOptions.Preconditions.UID
				}
				uids = append(uids, uid)
			}
			if diff := cmp.Diff(tc.wantUIDs, uids); diff != "" {
				t.Errorf("evictions the server read, by UID precondition (-want +got):\n%s", diff)
			}
		})
	}
}
