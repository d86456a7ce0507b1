package kubeclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:6443"}
- name: two
  cluster: {server: "https://127.0.0.2:6443"}
users:
- name: u
  user: {token: secret}
contexts:
- name: first
  context: {cluster: one, user: u}
- name: second
  context: {cluster: two, user: u}
current-context: first
`

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		opts     Options
		env      string
		wantHost string
	}{
		"explicit path":      {Options{Kubeconfig: path}, "", "https://127.0.0.1:6443"},
		"explicit context":   {Options{Kubeconfig: path, Context: "second"}, "", "https://127.0.0.2:6443"},
		"KUBECONFIG":         {Options{}, path, "https://127.0.0.1:6443"},
		"KUBECONFIG+context": {Options{Context: "second"}, path, "https://127.0.0.2:6443"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			tc.opts.Tool, tc.opts.Version, tc.opts.QPS, tc.opts.Burst = "snapshot", "v1.2.3", 50, 100
			cfg, err := tc.opts.Config()
			if err != nil {
				t.Fatal(err)
			}
			got := []any{cfg.Host, cfg.UserAgent, cfg.QPS, cfg.Burst, cfg.ContentType, cfg.BearerToken}
			want := []any{tc.wantHost, "sentinel-snapshot/v1.2.3", float32(50), 100, Protobuf, "secret"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		opts Options
		want string
	}{
		"missing file":    {Options{Kubeconfig: filepath.Join(t.TempDir(), "nope")}, "nope"},
		"unknown context": {Options{Kubeconfig: path, Context: "third"}, `context "third" does not exist`},
		"no config":       {Options{}, "kubeconfig"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := tc.opts.Config()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Config() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestJSONKeepsOriginal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Options{Kubeconfig: path}.Config()
	if err != nil {
		t.Fatal(err)
	}
	js := JSON(cfg)
	if js.ContentType != "application/json" || cfg.ContentType != Protobuf {
		t.Errorf("JSON() content types: copy %q, original %q", js.ContentType, cfg.ContentType)
	}
}

func TestForPaths(t *testing.T) {
	cfg := Options{Tool: "test"}.Tune(&rest.Config{Host: "https://127.0.0.1:6443"})
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		gv   schema.GroupVersion
		add  func(*runtime.Scheme) error
		want string
	}{
		"core":    {corev1.SchemeGroupVersion, corev1.AddToScheme, "https://127.0.0.1:6443/api/v1/namespaces/ns/pods"},
		"a group": {appsv1.SchemeGroupVersion, appsv1.AddToScheme, "https://127.0.0.1:6443/apis/apps/v1/namespaces/ns/pods"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, _, err := For(cfg, hc, tc.gv, tc.add)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Get().Namespace("ns").Resource("pods").URL().String(); got != tc.want {
				t.Errorf("URL %s, want %s", got, tc.want)
			}
		})
	}
	if _, _, err := For(cfg, nil, corev1.SchemeGroupVersion, func(*runtime.Scheme) error { return errors.New("no types") }); err == nil {
		t.Error("For with a failing scheme: no error")
	}
}
