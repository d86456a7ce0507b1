#!/usr/bin/env bash
# meminfo-exporter: start it on this machine on a free loopback port, show a
# few lines of /metrics and the /meminfo JSON for MemAvailable, stop it.
set -euo pipefail
: "${BIN:?}" "${WORK:?}"

# Port 0: the kernel picks a free port, which the exporter reports on stderr.
echo "\$ meminfo-exporter --listen 127.0.0.1:0 &"
"$BIN/meminfo-exporter" --listen 127.0.0.1:0 2>"$WORK/meminfo-exporter.log" &
pid=$!
stop() {
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid" || true
	fi
}
trap stop EXIT

deadline=$((SECONDS + 10))
port=""
until [[ -n "$port" ]] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
	port=$(sed -n 's/^meminfo-exporter: listening on 127.0.0.1:\([0-9]*\);.*/\1/p' "$WORK/meminfo-exporter.log")
	if ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
		echo "meminfo-exporter did not become ready:" >&2
		cat "$WORK/meminfo-exporter.log" >&2
		exit 1
	fi
	sleep 0.1
done
cat "$WORK/meminfo-exporter.log"

echo
echo "\$ curl -s 127.0.0.1:$port/metrics | grep -E '^meminfo_(Mem|cgroup_memory_(usage|working_set|limit)|scrape_collector_success)'"
curl -fsS "http://127.0.0.1:$port/metrics" |
	grep -E '^meminfo_(Mem(Total|Free|Available)_bytes|cgroup_memory_(usage|working_set|limit)_bytes|scrape_collector_success)' || true

echo
echo "\$ curl -s '127.0.0.1:$port/meminfo?field=MemAvailable'"
curl -fsS "http://127.0.0.1:$port/meminfo?field=MemAvailable"

stop
trap - EXIT
echo "meminfo-exporter stopped"
