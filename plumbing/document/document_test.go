package document

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type sample struct {
	Header `json:",inline"`
	Spec   struct {
		Node  string   `json:"node"`
		Count int      `json:"count,omitempty"`
		Tags  []string `json:"tags,omitempty"`
	} `json:"spec"`
}

func TestRoundTrip(t *testing.T) {
	in := sample{Header: NewHeader("Sample")}
	in.Spec.Node = "node-1"
	in.Spec.Count = 3
	in.Spec.Tags = []string{"a", "b"}
	for _, f := range []Format{JSON, YAML} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, f, in); err != nil {
				t.Fatal(err)
			}
			var out sample
			if err := Decode(&buf, "Sample", &out, 0); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, out); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := map[string]struct {
		in    string
		limit int64
		want  string // substring of the error
	}{
		"empty":                {"", 0, "empty input: want a Sample document"},
		"blank":                {" \n\t\n", 0, "empty input"},
		"truncated json":       {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{"node":"n`, 0, "truncated JSON at line 1"},
		"bad json":             {"{\"apiVersion\":\"sentinel.dev/v1alpha1\",\n\"kind\":\"Sample\",,}", 0, "invalid JSON at line 2, column 17"},
		"yaml garbage":         {"apiVersion: [\n  - : :\n", 0, "invalid YAML"},
		"yaml scalar":          {"just words\n", 0, "invalid YAML: the document is not a mapping"},
		"wrong kind":           {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Report","spec":{}}`, 0, `unexpected kind "Report": want "Sample"`},
		"missing kind":         {`{"apiVersion":"sentinel.dev/v1alpha1","spec":{}}`, 0, `missing "kind"`},
		"wrong apiVersion":     {`{"apiVersion":"v1","kind":"Sample","spec":{}}`, 0, `unknown apiVersion "v1": want "sentinel.dev/v1alpha1"`},
		"unknown field":        {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{"node":"n","color":"red"}}`, 0, `unknown field "spec.color"`},
		"unknown field yaml":   {"apiVersion: sentinel.dev/v1alpha1\nkind: Sample\nspec:\n  nodes: n\n", 0, `unknown field "spec.nodes"`},
		"wrong kind and field": {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Report","items":[]}`, 0, `unexpected kind "Report"`},
		"duplicate field":      {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{"node":"a","node":"b"}}`, 0, `duplicate field "spec.node"`},
		"wrong type":           {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{"count":"three"}}`, 0, "cannot unmarshal string"},
		"two yaml documents":   {"apiVersion: sentinel.dev/v1alpha1\nkind: Sample\n---\napiVersion: sentinel.dev/v1alpha1\nkind: Sample\n", 0, "2 YAML documents"},
		"over limit":           {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{}}`, 10, "larger than the limit of 10 bytes"},
		"json array":           {`[1,2]`, 0, "cannot unmarshal array"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out sample
			err := Decode(strings.NewReader(tc.in), "Sample", &out, tc.limit)
			if err == nil {
				t.Fatalf("Decode(%q) succeeded, want error containing %q", tc.in, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode(%q) error = %q, want it to contain %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	tests := map[string]string{
		"leading document marker": "---\napiVersion: sentinel.dev/v1alpha1\nkind: Sample\nspec:\n  node: n1\n",
		"comments":                "# a snapshot\napiVersion: sentinel.dev/v1alpha1\nkind: Sample\nspec: {node: n1}\n---\n# trailing\n",
		"json with whitespace":    "\n  {\"apiVersion\":\"sentinel.dev/v1alpha1\",\"kind\":\"Sample\",\"spec\":{\"node\":\"n1\"}}\n\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var out sample
			if err := Decode(strings.NewReader(in), "Sample", &out, 0); err != nil {
				t.Fatal(err)
			}
			if out.Spec.Node != "n1" {
				t.Errorf("spec.node = %q, want n1", out.Spec.Node)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("yaml", JSON, YAML); err != nil || f != YAML {
		t.Errorf("ParseFormat(yaml) = %q, %v", f, err)
	}
	if _, err := ParseFormat("table", JSON, YAML); err == nil || !strings.Contains(err.Error(), "want one of json, yaml") {
		t.Errorf("ParseFormat(table) error = %v", err)
	}
}

func TestEncodeRefusesHeaderless(t *testing.T) {
	if err := Encode(&bytes.Buffer{}, JSON, sample{}); err == nil {
		t.Error("Encode of a document without header succeeded")
	}
}

// FuzzUnmarshal: the decoder never panics, and whatever it accepts
// re-encodes and decodes to the same value (an empty list and none are the
// same: omitempty drops the first).
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Sample","spec":{"node":"n","count":2}}`))
	f.Add([]byte("apiVersion: sentinel.dev/v1alpha1\nkind: Sample\nspec:\n  tags: [a, b]\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte(`{"kind":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out sample
		if err := Unmarshal(data, "Sample", &out); err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, JSON, out); err != nil {
			t.Fatalf("accepted document does not encode: %v", err)
		}
		var again sample
		if err := Unmarshal(buf.Bytes(), "Sample", &again); err != nil {
			t.Fatalf("re-encoded document does not decode: %v\n%s", err, buf.Bytes())
		}
		if diff := cmp.Diff(out, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("re-decode differs (-first +second):\n%s", diff)
		}
	})
}
