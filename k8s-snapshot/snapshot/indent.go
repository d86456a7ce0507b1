package snapshot

// appendIndent appends compact JSON src (as json.Marshal writes it: no
// whitespace outside strings) to dst indented exactly as json.Indent would
// with prefix and two spaces per level. It only looks for strings and the
// six structural characters, a few times faster than json.Indent's full
// scanner, which a snapshot's encoding spent a sixth of its time in.
func appendIndent(dst, src []byte, prefix string) []byte {
	depth := 0
	open := false // just after '{' or '[': the newline waits for a non-empty body
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			open = true
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
