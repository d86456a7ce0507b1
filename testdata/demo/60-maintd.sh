#!/usr/bin/env bash
# maintd: the whole drain as one MaintenancePlan. Install maintd's manifests
# (kubectl apply -k maintd/deploy), start maintd with a token of its
# ServiceAccount and leader election, ask it to take node-1 out, follow the
# plan live (phase, reason, evicted/total, each cooldown with its PDB) until
# Drained, show `kubectl get mp` and the plan's history, release it and wait
# for Completed; then ask for node-4, whose database volume is pinned to it,
# and watch the plan stop before touching the node.
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

# follow PLAN PHASE...: print each change of the plan until one of PHASEs.
follow() {
	local plan=$1 deadline=$((SECONDS + 180)) line last=""
	shift
	while ((SECONDS < deadline)); do
		line=$("$kubectl" get mp "$plan" -o json 2>/dev/null | jq -r '.status | "\(.phase // "-")/\(.reason // "-")"
		  + "  evicted \(.pods.evicted // 0)/\(.pods.total // 0)"
		  + ([.evictionProgress.cooldowns[]? | "  cooldown \(.pdb): \(.reason) until \(.nextActionAt | sub(".*T"; ""))"] | join(""))') || line=""
		if [[ -n "$line" && "$line" != "$last" ]]; then
			printf '  %s  %s\n' "$(date +%T)" "$line"
			last=$line
		fi
		for want in "$@"; do
			[[ "$line" == "$want/"* ]] && return 0
		done
		sleep 0.2
	done
	echo "demo: plan $plan did not reach $* within 180 s" >&2
	tail -20 "$WORK/maintd.log" >&2
	return 1
}

echo
echo "\$ kubectl apply -f - # a MaintenancePlan for node-1"
"$kubectl" apply -f - <<'PLAN'
apiVersion: maintenance.sentinel.dev/v1alpha1
kind: MaintenancePlan
metadata: {name: node-1-kernel}
spec:
  nodeName: node-1
  reason: kernel 6.12 (change-4712)
  allowAllWorkloads: true
PLAN
start=$SECONDS
follow node-1-kernel Drained Blocked Failed
drained=$((SECONDS - start))
echo
echo "\$ kubectl get mp"
"$kubectl" get mp
echo
echo "the plan's story (status.history):"
"$kubectl" get mp node-1-kernel -o json | jq -r '.status.history[] | "  \(.time | sub(".*T"; ""))  \(.phase)/\(.reason)  \(.message)"'
echo
echo "node-1 now: $("$kubectl" get node node-1 -o jsonpath='unschedulable={.spec.unschedulable} owner={.metadata.annotations.maintenance\.sentinel\.dev/cordon-owner}')"
echo "pods left on node-1 (DaemonSet pods stay):"
"$kubectl" get pods -A --field-selector spec.nodeName=node-1 --no-headers | sed 's/^/  /'

echo
echo "\$ kubectl patch mp node-1-kernel --type merge -p '{\"spec\":{\"release\":true}}'   # the work is done"
"$kubectl" patch mp node-1-kernel --type merge -p '{"spec":{"release":true}}'
follow node-1-kernel Completed Blocked Failed
evicted=$("$kubectl" get mp node-1-kernel -o jsonpath='{.status.pods.evicted}')
refused=$(grep -c 'outcome=budget-exhausted' "$WORK/maintd.log" || true)
echo
echo "summary: node-1 drained in ${drained}s, ${evicted} evictions, ${refused} answered 429 (maintd asks only when the PDB allows)"

echo
echo "\$ kubectl apply -f - # a MaintenancePlan for node-4 (the database's volume is pinned there)"
"$kubectl" apply -f - <<'PLAN'
apiVersion: maintenance.sentinel.dev/v1alpha1
kind: MaintenancePlan
metadata: {name: node-4-firmware}
spec:
  nodeName: node-4
  reason: firmware (change-4713)
  allowAllWorkloads: true
PLAN
follow node-4-firmware Blocked Drained Failed
echo "  message: $("$kubectl" get mp node-4-firmware -o jsonpath='{.status.message}')"
echo "node-4 untouched: $("$kubectl" get node node-4 -o jsonpath='unschedulable={.spec.unschedulable} owner={.metadata.annotations.maintenance\.sentinel\.dev/cordon-owner}')"
[[ "$("$kubectl" get mp node-4-firmware -o jsonpath='{.status.reason}')" == preflight-high-risk ]]

echo
echo "\$ kill -TERM maintd   # finishes the call in flight, exits 0"
kill -TERM "$maintd_pid"
code=0
wait "$maintd_pid" || code=$?
trap - EXIT
echo "maintd exited $code"
[[ $code -eq 0 ]]
