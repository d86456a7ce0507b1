package strictjson

import (
	"bytes"
	"errors"

	"github.com/sentinel-go/sentinel/plumbing/parallel"
)

// errScalarElements: the parallel boundary scan only splits arrays of
// objects, arrays and strings; the caller decodes others sequentially.
var errScalarElements = errors.New("strictjson: array of scalars")

// boundaries finds where each element of the array at d.pos starts, and
// leaves d.pos just past the array. It tracks only strings and nesting; the
// decoding pass checks the syntax (each element must end right before its
// separator and the next offset, see glue), so wrong offsets are refused,
// never accepted.
//
// The scan runs on every worker: a raw newline cannot occur inside a JSON
// string, so a chunk that starts just after a newline starts outside any
// string, at a depth the chunks before it tell. Each chunk records the
// tokens at the lowest depth it reaches (element starts are at the array's
// own depth, the lowest inside it), and the chunks are joined in order once
// their starting depths are known. The array's end is not known in
// advance: regions of growing size (the first scanMin bytes, then twice what
// was scanned) are scanned until one holds it, so little is scanned past it.
// Without newlines (compact JSON) every region is one chunk.
func (d *decoder) boundaries() ([]int, error) {
	start := d.pos
	lo, depth := start+1, 1 // just inside the array
	var offsets []int
	size := d.scanMin
	for lo < len(d.data) {
		hi := min(len(d.data), lo+size)
		if hi < len(d.data) {
			// End regions just after a newline, outside strings.
			nl := bytes.IndexByte(d.data[hi:], '\n')
			if nl < 0 {
				// Compact JSON: one pass that stops at the end.
				return d.sequentialBoundaries(lo, depth, offsets)
			}
			hi += nl + 1
		}
		chunks := d.scanRegion(lo, hi)
		for _, c := range chunks {
			end, err := c.join(depth, &offsets)
			if err != nil {
				return nil, err
			}
			if end >= 0 {
				d.pos = end
				return offsets, nil
			}
			depth += c.delta
		}
		size = 2 * (hi - start)
		lo = hi
	}
	d.pos = len(d.data)
	return nil, d.errorf("unterminated array")
}

// sequentialBoundaries continues boundaries from lo (outside strings, at
// the given depth of the array) in one pass, up to the array's end.
func (d *decoder) sequentialBoundaries(lo, depth int, offsets []int) ([]int, error) {
	data := d.data
	for i := lo; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
		case '"':
			if depth == 1 {
				offsets = append(offsets, i)
			}
			i = closingQuote(data, i+1, len(data))
		case '{', '[':
			if depth == 1 {
				offsets = append(offsets, i)
			}
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				d.pos = i + 1
				return offsets, nil
			}
		default:
			if depth == 1 {
				return nil, errScalarElements
			}
			for i+1 < len(data) && !isDelim(data[i+1]) {
				i++
			}
		}
	}
	d.pos = len(data)
	return nil, d.errorf("unterminated array")
}

// scanRegion scans data[lo:hi] in chunks that start after newlines, one
// per worker.
func (d *decoder) scanRegion(lo, hi int) []chunk {
	cuts := []int{lo}
	n := d.workers
	if hi-lo < 2*d.scanMin {
		n = 1
	}
	for w := 1; w < n; w++ {
		at := max(lo+(hi-lo)*w/n, cuts[len(cuts)-1])
		nl := bytes.IndexByte(d.data[at:hi], '\n')
		if nl < 0 {
			break
		}
		if at+nl+1 < hi {
			cuts = append(cuts, at+nl+1)
		}
	}
	cuts = append(cuts, hi)
	chunks := make([]chunk, len(cuts)-1)
	parallel.Do(len(chunks), func(i int) { chunks[i] = scan(d.data, cuts[i], cuts[i+1]) })
	return chunks
}

// chunk is what the scan of one chunk found, depths relative to its start.
type chunk struct {
	delta  int    // depth at its end
	events []mark // tokens at the lowest depth reached so far
}

type mark struct {
	pos   int
	depth int  // before the token
	kind  byte // 's': a value opens ('{', '[' or '"'), 'c': a bracket closes, 'x': a scalar
}

// scan walks data[from:to], starting outside strings at depth 0.
func scan(data []byte, from, to int) chunk {
	var c chunk
	depth, low := 0, 0
	for i := from; i < to; i++ {
		switch data[i] {
		case ' ':
			for i+9 <= to && spaces(data, i+1) {
				i += 8
			}
		case '\t', '\n', '\r', ',', ':':
		case '"':
			if depth <= low {
				c.events = append(c.events, mark{i, depth, 's'})
			}
			i = closingQuote(data, i+1, to)
		case '{', '[':
			if depth <= low {
				c.events = append(c.events, mark{i, depth, 's'})
			}
			depth++
		case '}', ']':
			depth--
			if depth < low {
				low = depth
				c.events = append(c.events, mark{i, depth, 'c'})
			}
		default:
			if depth <= low {
				c.events = append(c.events, mark{i, depth, 'x'})
			}
			for i+1 < to && !isDelim(data[i+1]) {
				i++
			}
		}
	}
	c.delta = depth
	return c
}

// closingQuote is the index of the quote that ends the string whose
// contents start at i (to-1 when it does not end before to).
func closingQuote(data []byte, i, to int) int {
	for i < to {
		for i+8 <= to && noQuote(data, i) {
			i += 8
		}
		if i >= to {
			break
		}
		switch data[i] {
		case '"':
			return i
		case '\\':
			i++
		}
		i++
	}
	return to - 1
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '"', '{', '[', '}', ']':
		return true
	}
	return false
}

// join appends the element starts of c, which starts at the given depth of
// the array (1: its elements' depth), to offsets, and returns the position
// just past the array when it ends in c (else -1).
func (c *chunk) join(depth int, offsets *[]int) (end int, err error) {
	for _, m := range c.events {
		switch at := depth + m.depth; {
		case m.kind == 'c' && at == 0:
			return m.pos + 1, nil
		case at != 1:
		case m.kind == 's':
			*offsets = append(*offsets, m.pos)
		case m.kind == 'x':
			return -1, errScalarElements
		}
	}
	return -1, nil
}

// layout guesses the element offsets of the array at d.pos, and the
// position just past it, from the way indenting encoders (json.MarshalIndent,
// document.Encode, k8s-snapshot) lay an array of objects out: each element
// opens on a line of its own at one indentation ("\n    {"), and the array
// closes on a line at the indentation of the line that opened it ("\n  ]").
// Searching for those two strings is far cheaper than scanning. It is only
// a guess (a nested array or a string could look the same): the caller
// decodes with it, which checks every element and separator, and scans
// when that fails.
func (d *decoder) layout() (offsets []int, end int, ok bool) {
	data, start := d.data, d.pos
	line := bytes.LastIndexByte(data[:start], '\n') + 1
	indent := 0
	for line+indent < start && data[line+indent] == ' ' {
		indent++
	}
	first := start + 1
	for first < len(data) && isSpace(data[first]) {
		first++
	}
	nl := bytes.LastIndexByte(data[start+1:first], '\n')
	if nl < 0 || first >= len(data) || data[first] != '{' {
		return nil, 0, false
	}
	elem := data[start+1+nl : first+1] // "\n" + indentation + "{"
	for _, c := range elem[1 : len(elem)-1] {
		if c != ' ' {
			return nil, 0, false
		}
	}
	// "\n" + indentation, before the '{' of an element and the ']' of the
	// end; both are searched by their last byte, far rarer than newlines,
	// on every worker, in regions of growing size like boundaries.
	elemPrefix := elem[:len(elem)-1]
	closePrefix := append([]byte{'\n'}, data[line:line+indent]...)
	offsets = []int{first}
	lo, size := first+1, d.scanMin
	for lo < len(data) {
		hi := min(len(data), lo+size)
		n := d.workers
		if hi-lo < 2*d.scanMin {
			n = 1
		}
		parts := make([]layoutPart, n)
		parallel.Do(n, func(w int) { parts[w].find(data, lo+(hi-lo)*w/n, lo+(hi-lo)*(w+1)/n, elemPrefix, closePrefix) })
		for _, part := range parts {
			offsets = append(offsets, part.opens...)
			if part.close >= 0 {
				return offsets, part.close + 1, true
			}
		}
		size = 2 * (hi - first)
		lo = hi
	}
	return nil, 0, false
}

// layoutPart is what layout found in one part of a region.
type layoutPart struct {
	opens []int // element openings before close
	close int   // the array's ']', or -1
}

func (p *layoutPart) find(data []byte, lo, hi int, elemPrefix, closePrefix []byte) {
	p.close = -1
	for i := lo; i < hi; i++ {
		j := bytes.IndexByte(data[i:hi], ']')
		if j < 0 {
			break
		}
		if i += j; bytes.HasSuffix(data[:i], closePrefix) {
			p.close, hi = i, i
			break
		}
	}
	for i := lo; i < hi; i++ {
		j := bytes.IndexByte(data[i:hi], '{')
		if j < 0 {
			break
		}
		if i += j; bytes.HasSuffix(data[:i], elemPrefix) {
			p.opens = append(p.opens, i)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
