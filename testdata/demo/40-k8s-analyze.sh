#!/usr/bin/env bash
# k8s-analyze: grade the drain risk of node-1 (frontend's PDB allows one
# disruption at a time but node-1 holds two of its pods: medium, exit 2),
# then of node-4, whose StatefulSet pod has a local volume pinned to the
# node: high, exit 3. Exit 0 would mean low risk.
set -euo pipefail

analyze() {
	local node=$1 code=0
	echo "\$ k8s-snapshot --node $node | k8s-analyze --node $node -o table"
	"$BIN/k8s-snapshot" --node "$node" | "$BIN/k8s-analyze" --node "$node" -o table || code=$?
	echo "exit code: $code"
	case $code in
	0 | 2 | 3) ;;
	*)
		echo "k8s-analyze failed on $node" >&2
		exit 1
		;;
	esac
}

analyze node-1
echo
analyze node-4

echo
echo "what the Eviction API would answer right now, per pod of node-1 (evictableNow):"
code=0
"$BIN/k8s-snapshot" --node node-1 | "$BIN/k8s-analyze" --node node-1 >"$WORK/report-node-1.json" || code=$?
if ((code == 1 || code > 3)); then
	echo "k8s-analyze failed on node-1" >&2
	exit 1
fi
jq -r '.nodes[].pods[] | "  \(.namespace)/\(.name): \(.action), eviction \(.evictableNow.httpStatus) \(.evictableNow.outcome) (\(.evictableNow.rule))"' "$WORK/report-node-1.json"
