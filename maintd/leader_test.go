package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

var servingAt = regexp.MustCompile(`msg="serving /metrics, /healthz, /readyz" address=(\S+)`)

// address is where m serves /metrics (it binds port 0 and logs the port).
func (m *maintd) address(t *testing.T, ctx context.Context) string {
	t.Helper()
	return m.waitLog(t, ctx, servingAt)[1]
}

// waitLog polls m's log until re matches it, and returns the match.
func (m *maintd) waitLog(t *testing.T, ctx context.Context, re *regexp.Regexp) []string {
	t.Helper()
	for {
		m.mu.Lock()
		found := re.FindStringSubmatch(m.log.String())
		m.mu.Unlock()
		if found != nil {
			return found
		}
		select {
		case <-ctx.Done():
			t.Fatalf("maintd never logged %s", re)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// gauge reads one unlabelled gauge from m's /metrics; -1 when unreachable.
func (m *maintd) gauge(ctx context.Context, addr, name string) float64 {
	all := m.series(ctx, addr, name)
	if len(all) == 0 {
		return -1
	}
	return all[0].value
}

// sample is one series of a family.
type sample struct {
	labels map[string]string
	value  float64
}

// series reads the gauges of family name from m's /metrics; nil when
// unreachable.
func (m *maintd) series(ctx context.Context, addr, name string) []sample {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil || fams[name] == nil {
		return nil
	}
	var out []sample
	for _, mt := range fams[name].Metric {
		s := sample{labels: map[string]string{}, value: mt.GetGauge().GetValue()}
		for _, l := range mt.Label {
			s.labels[l.GetName()] = l.GetValue()
		}
		out = append(out, s)
	}
	return out
}

// waitLeader polls until exactly one of ms reports maintd_leader 1 and
// returns its index.
func waitLeader(t *testing.T, ctx context.Context, ms []*maintd, addrs []string) int {
	t.Helper()
	for {
		leader, standby := -1, 0
		for i, m := range ms {
			switch m.gauge(ctx, addrs[i], "maintd_leader") {
			case 1:
				if leader >= 0 {
					t.Fatalf("two leaders: %d and %d", leader, i)
				}
				leader = i
			case 0:
				standby++
			}
		}
		if leader >= 0 && standby == len(ms)-1 {
			return leader
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no single leader among %d maintd", len(ms))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestLeaderElection: of two maintd, one reconciles and the other's metrics
// show it standing by; SIGKILL the leader mid-drain and the other takes over
// within the lease duration and completes the plan, no pod evicted twice;
// SIGTERM on a leader releases the lease at once.
func TestLeaderElection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, 2)
	e.apply(t, ctx, "maintd-drain.yaml", map[string]string{"DELAY": "3s"})
	waitReady(t, ctx, e, 4)
	if err := cp.CreateNodes(ctx, e.pool, e.node(3)); err != nil {
		t.Fatal(err)
	}
	const lease = 4 * time.Second
	flags := []string{"--leader-elect", "--leader-elect-namespace", e.ns, "--leader-elect-lease-duration", lease.String(), "--metrics-address", "127.0.0.1:0"}
	ms := []*maintd{e.startMaintd(t, "", flags...), e.startMaintd(t, "", flags...)}
	addrs := []string{ms[0].address(t, ctx), ms[1].address(t, ctx)}
	first := waitLeader(t, ctx, ms, addrs)

	p := e.plan(t, ctx, "lease", api.MaintenancePlanSpec{NodeName: e.node(1), Workloads: workloads(e.ns)})
	e.wait(t, ctx, p.Name, "the first eviction", func(p *api.MaintenancePlan) bool { return p.Status.Pods.Evicted+int32(len(activeOf(p))) > 0 })
	ms[first].kill()
	killed := time.Now()
	other := 1 - first
	if !ms[other].gaugeReaches(ctx, addrs[other], "maintd_leader", 1, 2*lease) {
		t.Fatalf("the standby did not take over within %s", 2*lease)
	}
	if took := time.Since(killed); took > lease+time.Second {
		t.Errorf("takeover after %s, want within the lease duration %s", took, lease)
	}
	done := e.waitPhase(t, ctx, p.Name, api.Drained, api.ReasonDrained)
	if done.Status.Pods.Evicted != 2 {
		t.Errorf("evicted %d, want 2", done.Status.Pods.Evicted)
	}
	real, _ := e.evictions(t)
	accepted := map[types.UID]int{}
	for _, ev := range real {
		if ev.Code == 201 {
			accepted[types.UID(ev.UID)]++
		}
	}
	for uid, n := range accepted {
		if n > 1 {
			t.Errorf("pod uid %s got %d accepted evictions", uid, n)
		}
	}

	// SIGTERM on the leader: a third maintd, standing by, takes over at once.
	third := e.startMaintd(t, "", append(flags, "--profiling")...)
	thirdAddr := third.address(t, ctx)
	// --profiling serves Go's profiles beside the metrics; without it,
	// nothing is served there.
	if code, body := httpGet(t, ctx, "http://"+thirdAddr+"/debug/pprof/cmdline"); code != http.StatusOK || !strings.Contains(body, "--profiling") {
		t.Errorf("/debug/pprof/cmdline with --profiling: %d %q", code, body)
	}
	if code, _ := httpGet(t, ctx, "http://"+addrs[other]+"/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/cmdline without --profiling: %d, want 404", code)
	}
	if !third.gaugeReaches(ctx, thirdAddr, "maintd_leader", 0, time.Minute) {
		t.Fatal("the third maintd never stood by")
	}
	stopped := time.Now()
	ms[other].stop(t)
	if !third.gaugeReaches(ctx, thirdAddr, "maintd_leader", 1, 2*lease) {
		t.Fatalf("no takeover within %s of SIGTERM", 2*lease)
	}
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("takeover %s after SIGTERM, want under 2 s (the lease is released)", took)
	}
	lease2, err := e.admin.CoordinationV1().Leases(e.ns).Get(ctx, "maintd", metav1.GetOptions{})
	if err != nil || lease2.Spec.HolderIdentity == nil {
		t.Errorf("lease: %v %v", lease2, err)
	}
}

// httpGet is the status code and body of a GET of url.
func httpGet(t *testing.T, ctx context.Context, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// gaugeReaches polls m's gauge until it equals want, for at most limit.
func (m *maintd) gaugeReaches(ctx context.Context, addr, name string, want float64, limit time.Duration) bool {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		return m.gauge(ctx, addr, name) == want, nil
	})
	return err == nil
}

func activeOf(p *api.MaintenancePlan) []api.ActivePod {
	if p.Status.EvictionProgress == nil {
		return nil
	}
	return p.Status.EvictionProgress.ActivePods
}
