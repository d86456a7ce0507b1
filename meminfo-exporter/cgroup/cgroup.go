// Package cgroup finds the memory cgroup of the process and reads it.
//
// The layout of the cgroup filesystem is detected, not assumed: statfs says
// whether the root is cgroup v2 (unified), or a tmpfs holding v1
// hierarchies with or without a v2 "unified" mount (hybrid). A tree that is
// no cgroup filesystem at all (a fixture, a copied tree) is recognised by
// its files instead.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Mode is the cgroup layout of a machine.
type Mode uint8

const (
	None   Mode = iota // no cgroup filesystem found
	V1                 // only v1 hierarchies
	Hybrid             // v1 hierarchies (memory among them) and a v2 "unified" mount
	V2                 // one unified v2 hierarchy
)

func (m Mode) String() string {
	switch m {
	case V1:
		return "v1"
	case Hybrid:
		return "hybrid"
	case V2:
		return "v2"
	}
	return "none"
}

// Filesystem magic numbers (linux/magic.h).
const (
	cgroup2Magic = 0x63677270
	cgroupMagic  = 0x27e0eb
	tmpfsMagic   = 0x01021994
)

// StatFS returns the filesystem type (f_type) of the filesystem holding path.
type StatFS func(path string) (int64, error)

// Statfs is StatFS with the statfs(2) system call.
func Statfs(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return int64(st.Type), nil
}

// Detect says how the cgroup filesystem mounted at root is laid out.
func Detect(root string, statfs StatFS) (Mode, error) {
	magic, err := statfs(root)
	if err != nil {
		return None, err
	}
	switch magic {
	case cgroup2Magic:
		return V2, nil
	case tmpfsMagic:
		if m, err := statfs(filepath.Join(root, "unified")); err == nil && m == cgroup2Magic {
			return Hybrid, nil
		}
		if m, err := statfs(filepath.Join(root, "memory")); err == nil && m == cgroupMagic {
			return V1, nil
		}
	}
	// Not a cgroup filesystem: a tree of plain files, recognised by them.
	switch {
	case exists(filepath.Join(root, "cgroup.controllers")):
		return V2, nil
	case exists(filepath.Join(root, "unified", "cgroup.controllers")):
		return Hybrid, nil
	case exists(filepath.Join(root, "memory", "memory.usage_in_bytes")):
		return V1, nil
	}
	return None, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Paths are the directories of the process's own cgroup.
type Paths struct {
	Mode Mode
	// Memory holds the memory controller's files: memory.current, ... on
	// v2, memory.usage_in_bytes, ... on v1 and hybrid.
	Memory string
	// Pressure holds memory.pressure (v2 and hybrid; empty on v1).
	Pressure string
}

// Locate finds the process's cgroup directories under root, from
// procSelfCgroup (the content of /proc/self/cgroup).
func Locate(mode Mode, root string, procSelfCgroup []byte) (Paths, error) {
	v1, v2, err := parseProcCgroup(procSelfCgroup)
	if err != nil {
		return Paths{}, err
	}
	p := Paths{Mode: mode}
	switch mode {
	case V2:
		if v2 == "" {
			return Paths{}, errors.New("no cgroup v2 entry (0::) in /proc/self/cgroup")
		}
		p.Memory = join(root, v2)
		p.Pressure = p.Memory
	case Hybrid, V1:
		if v1 == "" {
			return Paths{}, errors.New("no memory controller entry in /proc/self/cgroup")
		}
		p.Memory = join(filepath.Join(root, "memory"), v1)
		if mode == Hybrid && v2 != "" {
			p.Pressure = join(filepath.Join(root, "unified"), v2)
		}
	default:
		return Paths{}, errors.New("no cgroup filesystem")
	}
	return p, nil
}

// join is root/path, or root itself when that directory does not exist:
// a container often sees its own cgroup mounted at the root while
// /proc/self/cgroup still names the host's path.
func join(root, path string) string {
	dir := filepath.Join(root, filepath.FromSlash(path))
	if !exists(dir) {
		return root
	}
	return dir
}

// parseProcCgroup returns the memory controller's v1 path and the v2 path.
func parseProcCgroup(data []byte) (v1, v2 string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				v1 = parts[2]
			}
		}
	}
	if v1 == "" && v2 == "" {
		return "", "", fmt.Errorf("no cgroup in /proc/self/cgroup (%d bytes)", len(data))
	}
	return v1, v2, nil
}
