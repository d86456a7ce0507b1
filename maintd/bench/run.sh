#!/usr/bin/env bash
# maintd vs kubectl drain (v1.37.2): drain node-1 of fresh copies of
# testdata/scenarios/maintd-bench.yaml (20 and 80 pods), same local control
# plane, same run. Writes the "## maintd" section of docs/benchmarks.md
# (other sections kept); exits 1 when a target is missed.
#   BENCH_N=3          drains per tool and size (medians reported)
#   BENCH_SIZES=10,40  Deployments x 8 replicas (10: 20 pods on node-1, 40: 80)
#   BIN=dir            use prebuilt binaries (default: make build, then ./bin)
#   BENCH_LOGS=dir     keep maintd's and kubectl's output and each plan (default: a new temp dir, kept)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${BIN:-}" ]]; then
	make -C "$root" --no-print-directory build >/dev/null # the binaries users get
	export BIN="$root/bin"
fi
export BENCH_LOGS="${BENCH_LOGS:-$(mktemp -d /tmp/maintd-bench-logs.XXXXXX)}"
out="$tmp/section.md"
(cd "$root/maintd" && BENCH_OUT="$out" go test -tags bench -count=1 -timeout 60m -run TestDrainVersusKubectl -v ./bench/) || status=$?
echo "maintd and kubectl logs, plans' status: $BENCH_LOGS"
if [[ -s "$out" ]]; then
	doc="$root/docs/benchmarks.md"
	touch "$doc"
	# Replace this tool's section (up to the next "## " heading), or append it.
	python3 "$root/plumbing/bench/section.py" "$doc" "## maintd" "$out"
	echo "updated $doc"
fi
exit "${status:-0}"
