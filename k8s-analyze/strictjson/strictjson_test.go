package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	kjson "sigs.k8s.io/json"

	"github.com/sentinel-go/sentinel/k8s-analyze/bench"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// canonical is the strict decoder strictjson must agree with.
func canonical(data []byte, v any) error {
	strict, err := kjson.UnmarshalStrict(data, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nil
}

// someFields is a projection of a Snapshot that keeps whole subtrees,
// fields through slices and pointers, and leaves others to validation.
var someFields = []string{
	"apiVersion", "kind", "metadata.capturedAt",
	"nodes.metadata.name", "nodes.metadata.labels",
	"pods.metadata.name", "pods.metadata.uid", "pods.metadata.labels", "pods.metadata.ownerReferences",
	"pods.spec.nodeName", "pods.spec.volumes.name", "pods.spec.volumes.emptyDir", "pods.spec.volumes.persistentVolumeClaim.claimName",
	"pods.status.conditions", "pods.status.phase",
	"podDisruptionBudgets.metadata", "podDisruptionBudgets.spec",
}

// split3 takes the parallel paths for every array of the top level, with
// boundary scan chunks at every newline.
var split3 = config{workers: 3, parallelMin: 1, scanMin: 1}

// plans are the compiled plans agree uses, compiled once (compiling the
// Snapshot type costs more than decoding a small document).
type plans struct {
	full      *plan
	projected map[string]*plan // by name of the keep list
	keeps     map[string]*keepNode
}

func newPlans(t testing.TB) *plans {
	t.Helper()
	typ := reflect.TypeFor[snapshot.Snapshot]()
	ps := &plans{projected: map[string]*plan{}, keeps: map[string]*keepNode{}}
	var err error
	if ps.full, err = compilePlan(typ, nil); err != nil {
		t.Fatal(err)
	}
	for name, keep := range map[string][]string{"some fields": someFields, "nothing": nil} {
		ps.keeps[name] = keepTree(keep)
		if ps.projected[name], err = compilePlan(typ, ps.keeps[name]); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// agree checks the promise: what Unmarshal accepts, the canonical decoder
// accepts with the same result; what UnmarshalFields accepts with
// someFields (or nothing kept), it accepts too, with the same kept fields.
func (ps *plans) agree(t *testing.T, data []byte) (fastOK bool) {
	t.Helper()
	var fast, split, slow snapshot.Snapshot
	ferr := decode(data, unsafe.Pointer(&fast), ps.full, defaults())
	// The parallel path, taken for every array of the top level.
	if perr := decode(data, unsafe.Pointer(&split), ps.full, split3); (perr == nil) != (ferr == nil) || (ferr == nil && !reflect.DeepEqual(fast, split)) {
		t.Fatalf("parallel decoding differs (%v, %v) on:\n%s", perr, ferr, data)
	}
	serr := canonical(data, &slow)
	if ferr == nil {
		if serr != nil {
			t.Fatalf("strictjson accepted what the canonical decoder refuses (%v):\n%s", serr, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("strictjson and the canonical decoder disagree on:\n%s", data)
		}
	}
	for name, p := range ps.projected {
		var part, partSplit snapshot.Snapshot
		err := decode(data, unsafe.Pointer(&part), p, config{workers: 1})
		if perr := decode(data, unsafe.Pointer(&partSplit), p, split3); (perr == nil) != (err == nil) || (err == nil && !reflect.DeepEqual(part, partSplit)) {
			t.Fatalf("parallel projected decoding (%s) differs (%v, %v) (-seq +par):\n%s\non:\n%s", name, perr, err, cmp.Diff(part, partSplit), data)
		}
		// A projection never refuses what the full fast path accepts.
		if ferr == nil && err != nil {
			t.Fatalf("the projection on %s refused (%v) what Unmarshal accepts:\n%s", name, err, data)
		}
		if err != nil {
			continue
		}
		if serr != nil {
			t.Fatalf("strictjson accepted with %s kept what the canonical decoder refuses (%v):\n%s", name, serr, data)
		}
		want := slow
		project(t, reflect.ValueOf(&want).Elem(), ps.keeps[name])
		if !reflect.DeepEqual(want, part) {
			t.Fatalf("kept fields (%s) differ from the canonical decoder's (-want +got):\n%s\non:\n%s", name, cmp.Diff(want, part), data)
		}
	}
	return ferr == nil
}

func keepTree(keep []string) *keepNode {
	root := &keepNode{}
	for _, p := range keep {
		root.add(strings.Split(p, "."))
	}
	return root
}

// project zeroes in v (a copy of a full decode) what n does not keep.
func project(t *testing.T, v reflect.Value, n *keepNode) {
	t.Helper()
	if n.all {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			// The copy shares pointers with the original: project a copy.
			cp := reflect.New(v.Elem().Type())
			cp.Elem().Set(v.Elem())
			project(t, cp.Elem(), n)
			v.Set(cp)
		}
	case reflect.Slice:
		if !v.IsNil() {
			cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(cp, v)
			for i := range cp.Len() {
				project(t, cp.Index(i), n)
			}
			v.Set(cp)
		}
	case reflect.Struct:
		c := &compiler{}
		for _, f := range c.fields(v.Type()) {
			fv := reflect.NewAt(f.t, unsafe.Add(v.Addr().UnsafePointer(), f.offset)).Elem()
			if k := n.children[f.name]; k != nil {
				project(t, fv, k)
			} else {
				fv.SetZero()
			}
		}
	default:
		t.Fatalf("path into a %s", v.Type())
	}
}

func TestFieldPaths(t *testing.T) {
	tests := map[string]struct {
		keep    []string
		wantErr bool
	}{
		"fields":          {keep: someFields},
		"nothing":         {keep: nil},
		"whole and part":  {keep: []string{"pods", "pods.metadata.name"}},
		"unknown field":   {keep: []string{"pods.metadata.nmae"}, wantErr: true},
		"json name only":  {keep: []string{"pods.ObjectMeta"}, wantErr: true},
		"into a map":      {keep: []string{"pods.metadata.labels.app"}, wantErr: true},
		"into a time":     {keep: []string{"metadata.capturedAt.Time"}, wantErr: true},
		"into a quantity": {keep: []string{"nodes.status.capacity.cpu"}, wantErr: true},
		"into a string":   {keep: []string{"kind.x"}, wantErr: true},
		"empty segment":   {keep: []string{"pods..name"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s snapshot.Snapshot
			err := UnmarshalFields([]byte(`{"kind":"Snapshot"}`), &s, tc.keep)
			if got := err != nil; got != tc.wantErr {
				t.Errorf("error = %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v is not ErrUnsupported", err)
			}
		})
	}
}

func TestAgreesWithCanonical(t *testing.T) {
	tests := map[string]struct {
		json   string
		wantOK bool
	}{
		"minimal":                  {`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","metadata":{"capturedAt":"2026-11-29T12:00:00Z"}}`, true},
		"whitespace":               {" \n{ \"kind\" : \"Snapshot\" , \"pods\" : [ ] }\r\n", true},
		"unknown field":            {`{"kind":"Snapshot","bogus":1}`, false},
		"nested unknown":           {`{"pods":[{"spec":{"nodeNmae":"x"}}]}`, false},
		"case mismatch":            {`{"Kind":"Snapshot"}`, false},
		"duplicate field":          {`{"kind":"Snapshot","kind":"Snapshot"}`, false},
		"duplicate map key":        {`{"pods":[{"metadata":{"labels":{"a":"1","a":"2"}}}]}`, false},
		"duplicate nested":         {`{"pods":[{"metadata":{"name":"a","name":"b"}}]}`, false},
		"trailing data":            {`{"kind":"Snapshot"} x`, false},
		"two documents":            {`{"kind":"Snapshot"}{}`, false},
		"truncated":                {`{"kind":"Snapshot","pods":[{"metadata":{"name":"a"`, false},
		"type mismatch":            {`{"pods":[{"metadata":{"generation":"1"}}]}`, false},
		"float into int":           {`{"pods":[{"metadata":{"generation":1.5}}]}`, false},
		"int overflow":             {`{"pods":[{"spec":{"priority":2147483648}}]}`, false},
		"escapes":                  {`{"pods":[{"metadata":{"name":"a\"b\u00e9\n","labels":{"k\/":"\ud83d\ude00"}}}]}`, true},
		"utf-8":                    {`{"pods":[{"metadata":{"name":"caf` + "\u00e9" + `"}}]}`, true},
		"nulls":                    {`{"pods":[{"metadata":{"name":null,"labels":null,"creationTimestamp":null,"deletionTimestamp":null},"spec":{"containers":null}}],"nodes":null}`, true},
		"quantities":               {`{"pods":[{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m","memory":"1Gi"},"limits":{"cpu":2}}}]}}]}`, true},
		"int or string":            {`{"podDisruptionBudgets":[{"spec":{"minAvailable":"50%","maxUnavailable":1}}]}`, true},
		"bad time":                 {`{"metadata":{"capturedAt":"yesterday"}}`, false},
		"bad quantity":             {`{"pods":[{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}]}`, false},
		"empty object":             {`{}`, true},
		"not an object":            {`[]`, false},
		"control character":        {"{\"kind\":\"a\tb\"}", false},
		"bad escape":               {`{"kind":"\x"}`, false},
		"leading zero":             {`{"pods":[{"metadata":{"generation":01}}]}`, false},
		"leading comma":            {`{"pods":[,{}]}`, false},
		"trailing comma":           {`{"pods":[{},]}`, false},
		"missing comma":            {`{"pods":[{} {}]}`, false},
		"nested brackets":          {`{"pods":[{"spec":{"containers":[{"args":["]","[","}\"{"]}]}},{}]}`, true},
		"lines":                    {"{\"pods\": [\n  {},\n  {\"metadata\": {\"name\": \"a\"}}\n],\n\"nodes\": [\n{}\n]\n}\n", true},
		"lines and escapes":        {"{\"pods\":[\n{\"metadata\":{\"name\":\"a\\\\\"}},\n{\"metadata\":{\"name\":\"]\\\"}\\n\"}},\n{\"metadata\":{\"labels\":{\"[\":\"{\\\\\\\\\"}}}\n],\n\"nodes\":[]}", true},
		"lines, bad glue":          {"{\"pods\":[\n{}\n{}\n]}", false},
		"lines, scalars":           {"{\"pods\":[\n1,\n2\n]}", false},
		"lines, nested end":        {"{\"pods\":[\n{\"spec\":{\n\"containers\":[\n]\n}}\n]\n,\"nodes\":[\n{}]}", true},
		"lines, newline in string": {"{\"pods\":[\n{\"metadata\":{\"name\":\"a\n\"}},\n{}\n]}", false},
		"unterminated lines":       {"{\"pods\":[\n{},\n{}\n", false},
		"layout misleads":          {"{\"pods\": [\n{\"spec\": {\"containers\": [\n{\"name\": \"a\"}\n]}},\n{}\n],\n\"nodes\": [\n{}\n]}", true},
		"negative uint":            {`{"pods":[{"spec":{"containers":[{"name":"c","ports":[{"containerPort":-1}]}]}}]}`, true},
	}
	ps := newPlans(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ps.agree(t, []byte(tc.json)); got != tc.wantOK {
				t.Errorf("strictjson accepted = %v, want %v", got, tc.wantOK)
			}
		})
	}
}

// TestGeneratedSnapshot decodes a generated snapshot big enough to take the
// parallel path, and compares it with the canonical decoder's result.
func TestGeneratedSnapshot(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(bench.Generate(bench.Size{Nodes: 100, Namespaces: 5, DeploymentsPerNamespace: 10, Replicas: 18})); err != nil {
		t.Fatal(err)
	}
	if !newPlans(t).agree(t, buf.Bytes()) {
		t.Fatalf("strictjson refused a generated snapshot: %v", Unmarshal(buf.Bytes(), &snapshot.Snapshot{}))
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"sentinel.dev/v1alpha1","kind":"Snapshot","metadata":{"capturedAt":"2026-11-29T12:00:00Z"}}`,
		`{"pods":[{"metadata":{"name":"a","labels":{"app":"web"},"ownerReferences":[{"kind":"ReplicaSet","name":"r","uid":"u","controller":true}]},"spec":{"nodeName":"n","containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}]}`,
		`{"podDisruptionBudgets":[{"metadata":{"name":"p","generation":2},"spec":{"minAvailable":"50%","selector":{"matchExpressions":[{"key":"a","operator":"In","values":["x"]}]}},"status":{"disruptedPods":{"a":"2026-11-29T12:00:00Z"}}}]}`,
		`{"nodes":[{"metadata":{"name":"n1","uid":"x"},"status":{"capacity":{"cpu":"4"}}}]}`,
		"{\n  \"pods\": [\n    {\"metadata\": {\"name\": \"a\\\"]\"}},\n    {\"spec\": {\"containers\": [\n      {\"name\": \"c\"}\n    ]}}\n  ],\n  \"nodes\": [\n    {}\n  ]\n}\n",
	} {
		f.Add([]byte(s))
	}
	ps := newPlans(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ps.agree(t, data)
	})
}

// TestWordAtATime puts each byte that ends a plain run of a string (and
// runs of spaces) at every offset of an 8-byte word.
func TestWordAtATime(t *testing.T) {
	ps := newPlans(t)
	for _, special := range []string{`\"`, `\\`, "\t", "\u00e9", "\xff", `"`, `\u0041`} {
		for k := range 10 {
			for _, pad := range []int{0, 9} {
				name := strings.Repeat("a", k) + special + strings.Repeat("b", 10-k)
				doc := "{\"pods\":[\n" + strings.Repeat(" ", pad) + `{"metadata":{"name":"` + name + `"}},` + "\n" + strings.Repeat(" ", pad) + "{}\n]}"
				ps.agree(t, []byte(doc))
			}
		}
	}
}
