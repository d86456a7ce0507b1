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
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// someSnapshot is a projection of a Snapshot that keeps whole values,
// fields through slices, pointers and maps, a field of an inline struct,
// scalars under another type, and presence only (an empty struct); it
// leaves the rest to validation.
type someSnapshot struct {
	Kind     string `json:"kind"`
	Metadata struct {
		CapturedAt metav1.Time `json:"capturedAt"`
	} `json:"metadata"`
	Nodes []struct {
		Metadata someMeta `json:"metadata"`
	} `json:"nodes"`
	Pods []struct {
		Metadata someMeta `json:"metadata"`
		Spec     struct {
			NodeName string `json:"nodeName"`
			Volumes  []struct {
				Name                  string                       `json:"name"`
				EmptyDir              *corev1.EmptyDirVolumeSource `json:"emptyDir"`
				Projected             *struct{}                    `json:"projected"`
				PersistentVolumeClaim *struct {
					ClaimName string `json:"claimName"`
				} `json:"persistentVolumeClaim"`
			} `json:"volumes"`
		} `json:"spec"`
		Status struct {
			Phase      string `json:"phase"`
			Conditions []struct {
				Type   corev1.PodConditionType `json:"type"`
				Status string                  `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"pods"`
	PodDisruptionBudgets []struct {
		Metadata metav1.ObjectMeta                `json:"metadata"`
		Spec     policyv1.PodDisruptionBudgetSpec `json:"spec"`
		Status   struct {
			DisruptedPods map[string]metav1.Time `json:"disruptedPods"`
		} `json:"status"`
	} `json:"podDisruptionBudgets"`
}

type someMeta struct {
	Name            string                  `json:"name"`
	UID             string                  `json:"uid"`
	Labels          map[string]string       `json:"labels"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
}

// split3 takes the parallel paths for every array of the top level, with
// boundary scan chunks at every newline.
var split3 = config{workers: 3, parallelMin: 1, scanMin: 1}

var snapshotType = reflect.TypeFor[snapshot.Snapshot]()

// projections are the projections agree checks.
var projections = map[string]reflect.Type{"some fields": reflect.TypeFor[someSnapshot](), "nothing": reflect.TypeFor[struct{}]()}

// plans are the compiled plans agree uses, compiled once (compiling the
// Snapshot type costs more than decoding a small document).
type plans struct {
	full      *plan
	projected map[string]*plan // by name in projections
}

func newPlans(t testing.TB) *plans {
	t.Helper()
	ps := &plans{projected: map[string]*plan{}}
	var err error
	if ps.full, err = compilePlan(nil, snapshotType); err != nil {
		t.Fatal(err)
	}
	for name, typ := range projections {
		if ps.projected[name], err = compilePlan(snapshotType, typ); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// agree checks the promise: what Unmarshal accepts, the canonical decoder
// accepts with the same result; what UnmarshalProjection accepts into each
// of projections, it accepts too, and Project of its result is the same.
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
		typ := projections[name]
		part, partSplit := reflect.New(typ), reflect.New(typ)
		err := decode(data, part.UnsafePointer(), p, config{workers: 1})
		if perr := decode(data, partSplit.UnsafePointer(), p, split3); (perr == nil) != (err == nil) || (err == nil && !reflect.DeepEqual(part.Interface(), partSplit.Interface())) {
			t.Fatalf("parallel projected decoding (%s) differs (%v, %v) (-seq +par):\n%s\non:\n%s", name, perr, err, cmp.Diff(part.Interface(), partSplit.Interface()), data)
		}
		// A projection never refuses what the full fast path accepts.
		if ferr == nil && err != nil {
			t.Fatalf("the projection on %s refused (%v) what Unmarshal accepts:\n%s", name, err, data)
		}
		if err != nil {
			continue
		}
		if serr != nil {
			t.Fatalf("strictjson accepted into %s what the canonical decoder refuses (%v):\n%s", name, serr, data)
		}
		want := reflect.New(typ)
		if err := Project(want.Interface(), &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want.Interface(), part.Interface()) {
			t.Fatalf("kept fields (%s) differ from the canonical decoder's (-want +got):\n%s\non:\n%s", name, cmp.Diff(want.Interface(), part.Interface()), data)
		}
	}
	return ferr == nil
}

func TestProjectionTypes(t *testing.T) {
	tests := map[string]struct {
		typ     reflect.Type
		wantErr string
	}{
		"fields":  {typ: projections["some fields"]},
		"nothing": {typ: projections["nothing"]},
		"whole":   {typ: snapshotType},
		"unknown field": {typ: reflect.TypeFor[struct {
			Pods []struct {
				Metadata struct {
					Nmae string `json:"nmae"`
				} `json:"metadata"`
			} `json:"pods"`
		}](), wantErr: "field nmae is not in"},
		"Go name": {typ: reflect.TypeFor[struct {
			Pods []struct {
				ObjectMeta metav1.ObjectMeta
			} `json:"pods"`
		}](), wantErr: "field ObjectMeta is not in"},
		"map as a struct": {typ: reflect.TypeFor[struct {
			Pods []struct {
				Metadata struct {
					Labels struct{} `json:"labels"`
				} `json:"metadata"`
			} `json:"pods"`
		}](), wantErr: "at pods.metadata.labels"},
		"into a time": {typ: reflect.TypeFor[struct {
			Metadata struct {
				CapturedAt struct{} `json:"capturedAt"`
			} `json:"metadata"`
		}](), wantErr: "at metadata.capturedAt"},
		"a time as a string": {typ: reflect.TypeFor[struct {
			Metadata struct {
				CapturedAt string `json:"capturedAt"`
			} `json:"metadata"`
		}](), wantErr: "at metadata.capturedAt"},
		"a quantity as a string": {typ: reflect.TypeFor[struct {
			Nodes []struct {
				Status struct {
					Capacity map[string]string `json:"capacity"`
				} `json:"status"`
			} `json:"nodes"`
		}](), wantErr: "at nodes.status.capacity"},
		"another kind": {typ: reflect.TypeFor[struct {
			Kind int `json:"kind"`
		}](), wantErr: "at kind"},
		"another size": {typ: reflect.TypeFor[struct {
			PodDisruptionBudgets []struct {
				Status struct {
					DisruptionsAllowed int64 `json:"disruptionsAllowed"`
				} `json:"status"`
			} `json:"podDisruptionBudgets"`
		}](), wantErr: "at podDisruptionBudgets.status.disruptionsAllowed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := UnmarshalProjection([]byte(`{"kind":"Snapshot"}`), reflect.New(tc.typ).Interface(), snapshotType)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("error = %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrUnsupported) {
				t.Errorf("error = %v, want ErrUnsupported containing %q", err, tc.wantErr)
			}
			if perr := Project(reflect.New(tc.typ).Interface(), &snapshot.Snapshot{}); perr == nil || perr.Error() != err.Error() {
				t.Errorf("Project's error = %v, want UnmarshalProjection's", perr)
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

// TestStringMapsShared: objects of the same bytes decode into one shared
// map, others into their own.
func TestStringMapsShared(t *testing.T) {
	var s snapshot.Snapshot
	doc := `{"pods":[{"metadata":{"labels":{"app":"web","x":"1"}}},{"metadata":{"labels":{"app":"web","x":"1"}}},{"metadata":{"labels":{"app":"web", "x":"1"}}},{"metadata":{"labels":{}}},{"metadata":{"labels":{}}}]}`
	if err := Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	same := func(i, j int) bool {
		return reflect.ValueOf(s.Pods[i].Labels).UnsafePointer() == reflect.ValueOf(s.Pods[j].Labels).UnsafePointer()
	}
	if !same(0, 1) || !same(3, 4) {
		t.Errorf("equal label objects decoded into distinct maps")
	}
	if same(0, 2) || same(0, 3) {
		t.Errorf("label objects of different bytes share a map")
	}
	if want := map[string]string{"app": "web", "x": "1"}; !reflect.DeepEqual(s.Pods[2].Labels, want) || s.Pods[3].Labels == nil || len(s.Pods[3].Labels) != 0 {
		t.Errorf("labels = %v, %v", s.Pods[2].Labels, s.Pods[3].Labels)
	}
	if err := Unmarshal([]byte(`{"pods":[{"metadata":{"labels":{"a":"1","a":"2"}}},{"metadata":{"labels":{"a":"1","a":"2"}}}]}`), &s); err == nil {
		t.Errorf("duplicate label keys accepted")
	}
}

func TestLeadingSpaces(t *testing.T) {
	for _, tc := range []struct {
		data string
		i    int
		want int
	}{
		{"          x", 0, 8}, {"   \n      x", 0, 3}, {"x       ", 1, 7}, {"  ", 0, 2}, {"a b", 1, 1}, {"ab", 1, 0}, {" \t", 0, 1},
	} {
		if got := leadingSpaces([]byte(tc.data), tc.i); got != tc.want {
			t.Errorf("leadingSpaces(%q, %d) = %d, want %d", tc.data, tc.i, got, tc.want)
		}
	}
}
