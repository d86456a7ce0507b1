#!/usr/bin/env bash
# Installs the Debian packages the tests and benchmarks need, when missing.
# Idempotent; called by `make deps` (and so by `make test`).
set -euo pipefail
# tmux: the terminal of kubectl-maint's live-view test; zsh: its zsh completion.
pkgs=(prometheus wrk openssl jq python3 bc bash-completion tmux zsh)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "deps: installing ${missing[*]}" >&2
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
