// Package inorder encodes the items of a long list on every CPU and writes
// the encodings in the list's order: the output of a sequential encoder,
// in a fraction of its wall time, holding only a round of batches at once.
package inorder

import (
	"io"
	"runtime"

	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// Encoder appends the encoding of items [from, to) to dst and returns it.
// worker (0 <= worker < runtime.GOMAXPROCS(0)) tells calls that may run at
// the same time apart, for state of their own (an encoder, a scratch
// buffer); calls with the same worker never overlap.
type Encoder func(worker int, dst []byte, from, to int) ([]byte, error)

// Write encodes n items in batches of batch consecutive items, as many
// batches at once as runtime.GOMAXPROCS allows, each into a buffer reused
// from round to round, and writes each round's buffers to w in order. It
// returns the first error of encode or of w; nothing of a later batch is
// written after an error.
func Write(w io.Writer, n, batch int, encode Encoder) error {
	if n <= 0 {
		return nil
	}
	batch = max(batch, 1)
	workers := min(runtime.GOMAXPROCS(0), (n+batch-1)/batch)
	bufs := make([][]byte, workers)
	errs := make([]error, workers)
	for start := 0; start < n; start += batch * workers {
		parallel.Do(workers, func(i int) {
			from := start + i*batch
			if from >= n {
				bufs[i], errs[i] = bufs[i][:0], nil
				return
			}
			bufs[i], errs[i] = encode(i, bufs[i][:0], from, min(from+batch, n))
		})
		for i := range workers {
			if errs[i] != nil {
				return errs[i]
			}
			if _, err := w.Write(bufs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
