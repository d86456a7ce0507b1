// Sentinel-cluster runs sentinel's local Kubernetes control plane in the
// foreground: etcd, kube-apiserver (RBAC on), kube-controller-manager,
// kube-scheduler and kwok, all on 127.0.0.1, with N simulated nodes.
//
// It prints `export KUBECONFIG=...` for the admin user on stdout once the
// nodes are Ready (and, with --apply, every workload is Ready), then runs
// until Ctrl-C (SIGINT) or SIGTERM, when it stops every process it started.
// Nodes are named node-1 ... node-N and labelled sentinel.dev/pool=<pool>;
// manifests may use ${POOL} and any --var.
//
// The binaries come from `make kube-bins` (or $SENTINEL_KUBE_BINS).
package main
