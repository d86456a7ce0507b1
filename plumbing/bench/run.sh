#!/usr/bin/env bash
# Foundation figures: warm `make kube-bins`, and control plane start to
# 4 Ready kwok nodes (sentinel-cluster's own measurement), RUNS times.
# usage: plumbing/bench/run.sh [RUNS]      (from the repository root, after make build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${1:-5}"
cd "$root"
t0=$(date +%s.%N)
plumbing/kubebuild/build.sh "$root/.cache/kube" 2>/dev/null
t1=$(date +%s.%N)
printf 'warm make kube-bins: %.2fs\n' "$(echo "$t1 - $t0" | bc)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
times=()
for i in $(seq "$runs"); do
	bin/sentinel-cluster --nodes 4 --ready-file "$work/ready" >/dev/null 2>"$work/log" &
	pid=$!
	deadline=$((SECONDS + 120))
	until [[ -f "$work/ready" ]] || ((SECONDS > deadline)) || ! kill -0 $pid 2>/dev/null; do sleep 0.1; done
	kill -TERM $pid; wait $pid || true
	[[ -f "$work/ready" ]] || { cat "$work/log" >&2; exit 1; }
	rm -f "$work/ready"
	t=$(sed -nE 's/.*4 Ready nodes in ([0-9.]+)s.*/\1/p' "$work/log")
	times+=("$t")
	echo "run $i: control plane + 4 Ready kwok nodes in ${t}s"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median of $runs: ${median}s (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
