package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseLearned: the document alone (JSON or YAML) and maintd's
// ConfigMap give the same quantiles; bad samples and entries are dropped,
// the last sampled of a workload's entries is kept; what is not learned
// times is an error that says so.
func TestParseLearned(t *testing.T) {
	const doc = `{"workloads":[
{"kind":"Deployment","namespace":"shop","name":"web","exitMillis":[100,300,200,-5],"readyMillis":[4000,5000],"last":"2026-12-05T12:00:00Z"},
{"kind":"Deployment","namespace":"shop","name":"web","exitMillis":[9000],"last":"2026-12-05T11:00:00Z"},
{"kind":"","namespace":"shop","name":"nameless","exitMillis":[1]},
{"kind":"StatefulSet","namespace":"shop","name":"db","exitMillis":[0,999999999999]}]}`
	web := Workload{Kind: "Deployment", Namespace: "shop", Name: "web"}
	want := map[Workload]Learned{web: {ExitP50: 200 * time.Millisecond, ExitP90: 300 * time.Millisecond, ExitSamples: 3,
		ReadyP50: 4 * time.Second, ReadyP90: 5 * time.Second, ReadySamples: 2}}
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sentinel-maintd-learned, namespace: maintd-system}\ndata:\n  learned.json: '" + strings.ReplaceAll(doc, "\n", "") + "'\n"
	asYAML := `workloads:
- {kind: Deployment, namespace: shop, name: web, exitMillis: [100, 300, 200, -5], readyMillis: [4000, 5000], last: "2026-12-05T12:00:00Z"}
- {kind: Deployment, namespace: shop, name: web, exitMillis: [9000], last: "2026-12-05T11:00:00Z"}
- {kind: StatefulSet, namespace: shop, name: db, exitMillis: [0]}
`
	for name, in := range map[string]string{"json": doc, "configmap": configMap, "yaml": asYAML} {
		got, err := ParseLearned([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	for in, why := range map[string]string{
		"{":                                   "learned times",
		"kind: ConfigMap\ndata: {other: x}\n": "no data.learned.json",
		"kind: ConfigMap\ndata: {learned.json: '['}": "data.learned.json",
		"kind: Pod\nmetadata: {name: p}\n":           "a Pod, not a ConfigMap",
	} {
		if _, err := ParseLearned([]byte(in)); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error with %q", in, err, why)
		}
	}
}

// FuzzParseLearned: any input parses or fails, never panics, and what it
// gives has quantiles within its samples' bounds.
func FuzzParseLearned(f *testing.F) {
	f.Add([]byte(`{"workloads":[{"kind":"Deployment","namespace":"ns","name":"web","exitMillis":[100,2000],"readyMillis":[3000]}]}`))
	f.Add([]byte("kind: ConfigMap\ndata: {learned.json: '{\"workloads\":[]}'}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseLearned(data)
		if err != nil {
			return
		}
		for w, l := range got {
			if w.Kind == "" || w.Name == "" || l.ExitSamples+l.ReadySamples == 0 {
				t.Errorf("%v: %+v", w, l)
			}
			for _, d := range []time.Duration{l.ExitP50, l.ExitP90, l.ReadyP50, l.ReadyP90} {
				if d < 0 || d > maxLearnedSample {
					t.Errorf("%v: %+v out of bounds", w, l)
				}
			}
			if l.ExitP50 > l.ExitP90 || l.ReadyP50 > l.ReadyP90 {
				t.Errorf("%v: p50 above p90: %+v", w, l)
			}
		}
	})
}
