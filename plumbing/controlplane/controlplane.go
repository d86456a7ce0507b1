// Package controlplane runs a real Kubernetes control plane on loopback for
// tests, the demo and benchmarks: etcd, kube-apiserver (RBAC on, token
// users), kube-controller-manager, kube-scheduler and kwok simulating the
// kubelets of fake nodes. Binaries come from the cache `make kube-bins` fills.
//
// Every process is started in its own process group and ended by PID on
// Close, on SIGINT/SIGTERM, and (Pdeathsig) when the parent dies.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// KubeVersion is the Kubernetes version of the cached binaries.
const KubeVersion = "v1.37.2"

// BinsEnv names the directory holding the binaries, overriding the default
// <repo>/.cache/kube/<KubeVersion>.
const BinsEnv = "SENTINEL_KUBE_BINS"

// DefaultControllers are the kube-controller-manager controllers started.
var DefaultControllers = []string{
	"replicaset-controller", "deployment-controller", "disruption-controller",
	"statefulset-controller", "daemonset-controller", "job-controller",
	"garbage-collector-controller", "namespace-controller",
	"serviceaccount-controller", "serviceaccount-token-controller",
	"node-lifecycle-controller", "persistentvolume-binder-controller",
}

// VolumeControllers are the kube-controller-manager controllers that
// Options.Volumes adds: the attach-detach controller (it creates and
// deletes the VolumeAttachments of CSI volumes) and the PV and PVC
// protection controllers (without them a deleted PV or PVC keeps the
// protection finalizer the API server's admission gave it, forever).
var VolumeControllers = []string{
	"persistentvolume-attach-detach-controller",
	"persistentvolume-protection-controller", "persistentvolumeclaim-protection-controller",
}

// ControllerManagedAttachAnnotation on a node hands its volumes' attach and
// detach to the attach-detach controller (a kubelet sets it by default).
const ControllerManagedAttachAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach"

// Options configure Start. The zero value is a sensible default.
type Options struct {
	// BinDir holds etcd, kube-apiserver, ... (default: $SENTINEL_KUBE_BINS,
	// else <repo>/.cache/kube/<KubeVersion>).
	BinDir string
	// Controllers overrides DefaultControllers (e.g. without the garbage
	// collector, for scenarios with dangling owners).
	Controllers []string
	// Volumes adds VolumeControllers to the controllers and makes CreateNodes
	// annotate each node with ControllerManagedAttachAnnotation "true", as a
	// kubelet does: the attach-detach controller then creates a
	// VolumeAttachment for each CSI volume of a pod on a kwok node (an
	// external attacher, such as package attacher, must attach it).
	Volumes bool
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	dir    string
	bins   string
	log    io.Writer
	url    string
	tokens map[User]string
	caData []byte

	mu    sync.Mutex
	procs map[string]*process

	controllers []string
	volumes     bool
	closeOnce   sync.Once
	closed      chan struct{}
	keep        bool
}

// Start starts etcd and kube-apiserver, waits for /readyz, sets up the token
// users' RBAC, then starts kube-controller-manager, kube-scheduler and kwok.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	bins, err := binDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sentinel-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("control plane: %w", err)
	}
	cp := &ControlPlane{
		dir:         dir,
		bins:        bins,
		log:         opts.Log,
		procs:       map[string]*process{},
		controllers: opts.Controllers,
		volumes:     opts.Volumes,
		closed:      make(chan struct{}),
	}
	if cp.log == nil {
		cp.log = io.Discard
	}
	if len(cp.controllers) == 0 {
		cp.controllers = DefaultControllers
	}
	if opts.Volumes {
		cp.controllers = append(cp.controllers[:len(cp.controllers):len(cp.controllers)], VolumeControllers...)
	}
	go cp.closeOnSignal()
	defer func() {
		if err != nil {
			cp.keep = true
			cp.Close()
			err = fmt.Errorf("control plane (logs in %s): %w", cp.LogDir(), err)
		}
	}()
	for _, d := range []string{"etcd", "certs", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := cp.writeCredentials(); err != nil {
		return nil, err
	}
	if err := cp.startEtcdAndAPIServer(ctx); err != nil {
		return nil, err
	}
	if err := cp.setupUsers(ctx); err != nil {
		return nil, err
	}
	if err := cp.writeKwokConfig(); err != nil {
		return nil, err
	}
	for _, start := range []func() error{cp.startControllerManager, cp.startScheduler, cp.startKwok} {
		if err := start(); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// URL is the API server's https URL.
func (cp *ControlPlane) URL() string { return cp.url }

// Dir is the control plane's working directory (data, certs, logs).
func (cp *ControlPlane) Dir() string { return cp.dir }

// LogDir holds one log file per process.
func (cp *ControlPlane) LogDir() string { return filepath.Join(cp.dir, "logs") }

// KeepFiles makes Close leave the working directory (logs) in place.
func (cp *ControlPlane) KeepFiles() { cp.mu.Lock(); cp.keep = true; cp.mu.Unlock() }

// Close ends every process (SIGTERM to its group, SIGKILL after 10 s) and
// removes the working directory unless KeepFiles was called. It is safe to
// call more than once.
func (cp *ControlPlane) Close() error {
	cp.closeOnce.Do(func() {
		close(cp.closed)
		cp.mu.Lock()
		procs := make([]*process, 0, len(cp.procs))
		for _, p := range cp.procs {
			procs = append(procs, p)
		}
		cp.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Go(func() { p.stop(10 * time.Second) })
		}
		wg.Wait()
		cp.mu.Lock()
		keep := cp.keep
		cp.mu.Unlock()
		if !keep {
			_ = os.RemoveAll(cp.dir)
		}
	})
	return nil
}

// PIDs are the process IDs of the running processes by name.
func (cp *ControlPlane) PIDs() map[string]int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	pids := map[string]int{}
	for name, p := range cp.procs {
		pids[name] = p.cmd.Process.Pid
	}
	return pids
}

func (cp *ControlPlane) closeOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(ch)
	select {
	case sig := <-ch:
		fmt.Fprintf(os.Stderr, "controlplane: %v: stopping every process\n", sig)
		cp.Close()
		signal.Stop(ch)
		// Let the signal do what it would have done without us.
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	case <-cp.closed:
	}
}

// Clientset is a typed client for user.
func (cp *ControlPlane) Clientset(user User) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(cp.Config(user))
}

func (cp *ControlPlane) bin(name string) string { return filepath.Join(cp.bins, name) }

// BinDir is the directory of the control plane's binaries (kubectl too).
func (cp *ControlPlane) BinDir() string { return cp.bins }

func binDir(explicit string) (string, error) {
	dir := explicit
	if dir == "" {
		dir = os.Getenv(BinsEnv)
	}
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("control plane binaries: set %s or run inside the repository: %w", BinsEnv, err)
		}
		dir = filepath.Join(root, ".cache", "kube", KubeVersion)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("control plane binaries: %s is missing in %s: run `make kube-bins`", b, dir)
		}
	}
	return dir, nil
}

// RepoRoot is the repository's root: the nearest directory above the
// working directory (a test's package directory) that holds go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (cp *ControlPlane) startEtcdAndAPIServer(ctx context.Context) error {
	var ports [3]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return fmt.Errorf("free port: %w", err)
		}
		ports[i] = p
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := cp.start("etcd", cp.bin("etcd"),
		"--name=sentinel", "--data-dir="+filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=sentinel="+peer, "--unsafe-no-fsync", "--log-level=warn",
		"--quota-backend-bytes=8589934592"); err != nil {
		return err
	}
	// kube-apiserver starts alongside etcd and waits for it on its own.
	cp.url = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if err := cp.start("kube-apiserver", cp.bin("kube-apiserver"),
		"--etcd-servers="+client, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[2]), "--endpoint-reconciler-type=none",
		"--cert-dir="+filepath.Join(cp.dir, "certs"),
		"--token-auth-file="+filepath.Join(cp.dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-key-file="+filepath.Join(cp.dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(cp.dir, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
		"--audit-policy-file="+filepath.Join(cp.dir, "audit-policy.yaml"),
		"--audit-log-path="+cp.auditLog(), "--audit-log-format=json", "--audit-log-mode=blocking",
		"--v=0"); err != nil {
		return err
	}
	if err := cp.waitHTTP(ctx, "etcd", http.DefaultClient, client+"/health"); err != nil {
		return err
	}
	return cp.waitAPIServer(ctx)
}

func (cp *ControlPlane) startControllerManager() error {
	kc := cp.Kubeconfig(controllerManager)
	args := []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--leader-elect=false", "--secure-port=0",
		"--service-account-private-key-file=" + filepath.Join(cp.dir, "sa.key"),
		"--root-ca-file=" + filepath.Join(cp.dir, "certs", "apiserver.crt"),
		"--use-service-account-credentials=false",
		"--kube-api-qps=200", "--kube-api-burst=400",
		"--node-monitor-period=1s",
		"--node-monitor-grace-period=" + nodeMonitorGracePeriod.String(),
		"--controllers=" + joinComma(cp.controllers),
	}
	return cp.start("kube-controller-manager", cp.bin("kube-controller-manager"), args...)
}

func (cp *ControlPlane) startScheduler() error {
	kc := cp.Kubeconfig(scheduler)
	return cp.start("kube-scheduler", cp.bin("kube-scheduler"),
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=200", "--kube-api-burst=400")
}

func (cp *ControlPlane) startKwok() error {
	return cp.start("kwok", cp.bin("kwok"),
		"--kubeconfig="+cp.Kubeconfig(kwokUser),
		"--config="+filepath.Join(cp.dir, "kwok.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=10.0.0.1/16", "--node-ip=10.0.0.1", "--node-port=0",
		"--node-lease-duration-seconds="+strconv.Itoa(int(nodeLeaseDuration/time.Second)))
}

// StopControllerManager ends kube-controller-manager: PDB status freezes.
func (cp *ControlPlane) StopControllerManager(ctx context.Context) error {
	cp.mu.Lock()
	p := cp.procs["kube-controller-manager"]
	delete(cp.procs, "kube-controller-manager")
	cp.mu.Unlock()
	if p == nil {
		return errors.New("kube-controller-manager is not running")
	}
	p.stop(10 * time.Second)
	return nil
}

// StartControllerManager starts kube-controller-manager again.
func (cp *ControlPlane) StartControllerManager(ctx context.Context) error {
	cp.mu.Lock()
	_, running := cp.procs["kube-controller-manager"]
	cp.mu.Unlock()
	if running {
		return errors.New("kube-controller-manager is already running")
	}
	return cp.startControllerManager()
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}
