package controlplane

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// WaitIdle waits until the control plane's processes together have used
// less than maxCPU CPUs (e.g. 0.25) in each of three windows in a row (one
// second each to wait out pods just started, 100 ms between two timed
// requests), and returns how long that took. A cluster that has just started
// pods is busy with them for a while (scheduler, controllers, kwok's status
// updates): a benchmark measures a settled one. ctx bounds the wait.
func (cp *ControlPlane) WaitIdle(ctx context.Context, maxCPU float64, window time.Duration) (time.Duration, error) {
	const calmWindows = 3
	pids := cp.PIDs()
	start, calm := time.Now(), 0
	before := cpuSeconds(pids)
	tick := time.NewTicker(window)
	defer tick.Stop()
	for calm < calmWindows {
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("control plane still busy after %s: %w", time.Since(start).Round(time.Second), ctx.Err())
		case <-tick.C:
		}
		now := cpuSeconds(pids)
		if (now-before)/window.Seconds() < maxCPU {
			calm++
		} else {
			calm = 0
		}
		before = now
	}
	return time.Since(start), nil
}

// cpuSeconds is the user and system CPU time the processes have used.
func cpuSeconds(pids map[string]int) float64 {
	var sum float64
	for _, pid := range pids {
		if t, ok := ProcessCPU(pid); ok {
			sum += t
		}
	}
	return sum
}

// ProcessCPU is the CPU time (user + system, in seconds) process pid has
// used so far, from /proc/PID/stat; false when it cannot be read.
func ProcessCPU(pid int) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the command may hold spaces
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (utime + stime) / userHZ, true
}

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// Linux whatever the kernel's HZ).
const userHZ = 100
