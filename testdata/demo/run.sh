#!/usr/bin/env bash
# make demo: a local control plane with 4 kwok nodes and the web-shop
# scenario, the cluster state, then every tool's step (testdata/demo/NN-*.sh)
# in order. Every process started here is stopped on exit, failure or Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export BIN="$root/bin"
WORK="$(mktemp -d -t sentinel-demo-XXXXXX)"
export WORK
kubectl="${SENTINEL_KUBE_BINS:-$root/.cache/kube/v1.37.2}/kubectl"

cluster_pid=""
cleanup() {
	local code=$?
	if [[ -n "$cluster_pid" ]] && kill -0 "$cluster_pid" 2>/dev/null; then
		kill -TERM "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	if [[ $code -ne 0 && -f "$WORK/cluster.log" ]]; then
		echo "demo: failed (exit $code); control-plane output:" >&2
		tail -20 "$WORK/cluster.log" >&2
	fi
	rm -rf "$WORK"
	exit $code
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

banner() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

banner "starting a local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) with 4 nodes"
"$BIN/sentinel-cluster" --nodes 4 --apply "$root/testdata/scenarios/demo.yaml" \
	--kubeconfig-out "$WORK/kubeconfig" --ready-file "$WORK/ready" >"$WORK/cluster.out" 2>"$WORK/cluster.log" &
cluster_pid=$!
deadline=$((SECONDS + 240))
until [[ -f "$WORK/ready" ]]; do
	if ! kill -0 "$cluster_pid" 2>/dev/null; then
		echo "demo: the control plane exited early" >&2
		exit 1
	fi
	if ((SECONDS > deadline)); then
		echo "demo: the control plane was not ready within 240s" >&2
		exit 1
	fi
	sleep 0.2
done
grep '^sentinel-cluster:' "$WORK/cluster.log" || true
export KUBECONFIG="$WORK/kubeconfig"

banner "the cluster: nodes, the web shop's pods, and their disruption budgets"
"$kubectl" get nodes -o wide
"$kubectl" get pods -n shop -o wide
"$kubectl" get pdb -n shop

for step in "$root"/testdata/demo/[0-9][0-9]-*.sh; do
	[[ -e "$step" ]] || continue
	banner "step $(basename "$step" .sh)"
	bash "$step"
done
banner "demo done"
