package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	kfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestLeaseLostIsAnError: a lease lost right after it was won ends lead
// with an error, so that maintd exits 1 and only one maintd acts; and run,
// when it started, has returned. lead used to read whether the lease was
// lost before the goroutine that notes it had run, and returned nil (exit
// 0) most of the time.
func TestLeaseLostIsAnError(t *testing.T) {
	for i := range 3 {
		cs := kfake.NewSimpleClientset()
		// The lease is created; every renewal fails.
		cs.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New("the API server is gone")
		})
		e := election{namespace: "maintd-system", name: "maintd", lease: 2 * time.Second, renew: 2 * time.Second * 2 / 3, leader: func(bool) {}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var running atomic.Bool
		err := e.lead(ctx, cs.CoordinationV1(), slog.New(slog.NewTextHandler(io.Discard, nil)), func(ctx context.Context) error {
			running.Store(true)
			defer running.Store(false)
			<-ctx.Done()
			return nil
		})
		if ctx.Err() != nil {
			t.Fatalf("try %d: lead returned only when the test's time ran out", i)
		}
		cancel()
		if err == nil || !strings.Contains(err.Error(), "lost the leader lease") {
			t.Errorf("try %d: lead returned %v, want the lost lease", i, err)
		}
		if running.Load() {
			t.Errorf("try %d: run still running after lead returned", i)
		}
	}
}
