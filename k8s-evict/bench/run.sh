#!/usr/bin/env bash
# k8s-cordon and k8s-evict vs kubectl cordon / kubectl create --raw .../eviction:
# one process each, end to end, same local control plane, same run. Writes the
# "## k8s-cordon, k8s-evict" section of docs/benchmarks.md (other sections kept).
#   BENCH_N=30   runs per tool (after one warm-up)
#   BIN=dir      use prebuilt binaries (default: make build, then ./bin)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${BIN:-}" ]]; then
	make -C "$root" --no-print-directory build >/dev/null # the binaries users get
	export BIN="$root/bin"
fi
out="$tmp/section.md"
(cd "$root/k8s-evict" && BENCH_OUT="$out" go test -tags bench -count=1 -timeout 15m -run TestVersusKubectl -v ./bench/) || status=$?
if [[ -s "$out" ]]; then
	doc="$root/docs/benchmarks.md"
	touch "$doc"
	# Replace this tool's section (up to the next "## " heading), or append it.
	python3 "$root/plumbing/bench/section.py" "$doc" "## k8s-cordon, k8s-evict" "$out"
	echo "updated $doc"
fi
exit "${status:-0}"
