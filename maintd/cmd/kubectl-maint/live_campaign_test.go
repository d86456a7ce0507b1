package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	maintenancev1alpha1 "github.com/sentinel-go/sentinel/maintd/client/clientset/versioned/typed/api/v1alpha1"
	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// TestLiveCampaign runs kubectl maint drain -l in a real terminal (tmux):
// a campaign of two nodes (two more of the pool take their pods), in a
// window open now (every minute, for a day), each node released as soon
// as it is drained behind a health gate its label already holds. The
// live view is one frame redrawn in place, shows the window, and the
// nodes by state as they go from draining to completed; the campaign
// completes and drain exits 0.
func TestLiveCampaign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := newEnv(ctx, "2s")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNodes(ctx, e.ns, e.ns+"-3", e.ns+"-4"); err != nil {
		t.Fatal(err)
	}
	mc, err := maintenancev1alpha1.NewForConfig(cp.Config(controlplane.Admin))
	if err != nil {
		t.Fatal(err)
	}
	campaign := e.ns + "-fleet"
	t.Cleanup(func() { _ = mc.MaintenanceCampaigns().Delete(context.Background(), campaign, metav1.DeleteOptions{}) })
	sel := fmt.Sprintf("kubernetes.io/hostname in (%s,%s)", e.node1, e.node2)
	tm := newTerm(t, liveEnv(), name, "drain", "-l", sel, "--all-workloads", "--name", campaign, "--release",
		"--window", "* * * * *=24h", "--health-label", controlplane.PoolLabel+"="+e.ns, "--timeout", "150s")

	frames := regexp.MustCompile(`(?m)^campaign ` + campaign + `  `)
	tally := regexp.MustCompile(`\]  2 nodes: ([a-z0-9, ]+)`)
	var tallies []string // the nodes by state, each change in the order seen
	var windows []string // the window lines, each change in the order seen
	seen := func(s string) {
		if n := len(frames.FindAllString(s, -1)); n > 1 {
			t.Errorf("%d frames on the screen, want the one redrawn in place:\n%s", n, s)
		}
		if m := tally.FindStringSubmatch(s); m != nil && (len(tallies) == 0 || tallies[len(tallies)-1] != m[1]) {
			tallies = append(tallies, m[1])
		}
		for l := range strings.SplitSeq(s, "\n") {
			if strings.HasPrefix(l, "window: ") && (len(windows) == 0 || windows[len(windows)-1] != l) {
				windows = append(windows, l)
			}
		}
	}
	final := tm.until(ctx, "the campaign's end", seen, func(s string) bool { _, done := exited(s); return done })
	if code, _ := exited(final); code != 0 {
		t.Errorf("exit %d, want 0; the screen:\n%s", code, final)
	}
	t.Logf("nodes by state as seen, in order: %q; the window lines: %q", tallies, windows)
	// Draining first, a node done while the other is not, both completed
	// at the end.
	draining := -1
	partial := -1
	for i, s := range tallies {
		switch {
		case draining < 0 && strings.Contains(s, "draining"):
			draining = i
		case draining >= 0 && partial < 0 && (strings.Contains(s, "1 drained") || strings.Contains(s, "1 completed")):
			partial = i
		}
	}
	if draining < 0 || partial < 0 || tallies[len(tallies)-1] != "2 completed" {
		t.Errorf("nodes by state as seen, in order: %q; want draining, then one node drained or completed while the other is not, then 2 completed", tallies)
	}
	// The window opens every minute for a day: it is open now, and stays
	// open past the campaign's end (maintd forecasts no more once it is
	// Completed: no window line then).
	if !slices.ContainsFunc(windows, func(l string) bool { return strings.HasPrefix(l, "window: open until ") }) {
		t.Errorf("window lines seen: %q; want one saying it is open until its end", windows)
	}
	if strings.Contains(final, "window: ") {
		t.Errorf("a window line on the final screen of a Completed campaign:\n%s", final)
	}
	for _, want := range []string{
		"campaign " + campaign + "  Completed/",
		"[" + strings.Repeat("#", 40) + "]  2 nodes: 2 completed",
		"[" + strings.Repeat("#", 40) + "]  4/4 pods moved",
		"maintenancecampaign/" + campaign + " completed",
	} {
		if !strings.Contains(final, want) {
			t.Errorf("the final screen lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "\x1b") {
		t.Errorf("escape sequences left on the screen:\n%s", final)
	}
}
