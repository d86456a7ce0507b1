//go:build tools

// Package tools pins the code generators maintd's Makefile target `generate`
// builds: controller-gen writes the CRD and the deep-copy code from the API
// types; client-gen, lister-gen and informer-gen (k8s.io/code-generator, the
// version of maintd's k8s.io modules) write the typed client, its fake, the
// lister and the informer of MaintenancePlans into maintd/client. It is its
// own module, outside go.work, so the generators' dependencies never reach
// the tools; build it with GOWORK=off.
package tools

import (
	_ "k8s.io/code-generator/cmd/client-gen"
	_ "k8s.io/code-generator/cmd/informer-gen"
	_ "k8s.io/code-generator/cmd/lister-gen"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
