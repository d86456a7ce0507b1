package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	tests := map[string]struct {
		err  error
		want Code
	}{
		"nil":              {nil, OK},
		"plain error":      {errors.New("boom"), Error},
		"context canceled": {context.Canceled, Error},
		"not now":          {With(NotNow, errors.New("budget")), NotNow},
		"blocked wrapped":  {fmt.Errorf("evict: %w", With(Blocked, errors.New("forbidden"))), Blocked},
		"silent status":    {Status(NotNow), NotNow},
		"status ok is nil": {Status(OK), OK},
		"errorf":           {Errorf(Blocked, "node %s occupied", "n1"), Blocked},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	if got := Message(Status(Blocked)); got != "" {
		t.Errorf("silent status message = %q, want empty", got)
	}
	if got := Message(Errorf(NotNow, "wait %ds", 10)); got != "wait 10s" {
		t.Errorf("message = %q, want %q", got, "wait 10s")
	}
	inner := errors.New("inner")
	if !errors.Is(With(Blocked, inner), inner) {
		t.Error("With does not unwrap to its error")
	}
}
