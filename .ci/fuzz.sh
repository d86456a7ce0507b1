#!/usr/bin/env bash
# Runs every fuzz target of the given modules for a bounded time each.
# usage: fuzz.sh FUZZTIME MODULE_DIR...
set -euo pipefail
fuzztime="$1"; shift
n=0
for mod in "$@"; do
	while IFS= read -r file; do
		pkg="./$(dirname "${file#"$mod"/}")"
		for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
			echo "== fuzz $target in ${mod##*/}/${pkg#./} for $fuzztime"
			(cd "$mod" && go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg")
			n=$((n + 1))
		done
	done < <(grep -rl --include='*_test.go' -E '^func Fuzz' "$mod" | sort)
done
echo "fuzz: $n targets passed"
