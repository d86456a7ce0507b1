//go:build tools

// Package tools pins the code generators maintd's Makefile target `generate`
// builds: controller-gen writes the CRD and the deep-copy code from the API
// types. It is its own module, outside go.work, so the generator's
// dependencies never reach the tools; build it with GOWORK=off.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
