//go:build unix

package main

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only, populated up front: the bytes are
// the page cache's, so reading a big snapshot neither copies it nor faults
// in fresh memory page by page. The mapping lives as long as the process.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE|mapPopulate)
}
