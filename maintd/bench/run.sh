#!/usr/bin/env bash
# maintd's benchmarks, each on its own local control plane, each writing its
# section of docs/benchmarks.md (other sections kept); exits 1 when a target
# is missed.
#   drain: maintd vs kubectl drain (v1.37.2) of node-1 of fresh copies of
#          testdata/scenarios/maintd-bench.yaml (20 and 80 pods), same run
#          ("## maintd").
#   scale: 200 kwok nodes and 6,000 pods: maintd's idle cost, the busiest
#          nodes drained by maintd and by kubectl drain, 20 plans through 5
#          slots ("## maintd at scale").
#   surge: ten single-replica apps under minAvailable 1 on node-1: maintd
#          with spec.surge against kubectl drain --timeout=60s
#          ("## maintd surge").
#   campaign: 1,000 kwok nodes and 30,000 pods: a MaintenanceCampaign over
#          every tenth node against single plans one after the other
#          (10 of them, extrapolated) ("## maintd campaign at scale");
#          not in the default set (it takes most of an hour).
#   moveonce: TestCampaignMoveOnce (the e2e test) alone, without -race: 20 of
#          24 nodes as sequential plans, as a campaign in one wave and in 4
#          waves; fails above 0.5x ("## maintd campaign move-once").
#   volumes: 10 StatefulSets x 3 with ReadWriteOnce volumes (attach 2 s,
#          detach 3 s) on node-1: maintd against kubectl drain, the time to
#          Drained and to kubectl's exit against the node's last
#          VolumeAttachment gone, maintd's forecast against the actual
#          ("## maintd volumes").
#   volumes-warm: the same, each maintd having drained a node of 3 pods of
#          the same driver first ("## maintd volumes, warm").
# usage: run.sh [drain] [scale] [surge] [moveonce] [volumes] [volumes-warm] [campaign]   (default: drain scale surge moveonce volumes)
#   BENCH_N=3          drains per tool (and size)
#   BENCH_SIZES=10,40  drain: Deployments x 8 replicas (10: 20 pods on node-1, 40: 80)
#   BENCH_IDLE=60s     scale: the idle window
#   BIN=dir            use prebuilt binaries (default: make build, then ./bin)
#   BENCH_CAMPAIGN_NODES=1000, BENCH_SEQUENTIAL=10   campaign: the cluster's size, the single plans timed
#   BENCH_MAINTD_ARGS="--workers 16"   scale, campaign: more flags for maintd
#   BENCH_LOGS=dir     keep maintd's and kubectl's output and each plan (default: a new temp dir, kept)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${BIN:-}" ]]; then
	make -C "$root" --no-print-directory build >/dev/null # the binaries users get
	export BIN="$root/bin"
fi
export BENCH_LOGS="${BENCH_LOGS:-$(mktemp -d /tmp/maintd-bench-logs.XXXXXX)}"
suites=("$@")
[[ ${#suites[@]} -eq 0 ]] && suites=(drain scale surge moveonce volumes)
status=0
for s in "${suites[@]}"; do
	case "$s" in
	drain) test=TestDrainVersusKubectl heading="## maintd" ;;
	scale) test=TestScale heading="## maintd at scale" ;;
	surge) test=TestSurgeVersusKubectl heading="## maintd surge" ;;
	campaign) test=TestCampaignScale heading="## maintd campaign at scale" ;;
	moveonce) test=TestCampaignMoveOnce heading="## maintd campaign move-once" ;;
	volumes) test=TestVolumesVersusKubectl heading="## maintd volumes" ;;
	volumes-warm) test=TestVolumesVersusKubectl heading="## maintd volumes, warm" ;;
	*) echo "run.sh: unknown benchmark $s (drain, scale, surge, moveonce, volumes, volumes-warm, campaign)" >&2; exit 2 ;;
	esac
	out="$tmp/$s.md"
	if [[ "$s" == moveonce ]]; then
		(cd "$root/maintd" && go test -count=1 -timeout 30m -run "^$test\$" -v . -campaign-max-ratio 0.5 -campaign-report "$out") || status=1
	else
		warm=""
		[[ "$s" == volumes-warm ]] && warm=1
		(cd "$root/maintd" && BENCH_WARM="$warm" BENCH_OUT="$out" go test -tags bench -count=1 -timeout 120m -run "^$test\$" -v ./bench/) || status=1
	fi
	if [[ -s "$out" ]]; then
		python3 "$root/plumbing/bench/section.py" "$root/docs/benchmarks.md" "$heading" "$out"
		echo "updated docs/benchmarks.md: $heading"
	fi
done
echo "maintd and kubectl logs, plans' status: $BENCH_LOGS"
exit "$status"
