// Package deploy holds meminfo-exporter's deployment examples (alerts.yaml,
// sidecar.yaml, Dockerfile) and the tests that check them against real
// tools: promtool (in the main package) and a local control plane's
// apiserver (sidecar_test.go, in a package of its own so that the other
// tests do not pay for starting a control plane).
package deploy
