// Package document is the envelope of every document on sentinel's pipes:
// apiVersion sentinel.dev/v1alpha1 plus a kind. It encodes JSON or YAML and
// decodes either strictly: an unknown kind, apiVersion or field is an error
// that names it, and input past a size limit is refused.
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// APIVersion of every sentinel document.
const APIVersion = "sentinel.dev/v1alpha1"

// DefaultLimit is the input size limit readers use unless told otherwise.
const DefaultLimit = 1 << 30

// Header is embedded (inline) in every document type.
type Header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// NewHeader is the header of a document of kind.
func NewHeader(kind string) Header { return Header{APIVersion: APIVersion, Kind: kind} }

// DocumentHeader returns h; documents get it by embedding Header.
func (h Header) DocumentHeader() Header { return h }

// Document is anything that embeds Header.
type Document interface{ DocumentHeader() Header }

// Format is an output format.
type Format string

const (
	JSON  Format = "json"
	YAML  Format = "yaml"
	Table Format = "table"
)

// ParseFormat accepts s when it names one of allowed.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q: want one of %s", s, strings.Join(names, ", "))
}

// Encode writes doc as JSON (indented, one trailing newline) or YAML.
func Encode(w io.Writer, f Format, doc Document) error {
	if h := doc.DocumentHeader(); h.APIVersion != APIVersion || h.Kind == "" {
		return fmt.Errorf("encode: document header %q/%q is not set", h.APIVersion, h.Kind)
	}
	switch f {
	case JSON, "":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case YAML:
		b, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encode yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("encode: format %q is not a document format", f)
}

// Read reads all of r, refusing more than limit bytes (limit <= 0: DefaultLimit).
func Read(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("input is larger than the limit of %d bytes", limit)
	}
	return data, nil
}

// Decode reads a document of kind from r (at most limit bytes) into doc.
func Decode(r io.Reader, kind string, doc Document, limit int64) error {
	data, err := Read(r, limit)
	if err != nil {
		return err
	}
	return Unmarshal(data, kind, doc)
}

// Unmarshal decodes data, JSON or YAML, strictly into doc and checks that it
// is a document of kind.
func Unmarshal(data []byte, kind string, doc Document) error {
	js, err := ToJSON(data, kind)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, doc, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		if herr := checkHeader(js, kind); herr != nil {
			return herr
		}
		return syntaxError(js, err)
	}
	if err := doc.DocumentHeader().Check(kind); err != nil {
		return err
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("invalid %s document: %s", kind, strings.Join(msgs, "; "))
	}
	return nil
}

// ToJSON is data, a document of kind in JSON or YAML, as JSON: JSON as it
// is (without leading blanks), YAML converted strictly (one document, a
// mapping, no duplicate keys). Empty input is an error.
func ToJSON(data []byte, kind string) ([]byte, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\x00")
	if len(bytes.TrimRight(trimmed, " \t\r\n\x00")) == 0 {
		return nil, fmt.Errorf("empty input: want a %s document", kind)
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		return trimmed, nil
	}
	return yamlToJSON(data)
}

func yamlToJSON(data []byte) ([]byte, error) {
	if n := yamlDocuments(data); n > 1 {
		return nil, fmt.Errorf("input holds %d YAML documents: want exactly one", n)
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(js) == 0 || js[0] != '{' {
		return nil, fmt.Errorf("invalid YAML: the document is not a mapping")
	}
	return js, nil
}

// yamlDocuments counts YAML documents that hold anything but comments.
func yamlDocuments(data []byte) int {
	n, content := 0, false
	for line := range bytes.Lines(data) {
		l := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(l, []byte("---")) || bytes.HasPrefix(l, []byte("--- ")) {
			if content {
				n++
			}
			content = len(bytes.TrimSpace(l[3:])) > 0
			continue
		}
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			content = true
		}
	}
	if content {
		n++
	}
	return n
}

func checkHeader(js []byte, kind string) error {
	var h Header
	if json.Unmarshal(js, &h) != nil {
		return nil // not even the header parses: report the syntax error
	}
	return h.Check(kind)
}

// Check says what is wrong with h as the header of a document of kind (nil
// when nothing is).
func (h Header) Check(kind string) error {
	switch {
	case h.Kind == "":
		return fmt.Errorf(`missing "kind": want a %s document`, kind)
	case h.Kind != kind:
		return fmt.Errorf("unexpected kind %q: want %q", h.Kind, kind)
	case h.APIVersion == "":
		return fmt.Errorf(`missing "apiVersion": want %q`, APIVersion)
	case h.APIVersion != APIVersion:
		return fmt.Errorf("unknown apiVersion %q: want %q", h.APIVersion, APIVersion)
	}
	return nil
}

// syntaxError adds a line and column to a JSON error where it can.
func syntaxError(js []byte, err error) error {
	var v any
	serr := json.Unmarshal(js, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(serr, &se):
		line, col := position(js, se.Offset-1) // Offset is just past the culprit
		if se.Offset >= int64(len(js)) || strings.Contains(se.Error(), "unexpected end") {
			return fmt.Errorf("truncated JSON at line %d, column %d: %w", line, col, serr)
		}
		return fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, serr)
	case serr != nil:
		return fmt.Errorf("invalid JSON: %w", serr)
	}
	return fmt.Errorf("invalid document: %w", err)
}

func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
