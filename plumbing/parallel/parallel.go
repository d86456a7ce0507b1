// Package parallel runs a function on several goroutines at once and passes
// a panic in any of them on to the caller.
//
// A panic on a goroutine of its own ends the process with exit status 2,
// which sentinel's tools reserve for "not now, retry later". Passed on to
// the goroutine that started the work, it reaches the recovery of
// command.Run and becomes an internal error, exit 1.
package parallel

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Do calls f(0) to f(n-1), each on a goroutine of its own, and returns once
// all have returned. If any panicked, Do then panics with the first panic's
// value and the stack it was raised on.
func Do(n int, f func(i int)) {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first *Panic
	)
	for i := range n {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { first = &Panic{Value: r, Stack: debug.Stack()} })
				}
			}()
			f(i)
		})
	}
	wg.Wait()
	if first != nil {
		panic(first)
	}
}

// Panic is a panic raised by a function Do ran, with the stack it was
// raised on.
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) String() string { return fmt.Sprintf("%v\n\n%s", p.Value, p.Stack) }
