package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/sentinel-go/sentinel/plumbing/document"
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
		const batch = 32
		encs := make([]enc, runtime.GOMAXPROCS(0))
		for start := 0; start < len(r.Nodes); start += batch * len(encs) {
			var wg sync.WaitGroup
			for w := range encs {
				e := &encs[w]
				e.b, e.prefix = e.b[:0], "    "
				wg.Go(func() {
					for i := start + w*batch; i < min(start+(w+1)*batch, len(r.Nodes)); i++ {
						if i > 0 {
							e.b = append(e.b, ',')
						}
						e.b = append(e.b, "\n    "...)
						e.node(&r.Nodes[i], 0)
					}
				})
			}
			wg.Wait()
			for w := range encs {
				if _, err := bw.Write(encs[w].b); err != nil {
					return err
				}
			}
		}
		bw.WriteString("\n  ]\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
