// Package honesty checks that the simulation's fake Eviction API endpoint
// (sim.Evict, maintd/sim/eviction.go) answers as the real one does. One
// table of eviction cases is set up on a real local control plane
// (plumbing/controlplane: kube-apiserver, kube-controller-manager with the
// disruption controller, kwok nodes, Kubernetes v1.37.2), each case in a
// fresh namespace; the pods and PodDisruptionBudgets are read back from the
// API server and given as they are to sim.Evict, the same Eviction is
// posted to the real API server, and the two are compared: the HTTP code,
// the Status (status, code, reason, message, details with their causes and
// retryAfterSeconds) and the effect (the pod deleted or terminating
// afterwards, the budget whose status.disruptedPods gained the pod and
// whose disruptionsAllowed went down by one). The real API server is the
// judge: a difference is a defect of the fake.
//
// The package has only tests; run them with
//
//	cd maintd && go test -count=1 ./sim/honesty/
package honesty
