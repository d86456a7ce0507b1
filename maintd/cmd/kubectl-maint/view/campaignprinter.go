package view

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// CampaignPrinter writes a campaign's progress to w as it changes: a line
// at each change of its phase, reason, message or counts; with live, also
// the frame (CampaignFrame) below the lines, redrawn in place as Printer
// does a plan's.
type CampaignPrinter struct {
	w     io.Writer
	live  bool
	width func() int
	now   func() time.Time

	mu       sync.Mutex
	campaign *api.MaintenanceCampaign
	plans    []api.MaintenancePlan
	last     string
	frame    []string
	closed   bool
}

// NewCampaignPrinter writes to w; live draws frames width() columns wide;
// now is the clock.
func NewCampaignPrinter(w io.Writer, live bool, width func() int, now func() time.Time) *CampaignPrinter {
	return &CampaignPrinter{w: w, live: live, width: width, now: now}
}

// Update shows campaign c with its plans: a line when it changed, then
// the frame.
func (pr *CampaignPrinter) Update(c *api.MaintenanceCampaign, plans []api.MaintenancePlan) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	pr.campaign, pr.plans = c, plans
	lines := ""
	key := string(c.Status.Phase) + "/" + string(c.Status.Reason) + " " + CampaignCounts(c) + " " + c.Status.Message + " " + Breaker(c, time.Time{})
	if c.Status.Phase != "" && key != pr.last {
		pr.last = key
		lines = CampaignStep(c, pr.now()) + "\n"
		if b := c.Status.Breaker; b != nil && b.Open {
			lines += pr.now().Local().Format(time.TimeOnly) + "  breaker open: " + oneLine(b.Message) + "\n"
		}
	}
	pr.draw(lines)
}

// Tick redraws the frame at the current time.
func (pr *CampaignPrinter) Tick() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.closed && pr.live && pr.campaign != nil {
		pr.draw("")
	}
}

// Close leaves the last frame on screen, followed by a new line.
func (pr *CampaignPrinter) Close() {
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

func (pr *CampaignPrinter) draw(lines string) {
	if !pr.live {
		io.WriteString(pr.w, lines)
		return
	}
	width := max(pr.width(), 20)
	var b strings.Builder
	b.WriteString(back(pr.frame, width))
	b.WriteString(lines)
	pr.frame = CampaignFrame(pr.campaign, pr.plans, pr.now(), width)
	b.WriteString(strings.Join(pr.frame, "\n"))
	io.WriteString(pr.w, b.String())
}

// back moves the cursor to the first line of frame (on screen, width
// columns wide) and clears to the end of the screen; with no frame yet
// it hides the cursor.
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
