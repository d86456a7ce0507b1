// Package deploy holds maintd's installation: the kustomization
// (`kubectl apply -k maintd/deploy --server-side`), the Dockerfile and the
// Prometheus alert rules, and its admission policies (admission.yaml: who
// may ask for what), with the tests that check them against real
// tools: kubectl, promtool, the Go toolchain (the Dockerfile's own build
// line) and a local control plane of its own, so that the Deployment's
// replicas do not land on the nodes of maintd's other tests.
package deploy
