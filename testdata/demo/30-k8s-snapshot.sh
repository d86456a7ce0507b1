#!/usr/bin/env bash
# k8s-snapshot: a read-only, node-scoped snapshot of node-1, saved to $WORK
# and summarised: objects per kind, and where the document is.
set -euo pipefail
out="$WORK/snapshot-node-1.json"

echo "\$ k8s-snapshot --node node-1 > $out"
"$BIN/k8s-snapshot" --node node-1 >"$out"

echo "what judging a drain of node-1 needs (objects per kind):"
jq -r '
  "  captured \(.metadata.capturedAt) from \(.metadata.server) (Kubernetes \(.metadata.kubernetesVersion))",
  (to_entries[] | select(.value | type == "array") | "  \(.key | . + ":" + (" " * (26 - length)))\(.value | length)")
' "$out"
echo "pods in the snapshot, by node (node-1's own, and the replicas elsewhere):"
jq -r '.pods | group_by(.spec.nodeName)[] | "  \(.[0].spec.nodeName // "unscheduled"): \(map(.metadata.namespace + "/" + .metadata.name) | join(" "))"' "$out"
echo "saved: $out ($(wc -c <"$out") bytes)"
