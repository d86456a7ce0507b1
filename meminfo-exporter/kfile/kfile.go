// Package kfile reads small kernel files (procfs, cgroupfs) again and again
// without allocating: the file stays open and each Read is a pread at offset
// 0 into a buffer that is reused.
package kfile

import (
	"fmt"
	"os"
	"syscall"
)

// File is one kernel file. It is not safe for concurrent use.
type File struct {
	path string
	f    *os.File
	fd   int
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
		k.f, k.fd = f, int(f.Fd())
	}
	for {
		// One pread: procfs and cgroupfs (seq_file) hand out the whole
		// file at once when the buffer holds it, and a regular file reads
		// short only at its end. A full buffer may mean more: grow, read again.
		n, err := syscall.Pread(k.fd, k.buf, 0)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			k.Close()
			return nil, fmt.Errorf("read %s: %w", k.path, err)
		case n == len(k.buf):
			k.buf = make([]byte, 2*len(k.buf))
		default:
			return k.buf[:n], nil
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
