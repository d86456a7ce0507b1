package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sentinel-go/sentinel/plumbing/document"
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
	e := &stream{w: bufio.NewWriterSize(w, 256<<10)}
	e.enc = json.NewEncoder(&e.buf)
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
	e.raw("\n}\n")
	if e.err != nil {
		return fmt.Errorf("encode: %w", e.err)
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return nil
}

// stream writes an indented JSON object field by field; the first error
// sticks.
type stream struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	fields int
	err    error
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
	e.enc.SetIndent(prefix, "  ")
	if e.err = e.enc.Encode(v); e.err != nil {
		return
	}
	_, e.err = e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
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
	for i := range items {
		if i > 0 {
			e.raw(",\n")
		}
		e.raw("    ")
		e.value("    ", &items[i])
	}
	e.raw("\n  ]")
}
