package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/deploytest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { os.Exit(controlplane.Main(m, controlplane.Options{}, &cp)) }

const (
	namespace = "maintd-system"
	account   = "system:serviceaccount:maintd-system:maintd"
)

// TestAlertRules checks alerts.yaml with promtool and runs its unit tests.
func TestAlertRules(t *testing.T) { deploytest.AlertRules(t, ".", "alerts.yaml", "alerts_test.yaml") }

// dockerfile is what the tests read of the Dockerfile.
type dockerfile struct {
	froms, copies []string
	user, workdir string
	args          map[string]string
	build         string // the RUN line with `go build`, continuations joined
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := dockerfile{args: map[string]string{}}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))
		switch f[0] {
		case "FROM":
			df.froms = append(df.froms, f[1])
		case "COPY":
			if !strings.HasPrefix(f[1], "--from") {
				df.copies = append(df.copies, strings.TrimSuffix(f[1], "/"))
			}
		case "USER":
			df.user = f[1]
		case "WORKDIR":
			if df.build == "" {
				df.workdir = f[1]
			}
		case "ARG":
			k, v, _ := strings.Cut(f[1], "=")
			df.args[k] = v
		case "RUN":
			if strings.Contains(rest, "go build") {
				df.build = rest
			}
		}
	}
	return df
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

const testVersion = "v0.0.0-dockerfile-test"

// dockerBuild runs the Dockerfile's build line as written, in the
// repository (the build stage's /src), writing into a temporary /out, with
// VERSION set; the binary is shared by the tests of this package.
func dockerBuild(t *testing.T, df dockerfile) string {
	t.Helper()
	binOnce.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			binErr = err
			return
		}
		out, err := os.MkdirTemp("", "maintd-dockerfile-")
		if err != nil {
			binErr = err
			return
		}
		if !strings.HasPrefix(df.workdir, "/src") || !strings.Contains(df.build, "/out/maintd") {
			binErr = fmt.Errorf("build line %q in WORKDIR %q: want a build in /src into /out/maintd", df.build, df.workdir)
			return
		}
		line := strings.ReplaceAll(df.build, "/out/", out+"/")
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = filepath.Join(root, strings.TrimPrefix(df.workdir, "/src"))
		cmd.Env = append(os.Environ(), "VERSION="+testVersion)
		if b, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%s: %v\n%s", line, err, b)
			return
		}
		binPath = filepath.Join(out, "maintd")
	})
	if binErr != nil {
		t.Fatalf("the Dockerfile's build: %v", binErr)
	}
	return binPath
}

// TestDockerfile: a build stage and a distroless (or empty) final stage; a
// numeric non-root USER, the Deployment's; every module the build needs is
// copied in; the build line, run as written, makes a static binary that
// runs and reports the version it was given.
func TestDockerfile(t *testing.T) {
	df := readDockerfile(t)
	if len(df.froms) < 2 || !(df.froms[len(df.froms)-1] == "scratch" || strings.HasPrefix(df.froms[len(df.froms)-1], "gcr.io/distroless/static")) {
		t.Errorf("stages %v: want a build stage and a final distroless/static or scratch", df.froms)
	}
	uid, _, _ := strings.Cut(df.user, ":")
	if !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(uid) {
		t.Errorf("USER %q: want a numeric non-root user", df.user)
	}
	var d appsv1.Deployment
	readObject(t, "deployment.yaml", &d)
	if sc := d.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsUser == nil || fmt.Sprint(*sc.RunAsUser) != uid {
		t.Errorf("the Deployment's runAsUser is not the Dockerfile's USER %s", uid)
	}
	// The replace directives of go.mod name the modules the build needs.
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`=> \.\./(\S+)`).FindAllStringSubmatch(string(mod), -1) {
		if !slices.Contains(df.copies, m[1]) {
			t.Errorf("the Dockerfile does not copy %s, which go.mod replaces", m[1])
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOWORK=off", "-trimpath"} {
		if !strings.Contains(df.build, want) {
			t.Errorf("build line %q lacks %s", df.build, want)
		}
	}

	bin := dockerBuild(t, df)
	if err := deploytest.Static(bin); err != nil {
		t.Error(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), testVersion) {
		t.Errorf("maintd --version: %v, %q: want %s", err, out, testVersion)
	}
}

func readObject(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// kubectl runs cp's kubectl as admin and fails the test on an error or on
// anything written to stderr (a warning included).
func kubectl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(cp.BinDir(), "kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig(controlplane.Admin)}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String()
}

// TestKustomization: the kustomization renders without a warning, and the
// Deployment has what it promises.
func TestKustomization(t *testing.T) {
	out := kubectl(t, t.Context(), "kustomize", ".")
	kinds := map[string]int{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		kinds[u.GetKind()]++
		if u.GetLabels()["app.kubernetes.io/part-of"] != "sentinel" {
			t.Errorf("%s %s lacks the part-of label", u.GetKind(), u.GetName())
		}
	}
	want := map[string]int{"CustomResourceDefinition": 3, "Namespace": 1, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 3, "RoleBinding": 3, "Deployment": 1, "PodDisruptionBudget": 1, "Service": 1,
		"ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}

	var d appsv1.Deployment
	readObject(t, "deployment.yaml", &d)
	spec := d.Spec.Template.Spec
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	for _, arg := range []string{"--leader-elect", "--metrics-address=:8080"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %v lack %s", c.Args, arg)
		}
	}
	psc, sc := spec.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
		t.Error("the pod does not require a non-root user")
	case sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("the root filesystem is writable")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation is allowed")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want all dropped", sc.Capabilities)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
	}
	for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe for %s: %+v", path, probe)
		}
	}
	aff := spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity %+v: want the replicas required on different nodes", aff)
	}
}

// TestInCluster applies the kustomization to the local control plane with
// server-side apply, twice, then checks what runs: the replicas on two
// nodes, the ServiceAccount's privileges, the binary of the Dockerfile with
// that account's token, and kubectl's view of a plan.
func TestInCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	admin := cp.Clientset(controlplane.Admin)
	if err := cp.CreateNodes(ctx, "deploy", "deploy-1"); err != nil {
		t.Fatal(err)
	}

	t.Run("apply twice", func(t *testing.T) {
		first := kubectl(t, ctx, "apply", "-k", ".", "--server-side")
		waitCRDs(t, ctx)
		before := versions(t, ctx)
		second := kubectl(t, ctx, "apply", "-k", ".", "--server-side")
		if first != second {
			t.Errorf("second apply printed\n%s\nthe first\n%s", second, first)
		}
		if n := strings.Count(second, "serverside-applied"); n != 22 {
			t.Errorf("%d objects applied, want 22:\n%s", n, second)
		}
		if diff := cmp.Diff(before, versions(t, ctx)); diff != "" {
			t.Errorf("the second apply changed objects (-before +after):\n%s", diff)
		}
	})

	t.Run("replicas on two nodes", func(t *testing.T) {
		// One node: one replica runs, the other cannot share its node.
		waitPods(t, ctx, admin, func(p []corev1.Pod) bool {
			return len(p) == 2 && scheduled(p) == 1 && unschedulable(p) == 1
		})
		if err := cp.CreateNodes(ctx, "deploy", "deploy-2"); err != nil {
			t.Fatal(err)
		}
		pods := waitPods(t, ctx, admin, func(p []corev1.Pod) bool { return len(p) == 2 && scheduled(p) == 2 })
		if pods[0].Spec.NodeName == pods[1].Spec.NodeName {
			t.Errorf("both replicas on %s", pods[0].Spec.NodeName)
		}
	})

	t.Run("least privilege", func(t *testing.T) { leastPrivilege(t, ctx, admin) })
	t.Run("break-glass", func(t *testing.T) { breakglassInCluster(t, ctx, admin) })

	t.Run("the Dockerfile's binary with the ServiceAccount", func(t *testing.T) {
		bin := dockerBuild(t, readDockerfile(t))
		kc, err := cp.TokenKubeconfig(ctx, namespace, "maintd")
		if err != nil {
			t.Fatal(err)
		}
		m := startBinary(t, ctx, bin, "--kubeconfig", kc, "--leader-elect", "--leader-elect-lease-duration", "4s", "--metrics-address", "127.0.0.1:0")
		m.scrapeUntil(t, ctx, "maintd_leader 1")

		// A plan for a node that does not exist: maintd, with only the
		// shipped RBAC, blocks it; kubectl shows it in the printer columns.
		// Its requester is admin, as the shipped admission policies want.
		mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
		if err != nil {
			t.Fatal(err)
		}
		plans := mc.MaintenancePlans()
		p := &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: "deploy-test", Annotations: map[string]string{createdBy: string(controlplane.Admin)}}, Spec: api.MaintenancePlanSpec{NodeName: "absent-node", AllowAllWorkloads: true}}
		if _, err := plans.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = poll(ctx, func() bool {
			got, err := plans.Get(ctx, p.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == api.Blocked && got.Status.Reason == api.NodeNotFound
		})
		if err != nil {
			t.Fatalf("plan %s not Blocked/node-not-found: %v", p.Name, err)
		}
		checkMetrics(t, ctx, m.scrapeUntil(t, ctx, `maintd_plan_phase{node="absent-node",phase="Blocked",plan="deploy-test",reason="node-not-found"} 1`))
		lines := strings.Split(strings.TrimSpace(kubectl(t, ctx, "get", "mp", p.Name)), "\n")
		header := []string{"NAME", "NODE", "PHASE", "REASON", "EVICTED", "TOTAL", "ETA", "AGE"}
		if len(lines) != 2 || !slices.Equal(strings.Fields(lines[0]), header) || !slices.Equal(strings.Fields(lines[1])[:4], []string{p.Name, "absent-node", "Blocked", "node-not-found"}) {
			t.Errorf("kubectl get mp:\n%s\nwant columns %v", strings.Join(lines, "\n"), header)
		}
		m.stop(t)
		if err := plans.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})

	t.Run("kubectl explain", func(t *testing.T) {
		// The parts of the CRDs read here: every spec field of each kind
		// has a description that kubectl explain shows.
		type crd struct {
			Spec struct {
				Names    struct{ Singular string }
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema struct {
							Properties map[string]struct {
								Properties map[string]struct{ Description string }
							}
						} `json:"openAPIV3Schema"`
					}
				}
			}
		}
		data, err := os.ReadFile("crd.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var c crd
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			if err := yaml.Unmarshal([]byte(doc), &c); err != nil || len(c.Spec.Versions) != 1 {
				t.Fatalf("crd.yaml: %v, %d versions", err, len(c.Spec.Versions))
			}
			kind := c.Spec.Names.Singular
			kinds = append(kinds, kind)
			explain := strings.Join(strings.Fields(kubectl(t, ctx, "explain", kind+".spec")), " ")
			props := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
			if len(props) == 0 {
				t.Fatalf("crd.yaml: %s has no spec properties", kind)
			}
			for name, prop := range props {
				desc := strings.Join(strings.Fields(prop.Description), " ")
				if desc == "" {
					t.Errorf("%s spec.%s has no description (a Go doc comment)", kind, name)
					continue
				}
				if first, _, _ := strings.Cut(desc, ". "); !strings.Contains(explain, first) {
					t.Errorf("kubectl explain %s.spec lacks spec.%s's doc comment %q", kind, name, first)
				}
			}
		}
		if want := []string{"maintenancecampaign", "maintenanceoverride", "maintenanceplan"}; !slices.Equal(kinds, want) {
			t.Errorf("crd.yaml defines %v, want %v", kinds, want)
		}
	})
}

// binary is a maintd process of the Dockerfile's build.
type binary struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

func (b *binary) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.Write(p)
}

func (b *binary) logged() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

func startBinary(t *testing.T, ctx context.Context, bin string, args ...string) *binary {
	t.Helper()
	b := &binary{done: make(chan error, 1)}
	b.cmd = exec.Command(bin, args...)
	b.cmd.Stdout, b.cmd.Stderr = b, b
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("maintd log:\n%s", b.logged())
		}
	})
	return b
}

// scrapeUntil reads the metrics address from the log, then scrapes
// /metrics until it has the line want and /readyz answers 200.
func (b *binary) scrapeUntil(t *testing.T, ctx context.Context, want string) []byte {
	t.Helper()
	addr := regexp.MustCompile(`serving /metrics.* address=(\S+)`)
	var body []byte
	err := poll(ctx, func() bool {
		m := addr.FindStringSubmatch(b.logged())
		if m == nil {
			return false
		}
		ready, err := http.Get("http://" + m[1] + "/readyz")
		if err != nil {
			return false
		}
		ready.Body.Close()
		res, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, _ = io.ReadAll(res.Body)
		return ready.StatusCode == http.StatusOK && slices.Contains(strings.Split(string(body), "\n"), want)
	})
	if err != nil {
		t.Fatalf("/metrics never had %q and /readyz 200: %v", want, err)
	}
	return body
}

// stop sends SIGTERM and wants exit 0.
func (b *binary) stop(t *testing.T) {
	t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-b.done:
		if err != nil {
			t.Errorf("maintd after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("maintd did not exit within 20 s of SIGTERM")
	}
}

// checkMetrics: promtool check metrics finds nothing to say.
func checkMetrics(t *testing.T, ctx context.Context, exposition []byte) {
	t.Helper()
	cmd := exec.CommandContext(ctx, deploytest.LookPath(t, "promtool"), "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, name := range []string{"maintd_plans", "maintd_leader", "maintd_api_requests_total", "maintd_workqueue_depth", "go_goroutines", "go_sched_latencies_seconds", "process_resident_memory_bytes"} {
		if !bytes.Contains(exposition, []byte("# TYPE "+name+" ")) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// versions are the resourceVersions of the applied objects that nothing
// but an apply changes, and the generations of those a controller updates.
func versions(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	var list struct {
		Items []unstructured.Unstructured `json:"items"`
	}
	if err := json.Unmarshal([]byte(kubectl(t, ctx, "get", "-k", ".", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, u := range list.Items {
		key := u.GetKind() + "/" + u.GetName()
		switch u.GetKind() {
		case "Deployment", "PodDisruptionBudget", "CustomResourceDefinition", "ValidatingAdmissionPolicy":
			out[key] = fmt.Sprintf("generation %d", u.GetGeneration())
		default:
			out[key] = "resourceVersion " + u.GetResourceVersion()
		}
	}
	return out
}

func waitPods(t *testing.T, ctx context.Context, cs kubernetes.Interface, ok func([]corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := poll(ctx, func() bool {
		list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=maintd"})
		if err != nil {
			return false
		}
		pods = list.Items
		return ok(pods)
	})
	if err != nil {
		var where []string
		for _, p := range pods {
			where = append(where, p.Name+" on "+p.Spec.NodeName+" "+string(p.Status.Phase))
		}
		t.Fatalf("maintd pods: %v", where)
	}
	return pods
}

func scheduled(pods []corev1.Pod) (n int) {
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

func unschedulable(pods []corev1.Pod) (n int) {
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				n++
			}
		}
	}
	return n
}

// poll checks ok every 50 ms until it holds or ctx ends.
func poll(ctx context.Context, ok func() bool) error {
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return ok(), nil })
}
