package analyze

import (
	"bufio"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/inorder"
)

// encodeOptions write what document.Encode writes (encoding/json, indented
// by two spaces): nil lists and maps as null, map keys sorted, HTML and
// JavaScript line separators escaped, invalid UTF-8 replaced.
var encodeOptions = json.JoinOptions(
	jsontext.WithIndent("  "),
	json.Deterministic(true),
	json.FormatNilSliceAsNull(true),
	json.FormatNilMapAsNull(true),
	jsontext.EscapeForHTML(true),
	jsontext.EscapeForJS(true),
	jsontext.AllowInvalidUTF8(true),
)

// WriteJSON writes r as document.Encode(w, document.JSON, r) does, byte for
// byte. The report's fields are encoded one by one, its nodes on every core,
// in batches written in order: the report is never held in memory whole as
// text.
func WriteJSON(w io.Writer, r *Report) error {
	if r.APIVersion != document.APIVersion || r.Kind != Kind {
		return fmt.Errorf("encode: document header %q/%q is not set", r.APIVersion, r.Kind)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	indented := json.JoinOptions(encodeOptions, jsontext.WithIndentPrefix("  "))
	bw.WriteString("{")
	type field struct {
		name string
		v    any
	}
	fields := []field{{"apiVersion", r.APIVersion}, {"kind", r.Kind}, {"metadata", &r.Metadata}, {"risk", r.Risk}}
	if r.Capacity != nil {
		fields = append(fields, field{"capacity", r.Capacity})
	}
	for _, f := range fields {
		b, err := json.Marshal(f.v, indented)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "\n  %q: %s,", f.name, b)
	}
	switch {
	case r.Nodes == nil:
		bw.WriteString("\n  \"nodes\": null")
	case len(r.Nodes) == 0:
		bw.WriteString("\n  \"nodes\": []")
	default:
		bw.WriteString("\n  \"nodes\": [")
		nodeOptions := json.JoinOptions(encodeOptions, jsontext.WithIndentPrefix("    "))
		err := inorder.Write(bw, len(r.Nodes), 32, func(_ int, dst []byte, from, to int) ([]byte, error) {
			for i := from; i < to; i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, "\n    "...)
				b, err := json.Marshal(&r.Nodes[i], nodeOptions)
				if err != nil {
					return nil, err
				}
				dst = append(dst, b...)
			}
			return dst, nil
		})
		if err != nil {
			return err
		}
		bw.WriteString("\n  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
