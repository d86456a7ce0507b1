package main

import (
	"testing"

	"github.com/sentinel-go/sentinel/plumbing/deploytest"
)

// TestAlertRules checks deploy/alerts.yaml with promtool and runs its unit
// tests (deploy/alerts_test.yaml).
func TestAlertRules(t *testing.T) {
	deploytest.AlertRules(t, "deploy", "alerts.yaml", "alerts_test.yaml")
}
