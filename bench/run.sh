#!/usr/bin/env bash
# The benchmark, in one command (docs/performance.md):
#
#   bench/run.sh                     build in Release mode (build-bench/) and run
#                                    everything (about a minute on 2 cores)
#   bench/run.sh --quick             fewer iterations (a smoke run, ~15 s)
#   bench/run.sh --only rtt,engine   some sections: rtt engine rss startup bots
#                                    concurrent scaling
#
# The server is measured as it is deployed: a Release build linked statically
# (SOPRA_STATIC=ON, in build-bench/); the memory and start-up sections also
# show the dynamically linked Release build (build-bench-dynamic/) next to
# it. SOPRA_SERVER=PATH measures another server binary (e.g. an older build)
# with the same benchmark. The table goes to stdout (and build-bench/last-run.md),
# progress to stderr. Nothing here passes or fails on timing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_BUILD_DIR:-build-bench}

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSOPRA_STATIC=ON >/dev/null
cmake -S . -B "$dir-dynamic" -DCMAKE_BUILD_TYPE=Release -DSOPRA_STATIC=OFF >/dev/null
cmake --build "$dir-dynamic" -j"$(nproc 2>/dev/null || echo 2)" --target sopra-server >/dev/null
targets=(sopra-server sopra-bench sopra-fanout-floor)
if [ -f tools/CMakeLists.txt ] && grep -q "sopra-bot" tools/CMakeLists.txt; then
	targets+=(sopra-bot)
fi
cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >/dev/null

args=(--server "${SOPRA_SERVER:-$dir/sopra-server}" --example resources/example.json)
if [ -z "${SOPRA_SERVER:-}" ]; then
	args+=(--server-dynamic "$dir-dynamic/sopra-server")
fi
if [ -x "$dir/tools/sopra-bot" ]; then
	args+=(--bot "$dir/tools/sopra-bot")
fi
big=../shared/conformance/base/oneOfEachCfg.json # 1743 cards, the largest example
if [ -f "$big" ]; then
	args+=(--big-config "$big")
fi
echo "sopra-bench on $(nproc 2>/dev/null || echo '?') CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
"$dir/bench/sopra-bench" "${args[@]}" "$@" | tee "$dir/last-run.md"
