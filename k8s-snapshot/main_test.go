package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/scripttest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	scripttest.MainWithControlPlane(m, &cp, map[string]func(){
		name: func() { os.Exit(command.Main(app())) },
	})
}

// scenarios is the shared directory of cluster scenarios.
const scenarios = "../testdata/scenarios"

// TestScript runs testdata/script/*.txtar against the control plane. Each
// script gets its own namespaces (NAMESPACE, NAMESPACE2, NAMESPACE3) and a
// node pool POOL named after the script; KUBECONFIG is the admin's.
// UPDATE=1 rewrites the golden files.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			if err := scripttest.SetRepo(env); err != nil {
				return err
			}
			script := strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")
			env.Setenv("KUBECONFIG", cp.Kubeconfig(controlplane.Admin))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("POOL", strings.ReplaceAll(script, "_", "-"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, v := range []string{"NAMESPACE", "NAMESPACE2", "NAMESPACE3"} {
				ns, err := cp.Namespace(ctx, "snap")
				if err != nil {
					return err
				}
				env.Setenv(v, ns)
			}
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits":      scripttest.Exits,
			"nodes":      cmdNodes,
			"apply":      cmdApply,
			"settle":     cmdSettle,
			"normalise":  cmdNormalise,
			"summary":    cmdSummary,
			"kubeconfig": cmdKubeconfig,
		},
	})
}

// scriptVars are the variables scenario manifests may use.
func scriptVars(ts *testscript.TestScript) map[string]string {
	vars := map[string]string{}
	for _, v := range []string{"NAMESPACE", "NAMESPACE2", "NAMESPACE3", "POOL"} {
		vars[v] = ts.Getenv(v)
	}
	return vars
}

func scriptContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}

// nodes NAME...: creates kwok nodes in $POOL and waits until they are Ready.
func cmdNodes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nodes NAME...")
	}
	ctx, cancel := scriptContext()
	defer cancel()
	ts.Check(cp.CreateNodes(ctx, ts.Getenv("POOL"), args...))
}

// apply FILE: server-side applies testdata/scenarios/FILE with the script's
// NAMESPACE, NAMESPACE2, NAMESPACE3 and POOL.
func cmdApply(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: apply SCENARIO.yaml")
	}
	data, err := os.ReadFile(filepath.Join(scenarios, args[0]))
	ts.Check(err)
	ctx, cancel := scriptContext()
	defer cancel()
	ts.Check(cp.Apply(ctx, data, scriptVars(ts)))
}

// settle: waits until everything in the script's namespaces is at rest:
// pods Ready, workloads' and PDBs' status caught up, claims Bound. Then a
// snapshot is the same every run.
func cmdSettle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: settle")
	}
	ctx, cancel := scriptContext()
	defer cancel()
	c := cp.Clientset(controlplane.Admin)
	var waiting string
	for {
		waiting = ""
		for _, v := range []string{"NAMESPACE", "NAMESPACE2", "NAMESPACE3"} {
			if w := unsettled(ctx, c, ts.Getenv(v)); w != "" {
				waiting = w
				break
			}
		}
		if waiting == "" {
			return
		}
		select {
		case <-ctx.Done():
			ts.Fatalf("not settled: %s", waiting)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// unsettled names the first object of namespace not at rest, "" if none.
func unsettled(ctx context.Context, c kubernetes.Interface, ns string) string {
	all := metav1.ListOptions{}
	pods, err := c.CoreV1().Pods(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.DeletionTimestamp != nil || !controlplane.PodReady(p) {
			return "pod " + p.Name
		}
	}
	deps, err := c.AppsV1().Deployments(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for _, d := range deps.Items {
		st, want := d.Status, *d.Spec.Replicas
		progressed := slices.ContainsFunc(st.Conditions, func(c appsv1.DeploymentCondition) bool {
			return c.Type == appsv1.DeploymentProgressing && c.Reason == "NewReplicaSetAvailable"
		})
		if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want ||
			st.ReadyReplicas != want || st.AvailableReplicas != want || !progressed {
			return "deployment " + d.Name
		}
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for _, rs := range rss.Items {
		st, want := rs.Status, *rs.Spec.Replicas
		if st.ObservedGeneration < rs.Generation || st.Replicas != want || st.ReadyReplicas != want ||
			st.AvailableReplicas != want || st.FullyLabeledReplicas != want {
			return "replicaset " + rs.Name
		}
	}
	dss, err := c.AppsV1().DaemonSets(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for _, ds := range dss.Items {
		st := ds.Status
		if st.ObservedGeneration < ds.Generation || st.DesiredNumberScheduled == 0 || st.CurrentNumberScheduled != st.DesiredNumberScheduled ||
			st.NumberReady != st.DesiredNumberScheduled || st.NumberAvailable != st.DesiredNumberScheduled ||
			st.UpdatedNumberScheduled != st.DesiredNumberScheduled || st.NumberMisscheduled != 0 {
			return "daemonset " + ds.Name
		}
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for _, pdb := range pdbs.Items {
		st := pdb.Status
		if st.ObservedGeneration < pdb.Generation || st.ExpectedPods == 0 || st.CurrentHealthy != st.ExpectedPods || len(st.Conditions) == 0 {
			return "poddisruptionbudget " + pdb.Name
		}
	}
	pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, all)
	if err != nil {
		return err.Error()
	}
	for _, pvc := range pvcs.Items {
		if pvc.Spec.VolumeName != "" && pvc.Status.Phase != corev1.ClaimBound {
			return "persistentvolumeclaim " + pvc.Name
		}
	}
	return ""
}

var (
	uidPattern  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	portPattern = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	ipPattern   = regexp.MustCompile(`\b10\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
	// the projected ServiceAccount token volume has a generated name
	tokenVolumePattern = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
)

// placeholderTime stands for every timestamp in a normalised snapshot.
const placeholderTime = "2000-01-01T00:00:00Z"

// normalised reads a Snapshot (JSON or YAML) and replaces what changes from
// run to run: the script's namespaces and pool by ${NAMESPACE}... and
// ${POOL}, uids by UID, timestamps by placeholderTime, resourceVersions by RV, ports by
// PORT, pod IPs by IP, generated name suffixes by *. Lists are sorted.
func normalised(ts *testscript.TestScript, file string) *snapshot.Snapshot {
	text := ts.ReadFile(file)
	for _, v := range []string{"NAMESPACE3", "NAMESPACE2", "NAMESPACE", "POOL"} {
		text = strings.ReplaceAll(text, ts.Getenv(v), "${"+v+"}")
	}
	text = uidPattern.ReplaceAllString(text, "UID")
	text = timePattern.ReplaceAllString(text, placeholderTime)
	text = portPattern.ReplaceAllString(text, "$1:PORT")
	text = ipPattern.ReplaceAllString(text, "IP")
	text = tokenVolumePattern.ReplaceAllString(text, "kube-api-access-*")
	var s snapshot.Snapshot
	if err := document.Unmarshal([]byte(text), snapshot.Kind, &s); err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	if s.Metadata.ResourceVersion != "" {
		s.Metadata.ResourceVersion = "RV"
	}
	for k := range s.Metadata.ResourceVersions {
		s.Metadata.ResourceVersions[k] = "RV"
	}
	norm := func(m metav1.Object) {
		m.SetResourceVersion("RV")
		if g := m.GetGenerateName(); g != "" {
			m.SetName(g + "*")
		}
	}
	normaliseList(s.Nodes, norm)
	normaliseList(s.Pods, norm)
	normaliseList(s.ReplicaSets, norm)
	normaliseList(s.Deployments, norm)
	normaliseList(s.StatefulSets, norm)
	normaliseList(s.DaemonSets, norm)
	normaliseList(s.Jobs, norm)
	normaliseList(s.CronJobs, norm)
	normaliseList(s.PodDisruptionBudgets, norm)
	normaliseList(s.PersistentVolumeClaims, norm)
	normaliseList(s.PersistentVolumes, norm)
	normaliseList(s.StorageClasses, norm)
	normaliseList(s.HorizontalPodAutoscalers, norm)
	normaliseList(s.VolumeAttachments, norm)
	normaliseList(s.CSIDrivers, norm)
	normaliseList(s.CSINodes, norm)
	normaliseList(s.Namespaces, norm)
	for i := range s.PersistentVolumes {
		if r := s.PersistentVolumes[i].Spec.ClaimRef; r != nil {
			r.ResourceVersion = "RV"
		}
	}
	return &s
}

// normaliseList applies f to every object and sorts the list by its JSON.
func normaliseList[T any, PT interface {
	*T
	metav1.Object
}](items []T, f func(metav1.Object)) {
	for i := range items {
		f(PT(&items[i]))
	}
	key := func(v *T) string { b, _ := json.Marshal(v); return string(b) }
	slices.SortStableFunc(items, func(a, b T) int { return strings.Compare(key(&a), key(&b)) })
}

// normalise FILE: prints the snapshot in FILE (JSON or YAML) normalised,
// as JSON.
func cmdNormalise(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: normalise FILE")
	}
	ts.Check(snapshot.Encode(ts.Stdout(), document.JSON, normalised(ts, args[0])))
}

// summary FILE: prints one line per object of the snapshot in FILE that
// belongs to the script (its namespaces, or a cluster-scoped name starting
// with $POOL), normalised: "kind namespace/name", pods with their node.
func cmdSummary(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: summary FILE")
	}
	s := normalised(ts, args[0])
	var lines []string
	add := func(kind string, m metav1.Object, extra string) {
		ns := m.GetNamespace()
		switch {
		case ns == "" && !strings.HasPrefix(m.GetName(), "${POOL}"):
			return
		case ns != "" && !strings.HasPrefix(ns, "${NAMESPACE"):
			return
		case ns != "":
			ns += "/"
		}
		lines = append(lines, kind+" "+ns+m.GetName()+extra)
	}
	fmt.Fprintf(ts.Stdout(), "scope nodes=%v full=%v version=%s\n", s.Metadata.Scope.Nodes, s.Metadata.Scope.Full, s.Metadata.KubernetesVersion)
	for i := range s.Nodes {
		add("node", &s.Nodes[i], "")
	}
	for i := range s.Pods {
		add("pod", &s.Pods[i], " on "+s.Pods[i].Spec.NodeName)
	}
	summarise(s.ReplicaSets, "replicaset", add)
	summarise(s.Deployments, "deployment", add)
	summarise(s.StatefulSets, "statefulset", add)
	summarise(s.DaemonSets, "daemonset", add)
	summarise(s.Jobs, "job", add)
	summarise(s.CronJobs, "cronjob", add)
	summarise(s.PodDisruptionBudgets, "poddisruptionbudget", add)
	summarise(s.PersistentVolumeClaims, "persistentvolumeclaim", add)
	summarise(s.PersistentVolumes, "persistentvolume", add)
	summarise(s.StorageClasses, "storageclass", add)
	summarise(s.HorizontalPodAutoscalers, "horizontalpodautoscaler", add)
	summarise(s.VolumeAttachments, "volumeattachment", add)
	summarise(s.CSIDrivers, "csidriver", add)
	summarise(s.CSINodes, "csinode", add)
	summarise(s.Namespaces, "namespace", add)
	fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
}

func summarise[T any, PT interface {
	*T
	metav1.Object
}](items []T, kind string, add func(string, metav1.Object, string)) {
	for i := range items {
		add(kind, PT(&items[i]), "")
	}
}

// kubeconfig KIND FILE: writes a kubeconfig to FILE for
//
//	unreachable      a loopback port nobody listens on
//	hang             a server that accepts and never answers
//	badtoken         the control plane with a token it does not know
//	noevict          the noevict user (get/list/watch pods and nodes only)
//	expire-once      a proxy to the control plane that answers 410 to the
//	                 first list request with a continue token
//	expire-always    the same, to every such request
func cmdKubeconfig(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: kubeconfig KIND FILE")
	}
	kind, file := args[0], ts.MkAbs(args[1])
	server, token, ca := "", "", []byte(nil)
	switch kind {
	case "unreachable":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		server = "http://" + l.Addr().String()
		l.Close()
	case "hang":
		server = serve(ts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	case "badtoken":
		server, token, ca = cp.URL(), "not-a-known-token", cp.Config(controlplane.Admin).CAData
	case "noevict":
		data, err := os.ReadFile(cp.Kubeconfig(controlplane.NoEvict))
		ts.Check(err)
		ts.Check(os.WriteFile(file, data, 0o600))
		return
	case "expire-once", "expire-always":
		server = serve(ts, expiringProxy(ts, kind == "expire-always"))
	default:
		ts.Fatalf("unknown kubeconfig kind %q", kind)
	}
	ts.Check(writeKubeconfig(file, server, token, ca))
}

// writeKubeconfig writes a kubeconfig for server, with token and the CA
// certificate ca (both optional), to file.
func writeKubeconfig(file, server, token string, ca []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	return clientcmd.WriteToFile(*cfg, file)
}

// serve runs h on a loopback port until the script ends and returns its URL.
func serve(ts *testscript.TestScript, h http.Handler) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	ts.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
		<-done
	})
	return "http://" + l.Addr().String()
}

// expiringProxy forwards to the control plane as the admin, and answers
// 410 Expired to the first (or every) list request carrying a continue
// token.
func expiringProxy(ts *testscript.TestScript, always bool) http.Handler {
	cfg := cp.Config(controlplane.Admin)
	transport, err := rest.TransportFor(cfg)
	ts.Check(err)
	target, err := url.Parse(cfg.Host)
	ts.Check(err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	var mu sync.Mutex
	expired := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("continue") != "" {
			mu.Lock()
			expire := always || expired == 0
			if expire {
				expired++
			}
			mu.Unlock()
			if expire {
				status := metav1.Status{
					TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
					Status:   metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
					Message: "The provided continue parameter is too old to display a consistent list result.",
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusGone)
				_ = json.NewEncoder(w).Encode(status)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	})
}
