package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// serve serves /metrics (reg), /healthz (the process runs), /readyz
// (ready() holds) and, with profiling, /debug/pprof/ on addr until the
// returned stop is called.
func serve(ctx context.Context, addr string, reg *prometheus.Registry, ready func() bool, profiling bool, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError), MaxRequestsInFlight: 4, Timeout: 10 * time.Second}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address: %w", err)
	}
	log.Info("serving /metrics, /healthz, /readyz", "address", l.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// election configures leader election on a coordination.k8s.io Lease.
type election struct {
	namespace, name string
	lease, renew    time.Duration
	leader          func(bool)
}

// lead runs run while this process holds the lease. It returns when ctx
// ends (after run returned and the lease was released, so the next leader
// starts at once) or when the lease was lost (an error: the process must
// stop, it may no longer act).
func (e election) lead(ctx context.Context, client coordinationv1client.CoordinationV1Interface, log *slog.Logger, run func(context.Context) error) error {
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.namespace, Name: e.name},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	leCtx, leCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer leCancel()
	// le.Run starts OnStartedLeading in a goroutine and may return (a
	// lease lost at once) before that goroutine runs: what it does is
	// decided under mu, and read only once it has finished (ran).
	var mu sync.Mutex
	var stopping, leading bool
	var runErr error
	ran := make(chan struct{})
	go func() {
		<-ctx.Done()
		mu.Lock()
		standby := !leading
		mu.Unlock()
		if standby {
			leCancel() // standing by: nothing to finish
		}
	}()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: e.lease,
		RenewDeadline: e.renew,
		// A standby sees the lease expire one retry (with jitter, up to
		// 2.2 retries) after it does, and the leader's last renewal up to
		// as late: a short retry keeps a takeover close to the lease
		// duration (15 s: a Get every 0.75-1.65 s per replica).
		RetryPeriod:     e.lease / 20,
		ReleaseOnCancel: true,
		Name:            e.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				defer close(ran)
				mu.Lock()
				if stopping {
					mu.Unlock()
					return // the lease went before this goroutine ran
				}
				leading = true
				mu.Unlock()
				e.leader(true)
				log.Info("leading", "lease", e.namespace+"/"+e.name, "identity", id)
				runCtx, cancel := context.WithCancel(ctx)
				go func() {
					select {
					case <-lctx.Done():
						cancel()
					case <-runCtx.Done():
					}
				}()
				err := run(runCtx)
				mu.Lock()
				runErr = err
				mu.Unlock()
				cancel()
				leCancel() // release the lease now that nothing is in flight
			},
			OnStoppedLeading: func() {
				e.leader(false)
				log.Info("stopped leading", "identity", id)
			},
			OnNewLeader: func(who string) {
				if who != id {
					log.Info("standing by", "leader", who)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("waiting for the leader lease", "lease", e.namespace+"/"+e.name, "identity", id)
	le.Run(leCtx)
	mu.Lock()
	stopping = true
	wasLeading := leading
	mu.Unlock()
	if wasLeading {
		<-ran
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case runErr != nil:
		return runErr
	case ctx.Err() == nil:
		// le.Run returns before ctx ends only when the lease was lost.
		return errors.New("lost the leader lease: stopping so that only one maintd acts")
	}
	return nil
}
