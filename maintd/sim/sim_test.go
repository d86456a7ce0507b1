package sim

import (
	"flag"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	seed  = flag.Int64("seed", -1, "run only this seed (printed by a failing run)")
	seeds = flag.Int("seeds", 50, "how many seeds TestSim runs (make sim SEEDS=N runs more; make test runs 1,000)")
	steps = flag.Int("steps", 150, "drawn steps per seed before the world settles")
	show  = flag.Bool("show", false, "print the schedule of every seed, not only of failing ones")
)

func TestMain(m *testing.M) {
	// The informers list, then watch: the simulated API serves no
	// watch-list stream (client-go's WatchListClient).
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	flag.Parse()
	os.Exit(m.Run())
}

// TestSim runs the seeded schedules and checks every invariant after every
// step. A failure prints the seed and its schedule; `go test -run Sim
// -seed N -show` replays it.
func TestSim(t *testing.T) {
	from, n := int64(1), *seeds
	if *seed >= 0 {
		from, n = *seed, 1
	}
	start := time.Now()
	var next atomic.Int64
	next.Store(from)
	var failed atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				s := next.Add(1) - 1
				if s >= from+int64(n) || failed.Load() > 3 {
					return
				}
				w := New(s)
				w.Run(*steps)
				tallyBreakGlass(w)
				if v, f := w.Violations(), w.Failed(); len(v) > 0 || f != "" || *show {
					mu.Lock()
					if len(v) > 0 || f != "" {
						failed.Add(1)
						t.Errorf("seed %d: %d broken promises, first: %s; harness: %q\nreplay: go test ./sim -run 'TestSim$' -seed %d -show\n%s",
							s, len(v), first(v), f, s, tail(w.Trace(), 120))
					} else {
						t.Logf("seed %d:\n%s", s, w.Trace())
					}
					mu.Unlock()
				}
				w.Close()
			}
		})
	}
	wg.Wait()
	t.Logf("%d seeds in %s", n, time.Since(start).Round(time.Millisecond))
	summary, killed := breakGlassSummary()
	t.Log(summary)
	t.Log(budgetSummary())
	gs, judged := gateSummary()
	t.Log(gs)
	if n >= 1000 && !judged {
		t.Errorf("a window or health-gate promise judged nothing in %d seeds", n)
	}
	if n >= 1000 && killed < 20 {
		t.Errorf("only %d seeds killed maintd between a ledger entry and its DELETE (want at least 20)", killed)
	}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// tail is the last n lines of s, or all of them with -show.
func tail(s string, n int) string {
	if *show {
		return s
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

func TestFixedSeeds(t *testing.T) {
	for s, what := range Fixed {
		w := New(s)
		w.Run(*steps)
		if v, f := w.Violations(), w.Failed(); len(v) > 0 || f != "" {
			t.Errorf("seed %d (%s): %d broken promises, first: %s; harness: %q\nreplay: go test ./sim -run 'TestSim$' -seed %d -show\n%s",
				s, what, len(v), first(v), f, s, tail(w.Trace(), 80))
		}
		w.Close()
	}
}
