#!/usr/bin/env bash
# The benchmark, in one command (docs/performance.md):
#
#   bench/run.sh                     build in Release mode (build-bench/) and run
#                                    everything (about a minute on 2 cores)
#   bench/run.sh --quick             fewer iterations (a smoke run, ~15 s)
#   bench/run.sh --only rtt,engine   some sections: rtt engine rss startup bots
#                                    concurrent scaling
#   bench/run.sh --help              this text
#
# The server is measured as it is deployed: a Release build (build-bench/,
# dynamically linked). Memory is reported as Pss and private memory (from
# /proc/PID/smaps_rollup), what a host running many games pays per game.
# SOPRA_SERVER=PATH measures another server binary (e.g. an older build)
# with the same benchmark. The table goes to stdout (and build-bench/last-run.md),
# progress to stderr. Nothing here passes or fails on timing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_BUILD_DIR:-build-bench}

case "${1:-}" in
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=(sopra-server sopra-bench sopra-fanout-floor)
if [ -f tools/CMakeLists.txt ] && grep -q "sopra-bot" tools/CMakeLists.txt; then
	targets+=(sopra-bot)
fi
cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >/dev/null

args=(--server "${SOPRA_SERVER:-$dir/sopra-server}" --example resources/example.json)
if [ -x "$dir/tools/sopra-bot" ]; then
	args+=(--bot "$dir/tools/sopra-bot")
fi
big=../shared/conformance/base/oneOfEachCfg.json # 1743 cards, the largest example
if [ -f "$big" ]; then
	args+=(--big-config "$big")
fi
echo "sopra-bench on $(nproc 2>/dev/null || echo '?') CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
"$dir/bench/sopra-bench" "${args[@]}" "$@" | tee "$dir/last-run.md"
