#!/usr/bin/env bash
# meminfo-exporter against node_exporter restricted to meminfo, in one run:
# both on loopback, the same load generators, the same duration, alternating
# rounds: wrk -t1 -c1 (closed loop, one connection: each request sent when
# the last is answered) for latency and CPU time per scrape, and
# bench/loadgen (open loop, the same fixed rate for both) for latency under
# a fixed offered load; then the parser's go test -bench figures.
# Writes the "## meminfo-exporter" section of docs/benchmarks.md.
#
#   flock /tmp/sentinel-heavy.lock bash meminfo-exporter/bench/run.sh   # or: make bench
#   DURATION=10s ROUNDS=3 LOAD=0.5 OPEN_CONNECTIONS=8 bash meminfo-exporter/bench/run.sh
#   (LOAD: the open-loop rate as a fraction of node_exporter's closed-loop requests/s)
#   NO_WRITE=1 bash meminfo-exporter/bench/run.sh  # print only
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/.cache/meminfo-bench"
NODE_EXPORTER_VERSION="${NODE_EXPORTER_VERSION:-v1.12.1}"
DURATION="${DURATION:-10s}"
OPEN_CONNECTIONS="${OPEN_CONNECTIONS:-8}"
ROUNDS="${ROUNDS:-3}"
LOAD="${LOAD:-0.5}"
mkdir -p "$cache/bin"

for tool in wrk go curl; do
	command -v "$tool" >/dev/null || {
		echo "bench: $tool not found (bash .ci/deps.sh installs wrk)" >&2
		exit 1
	}
done

# Binaries: ours from this checkout, node_exporter from the Go module proxy.
echo "bench: building meminfo-exporter" >&2
# The flags of make build, for this module only.
(cd "$root/meminfo-exporter" && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$cache/bin/meminfo-exporter" . &&
	go build -o "$cache/bin/loadgen" ./bench/loadgen)
ne="$cache/bin/node_exporter-$NODE_EXPORTER_VERSION"
if [[ ! -x "$ne" ]]; then
	echo "bench: building node_exporter $NODE_EXPORTER_VERSION from the Go module proxy" >&2
	GOWORK=off GOBIN="$cache/bin" go install "github.com/prometheus/node_exporter@$NODE_EXPORTER_VERSION"
	mv "$cache/bin/node_exporter" "$ne"
fi

work="$(mktemp -d -t meminfo-bench-XXXXXX)"
pids=()
cleanup() {
	for p in ${pids[@]+"${pids[@]}"}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	# A port the kernel hands out for a moment; the exporters bind it next.
	local p
	p=$(( (RANDOM % 20000) + 30000 ))
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
	echo "$p"
}

wait_up() {
	local url=$1 deadline=$((SECONDS + 20))
	until curl -fsS -o /dev/null "$url" 2>/dev/null; do
		((SECONDS < deadline)) || {
			echo "bench: $url did not come up" >&2
			exit 1
		}
		sleep 0.1
	done
}

series() { curl -fsS "$1" | grep -vc '^#'; }

# to_ms 1.23ms|456.00us|1.20s -> milliseconds
to_ms() {
	awk -v v="$1" 'BEGIN {
		n = v + 0
		if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000
		printf "%.3f", n
	}'
}

# cpu_ticks PID: user + system CPU time of the process, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_s=$(getconf CLK_TCK)

# load NAME URL PID: one wrk -t1 -c1 round; appends "rps p50ms p99ms
# cpu_us_per_request" to $work/NAME. CPU time per request does not depend
# on how busy the machine is; requests/s and latency do.
load() {
	local out before after
	before=$(cpu_ticks "$3")
	out=$(wrk -t1 -c1 -d"$DURATION" --latency "$2")
	after=$(cpu_ticks "$3")
	local rps p50 p99 errors
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	errors=$(awk '/Non-2xx or 3xx responses:/ {print $5}' <<<"$out")
	if [[ -n "$errors" ]]; then
		echo "bench: $1 answered $errors non-2xx responses" >&2
		exit 1
	fi
	local requests cpu
	requests=$(awk '/requests in/ {print $1}' <<<"$out")
	cpu=$(awk -v t=$((after - before)) -v hz="$ticks_per_s" -v n="$requests" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
	echo "$rps $(to_ms "$p50") $(to_ms "$p99") $cpu" >>"$work/$1"
	printf 'bench: %-28s %10s req/s  p50 %8s ms  p99 %8s ms  %8s us CPU/request\n' "$1" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")" "$cpu" >&2
}

# open NAME URL RATE: one loadgen round at RATE requests/s; appends
# "p50ms p99ms" to $work/NAME.open.
open_loop() {
	local out
	out=$("$cache/bin/loadgen" -url "$2" -rate "$3" -duration "$DURATION" -connections "$OPEN_CONNECTIONS")
	awk '{for (i = 1; i < NF; i++) v[$i] = $(i + 1); print v["p50"], v["p99"]}' <<<"$out" >>"$work/$1.open"
	printf 'bench: %-28s %10s req/s  open loop: %s\n' "$1" "$3" "$out" >&2
}

# median over the rounds of field $2 in file $1 (a round that other work on
# the machine swamped moves a median less than a mean)
median() { awk -v f="$2" '{print $f}' "$1" | sort -g | awk '{v[NR] = $1} END {printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# medians FILE N: the medians of fields 1..N of FILE, on one line
medians() { local i out=(); for ((i = 1; i <= $2; i++)); do out+=("$(median "$1" "$i")"); done; echo "${out[*]}"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
verdict() { awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN {ok = (op == ">=") ? r >= t : r <= t; print ok ? "met" : "NOT met"}'; }

# compare LABEL NE_FLAGS ME_FLAGS: both exporters started fresh, ROUNDS
# alternating closed-loop rounds, then ROUNDS alternating open-loop rounds;
# appends the table rows to $work/rows.
compare() {
	local label=$1 ne_flags=$2 me_flags=$3
	local ne_port me_port ne_pid me_pid
	ne_port=$(free_port)
	# shellcheck disable=SC2086
	"$ne" --collector.disable-defaults --collector.meminfo --web.listen-address="127.0.0.1:$ne_port" \
		--log.level=warn $ne_flags >"$work/ne.log" 2>&1 &
	ne_pid=$!
	pids+=("$ne_pid")
	wait_up "http://127.0.0.1:$ne_port/metrics"
	me_port=$(free_port)
	# shellcheck disable=SC2086
	"$cache/bin/meminfo-exporter" --collectors meminfo --listen "127.0.0.1:$me_port" $me_flags >"$work/me.log" 2>&1 &
	me_pid=$!
	pids+=("$me_pid")
	wait_up "http://127.0.0.1:$me_port/metrics"
	local ne_series me_series
	ne_series=$(series "http://127.0.0.1:$ne_port/metrics")
	me_series=$(series "http://127.0.0.1:$me_port/metrics")
	for round in $(seq "$ROUNDS"); do
		echo "bench: $label, round $round of $ROUNDS (wrk -t1 -c1 -d$DURATION)" >&2
		load "ne-$label" "http://127.0.0.1:$ne_port/metrics" "$ne_pid"
		load "me-$label" "http://127.0.0.1:$me_port/metrics" "$me_pid"
	done
	local rate
	rate=$(awk -v r="$(median "$work/ne-$label" 1)" -v f="$LOAD" 'BEGIN {printf "%d", r * f}')
	for round in $(seq "$ROUNDS"); do
		echo "bench: $label, open-loop round $round of $ROUNDS ($rate req/s, $OPEN_CONNECTIONS connections, $DURATION)" >&2
		open_loop "ne-$label" "http://127.0.0.1:$ne_port/metrics" "$rate"
		open_loop "me-$label" "http://127.0.0.1:$me_port/metrics" "$rate"
	done
	local ne_rps me_rps ne_p50 me_p50 ne_p99 me_p99 ne_rss me_rss ne_cpu me_cpu ne_o50 me_o50 ne_o99 me_o99
	read -r ne_o50 ne_o99 <<<"$(medians "$work/ne-$label.open" 2)"
	read -r me_o50 me_o99 <<<"$(medians "$work/me-$label.open" 2)"
	read -r ne_rps ne_p50 ne_p99 ne_cpu <<<"$(medians "$work/ne-$label" 4)"
	read -r me_rps me_p50 me_p99 me_cpu <<<"$(medians "$work/me-$label" 4)"
	ne_rss=$(hwm_kb "$ne_pid")
	me_rss=$(hwm_kb "$me_pid")
	kill "$ne_pid" "$me_pid"
	wait "$ne_pid" "$me_pid" 2>/dev/null || true
	local r
	{
		echo "| $label: series per scrape | $ne_series | $me_series | | |"
		r=$(ratio "$me_cpu" "$ne_cpu")
		echo "| $label: CPU time per scrape (us) | $ne_cpu | $me_cpu | $r x | <= 0.7x: $(verdict "$r" "<=" 0.7) |"
		r=$(ratio "$me_p50" "$ne_p50")
		echo "| $label: p50 latency, one connection, closed loop (ms) | $ne_p50 | $me_p50 | $r x | <= 1x: $(verdict "$r" "<=" 1) |"
		r=$(ratio "$me_p99" "$ne_p99")
		echo "| $label: p99 latency, one connection, closed loop (ms) | $ne_p99 | $me_p99 | $r x | <= 1x: $(verdict "$r" "<=" 1) |"
		r=$(ratio "$me_o50" "$ne_o50")
		echo "| $label: p50 latency at $rate req/s, open loop (ms) | $ne_o50 | $me_o50 | $r x | <= 1x: $(verdict "$r" "<=" 1) |"
		r=$(ratio "$me_o99" "$ne_o99")
		echo "| $label: p99 latency at $rate req/s, open loop (ms) | $ne_o99 | $me_o99 | $r x | <= 1x: $(verdict "$r" "<=" 1) |"
		r=$(ratio "$me_rps" "$ne_rps")
		echo "| $label: requests/s, one connection | $ne_rps | $me_rps | $r x | |"
		r=$(ratio "$me_rss" "$ne_rss")
		echo "| $label: peak RSS (VmHWM, KiB) | $ne_rss | $me_rss | $r x | <= 1x: $(verdict "$r" "<=" 1) |"
	} >>"$work/rows"
}

compare "defaults" "" ""
compare "no exporter metrics" "--web.disable-exporter-metrics" "--disable-exporter-metrics"

echo "bench: go test -bench (parser)" >&2
gobench=$(cd "$root/meminfo-exporter" && go test -run '^$' -bench 'Parse$|ReadParse$' -benchtime 1s -count 6 ./meminfo)
echo "$gobench" >&2
# best of the counts: ns/op and allocs/op
best() { awk -v b="$1" '$1 ~ "^"b"-" {ns = $3; if (min == "" || ns < min) {min = ns; allocs = $(NF-1)}} END {printf "%s %s", min, allocs}' <<<"$gobench"; }
read -r parse_ns parse_allocs <<<"$(best BenchmarkParse)"
read -r rp_ns rp_allocs <<<"$(best BenchmarkReadParse)"
us() { awk -v n="$1" 'BEGIN {printf "%.2f", n / 1000}'; }

rss_note=""
if (cd "$root/meminfo-exporter" && go list -deps . | grep -qx 'k8s.io/client-go/rest'); then
	rss_note="
Peak RSS: the binary links k8s.io/client-go only because plumbing/command also holds KubeFlags and
KubeOptions; initialising those packages costs about 17 MB of RSS at start (an idle meminfo-exporter
built without them: about 10 MB; node_exporter: about 17 MB). Moving the Kubernetes flags out of
package command removes it."
fi

section=$(cat <<EOF
## meminfo-exporter

Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPUs ($(uname -r)), Go $(go env GOVERSION), with
\`flock /tmp/sentinel-heavy.lock bash meminfo-exporter/bench/run.sh\` (also run by \`make bench\`):
meminfo-exporter and node_exporter $NODE_EXPORTER_VERSION (built from the Go module proxy) both on
loopback, both restricted to /proc/meminfo (\`--collectors meminfo\`; \`--collector.disable-defaults
--collector.meminfo\`), both with their default GOMAXPROCS (1 for both: node_exporter's
\`--runtime.gomaxprocs\`, our \`--gomaxprocs\`), loaded by the same generators in $ROUNDS alternating
rounds of one run (figures are the medians of the rounds): first \`wrk -t1 -c1 -d$DURATION --latency\` (closed loop at
one connection: each request sent when the last is answered; its p50 and p99, and the exporter's
utime + stime over the requests it served), then \`bench/loadgen -rate R -connections $OPEN_CONNECTIONS
-duration $DURATION\` (open loop: requests sent on a fixed schedule at the same R for both, R = $LOAD x
node_exporter's closed-loop requests/s, each latency counted from the moment the request was handed
to the connections, so queueing behind a slow answer counts). Two configurations: "defaults" keeps
both exporters' Go/process/promhttp metrics; "no exporter metrics" turns them off on both
(\`--web.disable-exporter-metrics\`; \`--disable-exporter-metrics\`). The machine is shared with
other builds, so absolute figures vary from run to run; the ratios are what the run compares.

| | node_exporter | meminfo-exporter | ratio | target |
|---|---|---|---|---|
$(cat "$work/rows")

Parser (\`go test -bench 'Parse\$|ReadParse\$' -benchtime 1s -count 6 ./meminfo\`, best of 6; wall-clock
figures, so a busy machine inflates them):

| benchmark | us/op | allocs/op | target |
|---|---|---|---|
| Parse (this machine's /proc/meminfo, $(wc -l <"$root/meminfo-exporter/testdata/procfs/linux-6.18-x86_64/meminfo") lines) | $(us "$parse_ns") | $parse_allocs | <= 3 us, 0 allocs |
| ReadParse (pread of /proc/meminfo on a kept fd + parse) | $(us "$rp_ns") | $rp_allocs | <= 10 us |

Reading the table: requests/s and latencies are wall-clock, and the load generators share the CPUs with
both exporters (and, on a shared machine, with other builds), so they move with the machine's load;
CPU time per scrape (utime + stime of the exporter over the requests it served) moves much less.

$(cat "$here/notes.md")
$rss_note
EOF
)
echo
echo "$section"

[[ -n "${NO_WRITE:-}" ]] && exit 0
# Replace only this tool's section of docs/benchmarks.md (others edit the
# same file): re-read it now, keep everything else as it is.
doc="$root/docs/benchmarks.md"
[[ -f "$doc" ]] || printf '# Benchmarks\n' >"$doc"
SECTION="$section" python3 - "$doc" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
section = os.environ["SECTION"].rstrip("\n") + "\n"
pattern = re.compile(r"^## meminfo-exporter\n.*?(?=^## |\Z)", re.S | re.M)
if pattern.search(text):
    text = pattern.sub(lambda m: section + "\n", text, count=1)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text.rstrip("\n") + "\n")
PY
echo "bench: wrote the meminfo-exporter section of $doc" >&2
