// Command loadgen sends GET requests to one URL at a fixed rate (open
// loop) over a fixed number of keep-alive connections and prints the
// latency percentiles, each latency counted from the moment the request
// was handed to the connections, not from when a free connection sent it:
// a server that falls behind is charged for the queue it causes (no
// coordinated omission), and the generator's own timer lateness is not.
//
// wrk (closed loop) finds the most requests/s a server can answer; loadgen
// compares two servers' latency under the same offered load.
//
//	go run ./bench/loadgen -url http://127.0.0.1:9101/metrics -rate 500 -duration 10s -connections 8
//
// It prints one line: "requests N errors E rate R p50 P p90 P p99 P p999 P max P" (milliseconds).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"
)

func main() {
	url := flag.String("url", "", "the URL to GET")
	rate := flag.Float64("rate", 100, "requests per second, sent on schedule")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	conns := flag.Int("connections", 8, "keep-alive connections (one request at a time each)")
	flag.Parse()
	if *url == "" || *rate <= 0 || *duration <= 0 || *conns < 1 {
		fmt.Fprintln(os.Stderr, "loadgen: -url, a positive -rate and -duration and at least one connection are needed")
		os.Exit(1)
	}
	r, err := run(context.Background(), *url, *rate, *duration, *conns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	fmt.Println(r)
}

// result is what one run measured.
type result struct {
	latencies []time.Duration // sorted
	errors    int
	elapsed   time.Duration
}

func (r result) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	return fmt.Sprintf("requests %d errors %d rate %.1f p50 %s p90 %s p99 %s p999 %s max %s",
		len(r.latencies), r.errors, float64(len(r.latencies))/r.elapsed.Seconds(),
		ms(quantile(r.latencies, 0.50)), ms(quantile(r.latencies, 0.90)), ms(quantile(r.latencies, 0.99)),
		ms(quantile(r.latencies, 0.999)), ms(quantile(r.latencies, 1)))
}

// quantile is the q-quantile of sorted latencies (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// due is when request i of a run that starts at start is to be sent.
func due(start time.Time, rate float64, i int) time.Time {
	return start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
}

func run(ctx context.Context, url string, rate float64, duration time.Duration, conns int) (result, error) {
	n := int(rate * duration.Seconds())
	if n < 1 {
		return result{}, fmt.Errorf("rate %.1f for %s sends no request", rate, duration)
	}
	jobs := make(chan time.Time, n)
	type answer struct {
		latency time.Duration
		err     error
	}
	answers := make(chan answer, n)
	for range conns {
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
		go func() {
			for at := range jobs {
				err := get(ctx, client, url)
				answers <- answer{time.Since(at), err}
			}
		}()
	}
	start := time.Now()
	for i := range n {
		at := due(start, rate, i)
		if d := time.Until(at); d > 0 {
			time.Sleep(d) // the schedule itself, not a synchronisation
		}
		jobs <- time.Now()
	}
	close(jobs)
	r := result{latencies: make([]time.Duration, 0, n)}
	var firstErr error
	for range n {
		a := <-answers
		if a.err != nil {
			r.errors++
			firstErr = a.err
			continue
		}
		r.latencies = append(r.latencies, a.latency)
	}
	r.elapsed = time.Since(start)
	slices.Sort(r.latencies)
	if r.errors > 0 {
		return r, fmt.Errorf("%d of %d requests failed, last: %w", r.errors, n, firstErr)
	}
	return r, nil
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
