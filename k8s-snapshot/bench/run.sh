#!/usr/bin/env bash
# k8s-snapshot against kubectl on a local control plane of 200 kwok nodes
# and 6,000 pods, built here; medians of RUNS runs (default 5). Rewrites the
# "## k8s-snapshot" section of docs/benchmarks.md.
# usage: k8s-snapshot/bench/run.sh [RUNS]    (after make kube-bins)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${1:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root/k8s-snapshot"
make -C "$root" --no-print-directory build >/dev/null # the binary users get
go run bench/main.go -snapshot "$root/bin/k8s-snapshot" -kubectl "$root/.cache/kube/v1.37.2/kubectl" \
	-runs "$runs" -write "$root/docs/benchmarks.md"
