#!/usr/bin/env bash
# The benchmark, in one command (docs/performance.md):
#
#   bench/run.sh                     build in Release mode (build-bench/) and run
#                                    everything (1-3 minutes on 2 cores)
#   bench/run.sh --quick             fewer iterations (a smoke run)
#   bench/run.sh --only rtt,engine   some sections: rtt engine api rss startup
#                                    bots concurrent scaling journal (journal: the
#                                    round trips again with --journal, once
#                                    per --journal-sync policy)
#   bench/run.sh --help              this text
#
# The server is measured as it is deployed: a Release build (build-bench/;
# libevent and nettle linked statically, cJSON and libc shared). Memory is
# reported as Pss and private memory (from /proc/PID/smaps_rollup), what a
# host running many games pays per game.
# SOPRA_SERVER=PATH measures another server binary (e.g. an older build)
# with the same benchmark. SOPRA_COMPARE=PATH measures a second server in the
# round-trip sections, in the same chunks as the first (the two builds
# interleaved in one run), and gives the ratio of the two. The table goes to stdout (and build-bench/last-run.md),
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
compare=${SOPRA_COMPARE:-}
case "$compare" in /* | "") ;; *) compare=$PWD/$compare ;; esac
[ -n "$compare" ] && args+=(--compare "$compare")
if [ -x "$dir/tools/sopra-bot" ]; then
	args+=(--bot "$dir/tools/sopra-bot")
fi
big=../shared/conformance/base/oneOfEachCfg.json # 1743 cards, the largest example
if [ -f "$big" ]; then
	args+=(--big-config "$big")
fi
# "journal" is this script's own section: it is taken out of --only
quick=
only=
all=1
bench_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--only)
		only=${2:-}
		all=
		shift 2
		;;
	--only=*)
		only=${1#--only=}
		all=
		shift
		;;
	*)
		[ "$1" = --quick ] && quick=--quick
		bench_args+=("$1")
		shift
		;;
	esac
done
journal=$all
case ",$only," in *,journal,*) journal=1 ;; esac
only=$(echo ",$only," | sed 's/,journal,/,/g; s/^,*//; s/,*$//')
[ -n "$only" ] && bench_args+=(--only "$only")
echo "sopra-bench on $(nproc 2>/dev/null || echo '?') CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
: >"$dir/last-run.md"
if [ -n "$all" ] || [ -n "$only" ]; then
	"$dir/bench/sopra-bench" "${args[@]}" "${bench_args[@]}" | tee "$dir/last-run.md"
fi
[ -n "$journal" ] || exit 0

# The journal (docs/performance.md, "Journal"): the round-trip
# section again, the server started through a wrapper that adds --journal and
# one --journal-sync policy; the echo floors are measured in the same run,
# with a third one, the blocking echo that appends each line to a file
# before answering (--journal-floor: what one write(2) costs). The
# journals go to $dir/journals, on the disk the build is on (an fdatasync
# costs there what it costs a deployed server on the same kind of disk).
# "always" waits for the disk on every command: it runs with --quick.
jdir=$PWD/$dir/journals
server=${SOPRA_SERVER:-$dir/sopra-server}
case "$server" in /*) ;; *) server=$PWD/$server ;; esac
wrapper=$PWD/$dir/journal-server.sh
printf '#!/usr/bin/env bash\nexec "%s" --journal "%s/$$.jnl" --journal-sync "$SOPRA_JOURNAL_SYNC" "$@"\n' \
	"$server" "$jdir" >"$wrapper"
chmod +x "$wrapper"
compare_args=()
if [ -n "$compare" ]; then
	cwrapper=$PWD/$dir/journal-compare.sh
	printf '#!/usr/bin/env bash\nexec "%s" --journal "%s/$$.jnl" --journal-sync "$SOPRA_JOURNAL_SYNC" "$@"\n' \
		"$compare" "$jdir" >"$cwrapper"
	chmod +x "$cwrapper"
	compare_args=(--compare "$cwrapper")
fi
fs=$(df -T "$dir" 2>/dev/null | awk 'NR == 2 { print $2 }')
for policy in turn never always; do
	rm -rf "$jdir"
	mkdir -p "$jdir"
	q=$quick
	[ "$policy" = always ] && q=--quick
	echo "journal, --journal-sync $policy (journals on $fs)" >&2
	# the rows of the table get "journal POLICY: " in front
	SOPRA_JOURNAL_SYNC=$policy "$dir/bench/sopra-bench" --server "$wrapper" --only rtt $q \
		--journal-floor "$jdir/floor.jnl" "${compare_args[@]}" |
		awk -v p="journal $policy: " 'BEGIN { FS = OFS = "|" }
			NF > 3 && $2 !~ /^ *what *$/ && $2 !~ /^-+$/ { sub(/^ /, " " p, $2) }
			{ print }' | tee -a "$dir/last-run.md"
	du -sk "$jdir" | awk -v p="$policy" '{ printf "journal %s: %d KiB of journals\n", p, $1 }' >&2
done
rm -rf "$jdir" "$wrapper" ${cwrapper:+"$cwrapper"}
