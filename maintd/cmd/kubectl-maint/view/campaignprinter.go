package view

import (
	"io"
	"time"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// CampaignPrinter writes a campaign's progress to w as it changes: a line
// at each change of its phase, reason, message or counts; with live, also
// the frame (CampaignFrame) below the lines, redrawn in place as Printer
// does a plan's.
type CampaignPrinter struct {
	screen
	campaign *api.MaintenanceCampaign
	plans    []api.MaintenancePlan
	last     string
}

// NewCampaignPrinter writes to w; live draws frames width() columns wide;
// now is the clock.
func NewCampaignPrinter(w io.Writer, live bool, width func() int, now func() time.Time) *CampaignPrinter {
	pr := &CampaignPrinter{screen: screen{w: w, live: live, width: width, now: now}}
	pr.frameOf = func(now time.Time, width int) []string { return CampaignFrame(pr.campaign, pr.plans, now, width) }
	return pr
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
