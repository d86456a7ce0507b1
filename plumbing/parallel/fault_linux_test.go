package parallel

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
)

// TestDoPassesFaultsOn: with the caller's SetPanicOnFault, a read of a
// mapped file truncated meanwhile is a panic the caller recovers, not the
// end of the process.
func TestDoPassesFaultsOn(t *testing.T) {
	name := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(name, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, 1<<16, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		p, ok := recover().(*Panic)
		if !ok {
			t.Fatalf("recovered %v, want a *Panic", p)
		}
		if _, fault := p.Value.(interface{ Addr() uintptr }); !fault {
			t.Errorf("panic value %v (%T) is not a memory fault", p.Value, p.Value)
		}
	}()
	var got [2]byte
	Do(2, func(i int) { got[i] = data[i<<12] })
	t.Fatalf("read %v from a truncated mapping without a fault", got)
}
