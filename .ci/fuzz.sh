#!/usr/bin/env bash
# Runs every fuzz target of the given modules for a bounded time each.
# usage: [FUZZPARALLEL=N] [FUZZMINIMIZETIME=D] fuzz.sh FUZZTIME MODULE_DIR...
# FUZZPARALLEL is go test's -parallel: fuzzing workers per target (default:
# GOMAXPROCS). FUZZMINIMIZETIME is -fuzzminimizetime, the time spent
# shrinking each new interesting input (default: Go's 60s).
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" when -fuzztime ends while a worker is mid-call
# (golang/go#75804, fixed in Go 1.27): no input is at fault and none is
# written. Such a run is retried once; a run that writes a failing input,
# or fails any other way, fails at once.
set -euo pipefail
fuzztime="$1"; shift
flags=()
[[ -n "${FUZZPARALLEL:-}" ]] && flags=(-parallel="$FUZZPARALLEL")
[[ -n "${FUZZMINIMIZETIME:-}" ]] && flags+=(-fuzzminimizetime="$FUZZMINIMIZETIME")
n=0
for mod in "$@"; do
	while IFS= read -r file; do
		pkg="./$(dirname "${file#"$mod"/}")"
		for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
			for attempt in 1 2; do
				echo "== fuzz $target in ${mod##*/}/${pkg#./} for $fuzztime"
				log="$(mktemp)"
				status=0
				(cd "$mod" && go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "${flags[@]}" "$pkg") 2>&1 | tee "$log" || status=$?
				race=0
				if ((status != 0)) && grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"; then
					race=1
				fi
				rm -f "$log"
				((status == 0)) && break
				if ((race == 1 && attempt == 1)); then
					echo "fuzz: $target: the Go 1.26 -fuzztime race (golang/go#75804), no failing input: once more"
					continue
				fi
				exit "$status"
			done
			n=$((n + 1))
		done
	done < <(grep -rl --include='*_test.go' -E '^func Fuzz' "$mod" | sort)
done
echo "fuzz: $n targets passed"
