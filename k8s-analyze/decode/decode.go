// Package decode reads a Snapshot document strictly with
// github.com/go-json-experiment/json (the encoding/json/v2 implementation):
// unknown members, duplicate names and names in another case are errors that
// name the JSON path of the culprit, like "/pods/17/spec/nodeNmae: unknown
// field". YAML is converted to JSON first (document.ToJSON), strictly.
//
// JSON is streamed: the library's tokenizer (jsontext) reads the document
// and splits its top-level lists into elements, which are decoded on every
// CPU meanwhile, a batch at a time. What Read accepts, document.Unmarshal,
// the canonical strict decoder, accepts, into the same values (the fuzz
// target holds it to that).
package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/view"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// Options are the decoding rules: what document.Unmarshal refuses, these
// refuse. Invalid UTF-8 is accepted (replaced) as the canonical decoder
// accepts it.
var Options = json.JoinOptions(
	json.RejectUnknownMembers(true),
	json.MatchCaseInsensitiveNames(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true),
	json.WithUnmarshalers(json.UnmarshalFromFunc(unmarshalTime)),
)

// unmarshalTime decodes a metav1.Time as its UnmarshalJSON method does
// (null, or an RFC 3339 string, in local time), from the token, without
// the method's second pass of encoding/json over the value: every object
// has several times, and that pass was a fifth of the decoding.
func unmarshalTime(dec *jsontext.Decoder, t *metav1.Time) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		pt, err := time.Parse(time.RFC3339, tok.String())
		if err != nil {
			return err
		}
		t.Time = pt.Local()
		return nil
	}
	return fmt.Errorf("want a string or null, not %s", kindName(tok.Kind()))
}

// Snapshot decodes data, a Snapshot document in JSON or YAML, into its
// view.
func Snapshot(data []byte) (*view.Snapshot, error) {
	return Read(bytes.NewReader(data), int64(len(data)))
}

// Read decodes a Snapshot document, JSON or YAML, from r into its view,
// refusing more than limit bytes (limit <= 0: document.DefaultLimit). JSON
// is decoded as it is read, an object at a time, and only the object's view
// is kept; YAML is read whole first.
func Read(r io.Reader, limit int64) (*view.Snapshot, error) {
	var s view.Snapshot // no preset header: a missing kind must fail
	if err := read(r, limit, &s.Header, views(&s)); err != nil {
		return nil, err
	}
	return &s, nil
}

// Full is Read for the whole snapshot.Snapshot.
func Full(r io.Reader, limit int64) (*snapshot.Snapshot, error) {
	var s snapshot.Snapshot
	if err := read(r, limit, &s.Header, full(&s)); err != nil {
		return nil, err
	}
	return &s, nil
}

func read(r io.Reader, limit int64, h *document.Header, sinks map[string]sink) error {
	if limit <= 0 {
		limit = document.DefaultLimit
	}
	in := &input{r: r, limit: limit}
	br := bufio.NewReaderSize(in, 1<<16)
	var lead []byte // the blanks before the document
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return fmt.Errorf("empty input: want a %s document", snapshot.Kind)
		}
		if err != nil {
			return readError(err)
		}
		if strings.IndexByte(" \t\r\n\x00", b) < 0 {
			br.UnreadByte()
			if b != '{' && b != '[' {
				return yamlDocument(lead, br, h, sinks)
			}
			break
		}
		lead = append(lead, b)
	}
	err := stream(br, h, sinks)
	var syn *syntaxErr
	if errors.As(err, &syn) {
		return syn.describe(r, int64(len(lead)))
	}
	return err
}

// yamlDocument reads the rest of a YAML document and decodes its strict
// conversion to JSON.
func yamlDocument(lead []byte, r io.Reader, h *document.Header, sinks map[string]sink) error {
	rest, err := io.ReadAll(r)
	if err != nil {
		return readError(err)
	}
	js, err := document.ToJSON(append(lead, rest...), snapshot.Kind)
	if err != nil {
		return err
	}
	err = stream(bytes.NewReader(js), h, sinks)
	var syn *syntaxErr
	if errors.As(err, &syn) {
		return syn.describe(bytes.NewReader(js), 0)
	}
	return err
}

// input reads at most limit bytes of r.
type input struct {
	r     io.Reader
	n     int64
	limit int64
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.n += int64(n)
	if in.n > in.limit {
		return n, &inputError{fmt.Errorf("input is larger than the limit of %d bytes", in.limit)}
	}
	if err != nil && err != io.EOF {
		err = &inputError{fmt.Errorf("read input: %w", err)}
	}
	return n, err
}

// readError is err, an error of reading the input.
func readError(err error) error {
	var e *inputError
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("read input: %w", err)
}

type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }

// sink is a top-level member: a single value, or a list whose elements are
// decoded a batch at a time.
type sink interface {
	// decode decodes b; the error names the bad element's index in b.
	decode(b *batch) (int, error)
	// finish sets the member once every batch is decoded.
	finish()
}

type single[T any] struct{ v *T }

func (s single[T]) decode(b *batch) (int, error) { return 0, json.Unmarshal(b.value(0), s.v, Options) }
func (single[T]) finish()                        {}

// list decodes each element into a T and keeps of it what of makes of it.
type list[T, V any] struct {
	l      *[]V
	of     func(*T) V
	mu     sync.Mutex
	chunks map[int][]V // by the index of their first element
	n      int         // elements; -1 for null
}

func (l *list[T, V]) decode(b *batch) (int, error) {
	out := make([]V, len(b.ends))
	var obj T
	for i := range out {
		var zero T
		obj = zero
		if err := json.Unmarshal(b.value(i), &obj, Options); err != nil {
			return i, err
		}
		out[i] = l.of(&obj)
	}
	l.mu.Lock()
	l.chunks[b.first] = out
	l.mu.Unlock()
	return 0, nil
}

func (l *list[T, V]) finish() {
	if l.n < 0 {
		return
	}
	*l.l = make([]V, 0, l.n)
	for len(*l.l) < l.n {
		*l.l = append(*l.l, l.chunks[len(*l.l)]...)
	}
	l.chunks = nil
}

func newList[T, V any](l *[]V, of func(*T) V) *list[T, V] {
	return &list[T, V]{l: l, of: of, chunks: map[int][]V{}, n: -1}
}

func whole[T any](v *T) T { return *v }

// header are the members of a Snapshot's header.
func header(h *document.Header, m *snapshot.Metadata) map[string]sink {
	return map[string]sink{
		"apiVersion": single[string]{&h.APIVersion},
		"kind":       single[string]{&h.Kind},
		"metadata":   single[snapshot.Metadata]{m},
	}
}

// full are the members of s, decoded whole.
func full(s *snapshot.Snapshot) map[string]sink {
	m := header(&s.Header, &s.Metadata)
	m["nodes"] = newList(&s.Nodes, whole)
	m["pods"] = newList(&s.Pods, whole)
	m["replicaSets"] = newList(&s.ReplicaSets, whole)
	m["deployments"] = newList(&s.Deployments, whole)
	m["statefulSets"] = newList(&s.StatefulSets, whole)
	m["daemonSets"] = newList(&s.DaemonSets, whole)
	m["jobs"] = newList(&s.Jobs, whole)
	m["cronJobs"] = newList(&s.CronJobs, whole)
	m["podDisruptionBudgets"] = newList(&s.PodDisruptionBudgets, whole)
	m["persistentVolumeClaims"] = newList(&s.PersistentVolumeClaims, whole)
	m["persistentVolumes"] = newList(&s.PersistentVolumes, whole)
	m["storageClasses"] = newList(&s.StorageClasses, whole)
	m["horizontalPodAutoscalers"] = newList(&s.HorizontalPodAutoscalers, whole)
	m["volumeAttachments"] = newList(&s.VolumeAttachments, whole)
	m["csiDrivers"] = newList(&s.CSIDrivers, whole)
	m["csiNodes"] = newList(&s.CSINodes, whole)
	m["namespaces"] = newList(&s.Namespaces, whole)
	return m
}

// views are the members of s decoded whole, one object at a time, and
// kept as views.
func views(s *view.Snapshot) map[string]sink {
	m := header(&s.Header, &s.Metadata)
	m["nodes"] = newList(&s.Nodes, view.NodeOf)
	m["pods"] = newList(&s.Pods, view.PodWithSchedulingOf)
	m["replicaSets"] = newList(&s.ReplicaSets, view.ReplicaSetOf)
	m["deployments"] = newList(&s.Deployments, view.DeploymentOf)
	m["statefulSets"] = newList(&s.StatefulSets, view.StatefulSetOf)
	m["daemonSets"] = newList(&s.DaemonSets, view.DaemonSetOf)
	m["jobs"] = newList(&s.Jobs, view.JobOf)
	m["cronJobs"] = newList(&s.CronJobs, view.CronJobOf)
	m["podDisruptionBudgets"] = newList(&s.PodDisruptionBudgets, view.PodDisruptionBudgetOf)
	m["persistentVolumeClaims"] = newList(&s.PersistentVolumeClaims, view.PersistentVolumeClaimOf)
	m["persistentVolumes"] = newList(&s.PersistentVolumes, view.PersistentVolumeOf)
	m["storageClasses"] = newList(&s.StorageClasses, view.StorageClassOf)
	m["horizontalPodAutoscalers"] = newList(&s.HorizontalPodAutoscalers, view.HorizontalPodAutoscalerOf)
	m["volumeAttachments"] = newList(&s.VolumeAttachments, view.VolumeAttachmentOf)
	m["csiDrivers"] = newList(&s.CSIDrivers, view.CSIDriverOf)
	m["csiNodes"] = newList(&s.CSINodes, view.CSINodeOf)
	m["namespaces"] = newList(&s.Namespaces, view.NamespaceOf)
	return m
}

// batch is consecutive values of one member, copied out of the tokenizer's
// buffer.
type batch struct {
	seq   int // in document order
	sink  sink
	path  string // of the member
	list  bool
	first int // index of the first element in the list
	data  []byte
	ends  []int
}

func (b *batch) value(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

// Batches are cut at this many elements or bytes.
const (
	batchValues = 64
	batchBytes  = 256 << 10
)

// free are batches decoded, for the splitter to fill again.
var free = sync.Pool{New: func() any {
	return &batch{data: make([]byte, 0, batchBytes+batchBytes/4), ends: make([]int, 0, batchValues)}
}}

// stream decodes the document r holds: one goroutine splits it, the others
// decode the batches meanwhile. A syntax error anywhere wins over an error
// of decoding, as with the canonical decoder, which checks the syntax
// first; then a document of another kind is told as such; then the first
// bad element in document order is named.
func stream(r io.Reader, h *document.Header, sinks map[string]sink) error {
	workers := runtime.GOMAXPROCS(0)
	batches := make(chan *batch, 2*workers)
	var (
		splitErr error
		mu       sync.Mutex
		firstSeq = -1
		firstErr error
	)
	parallel.Do(workers+1, func(w int) {
		if w == workers {
			defer close(batches)
			splitErr = split(r, sinks, batches)
			return
		}
		for b := range batches {
			i, err := b.sink.decode(b)
			if err == nil {
				b.data, b.ends = b.data[:0], b.ends[:0]
				free.Put(b)
				continue
			}
			mu.Lock()
			if firstSeq < 0 || b.seq < firstSeq {
				firstSeq, firstErr = b.seq, describe(b, i, err)
			}
			mu.Unlock()
		}
	})
	if splitErr != nil {
		return splitErr
	}
	if err := h.Check(snapshot.Kind); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	for _, m := range sinks {
		m.finish()
	}
	return nil
}

// split reads the document from r and sends its members' values to
// batches, in order.
func split(r io.Reader, sinks map[string]sink, batches chan<- *batch) error {
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil {
		return syntaxError(err)
	} else if tok.Kind() != '{' {
		return fmt.Errorf("invalid %s document: want a JSON object, not %s", snapshot.Kind, kindName(tok.Kind()))
	}
	seen := map[string]bool{}
	seq := 0
	send := func(b *batch) {
		if len(b.ends) > 0 {
			b.seq = seq
			seq++
			batches <- b
		}
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return syntaxError(err)
		}
		name := tok.String()
		path := "/" + escape(name)
		if seen[name] {
			return fmt.Errorf("invalid %s document: %s: duplicate field", snapshot.Kind, path)
		}
		seen[name] = true
		sk, known := sinks[name]
		l, isList := sk.(interface{ setLen(int) })
		if !known || !isList || dec.PeekKind() != '[' {
			v, err := dec.ReadValue()
			if err != nil {
				return syntaxError(err)
			}
			switch {
			case !known:
				sk = failing{errUnknown}
			case isList && v.Kind() == 'n':
				continue // null: no list
			case isList:
				sk = failing{fmt.Errorf("want a JSON array or null, not %s", kindName(v.Kind()))}
			}
			send(&batch{sink: sk, path: path, data: bytes.Clone(v), ends: []int{len(v)}})
			continue
		}
		if _, err := dec.ReadToken(); err != nil { // [
			return syntaxError(err)
		}
		n := 0
		next := func() *batch {
			b := free.Get().(*batch)
			b.sink, b.path, b.list, b.first = sk, path, true, n
			return b
		}
		b := next()
		for dec.PeekKind() != ']' {
			v, err := dec.ReadValue()
			if err != nil {
				return syntaxError(err)
			}
			b.data = append(b.data, v...)
			b.ends = append(b.ends, len(b.data))
			n++
			if len(b.ends) == batchValues || len(b.data) >= batchBytes {
				send(b)
				b = next()
			}
		}
		send(b)
		if _, err := dec.ReadToken(); err != nil { // ]
			return syntaxError(err)
		}
		l.setLen(n)
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return syntaxError(err)
	}
	if _, err := dec.ReadToken(); err == nil {
		return &syntaxErr{offset: dec.InputOffset() - 1, err: errors.New("data after the document")}
	} else if err != io.EOF {
		return syntaxError(err)
	}
	return nil
}

func (l *list[T, V]) setLen(n int) { l.n = n }

// failing is a member that cannot be decoded.
type failing struct{ err error }

func (f failing) decode(*batch) (int, error) { return 0, f.err }
func (failing) finish()                      {}

var errUnknown = errors.New("unknown field")

// describe is the error of decoding element i of b: the JSON path of the
// culprit and what is wrong there.
func describe(b *batch, i int, err error) error {
	var (
		sem *json.SemanticError
		syn *jsontext.SyntacticError
	)
	path, what := b.path, err.Error()
	if b.list {
		path += "/" + strconv.Itoa(b.first+i)
	}
	switch {
	case errors.As(err, &syn):
		// Only a duplicate name: the syntax was checked before.
		path += string(syn.JSONPointer)
		what = syn.Err.Error()
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			what = "duplicate field"
		}
	case errors.As(err, &sem):
		path += string(sem.JSONPointer)
		switch {
		case errors.Is(sem.Err, json.ErrUnknownName):
			what = "unknown field"
		case sem.Err != nil:
			what = sem.Err.Error()
			if t := sem.GoType; t != nil {
				for t.Kind() == reflect.Pointer {
					t = t.Elem()
				}
				what = fmt.Sprintf("cannot decode into %v: %s", t, what)
			}
		default:
			what = fmt.Sprintf("cannot decode JSON %s into %v", kindName(sem.JSONKind), sem.GoType)
		}
	}
	return fmt.Errorf("invalid %s document: %s: %s", snapshot.Kind, path, what)
}

// syntaxErr is an error of the tokenizer at an offset of the document.
type syntaxErr struct {
	offset    int64
	truncated bool
	err       error
}

func (e *syntaxErr) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %v", e.offset, e.err)
}

func syntaxError(err error) error {
	var (
		syn *jsontext.SyntacticError
		in  *inputError
	)
	switch {
	case errors.As(err, &in):
		return in
	case errors.As(err, &syn):
		return &syntaxErr{offset: syn.ByteOffset, truncated: errors.Is(syn.Err, io.ErrUnexpectedEOF), err: syn.Err}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return &syntaxErr{offset: -1, truncated: true, err: io.ErrUnexpectedEOF}
	}
	return readError(err)
}

// describe names the line and column of e in the document r held, after
// lead bytes of blanks, when r can be read again; else its byte offset.
func (e *syntaxErr) describe(r io.Reader, lead int64) error {
	what := "invalid"
	if e.truncated {
		what = "truncated"
	}
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return fmt.Errorf("%s JSON at byte %d: %v", what, lead+e.offset, e.err)
	}
	line, col, err := position(ra, lead+e.offset, e.truncated)
	if err != nil {
		return fmt.Errorf("%s JSON at byte %d: %v", what, lead+e.offset, e.err)
	}
	return fmt.Errorf("%s JSON at line %d, column %d: %v", what, line, col, e.err)
}

// position is the line and column of offset in ra; a truncated document is
// told at its last character.
func position(ra io.ReaderAt, offset int64, truncated bool) (line, col int, err error) {
	line, col = 1, 1
	last := [2]int{1, 1} // after the last non-blank
	buf := make([]byte, 64<<10)
	var pos int64
	for {
		n, err := ra.ReadAt(buf, pos)
		for _, c := range buf[:n] {
			if !truncated && offset >= 0 && pos >= offset {
				return line, col, nil
			}
			pos++
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			if strings.IndexByte(" \t\r\n", c) < 0 {
				last = [2]int{line, col}
			}
		}
		if err == io.EOF {
			if truncated {
				return last[0], last[1], nil
			}
			return line, col, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// escape is name as a JSON pointer token.
func escape(name string) string {
	return string(jsontext.Pointer("").AppendToken(name))[1:]
}
