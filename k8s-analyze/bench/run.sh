#!/usr/bin/env bash
# k8s-analyze benchmark (make bench): this tree's binary against the binary
# of BASE (default b41f2d7, the last commit with the hand-written decoder),
# interleaved in one run, on generated snapshots (bench/gen/main.go): the
# full size (5,000 nodes, 150,000 pods), 1/10 of it, and the scope of one
# node as k8s-snapshot --node writes it. Each binary analyses every node
# (-o json to /dev/null), RUNS rounds (default 5, after one not counted),
# the two binaries alternating; medians of wall time, CPU time and peak RSS.
# Then, in process (bench/phases/main.go), the split between decoding,
# analysis and encoding. Writes the "## k8s-analyze" section of
# docs/benchmarks.md.
# Targets: wall <= 2x BASE's, peak RSS <= 3x the JSON, 10x the input <= 12x
# the time, a node-scoped snapshot <= 50 ms end to end.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/k8s-analyze"
runs=${RUNS:-5}
base=${BASE:-b41f2d7}
work=$(mktemp -d -t k8s-analyze-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

go build -o "$work/new" .
mkdir "$work/base"
git -C "$root" archive "$base" | tar -x -C "$work/base"
(cd "$work/base/k8s-analyze" && go build -o "$work/old" .)
for div in 10 1; do
	go run ./bench/gen/main.go -div "$div" >"$work/snap-$div.json"
done
go run ./bench/gen/main.go -div 1 -node node-00007 >"$work/snap-node.json"
sync "$work"/snap-*.json

# one BIN FILE [ARGS]: "wall cpu rss_kb" of one run (wall from the clock,
# in seconds to the millisecond).
one() {
	local code=0 t0 t1 bin=$1 file=$2
	shift 2
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S %M" -o "$work/time" "$work/$bin" -f "$file" "$@" >/dev/null || code=$?
	t1=$(date +%s%N)
	if ((code != 0 && code != 2 && code != 3)); then
		echo "$bin failed on $file (exit $code)" >&2
		exit 1
	fi
	tail -1 "$work/time" | awk -v ns=$((t1 - t0)) '{printf "%.3f %.2f %s\n", ns / 1e9, $1 + $2, $3}'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
declare -A args=([1]="" [10]="" [node]="--node node-00007")
for f in 1 10 node; do
	# shellcheck disable=SC2086
	for b in old new; do one "$b" "$work/snap-$f.json" ${args[$f]} >/dev/null; done
done
for _ in $(seq "$runs"); do
	for f in 1 10 node; do
		# shellcheck disable=SC2086
		for b in old new; do one "$b" "$work/snap-$f.json" ${args[$f]} >>"$work/$b-$f"; done
	done
done
median() { sort -n -k"$2" "$1" | awk -v n="$runs" -v k="$2" 'NR == int((n + 1) / 2) { print $k }'; }
declare -A wall cpu rss
for f in 1 10 node; do
	for b in old new; do
		wall[$b-$f]=$(median "$work/$b-$f" 1)
		cpu[$b-$f]=$(median "$work/$b-$f" 2)
		rss[$b-$f]=$(median "$work/$b-$f" 3)
	done
done
bytes1=$(stat -c %s "$work/snap-1.json")
bytes10=$(stat -c %s "$work/snap-10.json")
bytesnode=$(stat -c %s "$work/snap-node.json")
load=$(cut -d' ' -f1-3 /proc/loadavg)
phases=$(go run ./bench/phases/main.go -f "$work/snap-1.json" -canonical)
get() { awk -v k="$1" '$1 == k { print $2 }' <<<"$phases"; }

missed=()
# check VAR CONDITION WHAT: VAR is "met", or "not met" and WHAT is noted.
check() {
	if awk "BEGIN { exit !($2) }"; then
		printf -v "$1" met
	else
		printf -v "$1" '**not met**'
		missed+=("$3")
	fi
}
r_wall=$(awk -v a="${wall[new-1]}" -v b="${wall[old-1]}" 'BEGIN { printf "%.2f", a / b }')
r_rss=$(awk -v r="${rss[new-1]}" -v b="$bytes1" 'BEGIN { printf "%.2f", r * 1024 / b }')
r_10x=$(awk -v a="${wall[new-1]}" -v b="${wall[new-10]}" 'BEGIN { printf "%.1f", a / b }')
ms_node=$(awk -v w="${wall[new-node]}" 'BEGIN { printf "%.0f", w * 1000 }')
check m_wall "$r_wall <= 2" "wall ${r_wall}x the base binary's"
check m_rss "$r_rss <= 3" "peak RSS ${r_rss}x the JSON"
check m_10x "$r_10x <= 12" "10x the input ${r_10x}x the time"
check m_node "$ms_node <= 50" "node-scoped ${ms_node} ms"
mb() { awk -v b="$1" 'BEGIN { printf "%.0f MB", b / 1e6 }'; }
rssmb() { awk -v r="$1" 'BEGIN { printf "%.0f MB", r / 1024 }'; }

cat >"$work/section.md" <<EOF
## k8s-analyze

A generated snapshot (\`k8s-analyze/bench/generate.go\`, \`go run ./bench/gen/main.go\`): 5,000
nodes, 150,000 pods (14,000 Deployments with their ReplicaSets and PDBs, 500 StatefulSets of 10
pods with a ReadWriteOnce PVC and PV each, one DaemonSet pod per node; 1% of pods not Ready),
realistic pod objects, written indented like k8s-snapshot: **$(mb "$bytes1")** of JSON; 1/10 of it
($(mb "$bytes10")) for the 10x comparison; and the scope of node-00007 as \`k8s-snapshot --node\`
writes it ($(mb "$bytesnode"), \`-node node-00007\`). Every node of each is analysed by the real
binary, \`k8s-analyze -f FILE > /dev/null\` (JSON report). The baseline, in the same run, rounds
alternating, is the binary of $base (the hand-written strictjson decoder on a memory-mapped file,
GC off under a memory limit). Medians of $runs rounds, after one not counted.

Measured $(date -u +"%Y-%m-%d %H:%MZ"), $(nproc) CPUs, $(go env GOVERSION), load average $load,
\`flock /tmp/sentinel-heavy.lock bash k8s-analyze/bench/run.sh\`:

| | $base | this tree | target | |
|---|---|---|---|---|
| wall, full size | ${wall[old-1]} s | **${wall[new-1]} s** (${r_wall}x) | <= 2x | $m_wall |
| CPU (user+sys), full size | ${cpu[old-1]} s | ${cpu[new-1]} s | | |
| peak RSS, full size | $(rssmb "${rss[old-1]}") | **$(rssmb "${rss[new-1]}")** (${r_rss}x the JSON) | <= 3x | $m_rss |
| wall, 1/10 | ${wall[old-10]} s | ${wall[new-10]} s | | |
| 10x the input | | **${r_10x}x** the time | <= 12x | $m_10x |
| node-scoped, end to end | $(awk -v w="${wall[old-node]}" 'BEGIN { printf "%.0f", w * 1000 }') ms | **$ms_node ms** | <= 50 ms | $m_node |

In process (\`go run ./bench/phases/main.go -f FILE -canonical\`, full size, after the table):
decoding $(get decode_s) s, analysis of all nodes $(get analyze_s) s, JSON encoding of the report
$(get encode_s) s; decoding allocates $(get decode_allocated_mb) MB, the analysis
$(get analyze_allocated_mb) MB. The drain forecast's share of the analysis (medians of 3, with and
without it, alternating): $(get forecast_s) s. The canonical strict decoder (\`document.Unmarshal\`,
sigs.k8s.io/json) takes $(get canonical_decode_s) s on the same bytes.

How it decodes: the library's tokenizer (jsontext) reads the file as a stream and cuts the
top-level lists into batches of elements; the other goroutines decode each element strictly into
its Kubernetes type (\`github.com/go-json-experiment/json\`: unknown members, duplicate names and
names in another case rejected) and keep only its view (package \`view\`, built by plain
functions), so the input is never held whole and the full objects are garbage at once. What
bounds the time is the library's decoding of full Kubernetes objects (two passes over each byte:
the tokenizer's split, then the decoding) and the collections of a heap that grows to the views;
\`metav1.Time\` is decoded from its token (its own UnmarshalJSON runs encoding/json a second
time over every timestamp, a fifth of the decoding).
EOF
if ((${#missed[@]} > 0)); then
	printf '\nNot met: %s.\n' "$(IFS=';'; echo "${missed[*]}")" >>"$work/section.md"
fi
cat "$work/section.md"
((${#missed[@]} == 0)) || status=1
python3 "$root/plumbing/bench/section.py" "$root/docs/benchmarks.md" "## k8s-analyze" "$work/section.md"
echo "updated docs/benchmarks.md: ## k8s-analyze"
exit "${status:-0}"
