#!/usr/bin/env bash
# k8s-analyze benchmark (make bench): generate snapshots of 500 nodes /
# 15,000 pods and 5,000 nodes / 150,000 pods (bench/gen/main.go), then analyse
# every node of each with the real binary (-o json to /dev/null), RUNS times
# (default 3), reporting the median wall time, CPU time (user+sys), minor page
# faults, peak RSS and its ratio to the JSON size, the 10x-input time ratio,
# and, in process (bench/phases/main.go), how the time splits between
# decoding, analysis and encoding, the memory each allocates, what fresh
# memory costs on this machine, and the canonical strict decoder
# (document.Unmarshal) on the same bytes.
# Targets: full size <= 3 s wall and <= 3x the JSON size in peak RSS;
# 10x the input <= 12x the time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
work=$(mktemp -d -t k8s-analyze-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

go build -o "$work/k8s-analyze" .
for div in 10 1; do
	go run ./bench/gen/main.go -div "$div" >"$work/snap-$div.json"
done
# Written back before measuring: dirty pages of a fresh 723 MB file are
# flushed while the first runs map it, and double their time.
sync "$work"/snap-*.json

# measure FILE: median over $runs of "wall cpu rss_kb minor_faults", after
# one run not counted.
measure() {
	"$work/k8s-analyze" -f "$1" >/dev/null || true
	for _ in $(seq "$runs"); do
		code=0
		/usr/bin/time -f "%e %U %S %M %R" -o "$work/time" "$work/k8s-analyze" -f "$1" >/dev/null || code=$?
		if ((code != 0 && code != 2 && code != 3)); then
			echo "k8s-analyze failed on $1 (exit $code)" >&2
			exit 1
		fi
		tail -1 "$work/time" | awk '{printf "%s %.2f %s %s\n", $1, $2 + $3, $4, $5}'
	done | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2)'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
declare -A wall
missed=()
for div in 10 1; do
	f="$work/snap-$div.json"
	read -r w c rss faults <<<"$(measure "$f")"
	bytes=$(stat -c %s "$f")
	wall[$div]=$w
	awk -v d="$div" -v b="$bytes" -v w="$w" -v c="$c" -v r="$rss" -v f="$faults" 'BEGIN {
		printf "size 1/%d: json %.0f MB, wall %.2f s, cpu %.2f s, %d minor faults, peak RSS %.0f MB = %.2fx the JSON\n", d, b / 1e6, w, c, f, r / 1024, r * 1024 / b
	}'
	if ((div == 1)); then
		awk -v w="$w" 'BEGIN { exit !(w <= 3) }' || missed+=("wall ${w} s > 3 s")
		awk -v r="$rss" -v b="$bytes" 'BEGIN { exit !(r * 1024 <= 3 * b) }' || missed+=("peak RSS > 3x the JSON")
	fi
done
awk -v a="${wall[10]}" -v b="${wall[1]}" 'BEGIN { printf "10x the input: %.1fx the wall time\n", b / a }'
awk -v a="${wall[10]}" -v b="${wall[1]}" 'BEGIN { exit !(b <= 12 * a) }' || missed+=("10x the input > 12x the time")
echo "phases, in process (full size):"
go run ./bench/phases/main.go -f "$work/snap-1.json" -canonical -faults | sed 's/^/  /'
if ((${#missed[@]} > 0)); then
	printf 'target missed: %s\n' "${missed[@]}"
	exit 1
fi
