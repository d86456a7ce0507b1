package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

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
	w interface {
		io.Writer
		io.StringWriter
	}
	buf    bytes.Buffer // compact JSON of one value
	out    []byte       // the same, indented
	enc    *json.Encoder
	fields int
	err    error
}

func newStream(w interface {
	io.Writer
	io.StringWriter
}) *stream {
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
// Long lists are encoded chunk by chunk on every CPU and written in order;
// only a few chunks are held at once, never a second copy of the list.
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
	chunks := (len(items) + chunkSize - 1) / chunkSize
	if workers := min(runtime.GOMAXPROCS(0), chunks); workers > 1 {
		e.parallel(chunks, workers, func(c *stream, i int) {
			chunk(c, items[i*chunkSize:min((i+1)*chunkSize, len(items))], i == 0)
		})
	} else {
		chunk(e, items, true)
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

// parallel runs encode(c, i) for i in [0, n) on workers goroutines, each
// with a stream of its own, and copies their output to e in the order of
// i. At most 2*workers outputs exist at once, and their buffers are reused.
func (e *stream) parallel(n, workers int, encode func(c *stream, i int)) {
	type encoded struct {
		out bytes.Buffer
		err error
	}
	done := make([]chan *encoded, n)
	for i := range done {
		done[i] = make(chan *encoded, 1)
	}
	free := make(chan *encoded, 2*workers)
	for range cap(free) {
		free <- &encoded{}
	}
	type job struct {
		i int
		r *encoded
	}
	next := make(chan job)
	go func() { // buffers are handed out in the order of i, so i never waits for a later one
		defer close(next)
		for i := range n {
			next <- job{i, <-free}
		}
	}()
	for range workers {
		go func() {
			c := newStream(nil)
			for j := range next {
				i, r := j.i, j.r
				c.w, c.err = &r.out, nil
				encode(c, i)
				r.err = c.err
				done[i] <- r
			}
		}()
	}
	for i := range n { // every result is taken, so every goroutine ends
		r := <-done[i]
		if e.err == nil {
			e.err = r.err
		}
		if e.err == nil {
			_, e.err = e.w.Write(r.out.Bytes())
		}
		r.out.Reset()
		free <- r
	}
}
