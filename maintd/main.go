package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	autoscalingv2client "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/sentinel-go/sentinel/k8s-evict/evict"
	"github.com/sentinel-go/sentinel/k8s-evict/evict/evictrest"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/maintd/metrics"
	"github.com/sentinel-go/sentinel/plumbing/command"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
	"github.com/sentinel-go/sentinel/plumbing/kubeclient"
	"github.com/sentinel-go/sentinel/plumbing/kubeflags"
)

//go:embed doc.go
var doc string

const name = "maintd"

func main() { os.Exit(command.Main(app())) }

func app() *cli.App {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "selector", Aliases: []string{"l"}, Usage: "run only the plans and campaigns with these `LABELS` (e.g. team=infra); a campaign's plans carry its labels"},
		&cli.IntFlag{Name: "max-nodes-in-maintenance", Value: 1, Usage: "how many nodes maintd holds cordoned at once, cluster-wide: plans and campaigns' plans together"},
		&cli.IntFlag{Name: "workers", Value: 4, Usage: "plans reconciled in parallel"},
		&cli.StringFlag{Name: "learned-configmap", Value: controller.DefaultLearned, Usage: "the ConfigMap, `NAMESPACE/NAME`, the forecast's learned exit times and times to Ready are kept in across restarts (read at start, written at most every 30s); \"\" keeps them in memory only"},
		&cli.StringFlag{Name: "pause-configmap", Value: controller.DefaultPauseSwitch, Usage: "the cluster-wide pause switch, `NAMESPACE/NAME`: while this ConfigMap exists no plan cordons, evicts or surges (its data.reason is shown); \"\" turns the switch off"},
		&cli.StringFlag{Name: "metrics-address", Usage: "serve /metrics, /healthz and /readyz on `ADDR` (e.g. :8080; default: off)"},
		&cli.BoolFlag{Name: "profiling", Usage: "also serve Go's profiles (/debug/pprof/) on --metrics-address"},
		&cli.BoolFlag{Name: "leader-elect", Usage: "reconcile only while holding the leader Lease (run several replicas, one acts)"},
		&cli.StringFlag{Name: "leader-elect-namespace", Value: "maintd-system", EnvVars: []string{"POD_NAMESPACE"}, Usage: "`NAMESPACE` of the leader Lease"},
		&cli.StringFlag{Name: "leader-elect-name", Value: "maintd", Usage: "`NAME` of the leader Lease"},
		&cli.DurationFlag{Name: "leader-elect-lease-duration", Value: 15 * time.Second, Usage: "how long a lease lasts without renewal: a dead leader's successor takes over within it"},
	}, kubeflags.Flags()...)
	return command.Tool{
		Name:    name,
		Summary: "run MaintenancePlans and MaintenanceCampaigns: cordon, drain under PodDisruptionBudgets, release",
		Synopsis: []string{
			"maintd [--selector LABELS] [--max-nodes-in-maintenance 1] [--workers 4] [--pause-configmap NS/NAME]",
			"       [--metrics-address ADDR [--profiling]] [--leader-elect [--leader-elect-namespace NS]",
			"       [--leader-elect-name NAME] [--leader-elect-lease-duration 15s]]",
			"       [--kubeconfig FILE] [--context NAME]",
		},
		Doc: doc,
		Examples: []command.Example{
			{Comment: "Reconcile every plan, one node in maintenance at a time, with metrics on :8080", Command: "maintd --metrics-address :8080"},
			{Comment: "Only the plans of one team, two nodes at once", Command: "maintd --selector team=infra --max-nodes-in-maintenance 2"},
			{Comment: "Drain the node that plan.yaml (a MaintenancePlan) names, and watch its phases", Command: "kubectl apply -f plan.yaml && kubectl get mp -w"},
			{Comment: "Release the node once the work is done: uncordon, Completed", Command: `kubectl patch mp node-1-kernel --type merge -p '{"spec":{"release":true}}'`},
		},
		ExitCodes: []command.ExitCode{
			{Code: exitcode.OK, Meaning: "stopped by SIGINT or SIGTERM after the calls in flight"},
			{Code: exitcode.Error, Meaning: "bad flags, no cluster, the CRD missing, or a fatal error while running"},
		},
		Files: []command.File{
			{Path: "docs/maintd.md", What: "installing and operating maintd in a cluster"},
			{Path: "maintd/deploy/kustomization.yaml", What: "the in-cluster install (CRD, ServiceAccount, ClusterRole, Deployment)"},
			{Path: "maintd/deploy/crd.yaml", What: "the MaintenancePlan and MaintenanceCampaign CRDs"},
		},
		Flags:  flags,
		Action: run,
	}.App()
}

func run(c *cli.Context) error {
	sel, err := labels.Parse(c.String("selector"))
	if err != nil {
		return command.Usage("invalid --selector %q: %v", c.String("selector"), err)
	}
	switch {
	case c.Int("max-nodes-in-maintenance") < 1:
		return command.Usage("--max-nodes-in-maintenance must be at least 1, not %d", c.Int("max-nodes-in-maintenance"))
	case c.Int("workers") < 1:
		return command.Usage("--workers must be at least 1, not %d", c.Int("workers"))
	case c.Bool("profiling") && c.String("metrics-address") == "":
		return command.Usage("--profiling needs --metrics-address: the profiles are served there")
	case c.Duration("leader-elect-lease-duration") < 2*time.Second:
		return command.Usage("--leader-elect-lease-duration must be at least 2s, not %s", c.Duration("leader-elect-lease-duration"))
	}
	pause, err := controller.ParsePauseSwitch(c.String("pause-configmap"))
	if err != nil {
		return command.Usage("%v", err)
	}
	learned, err := controller.ParseLearned(c.String("learned-configmap"))
	if err != nil {
		return command.Usage("%v", err)
	}
	cfg, err := kubeflags.Options(c, name).Config()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	reg := prometheus.NewRegistry()
	// The scheduler's metrics include go_sched_latencies_seconds: how long
	// goroutines wait for a CPU, which a decision holding the shared lock
	// also does on a machine the control plane keeps busy.
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var ctrl *controller.Controller
	m := metrics.New(reg, func() []metrics.Plan {
		if ctrl == nil {
			return nil
		}
		return ctrl.Plans()
	})
	m.RegisterClientGo()

	// The built-in kinds in protobuf, as kube-controller-manager reads them:
	// listing and watching thousands of pods costs a fraction of JSON's.
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = runtime.ContentTypeProtobuf
	pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := newClients(pcfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	poster, err := newPoster(cfg)
	if err != nil {
		return err
	}
	ctx := c.Context
	recorder, stopEvents, err := eventRecorder(ctx, client.events)
	if err != nil {
		return err
	}
	defer stopEvents()
	ctrl = controller.New(controller.Config{
		Clients: client.Clients, Plans: client.plans.MaintenancePlans(), Campaigns: client.plans.MaintenanceCampaigns(),
		Overrides: client.plans.MaintenanceOverrides(), Poster: poster, Selector: sel,
		MaxNodes: c.Int("max-nodes-in-maintenance"), Log: log, Events: recorder, Pause: pause, Learned: learned,
		Metrics: m, QueueMetrics: metrics.NewWorkqueue(reg),
	})
	var standby atomic.Bool
	standby.Store(c.Bool("leader-elect"))
	if addr := c.String("metrics-address"); addr != "" {
		stop, err := serve(ctx, addr, reg, func() bool { return standby.Load() || ctrl.HasSynced() }, c.Bool("profiling"), log)
		if err != nil {
			return err
		}
		defer stop()
	}
	log.Info("maintd starting", "version", command.Version(), "selector", sel.String(), "maxNodesInMaintenance", c.Int("max-nodes-in-maintenance"))
	run := func(ctx context.Context) error { return ctrl.Run(ctx, c.Int("workers")) }
	if c.Bool("leader-elect") {
		// A standby keeps its caches warm: when it takes over, it reads
		// the plans live (Controller.CatchUp) and goes on at once, without
		// a cluster-wide list first.
		ctrl.Start(ctx)
		lease := c.Duration("leader-elect-lease-duration")
		e := election{namespace: c.String("leader-elect-namespace"), name: c.String("leader-elect-name"),
			lease: lease, renew: lease * 2 / 3, leader: func(on bool) {
				standby.Store(!on)
				m.Leader.Set(map[bool]float64{true: 1}[on])
			}}
		err = e.lead(ctx, client.leases, log, run)
	} else {
		m.Leader.Set(1)
		err = run(ctx)
	}
	if err != nil {
		return err
	}
	log.Info("maintd stopped")
	return nil
}

// clients are the typed clients of the API groups maintd uses, sharing one
// connection pool. Only these groups' clients are linked in: with the
// clientset, every group's client, informer and lister would be.
type clients struct {
	controller.Clients
	leases coordinationv1client.CoordinationV1Interface
	events eventsv1client.EventsV1Interface
	// plans is the generated client of maintd's own group alone (not its
	// clientset, which adds a discovery client), in JSON: a custom
	// resource has no protobuf.
	plans maintenancev1alpha1.MaintenanceV1alpha1Interface
}

func newClients(cfg *rest.Config) (*clients, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c := &clients{}
	var errs [10]error
	c.Core, errs[0] = corev1client.NewForConfigAndClient(cfg, hc)
	c.Apps, errs[1] = appsv1client.NewForConfigAndClient(cfg, hc)
	c.Batch, errs[2] = batchv1client.NewForConfigAndClient(cfg, hc)
	c.Policy, errs[3] = policyv1client.NewForConfigAndClient(cfg, hc)
	c.leases, errs[4] = coordinationv1client.NewForConfigAndClient(cfg, hc)
	c.events, errs[5] = eventsv1client.NewForConfigAndClient(cfg, hc)
	c.plans, errs[6] = maintenancev1alpha1.NewForConfigAndClient(kubeclient.JSON(cfg), hc)
	c.Autoscaling, errs[7] = autoscalingv2client.NewForConfigAndClient(cfg, hc)
	c.Storage, errs[8] = storagev1client.NewForConfigAndClient(cfg, hc)
	c.Authorization, errs[9] = authorizationv1client.NewForConfigAndClient(cfg, hc)
	return c, errors.Join(errs[:]...)
}

// eventRecorder records events.k8s.io Events about plans, nodes and pods.
func eventRecorder(ctx context.Context, client eventsv1client.EventsV1Interface) (events.EventRecorder, func(), error) {
	// The kinds events are recorded about, for their references.
	sch := runtime.NewScheme()
	if err := corev1.AddToScheme(sch); err != nil {
		return nil, nil, err
	}
	if err := appsv1.AddToScheme(sch); err != nil {
		return nil, nil, err
	}
	if err := policyv1.AddToScheme(sch); err != nil {
		return nil, nil, err
	}
	if err := api.AddToScheme(sch); err != nil {
		return nil, nil, err
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client})
	broadcaster.StartRecordingToSink(ctx.Done())
	return broadcaster.NewRecorder(sch, name), broadcaster.Shutdown, nil
}

// newPoster sends evictions through client-go's REST client, one request
// per call (no hidden retries).
func newPoster(cfg *rest.Config) (evict.Poster, error) {
	c, _, err := kubeclient.CoreV1(cfg)
	if err != nil {
		return nil, err
	}
	return evictrest.New(c), nil
}
