package controlplane

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// RequestKey identifies a series of apiserver_request_total.
type RequestKey struct {
	Verb, Resource, Subresource, Code, DryRun string
}

// Requests are the apiserver's request counters at one moment.
type Requests map[RequestKey]int

// Requests reads apiserver_request_total from the API server's /metrics.
func (cp *ControlPlane) Requests(ctx context.Context) (Requests, error) {
	client, err := rest.HTTPClientFor(cp.Config(Admin))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("apiserver metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("apiserver metrics: %s", resp.Status)
	}
	return ParseRequests(resp.Body)
}

// ParseRequests reads the apiserver_request_total series from a Prometheus
// text exposition.
func ParseRequests(r io.Reader) (Requests, error) {
	const name = "apiserver_request_total{"
	out := Requests{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(name)) {
			continue
		}
		end := bytes.LastIndexByte(line, '}')
		if end < 0 {
			return nil, fmt.Errorf("apiserver metrics: malformed line %q", line)
		}
		labels := parseLabels(string(line[len(name):end]))
		value, err := strconv.ParseFloat(strings.TrimSpace(string(line[end+1:])), 64)
		if err != nil {
			return nil, fmt.Errorf("apiserver metrics: value in %q: %w", line, err)
		}
		key := RequestKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"], Code: labels["code"], DryRun: labels["dry_run"]}
		out[key] += int(value)
	}
	return out, sc.Err()
}

func parseLabels(s string) map[string]string {
	labels := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := s[:eq]
		rest := s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			val.WriteByte(rest[i])
		}
		labels[key] = val.String()
		s = strings.TrimPrefix(rest[min(i+1, len(rest)):], ",")
	}
	return labels
}

// Sub is the change since before.
func (r Requests) Sub(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Count sums the series matching verb, resource, subresource and code; an
// empty argument matches anything.
func (r Requests) Count(verb, resource, subresource, code string) int {
	n := 0
	for k, v := range r {
		if (verb == "" || k.Verb == verb) && (resource == "" || k.Resource == resource) &&
			(subresource == "" || k.Subresource == subresource) && (code == "" || k.Code == code) {
			n += v
		}
	}
	return n
}
