#!/usr/bin/env bash
# maintd: the whole drain as one MaintenancePlan, through its front door,
# the kubectl plugin kubectl-maint. Install maintd's manifests (kubectl apply
# -k maintd/deploy), start maintd with a token of its ServiceAccount and
# leader election, then `kubectl maint drain node-1`: it creates the plan and
# shows it live (on a terminal: phase, progress bar of pods evicted, the
# current wait and its cause) until Drained; `kubectl maint status` shows it
# on one screen, `kubectl maint uncordon` releases it (Completed); then ask
# for node-4, whose database volume is pinned to it, and watch the plan stop
# before touching the node (exit 3); last, drain node-3 with --surge, where
# checkout's budget never allows an eviction, and show from a watch that it
# never had fewer Ready pods than its floor.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
kubectl="${SENTINEL_KUBE_BINS:-$root/.cache/kube/v1.37.2}/kubectl"

echo "\$ kubectl apply -k maintd/deploy --server-side   # CRD, namespace, ServiceAccount, least-privilege RBAC, 2 replicas"
"$kubectl" apply -k "$root/maintd/deploy" --server-side
"$kubectl" wait --for condition=established --timeout 60s crd/maintenanceplans.maintenance.sentinel.dev >/dev/null
echo "(kwok runs no containers: the Deployment's two replicas are placeholders on two nodes; maintd runs here,"
echo " as a process with a token of the shipped ServiceAccount, so it has exactly the shipped privileges)"
"$kubectl" get pods -n maintd-system -o wide

# A kubeconfig for the ServiceAccount maintd-system/maintd (TokenRequest).
cp "$KUBECONFIG" "$WORK/maintd.kubeconfig"
"$kubectl" --kubeconfig "$WORK/maintd.kubeconfig" config set-credentials maintd \
	--token="$("$kubectl" create token maintd -n maintd-system --duration 1h)" >/dev/null
"$kubectl" --kubeconfig "$WORK/maintd.kubeconfig" config set-context --current --user maintd >/dev/null

echo "\$ maintd --kubeconfig maintd.kubeconfig --leader-elect --max-nodes-in-maintenance 1 &"
"$BIN/maintd" --kubeconfig "$WORK/maintd.kubeconfig" --leader-elect --max-nodes-in-maintenance 1 2>"$WORK/maintd.log" &
maintd_pid=$!
stop_maintd() { kill -TERM "$maintd_pid" 2>/dev/null && wait "$maintd_pid" 2>/dev/null || true; }
trap stop_maintd EXIT

# kubectl finds the plugin kubectl-maint on PATH: kubectl maint.
export PATH="$BIN:$PATH"

echo
echo "\$ kubectl maint drain node-1 --all-workloads --reason 'kernel 6.12 (change-4712)' --name node-1-kernel"
start=$SECONDS
"$kubectl" maint drain node-1 --all-workloads --reason 'kernel 6.12 (change-4712)' --name node-1-kernel
drained=$((SECONDS - start))
echo
echo "\$ kubectl get mp"
"$kubectl" get mp
echo
echo "\$ kubectl maint status node-1   # the plan on one screen: phase, pods, history, events"
"$kubectl" maint status node-1
echo
echo "node-1 now: $("$kubectl" get node node-1 -o jsonpath='unschedulable={.spec.unschedulable} owner={.metadata.annotations.maintenance\.sentinel\.dev/cordon-owner}')"
echo "pods left on node-1 (DaemonSet pods stay):"
"$kubectl" get pods -A --field-selector spec.nodeName=node-1 --no-headers | sed 's/^/  /'

echo
echo "\$ kubectl maint uncordon node-1 --keep   # the work is done: release, uncordon, Completed (--keep: the plan stays to be read)"
"$kubectl" maint uncordon node-1 --keep
evicted=$("$kubectl" get mp node-1-kernel -o jsonpath='{.status.pods.evicted}')
refused=$(grep -c 'outcome=budget-exhausted' "$WORK/maintd.log" || true)
echo
echo "summary: node-1 drained in ${drained}s, ${evicted} evictions, ${refused} answered 429 (maintd asks only when the PDB allows)"

echo
echo "\$ kubectl maint drain node-4 --all-workloads --reason 'firmware (change-4713)' --name node-4-firmware   # the database's volume is pinned there"
code=0
"$kubectl" maint drain node-4 --all-workloads --reason 'firmware (change-4713)' --name node-4-firmware || code=$?
echo "exit code: $code (3: blocked, a human must act)"
[[ $code -eq 3 ]]
echo "node-4 untouched: $("$kubectl" get node node-4 -o jsonpath='unschedulable={.spec.unschedulable} owner={.metadata.annotations.maintenance\.sentinel\.dev/cordon-owner}')"
[[ -z "$("$kubectl" get node node-4 -o jsonpath='{.spec.unschedulable}')" ]]
# The plan never started, so it is gone (--keep would leave it): nothing is left for anybody to clean up.
if "$kubectl" get mp node-4-firmware >/dev/null 2>&1; then
	echo "demo: plan node-4-firmware is still there after it was blocked before it started" >&2
	exit 1
fi

echo
echo "checkout runs 2 replicas (node-2, node-3) under a PDB minAvailable: 2: no eviction is ever allowed, and a"
echo "plain drain of node-3 stops (pdb-misconfigured). --surge moves it with no downtime: one more replica"
echo "first, Ready on node-2, then the eviction the budget now allows, then the replicas restored."
# A watch of the checkout pods from before the plan: a line per change.
"$kubectl" get pods -n shop -l app=checkout -w --output-watch-events --no-headers \
	-o custom-columns='EVENT:.type,NAME:.object.metadata.name,READY:.object.status.conditions[?(@.type=="Ready")].status,DELETING:.object.metadata.deletionTimestamp,NODE:.object.spec.nodeName' \
	>"$WORK/checkout.watch" 2>/dev/null &
watch_pid=$!
until [[ -s "$WORK/checkout.watch" ]]; do sleep 0.1; done
echo "\$ kubectl maint drain node-3 --all-workloads --surge --reason 'kernel 6.12 (change-4712)' --name node-3-kernel"
"$kubectl" maint drain node-3 --all-workloads --surge --reason 'kernel 6.12 (change-4712)' --name node-3-kernel
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
echo
echo "\$ kubectl get pods -n shop -l app=checkout -w --output-watch-events   # (started before the plan)"
echo "  EVENT     NAME                        READY  DELETING  NODE"
awk '{printf "  %-9s %-27s %-6s %-9s %s\n", $1, $2, $3, ($4 == "<none>" ? "-" : "yes"), $5}' "$WORK/checkout.watch"
# Ready checkout pods (not being deleted) after every event: never none.
fewest=$(awk '{ if ($1 == "DELETED" || $3 != "True" || $4 != "<none>") delete ready[$2]; else ready[$2] = 1; n = length(ready); if (NR > 2 && (min == "" || n < min)) min = n } END { print (min == "" ? length(ready) : min) }' "$WORK/checkout.watch")
echo "fewest Ready checkout pods at any moment: $fewest (its budget's floor is 2)"
[[ $fewest -ge 2 ]]
echo "checkout replicas now: $("$kubectl" get deploy checkout -n shop -o jsonpath='{.spec.replicas}') (restored), surge: $("$kubectl" get mp node-3-kernel -o jsonpath='{.status.evictionProgress.surges[0].state}: {.status.evictionProgress.surges[0].message}')"
[[ "$("$kubectl" get deploy checkout -n shop -o jsonpath='{.spec.replicas}')" == 2 ]]
echo "\$ kubectl maint uncordon node-3"
"$kubectl" maint uncordon node-3

echo
echo "\$ kill -TERM maintd   # finishes the call in flight, exits 0"
kill -TERM "$maintd_pid"
code=0
wait "$maintd_pid" || code=$?
trap - EXIT
echo "maintd exited $code"
[[ $code -eq 0 ]]
