package snapshot

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendIndent(t *testing.T) {
	for _, src := range []string{
		`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `[{},[],{"b":[1,2,{"c":null}]}]`,
		`{"s":"quote \" brace { bracket [ comma , colon : backslash \\"}`,
		`{"a":"\\","b":"\\\"","c":"\u003c"}`,
		`"just a string"`, `42`, `true`, `{"a":1.5e-7,"b":-0,"c":[true,false,null]}`,
	} {
		for _, prefix := range []string{"", "    "} {
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(src), prefix, "  "); err != nil {
				t.Fatalf("json.Indent(%s): %v", src, err)
			}
			if diff := cmp.Diff(want.String(), string(appendIndent(nil, []byte(src), prefix))); diff != "" {
				t.Errorf("appendIndent(%s, %q) (-json.Indent +got):\n%s", src, prefix, diff)
			}
		}
	}
}

// FuzzAppendIndent holds appendIndent to json.Indent on whatever
// json.Marshal could have written (valid JSON, compacted).
func FuzzAppendIndent(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"]}"},[]],"d":{}}`))
	f.Add([]byte(`[ "x" , { } ]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, data) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "  ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndent(nil, compact.Bytes(), "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("appendIndent(%s):\n%s\nwant\n%s", compact.Bytes(), got, want.Bytes())
		}
	})
}
