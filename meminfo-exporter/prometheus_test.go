package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/sentinel-go/sentinel/meminfo-exporter/exporter"
	"github.com/sentinel-go/sentinel/plumbing/deploytest"
)

// TestPrometheus: a real Prometheus (Debian's) scrapes the exporter every
// second, and the PromQL query meminfo_MemAvailable_bytes returns the
// fixture's MemAvailable x 1024.
func TestPrometheus(t *testing.T) {
	prometheus := deploytest.LookPath(t, "prometheus")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	e, err := exporter.New(exporter.Config{
		ProcFS:   filepath.Join("testdata", "procfs", "linux-6.18-x86_64"),
		CgroupFS: filepath.Join("testdata", "cgroupfs", "v2"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e.Handler()}
	go srv.Serve(ln)
	defer srv.Close()

	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: meminfo
    static_configs:
      - targets: [%q]
`, ln.Addr().String())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prometheus,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0", // the kernel picks the port; the log says which
	)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", log)
		}
	}()

	promAddr, err := promListening(ctx, filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}

	const want = "24318812160" // 23748840 kB
	query := "http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape("meminfo_MemAvailable_bytes")
	var last string
	for {
		got, err := instantValue(ctx, query)
		if err == nil && got == want {
			break
		}
		last = fmt.Sprintf("value %q, error %v", got, err)
		select {
		case <-ctx.Done():
			t.Fatalf("meminfo_MemAvailable_bytes never became %s: last %s", want, last)
		case <-time.After(200 * time.Millisecond): // polling Prometheus until its first scrapes are in
		}
	}
}

var promListeningOn = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// promListening is the address Prometheus reports listening on in its log.
func promListening(ctx context.Context, logPath string) (string, error) {
	for {
		log, err := os.ReadFile(logPath)
		if err != nil {
			return "", err
		}
		if m := promListeningOn.FindSubmatch(log); m != nil {
			return string(m[1]), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("prometheus did not report listening: %w; log:\n%s", ctx.Err(), log)
		case <-time.After(100 * time.Millisecond): // polling the log until Prometheus listens
		}
	}
}

// instantValue runs an instant query and returns the value of its only series.
func instantValue(ctx context.Context, query string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, query, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", err
	}
	if body.Status != "success" || len(body.Data.Result) != 1 {
		return "", fmt.Errorf("status %q, %d series", body.Status, len(body.Data.Result))
	}
	if job := body.Data.Result[0].Metric["job"]; job != "meminfo" {
		return "", fmt.Errorf("series of job %q", job)
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return s, nil
}
