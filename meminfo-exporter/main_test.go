package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sentinel-go/sentinel/plumbing/scripttest"

	"github.com/sentinel-go/sentinel/plumbing/command"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"meminfo-exporter": func() { os.Exit(command.Main(app())) },
	})
}

// TestScripts runs testdata/script/*.txtar; UPDATE=1 rewrites the goldens.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       os.Getenv("UPDATE") != "",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			if err := scripttest.SetRepo(env); err != nil {
				return err
			}
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("FIXTURES", fixtures)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     scripttest.Exits,
			"exporter":  cmdExporter,
			"fetch":     cmdFetch,
			"promcheck": cmdPromcheck,
		},
	})
}

// exporter start VAR ARGS...: starts meminfo-exporter --listen
// 127.0.0.1:0 ARGS... and sets $VAR to the address it reports listening
// on (the kernel picks the port: no port is chosen before the exporter
// binds it). exporter stop: SIGINT, then the exporter must exit 0; its
// stdout and stderr become the command's. A script's exporter still
// running at its end is killed.
func cmdExporter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: exporter start VAR ARGS... | exporter stop")
	}
	switch {
	case args[0] == "start" && len(args) >= 2:
		if _, ok := exporters.Load(ts); ok {
			ts.Fatalf("exporter: already started")
		}
		p, err := startExporter(ts, args[2:])
		ts.Check(err)
		exporters.Store(ts, p)
		ts.Defer(func() {
			if _, ok := exporters.LoadAndDelete(ts); ok {
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		})
		ts.Setenv(args[1], p.addr)
	case args[0] == "stop" && len(args) == 1:
		v, ok := exporters.LoadAndDelete(ts)
		if !ok {
			ts.Fatalf("exporter: not started")
		}
		p := v.(*exporterProc)
		ts.Check(p.cmd.Process.Signal(os.Interrupt))
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			ts.Fatalf("exporter: still running 10s after SIGINT")
		}
		ts.Stdout().Write(p.stdout.Bytes())
		ts.Stderr().Write(p.stderr.Bytes())
		if p.err != nil {
			ts.Fatalf("exporter: %v", p.err)
		}
	default:
		ts.Fatalf("usage: exporter start VAR ARGS... | exporter stop")
	}
}

// exporters are the running exporters, one per script.
var exporters sync.Map // *testscript.TestScript -> *exporterProc

type exporterProc struct {
	cmd            *exec.Cmd
	addr           string
	stdout, stderr bytes.Buffer // read only after done is closed
	done           chan struct{}
	err            error // the exit, once done is closed
}

var listeningOn = regexp.MustCompile(`^meminfo-exporter: listening on (\S+);`)

func startExporter(ts *testscript.TestScript, args []string) (*exporterProc, error) {
	bin, err := exec.LookPath("meminfo-exporter") // testscript.Main put it on PATH
	if err != nil {
		return nil, err
	}
	p := &exporterProc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"--listen", "127.0.0.1:0"}, args...)...)
	p.cmd.Dir = ts.Getenv("WORK")
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR"} {
		p.cmd.Env = append(p.cmd.Env, k+"="+ts.Getenv(k))
	}
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.WriteString(line + "\n")
			if m := listeningOn.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case p.addr = <-addr:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("exporter exited before listening (%v):\n%s", p.err, p.stderr.String())
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return nil, fmt.Errorf("exporter did not report listening within 10s:\n%s", p.stderr.String())
	}
}

// fetch [-status CODE] [-accept TYPE] [-normalize] URL: GETs URL, waiting
// up to 10s for the server to listen, checks the status (default 200) and
// writes the body to stdout. -normalize replaces what changes from run to
// run in an exposition: scrape durations and the Go version.
func cmdFetch(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	status := fs.Int("status", http.StatusOK, "expected status")
	accept := fs.String("accept", "", "Accept header")
	normalize := fs.Bool("normalize", false, "normalize an exposition")
	if neg || fs.Parse(args) != nil || fs.NArg() != 1 {
		ts.Fatalf("usage: fetch [-status CODE] [-accept TYPE] [-normalize] URL")
	}
	body, code, err := fetch(fs.Arg(0), *accept, 10*time.Second)
	ts.Check(err)
	if code != *status {
		ts.Fatalf("GET %s: status %d, want %d:\n%s", fs.Arg(0), code, *status, body)
	}
	if *normalize {
		body = normalizeExposition(body)
	}
	ts.Stdout().Write(body)
}

func fetch(url, accept string, wait time.Duration) ([]byte, int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	deadline := time.Now().Add(wait)
	client := &http.Client{Timeout: 15 * time.Second} // a hang fails the script instead of the whole test binary
	for {
		resp, err := client.Do(req)
		if err == nil {
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			return body, resp.StatusCode, err
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			return nil, 0, err
		}
		time.Sleep(20 * time.Millisecond) // polling for the server to listen
	}
}

var (
	durationLine = regexp.MustCompile(`(?m)^(meminfo_scrape_collector_duration_seconds\{[^}]*\}) .*$`)
	goVersion    = regexp.MustCompile(`goversion="[^"]*"`)
)

func normalizeExposition(b []byte) []byte {
	b = durationLine.ReplaceAll(b, []byte("$1 DURATION"))
	return goVersion.ReplaceAll(b, []byte(`goversion="GOVERSION"`))
}

// promcheck FILE: `promtool check metrics` must accept FILE. The one lint
// accepted is promtool's camelCase complaint about names that keep the
// kernel's spelling of a /proc/meminfo field (meminfo_MemAvailable_bytes),
// as node_exporter's do; anything else fails.
func cmdPromcheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: promcheck FILE")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(promtoolCheck(context.Background(), data))
}

var kernelNameLint = regexp.MustCompile(`^(meminfo_[A-Za-z0-9_]+) metric names should be written in 'snake_case' not 'camelCase'$`)

func promtoolCheck(ctx context.Context, exposition []byte) error {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		return fmt.Errorf("promtool not found (install Debian's prometheus package: bash .ci/deps.sh): %w", err)
	}
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return fmt.Errorf("promtool: %w", err)
	}
	var bad []string
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := kernelNameLint.FindStringSubmatch(line)
		if m == nil || !kernelFieldName(m[1]) {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("promtool check metrics:\n%s", strings.Join(bad, "\n"))
	}
	if err != nil && len(out) == 0 {
		return fmt.Errorf("promtool check metrics failed without a message: %w", err)
	}
	return nil
}

// kernelFieldName says whether name is one of the meminfo_<Field>[_bytes]
// names derived from a /proc/meminfo field; the exporter's own names
// (meminfo_cgroup_*, meminfo_scrape_*, ...) are all snake_case.
func kernelFieldName(name string) bool {
	for _, own := range []string{"meminfo_cgroup_", "meminfo_scrape_", "meminfo_parse_", "meminfo_exporter_"} {
		if strings.HasPrefix(name, own) {
			return false
		}
	}
	return true
}

func TestPromtoolCheckRejects(t *testing.T) {
	// The filter lets through the kernel-name lint and nothing else.
	ok := "# HELP meminfo_MemFree_bytes x\n# TYPE meminfo_MemFree_bytes gauge\nmeminfo_MemFree_bytes 1\n"
	if err := promtoolCheck(t.Context(), []byte(ok)); err != nil {
		t.Errorf("kernel field name rejected: %v", err)
	}
	for name, exposition := range map[string]string{
		"no help":          "# TYPE meminfo_foo_bytes gauge\nmeminfo_foo_bytes 1\n",
		"counter no total": "# HELP meminfo_foo x\n# TYPE meminfo_foo counter\nmeminfo_foo 1\n",
		"own camelCase":    "# HELP meminfo_cgroup_fooBar x\n# TYPE meminfo_cgroup_fooBar gauge\nmeminfo_cgroup_fooBar 1\n",
		"non-base unit":    "# HELP meminfo_foo_milliseconds x\n# TYPE meminfo_foo_milliseconds gauge\nmeminfo_foo_milliseconds 1\n",
	} {
		if err := promtoolCheck(t.Context(), []byte(exposition)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
