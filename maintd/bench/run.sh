#!/usr/bin/env bash
# maintd's benchmarks, each on its own local control plane, each writing its
# section of docs/benchmarks.md (other sections kept); exits 1 when a target
# is missed.
#   drain: maintd vs kubectl drain (v1.37.2) of node-1 of fresh copies of
#          testdata/scenarios/maintd-bench.yaml (20 and 80 pods), same run
#          ("## maintd").
#   scale: 200 kwok nodes and 6,000 pods: maintd's idle cost, the busiest
#          nodes drained by maintd and by kubectl drain, 20 plans through 5
#          slots ("## maintd at scale").
#   surge: ten single-replica apps under minAvailable 1 on node-1: maintd
#          with spec.surge against kubectl drain --timeout=60s
#          ("## maintd surge").
# usage: run.sh [drain] [scale] [surge]       (default: all three)
#   BENCH_N=3          drains per tool (and size)
#   BENCH_SIZES=10,40  drain: Deployments x 8 replicas (10: 20 pods on node-1, 40: 80)
#   BENCH_IDLE=60s     scale: the idle window
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
suites=("$@")
[[ ${#suites[@]} -eq 0 ]] && suites=(drain scale surge)
status=0
for s in "${suites[@]}"; do
	case "$s" in
	drain) test=TestDrainVersusKubectl heading="## maintd" ;;
	scale) test=TestScale heading="## maintd at scale" ;;
	surge) test=TestSurgeVersusKubectl heading="## maintd surge" ;;
	*) echo "run.sh: unknown benchmark $s (drain, scale, surge)" >&2; exit 2 ;;
	esac
	out="$tmp/$s.md"
	(cd "$root/maintd" && BENCH_OUT="$out" go test -tags bench -count=1 -timeout 60m -run "^$test\$" -v ./bench/) || status=1
	if [[ -s "$out" ]]; then
		python3 "$root/plumbing/bench/section.py" "$root/docs/benchmarks.md" "$heading" "$out"
		echo "updated docs/benchmarks.md: $heading"
	fi
done
echo "maintd and kubectl logs, plans' status: $BENCH_LOGS"
exit "$status"
