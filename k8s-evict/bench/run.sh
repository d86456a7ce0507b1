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
	python3 - "$doc" "$out" <<'PY'
import sys
doc, new = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
head = "## k8s-cordon, k8s-evict"
lines = open(doc).read().splitlines(keepends=True)
out, skip, done = [], False, False
for l in lines:
    if l.rstrip("\n") == head:
        skip, done = True, True
        out.append(new + "\n")
        continue
    if skip and l.startswith("## "):
        skip = False
    if not skip:
        out.append(l)
if not done:
    if out and not out[-1].endswith("\n\n"):
        out.append("\n")
    out.append(new)
open(doc, "w").write("".join(out).rstrip("\n") + "\n")
PY
	echo "updated $doc"
fi
exit "${status:-0}"
