package controller

import "testing"

// TestObservingUnderTheLock: the check the simulation runs after every
// decision (Config.LockViolation) hears of a snapshot or an analysis made
// while the decisions' shared lock is held, and of nothing else.
func TestObservingUnderTheLock(t *testing.T) {
	var heard []string
	c := &Controller{cfg: Config{Serial: true, LockViolation: func(what string) { heard = append(heard, what) }}}
	c.observing("outside")
	c.slot.Lock()
	c.observing("inside")
	c.slot.Unlock()
	if len(heard) != 1 || heard[0] != "inside" {
		t.Errorf("heard %q, want [inside]", heard)
	}
}
