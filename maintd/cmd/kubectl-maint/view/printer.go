package view

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Printer writes a plan's progress to w as it changes: each new step of
// status.history as a line; with Live, also the frame (Frame) below the
// steps, redrawn in place with ANSI cursor movement, in one write per
// redraw (no flicker: nothing is cleared that is not redrawn at once).
type Printer struct {
	w io.Writer
	// Live redraws a frame; otherwise only lines are written.
	live  bool
	width func() int
	now   func() time.Time

	mu   sync.Mutex
	plan *api.MaintenancePlan
	// last is the last history entry written, and counts the pod counts
	// last written.
	last   *api.Transition
	counts string
	// frame is the frame on screen.
	frame  []string
	closed bool
}

// NewPrinter writes to w; live draws frames width() columns wide (read at
// each redraw, so a resized terminal is followed); now is the clock.
func NewPrinter(w io.Writer, live bool, width func() int, now func() time.Time) *Printer {
	return &Printer{w: w, live: live, width: width, now: now}
}

// Seen marks the steps of p's history as shown: Update shows only later
// ones (a follow that starts from a plan's present, not its story).
func (pr *Printer) Seen(p *api.MaintenancePlan) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.newSteps(p.Status.History)
	pr.counts = Counts(&p.Status)
}

// Update shows plan p: its new steps, then the frame.
func (pr *Printer) Update(p *api.MaintenancePlan) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	pr.plan = p
	var b strings.Builder
	for _, t := range pr.newSteps(p.Status.History) {
		counts := ""
		if t == p.Status.History[len(p.Status.History)-1] {
			counts = Counts(&p.Status)
			pr.counts = counts
		}
		b.WriteString(Step(t, counts) + "\n")
	}
	if c := Counts(&p.Status); c != pr.counts {
		pr.counts = c
		b.WriteString(pr.now().Local().Format(time.TimeOnly) + "  " + c + "\n")
	}
	pr.draw(b.String())
}

// Tick redraws the frame at the current time (the wait's duration, the
// time to the ETA).
func (pr *Printer) Tick() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.closed && pr.live && pr.plan != nil {
		pr.draw("")
	}
}

// Close leaves the last frame on screen, followed by a new line, and
// stops drawing.
func (pr *Printer) Close() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	pr.closed = true
	if pr.live && pr.frame != nil {
		fmt.Fprint(pr.w, "\n\x1b[?25h")
	}
}

// newSteps are the entries of history after the last one written. The
// history keeps the last 20: when the last written one is no longer in it,
// every entry is new.
func (pr *Printer) newSteps(history []api.Transition) []api.Transition {
	if pr.last != nil {
		for i := len(history) - 1; i >= 0; i-- {
			if history[i] == *pr.last {
				history = history[i+1:]
				break
			}
		}
	}
	if len(history) > 0 {
		last := history[len(history)-1]
		pr.last = &last
	}
	return history
}

// draw writes lines (the new steps) and, when live, redraws the frame
// below them: back to the frame's first line, clear to the end of the
// screen, the lines, the new frame, in one write.
func (pr *Printer) draw(lines string) {
	if !pr.live {
		io.WriteString(pr.w, lines)
		return
	}
	width := max(pr.width(), 20)
	var b strings.Builder
	if pr.frame == nil {
		b.WriteString("\x1b[?25l") // no cursor while drawing
	} else {
		// The rows the old frame takes now: a narrower terminal wraps
		// its lines.
		rows := 0
		for _, l := range pr.frame {
			rows += max(1, (len([]rune(l))+width-1)/width)
		}
		b.WriteString("\r")
		if rows > 1 {
			fmt.Fprintf(&b, "\x1b[%dA", rows-1)
		}
		b.WriteString("\x1b[J")
	}
	b.WriteString(lines)
	pr.frame = Frame(pr.plan, pr.now(), width)
	b.WriteString(strings.Join(pr.frame, "\n"))
	io.WriteString(pr.w, b.String())
}
