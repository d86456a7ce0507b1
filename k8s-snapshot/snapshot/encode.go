package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/inorder"
)

// Encode writes s in format f. JSON is streamed object by object, with the
// very bytes document.Encode would write, without a second copy of the
// objects in memory; YAML goes through document.Encode.
func Encode(w io.Writer, f document.Format, s *Snapshot) error {
	if f != document.JSON && f != "" {
		return document.Encode(w, f, s)
	}
	if h := s.DocumentHeader(); h.APIVersion != document.APIVersion || h.Kind == "" {
		return fmt.Errorf("encode: document header %q/%q is not set", h.APIVersion, h.Kind)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	e := newStream(bw)
	e.raw("{\n")
	e.field("apiVersion", s.APIVersion)
	e.field("kind", s.Kind)
	e.field("metadata", &s.Metadata)
	list(e, "nodes", s.Nodes)
	list(e, "pods", s.Pods)
	list(e, "replicaSets", s.ReplicaSets)
	list(e, "deployments", s.Deployments)
	list(e, "statefulSets", s.StatefulSets)
	list(e, "daemonSets", s.DaemonSets)
	list(e, "jobs", s.Jobs)
	list(e, "cronJobs", s.CronJobs)
	list(e, "podDisruptionBudgets", s.PodDisruptionBudgets)
	list(e, "persistentVolumeClaims", s.PersistentVolumeClaims)
	list(e, "persistentVolumes", s.PersistentVolumes)
	list(e, "storageClasses", s.StorageClasses)
	list(e, "horizontalPodAutoscalers", s.HorizontalPodAutoscalers)
	list(e, "volumeAttachments", s.VolumeAttachments)
	list(e, "csiDrivers", s.CSIDrivers)
	list(e, "csiNodes", s.CSINodes)
	list(e, "namespaces", s.Namespaces)
	e.raw("\n}\n")
	if e.err != nil {
		return fmt.Errorf("encode: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return nil
}

// stream writes an indented JSON object field by field; the first error
// sticks.
type stream struct {
	w      writer
	buf    bytes.Buffer // compact JSON of one value
	out    []byte       // the same, indented
	enc    *json.Encoder
	fields int
	err    error
}

// writer is where a stream writes.
type writer interface {
	io.Writer
	io.StringWriter
}

func newStream(w writer) *stream {
	e := &stream{w: w}
	e.enc = json.NewEncoder(&e.buf)
	return e
}

func (e *stream) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// value writes v as encoding/json indents it at depth (prefix) in a
// document, without the encoder's trailing newline.
func (e *stream) value(prefix string, v any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	if e.err = e.enc.Encode(v); e.err != nil {
		return
	}
	e.out = appendIndent(e.out[:0], bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), prefix)
	_, e.err = e.w.Write(e.out)
}

// key starts the next field of the top-level object.
func (e *stream) key(name string) {
	if e.fields > 0 {
		e.raw(",\n")
	}
	e.fields++
	e.raw("  ")
	e.value("", name)
	e.raw(": ")
}

func (e *stream) field(name string, v any) {
	e.key(name)
	e.value("  ", v)
}

// list writes items as encoding/json would: null for nil, [] for empty.
// The items are encoded in batches on every CPU and written in order
// (inorder.Write), holding only a round of batches, never a second copy of
// the list.
func list[T any](e *stream, name string, items []T) {
	e.key(name)
	switch {
	case items == nil:
		e.raw("null")
		return
	case len(items) == 0:
		e.raw("[]")
		return
	}
	e.raw("[\n")
	if e.err == nil {
		workers := make([]*stream, runtime.GOMAXPROCS(0)) // one each: their calls never overlap
		e.err = inorder.Write(e.w, len(items), chunkSize, func(w int, dst []byte, from, to int) ([]byte, error) {
			if workers[w] == nil {
				workers[w] = newStream(nil)
			}
			out, c := &appender{b: dst}, workers[w]
			c.w, c.err = out, nil
			chunk(c, items[from:to], from == 0)
			return out.b, c.err
		})
	}
	e.raw("\n  ]")
}

// chunkSize is how many list items one encoding task takes.
const chunkSize = 64

// chunk writes items of a list; first when they open it.
func chunk[T any](e *stream, items []T, first bool) {
	for i := range items {
		if i > 0 || !first {
			e.raw(",\n")
		}
		e.raw("    ")
		e.value("    ", &items[i])
	}
}

// appender is a writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (a *appender) WriteString(s string) (int, error) {
	a.b = append(a.b, s...)
	return len(s), nil
}
