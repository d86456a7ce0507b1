package inorder

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

func TestWriteKeepsOrder(t *testing.T) {
	for _, tc := range []struct{ n, batch int }{{0, 4}, {1, 4}, {7, 1}, {100, 3}, {1000, 64}, {5, 0}} {
		t.Run(fmt.Sprintf("n=%d,batch=%d", tc.n, tc.batch), func(t *testing.T) {
			var want bytes.Buffer
			for i := range tc.n {
				fmt.Fprintf(&want, "%d,", i)
			}
			var got bytes.Buffer
			err := Write(&got, tc.n, tc.batch, func(_ int, dst []byte, from, to int) ([]byte, error) {
				for i := from; i < to; i++ {
					dst = strconv.AppendInt(dst, int64(i), 10)
					dst = append(dst, ',')
				}
				return dst, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("Write wrote %q, want %q", got.String(), want.String())
			}
		})
	}
}

func TestWriteWorkersNeverOverlap(t *testing.T) {
	busy := make([]bool, 64)
	err := Write(&bytes.Buffer{}, 10000, 7, func(w int, dst []byte, from, to int) ([]byte, error) {
		if busy[w] { // a data race the race detector reports, too
			return nil, fmt.Errorf("worker %d called twice at once", w)
		}
		busy[w] = true
		defer func() { busy[w] = false }()
		return append(dst, byte(from)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// failAfter fails once n bytes were written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	boom := errors.New("boom")
	var out bytes.Buffer
	err := Write(&out, 100, 10, func(_ int, dst []byte, from, to int) ([]byte, error) {
		if from == 50 {
			return dst, boom
		}
		return append(dst, 'x'), nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	if bytes.Count(out.Bytes(), []byte("x")) > 5 {
		t.Errorf("wrote %q: batches after the failing one", out.String())
	}
	err = Write(&failAfter{3}, 100, 1, func(_ int, dst []byte, from, to int) ([]byte, error) { return append(dst, 'y'), nil })
	if err == nil || err.Error() != "disk full" {
		t.Errorf("err = %v, want disk full", err)
	}
}
