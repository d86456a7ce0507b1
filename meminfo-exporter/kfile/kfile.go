// Package kfile reads small kernel files (procfs, cgroupfs) again and again
// without allocating: the file stays open and each Read is a pread at offset
// 0 into a buffer that is reused.
package kfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// File is one kernel file. It is not safe for concurrent use.
type File struct {
	path string
	f    *os.File
	buf  []byte
}

// New is the file at path; nothing is opened until the first Read.
func New(path string) *File {
	return &File{path: path, buf: make([]byte, 4096)}
}

// Path is the file's path.
func (k *File) Path() string { return k.path }

// Read returns the file's whole content. The slice is valid until the next
// Read. After an error the file is closed, and the next Read opens it again.
func (k *File) Read() ([]byte, error) {
	if k.f == nil {
		f, err := os.Open(k.path)
		if err != nil {
			return nil, err
		}
		k.f = f
	}
	for {
		n, err := k.f.ReadAt(k.buf, 0)
		switch {
		case err == nil && n == len(k.buf):
			// Full: the file may be longer. Grow and read it again.
			k.buf = make([]byte, 2*len(k.buf))
		case err == nil || errors.Is(err, io.EOF):
			return k.buf[:n], nil
		default:
			k.Close()
			return nil, fmt.Errorf("read %s: %w", k.path, err)
		}
	}
}

// Close closes the file; a later Read opens it again.
func (k *File) Close() error {
	if k.f == nil {
		return nil
	}
	err := k.f.Close()
	k.f = nil
	return err
}
