#!/usr/bin/env bash
# The density benchmark in one command (docs/performance.md, "Density"):
#
#   bench/density.sh                 1,000, 2,500 and 5,000 concurrent games, 20 s
#                                    each (about 3-4 minutes with the start-ups)
#   bench/density.sh --sweep         then 2,500 more at a time up to the first
#                                    limit (memory reserve, processes, ports, ...)
#   bench/density.sh --floor --games 1000         at each level the floor (one
#                                    sopra-fanout-floor per game) first, then
#                                    the servers
#   bench/density.sh --games 200 --seconds 5      any sopra-density options
#
# Builds the server as it is deployed (Release, README "Release build") into
# build-bench/ (like bench/run.sh) and runs bench/sopra-density; the table
# goes to stdout and build-bench/density-last-run.md, progress to stderr.
# SOPRA_SERVER=PATH measures another server binary.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_BUILD_DIR:-build-bench}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target sopra-server sopra-density sopra-fanout-floor >/dev/null
echo "sopra-density on $(nproc 2>/dev/null || echo '?') CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
"$dir/bench/sopra-density" --server "${SOPRA_SERVER:-$dir/sopra-server}" "$@" | tee "$dir/density-last-run.md"
