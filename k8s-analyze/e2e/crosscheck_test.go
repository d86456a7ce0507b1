// Package e2e checks k8s-analyze against a real control plane: its
// evictableNow predictions against server-side dry-run evictions, pod by
// pod, and the k8s-snapshot | k8s-analyze pipeline.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/k8s-snapshot/take"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
	"github.com/sentinel-go/sentinel/plumbing/document"
)

var cp *controlplane.ControlPlane

// bin holds the k8s-snapshot and k8s-analyze binaries the script tests run.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "k8s-analyze-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	for _, tool := range []string{"k8s-snapshot", "k8s-analyze"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, tool), ".")
		cmd.Dir = filepath.Join("..", "..", tool)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: build %s: %v\n%s", tool, err, out)
			os.Exit(1)
		}
	}
	code := controlplane.Main(m, controlplane.Options{}, &cp)
	os.RemoveAll(dir)
	os.Exit(code)
}

// scenario is a manifest of testdata/scenarios applied to fresh nodes and a
// fresh namespace, settled: the pods labelled analyze.sentinel.dev/ready are
// Ready and every PDB's status reflects the pods.
type scenario struct {
	namespace, pool string
	nodes           []string
}

// sameDecoded checks, on real objects, that decode.Full reads the JSON of
// snap as the canonical decoder does, and decode.Read into its view.
func sameDecoded(t *testing.T, snap *snapshot.Snapshot) {
	t.Helper()
	var data bytes.Buffer
	if err := snapshot.Encode(&data, document.JSON, snap); err != nil {
		t.Fatal(err)
	}
	got, err := decode.Full(bytes.NewReader(data.Bytes()), 0)
	if err != nil {
		t.Fatalf("decode.Full refuses a real snapshot: %v", err)
	}
	var want snapshot.Snapshot
	if err := document.Unmarshal(data.Bytes(), snapshot.Kind, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Errorf("the canonical decoding (-) and decode.Full (+) differ:\n%s", diff)
	}
	v, err := decode.Read(bytes.NewReader(data.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(view.Of(&want), v); diff != "" {
		t.Errorf("views of the canonical decoding (-) and of decode.Read (+):\n%s", diff)
	}
}

func setup(t *testing.T, ctx context.Context, file string, ready int, countHealthy bool) scenario {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", file))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cp.Namespace(ctx, "analyze")
	if err != nil {
		t.Fatal(err)
	}
	s := scenario{namespace: ns, pool: ns}
	s.nodes = []string{ns + "-1", ns + "-2", ns + "-3"}
	if err := cp.CreateNodes(ctx, s.pool, s.nodes...); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"NAMESPACE": ns, "POOL": s.pool, "NODE1": s.nodes[0], "NODE2": s.nodes[1], "NODE3": s.nodes[2]}
	if err := cp.Apply(ctx, manifest, vars); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitPodsReady(ctx, ns, "analyze.sentinel.dev/ready=true", ready); err != nil {
		t.Fatal(err)
	}
	if err := settled(ctx, cp.Clientset(controlplane.Admin), ns, countHealthy); err != nil {
		t.Fatal(err)
	}
	return s
}

// settled polls until every PDB of namespace has observed its generation
// and, with countHealthy, counts exactly the Ready pods its selector
// matches. (When PDBs overlap, the disruption controller updates only one
// of them on pod events, so their counts may never settle; the Eviction API
// answers 500 before looking at them anyway.)
func settled(ctx context.Context, c kubernetes.Interface, namespace string, countHealthy bool) error {
	var why string
	for {
		why = ""
		pdbs, err := c.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, pdb := range pdbs.Items {
			if !countHealthy {
				if pdb.Status.ObservedGeneration < pdb.Generation {
					why = fmt.Sprintf("PDB %s: observed generation %d of %d", pdb.Name, pdb.Status.ObservedGeneration, pdb.Generation)
				}
				continue
			}
			healthy := int32(0)
			if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
				for _, p := range pods.Items {
					if sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil && controlplane.PodReady(&p) {
						healthy++
					}
				}
			}
			if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.CurrentHealthy != healthy {
				why = fmt.Sprintf("PDB %s: observed generation %d of %d, currentHealthy %d of %d Ready pods",
					pdb.Name, pdb.Status.ObservedGeneration, pdb.Generation, pdb.Status.CurrentHealthy, healthy)
			}
		}
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PDBs did not settle: %s: %w", why, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answer is what the Eviction API said to a dry-run eviction.
type answer struct {
	status  int
	message string // the cause message of a 429, else the status message
}

func dryRunEvict(ctx context.Context, c kubernetes.Interface, namespace, name string) (answer, error) {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: name, Namespace: namespace},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
	}
	var code int
	err := c.CoreV1().RESTClient().Post().
		Namespace(namespace).Resource("pods").Name(name).SubResource("eviction").
		MaxRetries(0).Body(ev).Do(ctx).StatusCode(&code).Error()
	if err == nil {
		return answer{status: code}, nil
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return answer{}, err
	}
	s := st.Status()
	a := answer{status: int(s.Code), message: s.Message}
	if s.Code == 429 && s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				a.message = c.Message
			}
		}
	}
	return a, nil
}

// TestPredictionMatchesEvictionAPI applies each scenario, snapshots its
// nodes with take.Take, predicts every pod with k8s-analyze, then sends
// a server-side dry-run eviction per pod: prediction and answer must agree
// for every pod (dry-run evictions are not cumulative, so pod by pod).
func TestPredictionMatchesEvictionAPI(t *testing.T) {
	tests := map[string]struct {
		file  string
		ready int // pods labelled analyze.sentinel.dev/ready=true
		// overlap: PDBs overlap, their counts need not settle.
		overlap bool
		pods    int      // pods in the namespace, on the scenario's nodes
		rules   []string // every rule that must have decided some pod
		// unready: one pod of each of these apps is made not Ready.
		unready []string
	}{
		"budget":  {"analyze-budget.yaml", 6, false, 7, []string{analyze.RuleBudgetAvailable, analyze.RuleBudgetExhausted, analyze.RulePending, analyze.RuleNoPDB}, nil},
		"overlap": {"analyze-overlap.yaml", 2, true, 2, []string{analyze.RuleMultiplePDBs}, nil},
		"pvc":     {"analyze-pvc.yaml", 1, false, 1, []string{analyze.RuleNoPDB}, nil},
		"unhealthy": {"analyze-unhealthy.yaml", 9, false, 12, []string{analyze.RuleUnhealthyAlwaysAllow, analyze.RuleUnhealthyBudget, analyze.RuleBudgetExhausted, analyze.RulePending},
			[]string{"always", "ifhealthy", "default"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			s := setup(t, ctx, tc.file, tc.ready, !tc.overlap)
			admin := cp.Clientset(controlplane.Admin)
			for _, app := range tc.unready {
				if err := makeUnready(ctx, admin, s.namespace, app); err != nil {
					t.Fatal(err)
				}
			}
			if err := settled(ctx, admin, s.namespace, !tc.overlap); err != nil {
				t.Fatal(err)
			}
			snap, err := takeSnapshot(ctx, s.nodes)
			if err != nil {
				t.Fatal(err)
			}
			report, err := analyze.AnalyzeObjects(snap, analyze.Options{Nodes: s.nodes})
			if err != nil {
				t.Fatal(err)
			}
			sameDecoded(t, snap)
			var rules []string
			checked := 0
			for _, n := range report.Nodes {
				checkNodeGrade(t, n)
				for _, v := range n.Pods {
					if v.Namespace != s.namespace {
						continue
					}
					got, err := dryRunEvict(ctx, admin, v.Namespace, v.Name)
					if err != nil {
						t.Fatalf("dry-run eviction of %s: %v", v.Name, err)
					}
					p := v.EvictableNow
					want := answer{status: p.HTTPStatus}
					if !p.Allowed {
						want.message = p.Message
					}
					if got != want {
						t.Errorf("pod %s on %s: predicted %d %q (rule %s), the Eviction API answered %d %q",
							v.Name, n.Name, want.status, want.message, p.Rule, got.status, got.message)
					}
					checkAction(t, n, v, got)
					rules = append(rules, p.Rule)
					checked++
				}
			}
			if checked != tc.pods {
				t.Errorf("checked %d pods, want %d", checked, tc.pods)
			}
			for _, r := range tc.rules {
				if !slices.Contains(rules, r) {
					t.Errorf("no pod was decided by rule %s (rules seen: %s)", r, strings.Join(rules, ", "))
				}
			}
		})
	}
}

// pdbCodes are the findings about a PDB's budget (subject: the PDB), and
// needs-override, the pod's own, told only of a pod whose never-allowing
// PDB governs its eviction.
var pdbCodes = map[analyze.Code]bool{analyze.PDBZeroSpec: true, analyze.PDBSyncFailed: true, analyze.PDBForbidden: true,
	analyze.PDBExhausted: true, analyze.PDBInsufficientForNode: true, analyze.PDBStale: true, analyze.NeedsOverride: true}

var rank = map[analyze.Severity]int{analyze.Low: 0, analyze.Medium: 1, analyze.High: 2}

func severity(c analyze.Code) analyze.Severity {
	for _, k := range analyze.Checks() {
		if k.Code == c {
			return k.Severity
		}
	}
	return ""
}

// governs reports whether the PDB of p governs the pod's eviction: the API
// consults its budget (uses it, or is refused by it).
func governs(p analyze.Prediction) bool { return p.PDB != "" && (p.UsesBudget || !p.Allowed) }

// checkAction holds a pod's action to CHECKS.md's rule, given got, the
// Eviction API's real answer: a PDB's findings are among the pod's reasons
// only when that PDB governs its eviction; the pod is blocked exactly when
// a reason is high; a pod the API accepts without budget is never blocked
// for its PDB; and its node's risk is at least its worst reason.
func checkAction(t *testing.T, n analyze.Node, v analyze.PodVerdict, got answer) {
	t.Helper()
	p := v.EvictableNow
	worst := analyze.Low
	for _, c := range v.Reasons {
		if pdbCodes[c] && !governs(p) {
			t.Errorf("pod %s: reason %s of a PDB that does not govern its eviction (the API answered %d, rule %s)", v.Name, c, got.status, p.Rule)
		}
		if sev := severity(c); rank[sev] > rank[worst] {
			worst = sev
		}
	}
	want := analyze.Evict
	if worst == analyze.High {
		want = analyze.Block
	}
	if v.Action != want {
		t.Errorf("pod %s: action %s, want %s (reasons %v)", v.Name, v.Action, want, v.Reasons)
	}
	if rank[n.Risk] < rank[worst] {
		t.Errorf("node %s: risk %s below its pod %s's reason of severity %s", n.Name, n.Risk, v.Name, worst)
	}
	if got.status == 201 && !p.UsesBudget && p.PDB != "" && slices.ContainsFunc(v.Reasons, func(c analyze.Code) bool { return pdbCodes[c] }) {
		t.Errorf("pod %s: the API lets it go without budget (rule %s), yet its PDB's findings are its reasons %v", v.Name, p.Rule, v.Reasons)
	}
	if p.Rule == analyze.RulePending && strings.HasPrefix(v.Name, "pend-") && !slices.Contains(v.Reasons, analyze.SingleReplicaNotServing) {
		t.Errorf("pod %s: a Pending single replica without %s (reasons %v)", v.Name, analyze.SingleReplicaNotServing, v.Reasons)
	}
}

// checkNodeGrade: a PDB's budget findings weigh on node n only when the PDB
// governs the eviction of a pod on n; otherwise they are told on its entry.
func checkNodeGrade(t *testing.T, n analyze.Node) {
	t.Helper()
	for _, f := range n.Findings {
		if f.Subject.Kind != "PodDisruptionBudget" || !pdbCodes[f.Code] {
			continue
		}
		if !slices.ContainsFunc(n.Pods, func(v analyze.PodVerdict) bool {
			return v.EvictableNow.PDB == f.Subject.Name && governs(v.EvictableNow)
		}) {
			t.Errorf("node %s: finding %s of PDB %s, which governs the eviction of none of its pods", n.Name, f.Code, f.Subject.Name)
		}
	}
	for _, b := range n.PDBs {
		if len(b.Findings) > 0 && b.PodsUsingBudget > 0 {
			t.Errorf("node %s: PDB %s governs %d pods, yet its findings are told on its entry only", n.Name, b.Name, b.PodsUsingBudget)
		}
	}
}

// makeUnready sets the Ready condition of one Ready pod of app to False, as
// a failing readiness probe would.
func makeUnready(ctx context.Context, c kubernetes.Interface, namespace, app string) error {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !controlplane.PodReady(p) {
			continue
		}
		for j := range p.Status.Conditions {
			if t := p.Status.Conditions[j].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				p.Status.Conditions[j].Status = corev1.ConditionFalse
			}
		}
		_, err := c.CoreV1().Pods(namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}
	return fmt.Errorf("no Ready pod of app %s to make unready", app)
}

// TestStalePDBPrediction freezes PDB status (kube-controller-manager
// stopped), changes a PDB's spec, and checks that the prediction (429, "still
// being processed") matches the API for every pod. Not parallel: it stops
// the shared controller manager.
func TestStalePDBPrediction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := setup(t, ctx, "foundation-pdb.yaml", 0, true)
	if err := cp.WaitPodsReady(ctx, s.namespace, "app=web", 3); err != nil {
		t.Fatal(err)
	}
	if err := settled(ctx, cp.Clientset(controlplane.Admin), s.namespace, true); err != nil {
		t.Fatal(err)
	}
	if err := cp.StopControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.StartControllerManager(context.Background()); err != nil {
			t.Errorf("restart kube-controller-manager: %v", err)
		}
	}()
	admin := cp.Clientset(controlplane.Admin)
	pdb, err := admin.PolicyV1().PodDisruptionBudgets(s.namespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	pdb.Spec.MinAvailable = &one
	if _, err := admin.PolicyV1().PodDisruptionBudgets(s.namespace).Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := takeSnapshot(ctx, s.nodes)
	if err != nil {
		t.Fatal(err)
	}
	report, err := analyze.AnalyzeObjects(snap, analyze.Options{Nodes: s.nodes})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, n := range report.Nodes {
		for _, v := range n.Pods {
			if v.Namespace != s.namespace {
				continue
			}
			got, err := dryRunEvict(ctx, admin, v.Namespace, v.Name)
			if err != nil {
				t.Fatal(err)
			}
			p := v.EvictableNow
			want := answer{status: p.HTTPStatus, message: p.Message}
			if p.Rule != analyze.RulePDBStale || got != want {
				t.Errorf("pod %s: predicted %d %q (rule %s), the Eviction API answered %d %q", v.Name, want.status, want.message, p.Rule, got.status, got.message)
			}
			checked++
		}
		if !slices.ContainsFunc(n.Findings, func(f analyze.Finding) bool { return f.Code == analyze.PDBStale }) {
			t.Errorf("node %s: no pdb-stale finding", n.Name)
		}
	}
	if checked != 3 {
		t.Errorf("checked %d pods, want 3", checked)
	}
}

// takeSnapshot takes a node-scoped snapshot as the viewer, the way
// k8s-snapshot --node does.
func takeSnapshot(ctx context.Context, nodes []string) (*snapshot.Snapshot, error) {
	src, err := take.NewREST(cp.Config(controlplane.Viewer))
	if err != nil {
		return nil, err
	}
	return take.Take(ctx, src, take.Options{Nodes: nodes})
}
