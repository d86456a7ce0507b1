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
	screen
	plan *api.MaintenancePlan
	// last is the last history entry written, and counts the pod counts
	// last written.
	last   *api.Transition
	counts string
}

// NewPrinter writes to w; live draws frames width() columns wide (read at
// each redraw, so a resized terminal is followed); now is the clock.
func NewPrinter(w io.Writer, live bool, width func() int, now func() time.Time) *Printer {
	pr := &Printer{screen: screen{w: w, live: live, width: width, now: now}}
	pr.frameOf = func(now time.Time, width int) []string { return Frame(pr.plan, now, width) }
	return pr
}

// screen is what Printer and CampaignPrinter share: the writer, the
// frame on screen and its redraw.
type screen struct {
	w io.Writer
	// Live redraws a frame; otherwise only lines are written.
	live    bool
	width   func() int
	now     func() time.Time
	frameOf func(now time.Time, width int) []string

	mu sync.Mutex
	// frame is the frame on screen; drawn is set at the first draw (an
	// Update: there is something to frame).
	frame  []string
	drawn  bool
	closed bool
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
func (s *screen) Tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.live && s.drawn {
		s.draw("")
	}
}

// Close leaves the last frame on screen, followed by a new line, and
// stops drawing.
func (s *screen) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.live && s.frame != nil {
		fmt.Fprint(s.w, "\n\x1b[?25h")
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
func (s *screen) draw(lines string) {
	s.drawn = true
	if !s.live {
		io.WriteString(s.w, lines)
		return
	}
	width := max(s.width(), 20)
	var b strings.Builder
	b.WriteString(back(s.frame, width))
	b.WriteString(lines)
	s.frame = s.frameOf(s.now(), width)
	b.WriteString(strings.Join(s.frame, "\n"))
	io.WriteString(s.w, b.String())
}

// back moves the cursor to the first line of frame (on screen, width
// columns wide: a narrower terminal wraps its lines) and clears to the
// end of the screen; with no frame yet it hides the cursor while drawing.
func back(frame []string, width int) string {
	if frame == nil {
		return "\x1b[?25l"
	}
	rows := 0
	for _, l := range frame {
		rows += max(1, (len([]rune(l))+width-1)/width)
	}
	s := "\r"
	if rows > 1 {
		s += fmt.Sprintf("\x1b[%dA", rows-1)
	}
	return s + "\x1b[J"
}
