package main

import (
	"os"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sentinel-go/sentinel/maintd/cmd/kubectl-maint/plan"
	"github.com/sentinel-go/sentinel/plumbing/command"
)

// The modes of --dry-run, as kubectl spells them.
const (
	dryRunNone   = plan.DryRunNone
	dryRunClient = plan.DryRunClient
	dryRunServer = plan.DryRunServer
)

// dryRunValue is --dry-run[=none|client|server]: given alone it is server
// (drain's dry run has always been maintd's, on the server side).
type dryRunValue struct{ mode string }

func (v *dryRunValue) String() string {
	if v == nil || v.mode == "" {
		return dryRunNone
	}
	return v.mode
}

// Set keeps s: dryRun reads it (the flag package would wrap an error of
// Set in one about a boolean).
func (v *dryRunValue) Set(s string) error {
	v.mode = s
	return nil
}

// IsBoolFlag lets --dry-run stand alone, as kubectl's does; a mode is
// given as --dry-run=MODE.
func (v *dryRunValue) IsBoolFlag() bool { return true }

// dryRunFlag takes its value after "=" only, so that a verb's flags may
// follow its arguments (drain NODE --dry-run --name X).
type dryRunFlag struct{ *cli.GenericFlag }

func (dryRunFlag) TakesValue() bool { return false }

func newDryRunFlag(usage string) cli.Flag {
	return dryRunFlag{&cli.GenericFlag{Name: "dry-run", Value: &dryRunValue{}, Usage: usage}}
}

// dryRun is the verb's --dry-run mode. A mode given as a separate argument
// (--dry-run server) would be read as an argument of the verb: refused.
func dryRun(c *cli.Context) (string, error) {
	mode := dryRunNone
	if v, ok := c.Generic("dry-run").(*dryRunValue); ok && v.mode != "" {
		m, err := plan.ParseDryRun(v.mode)
		if err != nil {
			return "", command.Usage("%v", err)
		}
		mode = m
	}
	if i := slices.Index(os.Args, "--dry-run"); i >= 0 && i+1 < len(os.Args) {
		if next := os.Args[i+1]; slices.Contains([]string{dryRunNone, dryRunClient, dryRunServer}, next) {
			return "", command.Usage("write --dry-run=%s: a mode after a space would be read as an argument", next)
		}
	}
	return mode, nil
}
