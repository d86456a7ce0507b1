package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/command"
)

// repeated is a flag given once per value: unlike a StringSliceFlag it
// does not split at commas, which a cron schedule holds (0 2 * * 1,3).
type repeated struct{ values []string }

func (r *repeated) String() string { return strings.Join(r.values, " ") }

func (r *repeated) Set(s string) error {
	r.values = append(r.values, s)
	return nil
}

// repeatedOf is the values of repeated flag name.
func repeatedOf(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok {
		return r.values
	}
	return nil
}

// gateFlags are drain's flags of spec.windows and spec.healthGate, and a
// campaign's --release.
func gateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "window", Value: &repeated{}, Usage: "start work on a node only in a window that opens at each time of `SCHEDULE=DURATION` (a cron schedule of 5 fields, then how long it stays open: \"0 2 * * 1-5=3h\"), repeatable; the node's forecast (p90) plus --window-margin must fit in the time left (spec.windows.allow)"},
		&cli.GenericFlag{Name: "deny-window", Value: &repeated{}, Usage: "no work in the windows of `SCHEDULE=DURATION`, repeatable (spec.windows.deny)"},
		&cli.StringFlag{Name: "time-zone", Usage: "read the windows' schedules and dates in IANA `ZONE` (Europe/Berlin; default UTC)"},
		&cli.GenericFlag{Name: "exclude-date", Value: &repeated{}, Usage: "no work on `YYYY-MM-DD`, midnight to midnight in --time-zone, repeatable"},
		&cli.StringFlag{Name: "max-overrun", Usage: "a node at work when its window ends may go on for `DURATION` (default 0: it stops evicting and goes on in the next window)"},
		&cli.StringFlag{Name: "window-margin", Usage: "what a node needs of a window beyond its forecast p90: `DURATION` (default 30s)"},
		&cli.GenericFlag{Name: "health-condition", Value: &repeated{}, Usage: "after release, keep the node cordoned until it is Ready and shows node condition `TYPE[=STATUS]` (STATUS True by default), repeatable (spec.healthGate)"},
		&cli.GenericFlag{Name: "health-label", Value: &repeated{}, Usage: "after release, keep the node cordoned until it carries label `KEY=VALUE`, repeatable"},
		&cli.StringFlag{Name: "health-timeout", Usage: "block (node-unhealthy) a node not healthy `DURATION` after its release (default 10m)"},
		&cli.BoolFlag{Name: "release", Usage: "a campaign: release each node as soon as it is drained (spec.release): maintd uncordons it (once healthy, with a health gate) and the campaign goes on to Completed"},
	}
}

// gates reads the window and health flags into req.
func gates(c *cli.Context, req *request) error {
	var err error
	req.Windows, err = plan.ParseWindows(plan.WindowFlags{
		Allow: repeatedOf(c, "window"), Deny: repeatedOf(c, "deny-window"), Exclude: repeatedOf(c, "exclude-date"),
		TimeZone: c.String("time-zone"), MaxOverrun: c.String("max-overrun"), Margin: c.String("window-margin"),
	})
	if err != nil {
		return command.Usage("%v", err)
	}
	req.HealthGate, err = plan.ParseHealthGate(plan.HealthFlags{Conditions: repeatedOf(c, "health-condition"), Labels: repeatedOf(c, "health-label"), Timeout: c.String("health-timeout")})
	if err != nil {
		return command.Usage("%v", err)
	}
	req.Release = c.Bool("release")
	return nil
}
