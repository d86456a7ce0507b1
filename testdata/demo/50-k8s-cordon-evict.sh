#!/usr/bin/env bash
# k8s-cordon and k8s-evict: cordon node-3 for change-4711, show that a second
# owner is refused (exit 3), evict node-3's pods one by one (DaemonSet pods
# stay) with --wait, printing each classified outcome; a 429 (exit 2) is
# retried after its Retry-After (or 3 s when the API gives none), bounded.
# Then release the cordon: only its owner may.
set -euo pipefail
node=node-3
owner=change-4711
kubectl="${SENTINEL_KUBE_BINS:-$(cd "$(dirname "$0")/../.." && pwd)/.cache/kube/v1.37.2}/kubectl"

run() { # print and run a command; its exit code is in $code
	printf '$'
	printf ' %q' "${@/#$BIN\//}"
	echo
	code=0
	"$@" || code=$?
}

run "$BIN/k8s-cordon" --node "$node" --owner "$owner" --reason "kernel update" -o table
[[ $code -eq 0 ]] || exit 1
echo
run "$BIN/k8s-cordon" --node "$node" --owner change-9999 -o table
echo "exit code: $code (3: blocked, the node is someone else's)"
[[ $code -eq 3 ]] || exit 1

# The pods to evict: the node's, except DaemonSet pods, with their UIDs.
"$BIN/k8s-snapshot" --node "$node" >"$WORK/node-cordoned.json"
mapfile -t pods < <(jq -r --arg node "$node" '
  .pods[] | select(.spec.nodeName == $node)
  | select([.metadata.ownerReferences[]? | select(.controller) | .kind] | index("DaemonSet") | not)
  | "\(.metadata.namespace) \(.metadata.name) \(.metadata.uid)"' "$WORK/node-cordoned.json" | sort)
echo
echo "$node's pods to evict (DaemonSet pods stay): ${#pods[@]}"

# evict NS POD UID: one k8s-evict per attempt (each is exactly one POST),
# until accepted and gone, or not evictable within a minute.
evict() {
	local ns=$1 pod=$2 uid=$3 deadline=$((SECONDS + 15)) wait line last=""
	while :; do
		echo "\$ k8s-evict --namespace $ns --pod $pod --uid ${uid:0:8}... --wait 30s"
		code=0
		"$BIN/k8s-evict" --namespace "$ns" --pod "$pod" --uid "$uid" --wait 30s >"$WORK/eviction.json" 2>"$WORK/eviction.err" || code=$?
		if [[ ! -s "$WORK/eviction.json" ]]; then
			cat "$WORK/eviction.err" >&2
			return 1
		fi
		line=$(jq -r --arg code "$code" '"  -> \(.outcome)\(if .reason then "/" + .reason else "" end), HTTP \(.httpStatus), exit \($code)"
		  + (if .pdb then ", pdb \(.pdb.name)" + (if .pdb.need then " needs \(.pdb.need) healthy, has \(.pdb.have)" else "" end) else "" end)
		  + (if .retryAfterSeconds > 0 then ", retry after \(.retryAfterSeconds)s" else "" end)
		  + "\n     \(.message)"' "$WORK/eviction.json")
		if [[ "$line" == "$last" ]]; then
			echo "  -> the same again"
		else
			echo "$line"
		fi
		last=$line
		case $code in
		0) return 0 ;;
		2)
			wait=$(jq -r 'if .retryAfterSeconds > 0 then .retryAfterSeconds else 3 end' "$WORK/eviction.json")
			if ((SECONDS + wait > deadline)); then
				echo "  still not evictable after 15 s: left alone (maintd, next step, waits for the budget instead)"
				return 0
			fi
			echo "  not now: retrying in ${wait}s"
			sleep "$wait"
			;;
		*)
			echo "  blocked: a human must act"
			return 0
			;;
		esac
	done
}

for p in "${pods[@]}"; do
	read -r ns pod uid <<<"$p"
	echo
	evict "$ns" "$pod" "$uid"
done

echo
echo "pods left on $node:"
"$kubectl" get pods -A --field-selector spec.nodeName="$node" --no-headers | sed 's/^/  /'
echo
run "$BIN/k8s-cordon" --uncordon --node "$node" --owner "$owner" -o table
[[ $code -eq 0 ]] || exit 1
