package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
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
// text exposition (expfmt's parser).
func ParseRequests(r io.Reader) (Requests, error) {
	dec := expfmt.NewDecoder(r, expfmt.NewFormat(expfmt.TypeTextPlain))
	out := Requests{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("apiserver metrics: %w", err)
		}
		if mf.GetName() != "apiserver_request_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := RequestKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"], Code: labels["code"], DryRun: labels["dry_run"]}
			value := m.GetCounter().GetValue()
			if mf.GetType() == dto.MetricType_UNTYPED {
				value = m.GetUntyped().GetValue()
			}
			out[key] += int(value)
		}
	}
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
