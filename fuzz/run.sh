#!/usr/bin/env bash
# Bounded fuzzing run (CI or local). See fuzz/README.md.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Configures a clang build in build-fuzz/ (override: FUZZ_BUILD_DIR), builds
# the libFuzzer targets and runs each for SECONDS (default 60) on a copy of
# its committed corpus, so the committed corpus never grows by itself.
# Targets run one after the other; FUZZ_PARALLEL=1 runs them all at once
# (one process each). Exits non-zero if any target crashed, leaked, timed
# out or ran out of memory; the input is then in
# build-fuzz/fuzz-run/<target>/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
	echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2
	exit 2
fi
all_targets=(fuzz_json fuzz_proto_decode fuzz_config fuzz_game fuzz_journal)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
	case " ${all_targets[*]} " in
	*" $t "*) ;;
	*) echo "fuzz/run.sh: unknown target $t (known: ${all_targets[*]})" >&2; exit 2 ;;
	esac
done

build=${FUZZ_BUILD_DIR:-build-fuzz}
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null; then
	echo "fuzz/run.sh: $cc not found (apt-get install clang libclang-rt-N-dev, N: clang's major version)" >&2
	exit 2
fi

CC="$cc" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOPRA_FUZZ=ON >/dev/null
if ! grep -q '^SOPRA_HAVE_LIBFUZZER:INTERNAL=1' "$build/CMakeCache.txt"; then
	echo "fuzz/run.sh: $cc cannot link -fsanitize=fuzzer in $build" >&2
	echo "  (Debian: apt-get install libclang-rt-N-dev, N: clang's major version;" >&2
	echo "   a build dir configured with another compiler must be removed first)" >&2
	exit 2
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
# dictionary entries for the command names and parameter keys (cmd_table.h)
command_words=$(python3 fuzz/make_corpus.py --dict-words)

max_len() {
	case "$1" in
	fuzz_proto_decode) echo 8192 ;;
	fuzz_config) echo 32768 ;;
	fuzz_journal) echo 16384 ;; # the seed journals carry their configuration
	*) echo 4096 ;;
	esac
}

run_one() {
	local t=$1
	local work="$build/fuzz-run/$t"
	rm -rf "$work/artifacts" # only this run's findings count
	mkdir -p "$work/corpus" "$work/artifacts"
	# copy the committed corpus in (keeping what earlier local runs found)
	cp -n fuzz/corpus/"$t"/* "$work/corpus/" 2>/dev/null || true
	local dict=()
	if [ -f "fuzz/$t.dict" ]; then
		cp "fuzz/$t.dict" "$work/dict"
		case $t in # the targets that read command lines get the command table's words
		fuzz_proto_decode | fuzz_journal) echo "$command_words" >>"$work/dict" ;;
		esac
		dict=(-dict="$work/dict")
	fi
	echo "fuzz/run.sh: $t for ${seconds}s (log: $work/log)"
	local rc=0
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
		"$build/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 \
		-max_len="$(max_len "$t")" "${dict[@]}" -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1 || rc=$?
	echo "$rc" >"$work/rc"
}

rm -f "$build"/fuzz-run/*/rc
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
	pids=()
	for t in "${targets[@]}"; do
		run_one "$t" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || true; done
else
	for t in "${targets[@]}"; do run_one "$t"; done
fi

failed=0
echo
for t in "${targets[@]}"; do
	work="$build/fuzz-run/$t"
	rc=$(cat "$work/rc" 2>/dev/null || echo 1)
	stats=$(grep -E '^#[0-9]+' "$work/log" | tail -1 || true)
	execs=$(grep -E '^stat::number_of_executed_units' "$work/log" | awk '{print $2}' || true)
	rate=$(grep -E '^stat::average_exec_per_sec' "$work/log" | awk '{print $2}' || true)
	printf '%-18s rc=%s execs=%s exec/s=%s\n  %s\n' "$t" "$rc" "${execs:-?}" "${rate:-?}" "$stats"
	found=$(find "$work/artifacts" -type f 2>/dev/null | head -5)
	if [ "$rc" != 0 ] || [ -n "$found" ]; then
		failed=1
		echo "  FAILED: see $work/log"
		grep -E -A1 'fuzz check failed' "$work/log" | head -2 | sed 's/^/    /' || true
		grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' \
			"$work/log" | head -3 | sed 's/^/    /' || true
		for f in $found; do
			echo "  input: $f"
			echo "    reproduce: $build/fuzz/$t $f"
			echo "    keep as a test: cp $f fuzz/regressions/$t/<name>"
		done
	fi
done
exit "$failed"
