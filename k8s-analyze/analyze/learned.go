package analyze

import (
	"bytes"
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

// Learned samples as they are kept and read: maintd keeps what it watched
// (docs/maintd.md, "Forecast learning") in a ConfigMap's data under
// LearnedKey as a LearnedDoc in JSON; k8s-analyze --learned reads that
// ConfigMap, or the document alone, into ForecastOptions.Learned.

// LearnedKey is the key of the ConfigMap's data that holds the LearnedDoc.
const LearnedKey = "learned.json"

// LearnedDoc is learned samples: each workload's last exits and times to
// Ready, in milliseconds, oldest first.
type LearnedDoc struct {
	Workloads []LearnedSamples `json:"workloads"`
}

// LearnedSamples are one workload's samples, and when the last was taken.
type LearnedSamples struct {
	Workload
	ExitMillis  []int64   `json:"exitMillis,omitempty"`
	ReadyMillis []int64   `json:"readyMillis,omitempty"`
	Last        time.Time `json:"last"`
}

// maxLearnedSample bounds a sample: a longer one, or one not positive, is
// no pod's exit or start and is dropped.
const maxLearnedSample = 24 * time.Hour

// Samples are s's exits and times to Ready that are positive and at most
// a day, in their order.
func (s LearnedSamples) Samples() (exits, readies []time.Duration) {
	valid := func(ms []int64) []time.Duration {
		var out []time.Duration
		for _, v := range ms {
			if v > 0 && v <= maxLearnedSample.Milliseconds() {
				out = append(out, time.Duration(v)*time.Millisecond)
			}
		}
		return out
	}
	return valid(s.ExitMillis), valid(s.ReadyMillis)
}

// DecodeLearned reads a LearnedDoc, JSON or YAML, or a ConfigMap (as
// kubectl get configmap -o yaml or -o json shows it) that holds one in its
// data under LearnedKey. Entries without a kind or a name are dropped; of
// several entries of one workload, the one sampled last is kept.
func DecodeLearned(data []byte) ([]LearnedSamples, error) {
	var doc struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
		LearnedDoc
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("learned times: %w", err)
	}
	if doc.Kind == "ConfigMap" {
		inner, ok := doc.Data[LearnedKey]
		if !ok {
			return nil, fmt.Errorf("learned times: the ConfigMap has no data.%s", LearnedKey)
		}
		doc.LearnedDoc = LearnedDoc{}
		if err := yaml.Unmarshal([]byte(inner), &doc.LearnedDoc); err != nil {
			return nil, fmt.Errorf("learned times: data.%s: %w", LearnedKey, err)
		}
	} else if len(bytes.TrimSpace(data)) > 0 && doc.Workloads == nil && doc.Kind != "" {
		return nil, fmt.Errorf("learned times: a %s, not a ConfigMap or a document of workloads", doc.Kind)
	}
	at := map[Workload]int{}
	var out []LearnedSamples
	for _, s := range doc.Workloads {
		if s.Kind == "" || s.Name == "" {
			continue
		}
		if i, ok := at[s.Workload]; ok {
			if s.Last.After(out[i].Last) {
				out[i] = s
			}
			continue
		}
		at[s.Workload] = len(out)
		out = append(out, s)
	}
	return out, nil
}

// ParseLearned is DecodeLearned's samples as the forecast takes them: each
// workload's quantiles (LearnedOf).
func ParseLearned(data []byte) (map[Workload]Learned, error) {
	samples, err := DecodeLearned(data)
	if err != nil {
		return nil, err
	}
	out := make(map[Workload]Learned, len(samples))
	for _, s := range samples {
		exits, readies := s.Samples()
		if len(exits)+len(readies) > 0 {
			out[s.Workload] = LearnedOf(exits, readies)
		}
	}
	return out, nil
}
