#!/usr/bin/env bash
# Builds the local control plane's binaries (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from the Go module
# proxy into a cache keyed by version. Idempotent: a complete cache is reused.
#
# usage: build.sh CACHE_DIR     (binaries land in CACHE_DIR/v1.37.2/)
set -euo pipefail

KUBE_VERSION=v1.37.2
here="$(cd "$(dirname "$0")" && pwd)"
cache="${1:?usage: build.sh CACHE_DIR}"
out="$cache/$KUBE_VERSION"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages.yaml)

missing=()
for b in "${bins[@]}"; do [[ -x "$out/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "kube-bins: $out is complete (${bins[*]})" >&2
	exit 0
fi
mkdir -p "$out"
export GOWORK=off CGO_ENABLED=0 GOFLAGS=-trimpath
ver="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
start=$SECONDS
for b in "${missing[@]}"; do
	t=$SECONDS
	echo "kube-bins: building $b ..." >&2
	case "$b" in
	etcd) (cd "$here/kwok" && go build -ldflags "-s -w" -o "$out/.$b.tmp" ./etcd) ;;
	kwok) (cd "$here/kwok" && go build -ldflags "-s -w" -o "$out/.$b.tmp" sigs.k8s.io/kwok/cmd/kwok) ;;
	kwok-stages.yaml)
		# kwok's published stages, as the module ships them: fast nodes with
		# lease heartbeats, fast pods. The control plane adds its delays.
		stages="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
		for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
			pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
			echo "---"
			cat "$stages/$f.yaml"
		done >"$out/.$b.tmp"
		chmod +x "$out/.$b.tmp" ;;
	*) (cd "$here" && go build -ldflags "-s -w $ver" -o "$out/.$b.tmp" "k8s.io/kubernetes/cmd/$b") ;;
	esac
	mv "$out/.$b.tmp" "$out/$b"
	echo "kube-bins: built $b in $((SECONDS - t))s" >&2
done
echo "kube-bins: done in $((SECONDS - start))s -> $out" >&2
