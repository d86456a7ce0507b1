// Package deploy holds maintd's installation: the kustomization
// (`kubectl apply -k maintd/deploy --server-side`), the Dockerfile and the
// Prometheus alert rules, and its admission policies (admission.yaml: who
// may ask for what, and who may approve a break-glass override), with the
// tests that check them against real tools: kubectl, promtool, the Go
// toolchain (the Dockerfile's own build line) and a local control plane of
// its own, so that the Deployment's replicas do not land on the nodes of
// maintd's other tests.
//
// Break-glass is off by default: the default ClusterRole lets maintd read
// MaintenanceOverrides but not delete pods, so maintd refuses every
// override, saying so. The kustomize Component in breakglass/ turns it on:
// it adds the ClusterRole sentinel-maintd-breakglass (delete on pods, and
// nothing else) and its ClusterRoleBinding to maintd's ServiceAccount.
// Either list it in an overlay of your own, kept outside maintd/deploy
// (kustomize refuses a base that contains the overlay):
//
//	apiVersion: kustomize.config.k8s.io/v1beta1
//	kind: Kustomization
//	resources:
//	- ../sentinel/maintd/deploy
//	components:
//	- ../sentinel/maintd/deploy/breakglass
//
// or apply the component alone to an installed maintd,
// `kubectl apply -k maintd/deploy/breakglass --server-side`, and delete it
// with `kubectl delete -k maintd/deploy/breakglass`. Nothing else changes:
// maintd asks the API server (a SelfSubjectAccessReview: delete pods in the
// pod's namespace) before each forced delete. The admission policy
// sentinel-maintenance-override holds either way: an override's approvedBy
// is the user who creates it, who must be allowed to delete pods in every
// namespace it names; the CRD bounds its duration to 1h and refuses any
// change of its spec.
package deploy
