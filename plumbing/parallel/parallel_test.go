package parallel

import (
	"strings"
	"sync/atomic"
	"testing"
)

func TestDoRunsEach(t *testing.T) {
	var calls [5]atomic.Int32
	Do(len(calls), func(i int) { calls[i].Add(1) })
	for i := range calls {
		if n := calls[i].Load(); n != 1 {
			t.Errorf("f(%d) ran %d times, want 1", i, n)
		}
	}
	Do(0, func(int) { t.Error("f ran for n = 0") })
}

func TestDoPassesPanicOn(t *testing.T) {
	var done atomic.Int32
	defer func() {
		r := recover()
		p, ok := r.(*Panic)
		if !ok {
			t.Fatalf("recovered %v (%T), want a *Panic", r, r)
		}
		if p.Value != "boom" || !strings.Contains(string(p.Stack), "parallel_test.go") || !strings.Contains(p.String(), "boom") {
			t.Errorf("panic = %q, stack %q", p.Value, p.Stack)
		}
		if n := done.Load(); n != 3 {
			t.Errorf("%d calls returned before the panic was passed on, want the 3 others", n)
		}
	}()
	Do(4, func(i int) {
		if i == 2 {
			panic("boom")
		}
		done.Add(1)
	})
	t.Fatal("Do returned after a panic")
}
