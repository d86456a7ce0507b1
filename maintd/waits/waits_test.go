package waits

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func waiting(x *Index, w Wait) []string {
	var out []string
	x.Waiting(w, func(n string) { out = append(out, n) })
	slices.Sort(out)
	return out
}

func TestIndex(t *testing.T) {
	x := NewIndex()
	a, b := Set{}, Set{}
	a.Add(Node, "n1")
	a.Add(PDB, "ns/x", "ns/y")
	a.Add(Slot)
	b.Add(PDB, "ns/x")
	b.Add(Node, "n2")
	x.Set("a", a.List())
	x.Set("b", b.List())

	if got, want := waiting(x, Wait{PDB, "ns/x"}), []string{"a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("waiting on pdb ns/x: %v, want %v", got, want)
	}
	if got := waiting(x, Wait{On: Slot}); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("waiting on a slot: %v, want [a]", got)
	}
	// A new decision replaces the waits: a no longer waits on a slot.
	c := Set{}
	c.Add(Node, "n1")
	x.Set("a", c.List())
	if got := waiting(x, Wait{On: Slot}); got != nil {
		t.Errorf("waiting on a slot after a's new decision: %v, want none", got)
	}
	if got := waiting(x, Wait{PDB, "ns/y"}); got != nil {
		t.Errorf("waiting on pdb ns/y after a's new decision: %v, want none", got)
	}
	x.Forget("b")
	if got := waiting(x, Wait{PDB, "ns/x"}); got != nil {
		t.Errorf("waiting on pdb ns/x once b is forgotten: %v, want none", got)
	}
	if got := x.Of("b"); got != nil {
		t.Errorf("b's waits once forgotten: %v", got)
	}
	if got, want := x.Of("a"), []Wait{{Node, "n1"}}; !cmp.Equal(got, want) {
		t.Errorf("a's waits: %v, want %v", got, want)
	}
}

func TestSetList(t *testing.T) {
	s := Set{}
	s.Add(Pods, "b", "a", "b")
	s.Add(Node, "n")
	want := []Wait{{Node, "n"}, {Pods, "a"}, {Pods, "b"}}
	if got := s.List(); !cmp.Equal(got, want) {
		t.Errorf("List: %v, want %v", got, want)
	}
}
