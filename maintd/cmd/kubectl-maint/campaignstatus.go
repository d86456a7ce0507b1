package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/follow"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/view"
	"github.com/sentinel-go/sentinel/plumbing/document"
	"github.com/sentinel-go/sentinel/plumbing/exitcode"
)

// overview is status without an argument: the pause switch, the
// campaigns, then the plans no campaign made.
func overview(c *cli.Context, cl *clients, sw types.NamespacedName, plans []api.MaintenancePlan, campaigns []api.MaintenanceCampaign) error {
	w, now := c.App.Writer, timeNow()
	shown := false
	if cm := readPause(c.Context, cl, sw); cm != nil {
		fmt.Fprintln(w, pauseLine(cm, now))
		shown = true
	}
	if len(campaigns) > 0 {
		if shown {
			fmt.Fprintln(w)
		}
		if err := view.CampaignTable(w, campaigns, plans, now); err != nil {
			return err
		}
		shown = true
	}
	names := map[string]bool{}
	for _, m := range campaigns {
		names[m.Name] = true
	}
	var own []api.MaintenancePlan
	for _, p := range plans {
		if !names[campaignOf(&p)] {
			own = append(own, p)
		}
	}
	if len(own) == 0 {
		if !shown {
			fmt.Fprintln(c.App.ErrWriter, "no MaintenancePlans")
		}
		return nil
	}
	if shown {
		fmt.Fprintln(w)
	}
	return view.Table(w, own, createdBy, now)
}

// campaignOf is the campaign that made plan p ("" for none): its
// controller, a MaintenanceCampaign, else its campaign label.
func campaignOf(p *api.MaintenancePlan) string {
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "MaintenanceCampaign" {
		return ref.Name
	}
	return p.Labels[api.CampaignLabel]
}

func findCampaign(campaigns []api.MaintenanceCampaign, name string) *api.MaintenanceCampaign {
	for i := range campaigns {
		if campaigns[i].Name == name {
			return &campaigns[i]
		}
	}
	return nil
}

// campaignStatus is status CAMPAIGN: the detail, -o, -w or --exit-code.
func campaignStatus(c *cli.Context, cl *clients, m *api.MaintenanceCampaign, plans []api.MaintenancePlan, format document.Format) error {
	if c.Bool("watch") {
		m, code, err := watchCampaign(c, cl, m, format == "")
		if err != nil {
			return err
		}
		return finishCampaign(c, format, m, code)
	}
	code := exitcode.OK
	if c.Bool("exit-code") {
		code = follow.CampaignCode(m)
	}
	if format != "" {
		if err := writeCampaign(c, format, m); err != nil {
			return err
		}
		return exitcode.Status(code)
	}
	if err := view.CampaignDetail(c.App.Writer, m, plans, timeNow()); err != nil {
		return err
	}
	return exitcode.Status(code)
}

// watchCampaign follows campaign m to its drain's end, showing its changes
// (and on a terminal the live view) on stderr, and returns it with the
// exit code of its outcome. --timeout or Ctrl-C end the watch with exit
// 2, saying how to resume.
func watchCampaign(c *cli.Context, cl *clients, m *api.MaintenanceCampaign, mayLive bool) (*api.MaintenanceCampaign, exitcode.Code, error) {
	stderr := c.App.ErrWriter
	pr := view.NewCampaignPrinter(stderr, mayLive && live(stderr), width(stderr), timeNow)
	var code exitcode.Code
	var last *api.MaintenanceCampaign
	err := watchUntil(c, "campaign", m.Name, follow.ErrCampaignDeleted, pr.Tick, pr.Close, func() string { return campaignPhase(last) }, func(ctx context.Context) error {
		var err error
		last, err = follow.WatchCampaign(ctx, cl.campaigns, cl.plans, m.Name, func(m *api.MaintenanceCampaign, plans []api.MaintenancePlan) (bool, error) {
			pr.Update(m, plans)
			var done bool
			done, code = follow.CampaignOutcome(m)
			return done, nil
		})
		return err
	})
	if err != nil {
		// Ctrl-C and --timeout keep the campaign last seen (drain -l
		// tells of it when it drops the campaign).
		if exitcode.Of(err) != exitcode.NotNow {
			last = nil
		}
		return last, 0, err
	}
	return last, code, nil
}

// finishCampaign prints the outcome: the campaign with -o, else one line
// on stdout; for exit 3 the reason also on stderr.
func finishCampaign(c *cli.Context, format document.Format, m *api.MaintenanceCampaign, code exitcode.Code) error {
	if format != "" {
		if err := writeCampaign(c, format, m); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.App.Writer, "maintenancecampaign/%s %s\n", m.Name, strings.ToLower(orDash(string(m.Status.Phase))))
	}
	if code == exitcode.OK && m.Status.Phase == api.Drained {
		fmt.Fprintf(c.App.ErrWriter, "every node of campaign %s is drained and stays cordoned for the work: \"kubectl maint uncordon NODE\" releases one\n", m.Name)
	}
	return outcomeError(code, "campaign", m.Name, campaignPhase(m), m.Status.Message)
}

func campaignPhase(m *api.MaintenanceCampaign) string {
	if m == nil {
		return "not seen"
	}
	return phaseReason(m.Status.Phase, m.Status.Reason)
}
