package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
)

// TestConflictIsNoError: a status write that met a newer object (409) is
// retried and logged at INFO; any other failure is an ERROR. Both retry.
func TestConflictIsNoError(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "maintenance.sentinel.dev", Resource: "maintenanceplans"}, "p1", errors.New("the object has been modified"))
	for _, tc := range []struct {
		name  string
		err   error
		level string
	}{
		{"conflict, wrapped", fmt.Errorf("update status: %w", conflict), "level=INFO"},
		{"another failure", errors.New("connection refused"), "level=ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			c := &Controller{cfg: Config{Log: slog.New(slog.NewTextHandler(&log, nil))}}
			q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond))
			defer q.ShutDown()
			q.Add("p1")
			c.next(context.Background(), q, "plan", func(context.Context, string) (time.Duration, error) { return 0, tc.err })
			if got := log.String(); !strings.Contains(got, tc.level) || strings.Count(got, "\n") != 1 {
				t.Errorf("log %q, want one line at %s", got, tc.level)
			}
			if n := q.NumRequeues("p1"); n != 1 {
				t.Errorf("%d requeues, want 1 (retried)", n)
			}
		})
	}
}
