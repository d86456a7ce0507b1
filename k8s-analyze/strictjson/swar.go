package strictjson

import (
	"encoding/binary"
	"math/bits"
)

// Eight bytes at a time: the loops over string contents and indentation
// test a word for the bytes that end them and skip it whole when it holds
// none.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasByte reports whether a byte of w equals b.
func hasByte(w uint64, b byte) bool {
	x := w ^ (ones * uint64(b))
	return (x-ones)&^x&highs != 0
}

// plainString reports whether none of the 8 bytes at data[i:] ends a plain
// ASCII run of a string: a quote, a backslash, a control character or a
// non-ASCII byte.
func plainString(data []byte, i int) bool {
	w := binary.LittleEndian.Uint64(data[i:])
	less := (w - ones*0x20) &^ w & highs // a byte < 0x20 (or >= 0x80, also refused)
	return w&highs == 0 && less == 0 && !hasByte(w, '"') && !hasByte(w, '\\')
}

// noQuote reports whether none of the 8 bytes at data[i:] is a quote or a
// backslash.
func noQuote(data []byte, i int) bool {
	w := binary.LittleEndian.Uint64(data[i:])
	return !hasByte(w, '"') && !hasByte(w, '\\')
}

// spaces reports whether the 8 bytes at data[i:] are all spaces.
func spaces(data []byte, i int) bool {
	return binary.LittleEndian.Uint64(data[i:]) == ones*' '
}

// leadingSpaces counts the spaces that start data[i:], up to eight; at
// least one when data[i] is a space.
func leadingSpaces(data []byte, i int) int {
	if i+8 > len(data) {
		n := 0
		for i+n < len(data) && data[i+n] == ' ' {
			n++
		}
		return n
	}
	return bits.TrailingZeros64(binary.LittleEndian.Uint64(data[i:])^ones*' ') >> 3
}
