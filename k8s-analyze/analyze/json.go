package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/inorder"
)

// WriteJSON writes r exactly as document.Encode(w, document.JSON, r) does,
// but node by node, so that the report of a big cluster is never held in
// memory twice (once as values, once as text).
func WriteJSON(w io.Writer, r *Report) error {
	if r.APIVersion != document.APIVersion || r.Kind != Kind {
		return fmt.Errorf("encode: document header %q/%q is not set", r.APIVersion, r.Kind)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	field := func(name string, v any, last bool) error {
		b, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "  %q: %s", name, b)
		if !last {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
		return nil
	}
	bw.WriteString("{\n")
	for _, f := range []struct {
		name string
		v    any
	}{{"apiVersion", r.APIVersion}, {"kind", r.Kind}, {"metadata", r.Metadata}, {"risk", r.Risk}} {
		if err := field(f.name, f.v, false); err != nil {
			return err
		}
	}
	switch {
	case r.Nodes == nil:
		bw.WriteString("  \"nodes\": null\n")
	case len(r.Nodes) == 0:
		bw.WriteString("  \"nodes\": []\n")
	default:
		bw.WriteString("  \"nodes\": [")
		// Nodes are encoded on every core, a batch each, into buffers
		// reused from round to round, and written in order.
		encs := make([]enc, runtime.GOMAXPROCS(0))
		err := inorder.Write(bw, len(r.Nodes), 32, func(w int, dst []byte, from, to int) ([]byte, error) {
			e := &encs[w]
			e.b, e.margin = dst, 4
			for i := from; i < to; i++ {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.b = append(e.b, "\n    "...)
				e.node(&r.Nodes[i], 0)
			}
			return e.b, nil
		})
		if err != nil {
			return err
		}
		bw.WriteString("\n  ]\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
