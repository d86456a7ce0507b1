package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one started binary, its own process group, and its log.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
}

// start runs bin with args, logging to LogDir()/<name>.log (appended, so a
// restart keeps the earlier log).
func (cp *ControlPlane) start(name, bin string, args ...string) error {
	select {
	case <-cp.closed:
		return fmt.Errorf("start %s: control plane is closed", name)
	default:
	}
	logf, err := os.OpenFile(filepath.Join(cp.LogDir(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = cp.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	cp.mu.Lock()
	cp.procs[name] = p
	cp.mu.Unlock()
	fmt.Fprintf(cp.log, "controlplane: started %s (pid %d)\n", name, cmd.Process.Pid)
	return nil
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the process left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitHTTP polls url until it answers 200, the process dies or ctx ends.
func (cp *ControlPlane) waitHTTP(ctx context.Context, name string, client *http.Client, url string) error {
	return cp.poll(ctx, name, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// poll calls cond every 50 ms until it is true, fails, the named process
// exits, or ctx ends.
func (cp *ControlPlane) poll(ctx context.Context, name string, cond func(context.Context) (bool, error)) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		cp.mu.Lock()
		p := cp.procs[name]
		cp.mu.Unlock()
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited (%v); see %s", name, p.err, filepath.Join(cp.LogDir(), name+".log"))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}
