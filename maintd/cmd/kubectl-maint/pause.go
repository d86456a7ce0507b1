package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/view"
	"github.com/sentinel-go/sentinel/maintd/controller"
	"github.com/sentinel-go/sentinel/plumbing/command"
)

// pausedByAnnotation names who set the pause switch.
const pausedByAnnotation = "maintenance.sentinel.dev/paused-by"

func pauseSwitchFlag() cli.Flag {
	return &cli.StringFlag{Name: "pause-configmap", Value: controller.DefaultPauseSwitch, Usage: "maintd's pause switch, the ConfigMap `NAMESPACE/NAME` (maintd's --pause-configmap)"}
}

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:      "pause",
		Usage:     "pause every plan and campaign at once: set maintd's pause switch, with a reason",
		UsageText: "kubectl maint pause --reason TEXT [--pause-configmap NS/NAME] [--dry-run[=none|client|server]]",
		Description: `Pause creates maintd's cluster-wide pause switch, the ConfigMap
maintd-system/maintd-pause (--pause-configmap names another, as maintd's
own flag does), with the reason in data.reason and who set it in the
annotation maintenance.sentinel.dev/paused-by. While it exists no plan
cordons a node, sends an eviction or scales an owner for a surge; what
is in flight finishes and deadlines keep counting (docs/maintd.md,
"Pausing all maintenance"). kubectl maint status shows it at the top.

Pause is idempotent: a switch already set stays set, since when it was
set; a different --reason replaces its reason. stdout says what changed:
"paused", "reason changed" or "already paused"; stderr since when and why.

--dry-run=client shows what would change without sending anything;
--dry-run=server (or --dry-run) has the API server check it, writing
nothing.`,
		Flags: withKube(
			&cli.StringFlag{Name: "reason", Usage: "why (`TEXT`: an incident, a freeze); shown in every paused plan's message (required)"},
			pauseSwitchFlag(),
			newDryRunFlag("`MODE`: none; client shows what would change, sending nothing; server (--dry-run alone) has the API server check it, writing nothing; give it as --dry-run=MODE"),
		),
		Action: pauseAction,
	}
}

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "lift maintd's pause switch: every plan and campaign goes on where it stopped",
		UsageText: "kubectl maint resume [--pause-configmap NS/NAME] [--dry-run[=none|client|server]]",
		Description: `Resume deletes maintd's pause switch (the ConfigMap
maintd-system/maintd-pause, or --pause-configmap), guarded by its UID, and
says how long maintd was paused and why. A switch that is not set is no
error: stdout says "not paused", exit 0.

--dry-run=client shows what would change without sending anything;
--dry-run=server (or --dry-run) has the API server check the delete,
writing nothing.`,
		Flags: withKube(
			pauseSwitchFlag(),
			newDryRunFlag("`MODE`: none; client shows what would change, sending nothing; server (--dry-run alone) has the API server check it, writing nothing; give it as --dry-run=MODE"),
		),
		Action: resumeAction,
	}
}

// pauseSwitch reads --pause-configmap; "" is refused (there is no switch
// to set).
func pauseSwitch(c *cli.Context) (types.NamespacedName, error) {
	v := c.String("pause-configmap")
	if v == "" {
		return types.NamespacedName{}, command.Usage("--pause-configmap is empty: which ConfigMap is maintd's switch? NAMESPACE/NAME")
	}
	sw, err := controller.ParsePauseSwitch(v)
	if err != nil {
		return sw, command.Usage("%v", err)
	}
	return sw, nil
}

// switchMode is pause's and resume's --dry-run; they take no arguments.
func switchMode(c *cli.Context) (string, error) {
	mode, err := dryRun(c)
	if err != nil {
		return "", err
	}
	return mode, args(c, 0, 0, "")
}

// openSwitch is the pause switch (--pause-configmap), the clients and the
// ConfigMaps of the switch's namespace.
func openSwitch(c *cli.Context) (types.NamespacedName, *clients, corev1client.ConfigMapInterface, error) {
	sw, err := pauseSwitch(c)
	if err != nil {
		return sw, nil, nil, err
	}
	cl, err := newClients(c)
	if err != nil {
		return sw, nil, nil, err
	}
	return sw, cl, cl.core.ConfigMaps(sw.Namespace), nil
}

func pauseAction(c *cli.Context) error {
	mode, err := switchMode(c)
	if err != nil {
		return err
	}
	reason := c.String("reason")
	switch {
	case strings.TrimSpace(reason) == "":
		return command.Usage("why? give --reason TEXT (an incident, a freeze)")
	case len(reason) > 1024:
		return command.Usage("--reason is %d bytes, at most 1024", len(reason))
	}
	sw, cl, cms, err := openSwitch(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	how, opts := dryRunText(mode)
	now := timeNow()
	old, err := cms.Get(ctx, sw.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: sw.Name, Namespace: sw.Namespace,
				Labels:      map[string]string{plan.ManagedByLabel: plan.ManagedBy},
				Annotations: map[string]string{pausedByAnnotation: cl.whoami(c)}},
			Data: map[string]string{"reason": reason},
		}
		if mode != dryRunClient {
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: opts}); err != nil {
				return switchError("set", sw, err)
			}
		}
		fmt.Fprintf(c.App.ErrWriter, "configmap/%s created in %s: maintd pauses every plan and campaign from %s: %s%s\n", sw.Name, sw.Namespace, now.Local().Format("15:04:05"), reason, how)
		fmt.Fprintf(c.App.Writer, "paused%s\n", how)
		return nil
	case err != nil:
		return switchError("read", sw, err)
	}
	since := pauseSince(old, now)
	if old.Data["reason"] == reason {
		fmt.Fprintf(c.App.ErrWriter, "configmap/%s in %s unchanged: maintd has been paused since %s: %s\n", sw.Name, sw.Namespace, since, reason)
		fmt.Fprintln(c.App.Writer, "already paused")
		return nil
	}
	was := old.Data["reason"]
	cm := old.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["reason"] = reason
	if mode != dryRunClient {
		// Guarded by the resourceVersion read: a reason changed meanwhile
		// is not overwritten unseen.
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{DryRun: opts}); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return fmt.Errorf("the pause switch %s changed while it was updated: run pause again", sw)
			}
			return switchError("update", sw, err)
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "configmap/%s in %s: reason changed from %q to %q; maintd has been paused since %s%s\n", sw.Name, sw.Namespace, was, reason, since, how)
	fmt.Fprintf(c.App.Writer, "reason changed%s\n", how)
	return nil
}

func resumeAction(c *cli.Context) error {
	mode, err := switchMode(c)
	if err != nil {
		return err
	}
	sw, _, cms, err := openSwitch(c)
	if err != nil {
		return err
	}
	ctx := c.Context
	how, opts := dryRunText(mode)
	old, err := cms.Get(ctx, sw.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(c.App.ErrWriter, "configmap/%s in %s does not exist: maintd is not paused by it\n", sw.Name, sw.Namespace)
		fmt.Fprintln(c.App.Writer, "not paused")
		return nil
	case err != nil:
		return switchError("read", sw, err)
	}
	if mode != dryRunClient {
		err := cms.Delete(ctx, sw.Name, metav1.DeleteOptions{DryRun: opts, Preconditions: &metav1.Preconditions{UID: &old.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return switchError("delete", sw, err)
		}
	}
	now := timeNow()
	fmt.Fprintf(c.App.ErrWriter, "configmap/%s deleted from %s: maintd resumes every plan and campaign where it stopped; it was paused since %s (%s): %s%s\n",
		sw.Name, sw.Namespace, pauseSince(old, now), view.Duration(now.Sub(old.CreationTimestamp.Time)), old.Data["reason"], how)
	fmt.Fprintf(c.App.Writer, "resumed%s\n", how)
	return nil
}

// pauseSince is when the switch was set (its creation, as maintd reads
// it), with who set it when it says.
func pauseSince(cm *corev1.ConfigMap, now time.Time) string {
	s := cm.CreationTimestamp.Local().Format("15:04:05")
	if cm.CreationTimestamp.Time.Before(now.Add(-12 * time.Hour)) {
		s = cm.CreationTimestamp.Local().Format(time.DateTime)
	}
	if by := cm.Annotations[pausedByAnnotation]; by != "" {
		s += " by " + by
	}
	return s
}

// dryRunText is what a mode adds to the messages, and the API server's
// dry run of it.
func dryRunText(mode string) (string, []string) {
	switch mode {
	case dryRunClient:
		return " (dry run)", nil
	case dryRunServer:
		return " (server dry run)", []string{metav1.DryRunAll}
	}
	return "", nil
}

func switchError(verb string, sw types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s the pause switch %s: namespace %s not found: is maintd installed there? --pause-configmap names the switch maintd reads: %w", verb, sw, sw.Namespace, err)
	}
	return fmt.Errorf("%s the pause switch %s: %w", verb, sw, err)
}

// readPause is the pause switch as it is now, nil when it is not set or
// cannot be read (status shows what it can).
func readPause(ctx context.Context, cl *clients, sw types.NamespacedName) *corev1.ConfigMap {
	if sw.Name == "" {
		return nil
	}
	cm, err := cl.core.ConfigMaps(sw.Namespace).Get(ctx, sw.Name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return cm
}

// pauseLine is status's first line while the switch is set.
func pauseLine(cm *corev1.ConfigMap, now time.Time) string {
	return fmt.Sprintf("PAUSED since %s (%s ago), configmap %s/%s: %s", pauseSince(cm, now), view.Duration(now.Sub(cm.CreationTimestamp.Time)), cm.Namespace, cm.Name, cm.Data["reason"])
}
