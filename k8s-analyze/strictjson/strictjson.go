// Package strictjson decodes large JSON documents into Go values quickly and
// strictly: field names match exactly (case-sensitive), unknown and
// duplicate fields are errors, and so is any type mismatch or trailing data.
//
// It is a fast path, not a replacement: whenever it returns an error (or
// meets a Go type it does not handle: interfaces, arrays, ",string" tags,
// embedded pointers), the caller decodes the same bytes with the canonical
// decoder, which then accepts them or names the problem. Its only promise is
// that what it accepts, the canonical strict decoder (sigs.k8s.io/json with
// DisallowUnknownFields and DisallowDuplicateFields) accepts with the same
// result; a differential fuzz test holds it to that.
//
// Speed comes from a type plan compiled once per call (field offsets,
// per-kind setters), strings that alias the input instead of being copied
// (the input must not be modified afterwards), string maps shared between
// objects of the same bytes (such as the labels of replicas: decoded maps
// must not be modified), a direct RFC 3339 path for metav1.Time, and the
// elements of big arrays decoded in parallel.
//
// UnmarshalProjection decodes into a projection of the document's type: a
// type with, at every level, some of the fields of the schema type under the
// same JSON names (scalars may change their named type, not their kind).
// Every value is validated exactly as it would be decoded into the schema
// type (field names, JSON kinds against Go kinds, number ranges, times,
// custom unmarshalers run on a scratch value) but only the projection's
// fields are stored, so that what it accepts the canonical decoder accepts
// too, with the same values in the fields kept.
package strictjson

import (
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// ErrUnsupported is returned when v's type holds something the fast path
// does not decode.
var ErrUnsupported = errors.New("strictjson: unsupported type")

// config says how to split the work.
type config struct {
	workers int
	// parallelMin is the element count from which an array is decoded by
	// several workers.
	parallelMin int
	// scanMin is the size of the first region of a parallel boundary scan
	// (see boundaries).
	scanMin int
}

func defaults() config {
	return config{workers: runtime.GOMAXPROCS(0), parallelMin: 1024, scanMin: 1 << 20}
}

// Unmarshal decodes data into v, a non-nil pointer. Strings in v alias data.
func Unmarshal(data []byte, v any) error {
	return unmarshal(data, v, nil, defaults())
}

// UnmarshalProjection decodes data, a JSON document of type schema, into v,
// a non-nil pointer to a projection of schema (see the package
// documentation). Strings in v alias data. A v whose type is not a
// projection of schema is an error (ErrUnsupported).
func UnmarshalProjection(data []byte, v any, schema reflect.Type) error {
	return unmarshal(data, v, schema, defaults())
}

// unmarshal decodes data, a document of type schema (nil: v's type), into v.
func unmarshal(data []byte, v any, schema reflect.Type, cfg config) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: need a non-nil pointer, got %T", v)
	}
	p, err := compilePlan(schema, rv.Type().Elem())
	if err != nil {
		return err
	}
	return decode(data, rv.UnsafePointer(), p, cfg)
}

// compilePlan is the plan that validates a document of type schema and
// stores t, a projection of it (schema nil: t whole).
func compilePlan(schema, t reflect.Type) (*plan, error) {
	c := &compiler{plans: map[reflect.Type]*plan{}, checks: map[reflect.Type]*plan{}, projections: map[[2]reflect.Type]*plan{}}
	if schema == nil {
		schema = t
	}
	p := c.project(schema, t, "")
	return p, c.err
}

// decode decodes data into the value of p's type at ptr.
func decode(data []byte, ptr unsafe.Pointer, p *plan, cfg config) error {
	d := &decoder{data: data, config: cfg}
	d.skipWS()
	if err := d.value(p, ptr, 0); err != nil {
		return err
	}
	d.skipWS()
	if d.pos != len(d.data) {
		return d.errorf("trailing data")
	}
	return nil
}

type kind int

const (
	kString kind = iota
	kBool
	kInt
	kUint
	kFloat
	kStruct
	kSlice
	kPtr
	kMap
	kTime
	kUnmarshaler
	kTextUnmarshaler
	kBytes
)

type plan struct {
	kind   kind
	t      reflect.Type
	bits   int
	elem   *plan
	fields map[string]*field
	list   []*field // fields by index
	nfield int
	// check plans validate a value and store nothing (their elements and
	// fields are check plans too).
	check bool
}

type field struct {
	name   string
	offset uintptr
	plan   *plan
	index  int
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[metav1.Time]()
)

type compiler struct {
	plans       map[reflect.Type]*plan    // decode everything
	checks      map[reflect.Type]*plan    // validate only
	projections map[[2]reflect.Type]*plan // by schema and projection
	structs     map[reflect.Type][]jsonField
	err         error
}

func (c *compiler) fail(t reflect.Type, why string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s: %s", ErrUnsupported, t, why)
	}
}

func (c *compiler) compile(t reflect.Type) *plan { return c.plan(t, false) }

// checker is the plan that validates a t and stores nothing.
func (c *compiler) checker(t reflect.Type) *plan { return c.plan(t, true) }

func (c *compiler) plan(t reflect.Type, check bool) *plan {
	cache := c.plans
	if check {
		cache = c.checks
	}
	if p, ok := cache[t]; ok {
		return p
	}
	p := &plan{t: t, check: check}
	cache[t] = p
	if c.leaf(p) {
		return p
	}
	switch t.Kind() {
	case reflect.Pointer:
		p.kind = kPtr
		p.elem = c.plan(t.Elem(), check)
	case reflect.Slice:
		p.kind = kSlice
		p.elem = c.plan(t.Elem(), check)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			c.fail(t, "map key is not a string")
		}
		p.kind = kMap
		p.elem = c.plan(t.Elem(), check)
	case reflect.Struct:
		p.kind = kStruct
		p.fields = map[string]*field{}
		for _, f := range c.fields(t) {
			p.addField(f, c.plan(f.t, check))
		}
	default:
		c.fail(t, "kind "+t.Kind().String())
	}
	return p
}

// leaf sets p's kind when p.t is decoded as a whole (scalars, times, custom
// unmarshalers, bytes) and says so.
func (c *compiler) leaf(p *plan) bool {
	t := p.t
	switch {
	case t == timeType:
		p.kind = kTime
	case reflect.PointerTo(t).Implements(unmarshalerType):
		p.kind = kUnmarshaler
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		p.kind = kTextUnmarshaler
	case t.Kind() == reflect.String:
		p.kind = kString
	case t.Kind() == reflect.Bool:
		p.kind = kBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		p.kind, p.bits = kInt, t.Bits()
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		p.kind, p.bits = kUint, t.Bits()
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		p.kind, p.bits = kFloat, t.Bits()
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		p.kind = kBytes
	default:
		return false
	}
	return true
}

// project is the plan that validates a schema and stores t, a projection of
// it; at is the JSON path so far, for errors.
func (c *compiler) project(schema, t reflect.Type, at string) *plan {
	if schema == t {
		return c.compile(t)
	}
	key := [2]reflect.Type{schema, t}
	if p, ok := c.projections[key]; ok {
		return p
	}
	p := &plan{t: t}
	c.projections[key] = p
	mismatch := func(why string) *plan {
		c.fail(t, "not a projection of "+schema.String()+" at "+cmp.Or(at, ".")+": "+why)
		return p
	}
	if s := (&plan{t: schema}); c.leaf(s) || c.leaf(p) {
		// Only plain scalars may change their type; what is decoded whole
		// (times, custom unmarshalers, bytes) is kept as its own type.
		if !c.leaf(s) || !c.leaf(p) || p.kind != s.kind || p.bits != s.bits || s.kind > kFloat {
			return mismatch(t.String() + " for " + schema.String())
		}
		return p
	}
	if schema.Kind() != t.Kind() {
		return mismatch("kind " + t.Kind().String() + " for " + schema.Kind().String())
	}
	switch t.Kind() {
	case reflect.Pointer:
		p.kind = kPtr
		p.elem = c.project(schema.Elem(), t.Elem(), at)
	case reflect.Slice:
		p.kind = kSlice
		p.elem = c.project(schema.Elem(), t.Elem(), at)
	case reflect.Map:
		if t.Key().Kind() != reflect.String || schema.Key().Kind() != reflect.String {
			return mismatch("map key is not a string")
		}
		p.kind = kMap
		p.elem = c.project(schema.Elem(), t.Elem(), at)
	case reflect.Struct:
		p.kind = kStruct
		p.fields = map[string]*field{}
		kept := map[string]jsonField{}
		for _, f := range c.fields(t) {
			kept[f.name] = f
		}
		for _, f := range c.fields(schema) {
			if k, ok := kept[f.name]; ok {
				p.addField(jsonField{name: f.name, offset: k.offset, t: k.t}, c.project(f.t, k.t, strings.TrimPrefix(at+"."+f.name, ".")))
				delete(kept, f.name)
			} else {
				// Validated only: no place in t (its offset would point
				// past a smaller t).
				p.addField(jsonField{name: f.name, t: f.t}, c.checker(f.t))
			}
		}
		if len(kept) > 0 {
			return mismatch("field " + slices.Min(slices.Collect(maps.Keys(kept))) + " is not in " + schema.String())
		}
	default:
		return mismatch("kind " + t.Kind().String())
	}
	return p
}

func (p *plan) addField(f jsonField, fp *plan) {
	pf := &field{name: f.name, offset: f.offset, plan: fp, index: p.nfield}
	p.fields[f.name] = pf
	p.list = append(p.list, pf)
	p.nfield++
}

// field finds the field named key, trying first the one after the last
// (encoders write fields in declaration order).
func (p *plan) field(key string, next int) *field {
	if next < len(p.list) && p.list[next].name == key {
		return p.list[next]
	}
	return p.fields[key]
}

// jsonField is a field of a struct as encoding/json sees it.
type jsonField struct {
	name   string
	offset uintptr
	t      reflect.Type
}

// fields lists t's JSON fields, flattening embedded structs the way
// encoding/json does (the shallower field wins; two at the same depth
// cancel out).
func (c *compiler) fields(t reflect.Type) []jsonField {
	if fs, ok := c.structs[t]; ok {
		return fs
	}
	byName := map[string]jsonField{}
	depth := map[string]int{}
	var order []string
	c.collect(t, 0, 0, byName, depth, &order)
	out := make([]jsonField, 0, len(byName))
	for _, name := range order {
		if f, ok := byName[name]; ok {
			out = append(out, f)
		}
	}
	if c.structs == nil {
		c.structs = map[reflect.Type][]jsonField{}
	}
	c.structs[t] = out
	return out
}

func (c *compiler) collect(t reflect.Type, base uintptr, level int, byName map[string]jsonField, depth map[string]int, order *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",string,") {
			c.fail(t, "field "+f.Name+" has a ,string tag")
			return
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				c.fail(t, "embedded pointer "+f.Name)
				return
			}
			if ft.Kind() == reflect.Struct {
				c.collect(ft, base+f.Offset, level+1, byName, depth, order)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		if d, seen := depth[name]; seen {
			switch {
			case d < level:
				continue
			case d == level:
				delete(byName, name) // ambiguous: encoding/json drops both
				continue
			}
		}
		if _, seen := depth[name]; !seen {
			*order = append(*order, name)
		}
		depth[name] = level
		byName[name] = jsonField{name: name, offset: base + f.Offset, t: f.Type}
	}
}

type decoder struct {
	data []byte
	pos  int
	config
	// scratch holds one value per custom-unmarshaler type, to validate
	// values that are not kept.
	scratch map[reflect.Type]reflect.Value
	// keys are the keys of the maps being validated (a stack).
	keys []string
	// slices are the scratch buffers of array decoding, per plan.
	slices map[*plan]*sliceScratch
	// maps are the string maps decoded so far, by their JSON (see
	// stringMap).
	maps map[string]map[string]string
}

type syntaxError struct {
	msg string
	pos int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("strictjson: %s at offset %d", e.msg, e.pos) }

func (d *decoder) errorf(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), pos: d.pos}
}

func (d *decoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ':
			// Indentation: up to eight spaces at a time.
			d.pos += leadingSpaces(d.data, d.pos)
		case '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *decoder) literal(lit string) bool {
	if strings.HasPrefix(unsafe.String(unsafe.SliceData(d.data[d.pos:]), len(d.data)-d.pos), lit) {
		d.pos += len(lit)
		return true
	}
	return false
}

// value decodes one JSON value (whitespace skipped before it) into p at ptr.
func (d *decoder) value(p *plan, ptr unsafe.Pointer, level int) error {
	if p.check {
		return d.check(p)
	}
	c := d.peek()
	if c == 'n' {
		if !d.literal("null") {
			return d.errorf("invalid literal")
		}
		switch p.kind {
		case kPtr:
			*(*unsafe.Pointer)(ptr) = nil
		case kSlice, kBytes, kMap:
			reflect.NewAt(p.t, ptr).Elem().SetZero()
		case kTime:
			*(*metav1.Time)(ptr) = metav1.Time{}
		case kUnmarshaler:
			return reflect.NewAt(p.t, ptr).Interface().(json.Unmarshaler).UnmarshalJSON([]byte("null"))
		}
		return nil
	}
	switch p.kind {
	case kString:
		s, err := d.str()
		if err != nil {
			return err
		}
		*(*string)(ptr) = s
	case kBool:
		switch {
		case d.literal("true"):
			*(*bool)(ptr) = true
		case d.literal("false"):
			*(*bool)(ptr) = false
		default:
			return d.errorf("want a boolean")
		}
	case kInt, kUint, kFloat:
		return d.number(p, ptr)
	case kPtr:
		np := reflect.New(p.elem.t).UnsafePointer()
		if err := d.value(p.elem, np, level); err != nil {
			return err
		}
		*(*unsafe.Pointer)(ptr) = np
	case kStruct:
		return d.object(p, ptr, level)
	case kSlice:
		return d.slice(p, ptr, level)
	case kMap:
		return d.dict(p, ptr, level)
	case kTime:
		return d.time(ptr)
	case kUnmarshaler, kTextUnmarshaler, kBytes:
		start := d.pos
		if err := d.skip(); err != nil {
			return err
		}
		raw := d.data[start:d.pos]
		switch p.kind {
		case kUnmarshaler:
			return reflect.NewAt(p.t, ptr).Interface().(json.Unmarshaler).UnmarshalJSON(raw)
		default:
			return json.Unmarshal(raw, reflect.NewAt(p.t, ptr).Interface())
		}
	}
	return nil
}

// str reads a JSON string. Without escapes it aliases the input.
func (d *decoder) str() (string, error) {
	if d.peek() != '"' {
		return "", d.errorf("want a string")
	}
	start := d.pos + 1
	ascii := true
	for i := start; i < len(d.data); i++ {
		for i+8 <= len(d.data) && plainString(d.data, i) {
			i += 8
		}
		if i >= len(d.data) {
			break
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			b := d.data[start:i]
			if !ascii && !utf8.Valid(b) {
				return "", d.errorf("invalid UTF-8 in string")
			}
			return unsafe.String(unsafe.SliceData(b), len(b)), nil
		case c == '\\':
			return d.escaped(start - 1)
		case c < 0x20:
			d.pos = i
			return "", d.errorf("control character in string")
		case c >= 0x80:
			ascii = false
		}
	}
	d.pos = len(d.data)
	return "", d.errorf("unterminated string")
}

// escaped decodes a string holding escapes with encoding/json itself.
func (d *decoder) escaped(start int) (string, error) {
	d.pos = start
	if err := d.skip(); err != nil {
		return "", err
	}
	raw := d.data[start:d.pos]
	if !utf8.Valid(raw) {
		return "", d.errorf("invalid UTF-8 in string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

func (d *decoder) number(p *plan, ptr unsafe.Pointer) error {
	start := d.pos
	if err := d.skipNumber(); err != nil {
		return err
	}
	b := d.data[start:d.pos]
	s := unsafe.String(unsafe.SliceData(b), len(b))
	switch p.kind {
	case kInt:
		n, err := strconv.ParseInt(s, 10, p.bits)
		if err != nil {
			return d.errorf("number %s does not fit %s", s, p.t)
		}
		switch p.bits {
		case 8:
			*(*int8)(ptr) = int8(n)
		case 16:
			*(*int16)(ptr) = int16(n)
		case 32:
			*(*int32)(ptr) = int32(n)
		default:
			*(*int64)(ptr) = n
		}
	case kUint:
		n, err := strconv.ParseUint(s, 10, p.bits)
		if err != nil {
			return d.errorf("number %s does not fit %s", s, p.t)
		}
		switch p.bits {
		case 8:
			*(*uint8)(ptr) = uint8(n)
		case 16:
			*(*uint16)(ptr) = uint16(n)
		case 32:
			*(*uint32)(ptr) = uint32(n)
		default:
			*(*uint64)(ptr) = n
		}
	case kFloat:
		f, err := strconv.ParseFloat(s, p.bits)
		if err != nil {
			return d.errorf("number %s does not fit %s", s, p.t)
		}
		if p.bits == 32 {
			*(*float32)(ptr) = float32(f)
		} else {
			*(*float64)(ptr) = f
		}
	}
	return nil
}

// time decodes a metav1.Time exactly as its UnmarshalJSON does.
func (d *decoder) time(ptr unsafe.Pointer) error {
	s, err := d.str()
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	*(*metav1.Time)(ptr) = metav1.Time{Time: t.Local()}
	return nil
}

func (d *decoder) object(p *plan, ptr unsafe.Pointer, level int) error {
	return d.fields(p, func(f *field) error {
		fp := unsafe.Add(ptr, f.offset)
		if level == 0 && f.plan.kind == kSlice && !f.plan.check && d.workers > 1 && d.peek() == '[' {
			return d.parallelSlice(f.plan, fp)
		}
		return d.value(f.plan, fp, level+1)
	})
}

// fields reads an object as a struct of p: exact-case keys of p's fields,
// each at most once, and value(f) for each field's value (whitespace
// skipped before it).
func (d *decoder) fields(p *plan, value func(f *field) error) error {
	if d.peek() != '{' {
		return d.errorf("want an object for %s", p.t)
	}
	d.pos++
	var buf [128]bool
	var seen []bool
	if p.nfield <= len(buf) {
		seen = buf[:p.nfield]
	} else {
		seen = make([]bool, p.nfield)
	}
	next := 0
	return d.members(func(key string) error {
		f := p.field(key, next)
		if f == nil {
			return d.errorf("unknown field %q in %s", key, p.t)
		}
		if seen[f.index] {
			return d.errorf("duplicate field %q in %s", key, p.t)
		}
		seen[f.index] = true
		next = f.index + 1
		return value(f)
	})
}

func (d *decoder) makeSlice(p *plan, ptr unsafe.Pointer, n int) unsafe.Pointer {
	s := reflect.MakeSlice(p.t, n, n)
	reflect.NewAt(p.t, ptr).Elem().Set(s)
	return s.UnsafePointer()
}

// slice decodes an array element by element into a scratch slice kept per
// plan (nested arrays are read once), then copies the elements into a slice
// of the exact length: most nested arrays are short and decoded by the
// hundred thousand.
func (d *decoder) slice(p *plan, ptr unsafe.Pointer, level int) error {
	if d.peek() != '[' {
		return d.errorf("want an array for %s", p.t)
	}
	d.pos++
	size := p.elem.t.Size()
	sv := reflect.NewAt(p.t, ptr).Elem()
	d.skipWS()
	if d.peek() == ']' {
		d.pos++
		sv.Set(reflect.MakeSlice(p.t, 0, 0))
		return nil
	}
	var sc *sliceScratch
	if level > 1 {
		sc = d.scratchSlice(p)
		defer func() { sc.busy = false }()
	} else {
		// The big arrays of the top level: their scratch would stay.
		sc = newScratch(p.t)
	}
	// The scratch's elements are reached by address, and its length set in
	// place: reflect.Value.Slice allocates.
	n, capacity, base := 0, sc.buf.Cap(), sc.buf.UnsafePointer()
	for {
		if n == capacity {
			sc.buf.SetLen(n)
			grown := reflect.MakeSlice(p.t, n, max(4, 2*n))
			reflect.Copy(grown, sc.buf)
			sc.buf.Set(grown)
			capacity, base = grown.Cap(), grown.UnsafePointer()
		}
		elem := unsafe.Add(base, uintptr(n)*size)
		reflect.NewAt(p.elem.t, elem).Elem().SetZero()
		d.skipWS()
		if err := d.value(p.elem, elem, level+1); err != nil {
			return err
		}
		n++
		more, err := d.more(']')
		if err != nil {
			return err
		}
		if !more {
			sc.buf.SetLen(n)
			exact := reflect.MakeSlice(p.t, n, n)
			reflect.Copy(exact, sc.buf)
			sv.Set(exact)
			return nil
		}
	}
}

// sliceScratch is a decoder's reusable buffer for the arrays of one plan.
type sliceScratch struct {
	buf  reflect.Value // addressable
	busy bool          // an array of this plan is being decoded (it nests)
}

func newScratch(t reflect.Type) *sliceScratch {
	return &sliceScratch{buf: reflect.New(t).Elem()}
}

func (d *decoder) scratchSlice(p *plan) *sliceScratch {
	sc := d.slices[p]
	if sc == nil || sc.busy {
		// An array inside an array of the same plan gets its own.
		sc = newScratch(p.t)
		if d.slices[p] == nil {
			if d.slices == nil {
				d.slices = map[*plan]*sliceScratch{}
			}
			d.slices[p] = sc
		}
	}
	sc.busy = true
	return sc
}

// parallelSlice is slice with the elements split over the workers.
func (d *decoder) parallelSlice(p *plan, ptr unsafe.Pointer) error {
	start := d.pos
	if offsets, end, ok := d.layout(); ok {
		// The layout is a guess: decoding checks it, and when it fails
		// the array is split by a scan. A short array is decoded in one go.
		if len(offsets) < d.parallelMin {
			return d.slice(p, ptr, 1)
		}
		if d.decodeSplit(p, ptr, offsets, end) == nil {
			d.pos = end
			return nil
		}
		d.pos = start
	}
	offsets, err := d.boundaries()
	if errors.Is(err, errScalarElements) {
		d.pos = start
		return d.slice(p, ptr, 1)
	}
	if err != nil {
		return err
	}
	first := &decoder{data: d.data, pos: start + 1}
	first.skipWS()
	if len(offsets) < d.parallelMin || offsets[0] != first.pos {
		d.pos = start
		return d.slice(p, ptr, 1)
	}
	end := d.pos
	err = d.decodeSplit(p, ptr, offsets, end)
	d.pos = end
	return err
}

// decodeSplit decodes the array elements that start at offsets, the array
// ending just before end, on every worker.
func (d *decoder) decodeSplit(p *plan, ptr unsafe.Pointer, offsets []int, end int) error {
	base := d.makeSlice(p, ptr, len(offsets))
	size := p.elem.t.Size()
	errs := make([]error, d.workers)
	chunk := (len(offsets) + d.workers - 1) / d.workers
	parallel.Do(d.workers, func(w int) {
		wd := &decoder{data: d.data, config: config{workers: 1}}
		for i := w * chunk; i < min((w+1)*chunk, len(offsets)); i++ {
			wd.pos = offsets[i]
			if err := wd.value(p.elem, unsafe.Add(base, uintptr(i)*size), 2); err != nil {
				errs[w] = err
				return
			}
			// The boundary scan checked no syntax between elements: each
			// element must end right before its separator.
			if err := wd.glue(i == len(offsets)-1, offsets, i, end); err != nil {
				errs[w] = err
				return
			}
		}
	})
	return errors.Join(errs...)
}

// glue checks that the element just decoded is followed by ',' and the next
// element, or by ']' at end when it is the last.
func (d *decoder) glue(last bool, offsets []int, i, end int) error {
	d.skipWS()
	want, next := byte(','), end
	if last {
		want = ']'
	} else {
		next = offsets[i+1]
	}
	if d.peek() != want {
		return d.errorf("want %q", want)
	}
	d.pos++
	if !last {
		d.skipWS()
	}
	if d.pos != next {
		return d.errorf("unexpected data between elements")
	}
	return nil
}

func (d *decoder) dict(p *plan, ptr unsafe.Pointer, level int) error {
	if d.peek() != '{' {
		return d.errorf("want an object for %s", p.t)
	}
	if p.t == stringMapType && *(*map[string]string)(ptr) == nil {
		return d.stringMap((*map[string]string)(ptr))
	}
	d.pos++
	mv := reflect.NewAt(p.t, ptr).Elem()
	if mv.IsNil() {
		mv.Set(reflect.MakeMap(p.t))
	}
	keyType := p.t.Key()
	return d.members(func(key string) error {
		k := reflect.New(keyType).Elem()
		k.SetString(key)
		if mv.MapIndex(k).IsValid() {
			return d.errorf("duplicate key %q", key)
		}
		v := reflect.New(p.elem.t)
		if err := d.value(p.elem, v.UnsafePointer(), level+1); err != nil {
			return err
		}
		mv.SetMapIndex(k, v.Elem())
		return nil
	})
}

// members reads the members of an object whose '{' is read, calling value
// for each with the key (the ':' read and whitespace skipped).
func (d *decoder) members(value func(key string) error) error {
	d.skipWS()
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	for {
		d.skipWS()
		key, err := d.str()
		if err != nil {
			return err
		}
		d.skipWS()
		if d.peek() != ':' {
			return d.errorf("want ':'")
		}
		d.pos++
		d.skipWS()
		if err := value(key); err != nil {
			return err
		}
		if more, err := d.more('}'); !more {
			return err
		}
	}
}

var stringMapType = reflect.TypeFor[map[string]string]()

// stringPairs reads the members of an object whose '{' is read, into m.
func (d *decoder) stringPairs(m map[string]string) error {
	return d.members(func(key string) (err error) {
		if _, dup := m[key]; dup {
			return d.errorf("duplicate key %q", key)
		}
		m[key], err = d.str()
		return err
	})
}

// stringMap decodes an object into a new map[string]string at dst. An
// object of the same bytes as one decoded before gets that map, shared:
// labels repeat from replica to replica, and a map costs far more than the
// lookup.
func (d *decoder) stringMap(dst *map[string]string) error {
	start := d.pos
	if err := d.skip(); err != nil {
		return err
	}
	raw := unsafe.String(&d.data[start], d.pos-start)
	if m, ok := d.maps[raw]; ok {
		*dst = m
		return nil
	}
	d.pos = start + 1
	m := map[string]string{}
	if err := d.stringPairs(m); err != nil {
		return err
	}
	if d.maps == nil {
		d.maps = map[string]map[string]string{}
	}
	d.maps[raw] = m
	*dst = m
	return nil
}

// check validates one JSON value (whitespace skipped before it) as p would
// decode it, storing nothing.
func (d *decoder) check(p *plan) error {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return d.errorf("invalid literal")
		}
		if p.kind == kUnmarshaler {
			return d.scratchValue(p, []byte("null"))
		}
		return nil
	}
	switch p.kind {
	case kString:
		_, err := d.str()
		return err
	case kBool:
		if d.literal("true") || d.literal("false") {
			return nil
		}
		return d.errorf("want a boolean")
	case kInt, kUint, kFloat:
		var n uint64
		return d.number(p, unsafe.Pointer(&n))
	case kPtr:
		return d.check(p.elem)
	case kStruct:
		return d.checkObject(p)
	case kSlice:
		return d.checkArray(p)
	case kMap:
		return d.checkMap(p)
	case kTime:
		s, err := d.str()
		if err != nil {
			return err
		}
		_, err = time.Parse(time.RFC3339, s)
		return err
	default: // kUnmarshaler, kTextUnmarshaler, kBytes
		start := d.pos
		if err := d.skip(); err != nil {
			return err
		}
		return d.scratchValue(p, d.data[start:d.pos])
	}
}

// scratchValue decodes raw as p.t into a scratch value, for its error.
func (d *decoder) scratchValue(p *plan, raw []byte) error {
	v, ok := d.scratch[p.t]
	if !ok {
		if d.scratch == nil {
			d.scratch = map[reflect.Type]reflect.Value{}
		}
		v = reflect.New(p.t)
		d.scratch[p.t] = v
	}
	v.Elem().SetZero()
	if p.kind == kUnmarshaler {
		return v.Interface().(json.Unmarshaler).UnmarshalJSON(raw)
	}
	return json.Unmarshal(raw, v.Interface())
}

// checkObject validates an object as a struct of p.
func (d *decoder) checkObject(p *plan) error {
	return d.fields(p, func(f *field) error { return d.check(f.plan) })
}

// checkArray validates an array of p's elements.
func (d *decoder) checkArray(p *plan) error {
	if d.peek() != '[' {
		return d.errorf("want an array for %s", p.t)
	}
	d.pos++
	d.skipWS()
	if d.peek() == ']' {
		d.pos++
		return nil
	}
	for {
		d.skipWS()
		if err := d.check(p.elem); err != nil {
			return err
		}
		if more, err := d.more(']'); !more {
			return err
		}
	}
}

// checkMap validates an object as a map of p, duplicate keys included.
func (d *decoder) checkMap(p *plan) error {
	if d.peek() != '{' {
		return d.errorf("want an object for %s", p.t)
	}
	d.pos++
	base := len(d.keys)
	defer func() { d.keys = d.keys[:base] }()
	var many map[string]bool // once there are too many keys to compare
	return d.members(func(key string) error {
		switch {
		case many != nil:
			if many[key] {
				return d.errorf("duplicate key %q", key)
			}
			many[key] = true
		case slices.Contains(d.keys[base:], key):
			return d.errorf("duplicate key %q", key)
		case len(d.keys)-base == 32:
			many = make(map[string]bool, 64)
			for _, k := range d.keys[base:] {
				many[k] = true
			}
			many[key] = true
		default:
			d.keys = append(d.keys, key)
		}
		return d.check(p.elem)
	})
}

// more reads what follows a member or an element: ',' when more follow,
// close when the object or array ends (more is false, err nil), anything
// else is an error.
func (d *decoder) more(close byte) (more bool, err error) {
	d.skipWS()
	switch d.peek() {
	case ',':
		d.pos++
		return true, nil
	case close:
		d.pos++
		return false, nil
	}
	return false, d.errorf("want ',' or %q", close)
}

// skip moves past one JSON value, checking its syntax.
func (d *decoder) skip() error {
	switch c := d.peek(); {
	case c == '"':
		start := d.pos
		for i := start + 1; i < len(d.data); i++ {
			switch c := d.data[i]; {
			case c == '"':
				d.pos = i + 1
				return nil
			case c == '\\':
				i++
				if i < len(d.data) && d.data[i] == 'u' {
					for j := 1; j <= 4; j++ {
						if i+j >= len(d.data) || !isHex(d.data[i+j]) {
							d.pos = i
							return d.errorf("invalid escape")
						}
					}
					i += 4
				} else if i >= len(d.data) || !strings.ContainsRune(`"\/bfnrt`, rune(d.data[i])) {
					d.pos = i
					return d.errorf("invalid escape")
				}
			case c < 0x20:
				d.pos = i
				return d.errorf("control character in string")
			}
		}
		d.pos = len(d.data)
		return d.errorf("unterminated string")
	case c == '{' || c == '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		d.pos++
		d.skipWS()
		if d.peek() == close {
			d.pos++
			return nil
		}
		for {
			d.skipWS()
			if c == '{' {
				if d.peek() != '"' {
					return d.errorf("want a key")
				}
				if err := d.skip(); err != nil {
					return err
				}
				d.skipWS()
				if d.peek() != ':' {
					return d.errorf("want ':'")
				}
				d.pos++
				d.skipWS()
			}
			if err := d.skip(); err != nil {
				return err
			}
			if more, err := d.more(close); !more {
				return err
			}
		}
	case c == 't':
		if d.literal("true") {
			return nil
		}
	case c == 'f':
		if d.literal("false") {
			return nil
		}
	case c == 'n':
		if d.literal("null") {
			return nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.skipNumber()
	}
	return d.errorf("invalid value")
}

// skipNumber moves past a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) skipNumber() error {
	i := d.pos
	n := len(d.data)
	if i < n && d.data[i] == '-' {
		i++
	}
	switch {
	case i < n && d.data[i] == '0':
		i++
	case i < n && d.data[i] >= '1' && d.data[i] <= '9':
		for i < n && isDigit(d.data[i]) {
			i++
		}
	default:
		d.pos = i
		return d.errorf("want a number")
	}
	if i < n && d.data[i] == '.' {
		i++
		if i >= n || !isDigit(d.data[i]) {
			d.pos = i
			return d.errorf("invalid number")
		}
		for i < n && isDigit(d.data[i]) {
			i++
		}
	}
	if i < n && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < n && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(d.data[i]) {
			d.pos = i
			return d.errorf("invalid number")
		}
		for i < n && isDigit(d.data[i]) {
			i++
		}
	}
	d.pos = i
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
