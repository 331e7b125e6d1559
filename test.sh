#!/usr/bin/env bash
# Run the whole test suite.
#
#   ./test.sh            unit tests, scenario runner self-test, system tests
#                        (own scenarios + ../shared/conformance), soak, fuzz
#                        corpus replay -- on the normal build in build/
#   ./test.sh --full     the above, plus the same suite on an ASan+UBSan build
#                        (build-asan/), the suites that read the command
#                        table on a build with docs/design.md's example
#                        command (build-example/), valgrind over the unit
#                        tests and the conformance scenarios, a short fuzz run,
#                        a clang-format check of src/ and include/,
#                        clang-tidy over src/ (warnings are errors) and
#                        ./setup.sh on a fresh clone (tests/fresh_clone_test.sh:
#                        install, build, a bot game; serving in a terminal).
#                        It first installs the tools only these steps use
#                        (Debian packages, as setup.sh does: valgrind, clang
#                        and its fuzzer runtime, clang-format, clang-tidy,
#                        python3-yaml, podman/buildah/runc, strace,
#                        chromium, chromium-driver and python3-selenium for
#                        the browser test, groff-base, man-db). CI (CI=true)
#                        always runs --full.
#
# Extra arguments after the options go to every ctest call (e.g. -R system).
# The last line is a summary "suites: N passed, M failed". Before it, a
# "skipped:" section lists every test a suite skipped and why (e.g. the
# conformance scenarios when ../shared is not next to the repository). With
# CI=true a missing ../shared/conformance is a failure.
set -uo pipefail
cd "$(dirname "$0")"

full=0
if [ "${CI:-}" = "true" ]; then full=1; fi
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
werror=OFF
if [ "${CI:-}" = "true" ] || [ "${WERROR:-}" = "1" ]; then werror=ON; fi
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
failures=()
step() { # step NAME COMMAND...: run one suite, count it
	local name=$1
	shift
	echo "=== $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "=== $name: FAILED"
	fi
}

skipped=()  # one line per skip: "<build dir>: <test>: <what and why>"
nskipped=0  # the tests (scenarios, unit tests) skipped in all
skips() { # skips DIR: note what the last ctest run in DIR skipped
	local log=$1/Testing/Temporary/LastTest.log n line
	[ -f "$log" ] || return 0
	# sopra-scenario prints "SKIPPED: N ..."; cmocka "[  SKIPPED ] name" (twice)
	while IFS=$'\t' read -r n line; do
		skipped+=("$1: $line")
		nskipped=$((nskipped + n))
	done < <(awk -v why="$([ -d ../shared ] || echo '; ../shared is not next to the repository')" '
		/^[0-9]+\/[0-9]+ Test: / { test = $3 }
		/^SKIPPED: [0-9]+ / { print $2 "\t" test ": " substr($0, 10) }
		/^\[  SKIPPED \] / && !/listed below/ && !seen[test, $4]++ {
			print 1 "\t" test ": " $4 " (the test skipped itself" why ")" }' "$log")
}

build() { # build DIR [cmake options...]
	local dir=$1
	shift
	{ [ -f "$dir/CMakeCache.txt" ] || cmake -S . -B "$dir" -DWERROR="$werror" "$@"; } &&
		cmake --build "$dir" -j"$jobs"
}

# The full suite's tools: setup.sh installs only what building, playing and
# the plain run need. Same apt logic as setup.sh.
full_packages=(valgrind clang clang-format clang-tidy python3-yaml podman buildah runc strace
               chromium chromium-driver python3-selenium # the browser test (tests/web)
               groff-base man-db)
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_updated=0
apt_update() { # once per run
	[ "$apt_updated" = 1 ] && return 0
	$sudo apt-get update -qq && apt_updated=1
}
install_packages() { # install_packages PKG...: apt-get install the missing ones
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	echo "test.sh: installing ${missing[*]}"
	apt_update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}
full_dependencies() {
	install_packages "${full_packages[@]}" || return 1
	# libFuzzer (fuzz/run.sh) is in the compiler-rt package of the installed
	# clang's major version (libclang-rt-14-dev with Debian 12's clang 14,
	# -19- with Debian 13's clang 19); before LLVM 14 it came with clang-N.
	local major rt
	major=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -1)
	[ -n "$major" ] || { echo "test.sh: cannot tell clang's version"; return 1; }
	rt=libclang-rt-$major-dev
	dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q "install ok installed" && return 0
	apt_update || return 1
	if apt-cache show "$rt" >/dev/null 2>&1; then
		install_packages "$rt"
	else
		echo "test.sh: no package $rt here; libFuzzer should come with clang-$major"
	fi
}

shared() { # CI runs the conformance suites: ../shared must be there
	[ -d ../shared/conformance ] && return 0
	echo "../shared/conformance not found next to the repository; CI=true needs it" \
		"(the conformance scenarios would be skipped)"
	return 1
}
if [ "${CI:-}" = "true" ]; then step "../shared (CI)" shared; fi
if [ "$full" = 1 ]; then step "dependencies (--full)" full_dependencies; fi

step "build" build build
step "tests" ctest --test-dir build --output-on-failure -j"$jobs" "$@"
skips build

if [ "$full" = 1 ]; then
	step "build (ASan+UBSan)" build build-asan -DSANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	step "tests (ASan+UBSan)" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir build-asan --output-on-failure -j"$jobs" "$@"
	skips build-asan
	# docs/design.md, "Adding a command": a build with the example command
	# Wait compiled in, its tests and the suites that read the command table
	step "build (example command)" build build-example -DSOPRA_EXAMPLE_COMMAND=ON
	step "tests (example command)" ctest --test-dir build-example --output-on-failure \
		-j"$jobs" -R 'example_command|unit_|fuzz_replay|system_own|system_runner' "$@"
	skips build-example
	step "deploy manifests (deploy/check_manifests.py)" python3 deploy/check_manifests.py \
		--server build/sopra-server --bot build/tools/sopra-bot
	step "container image (deploy/container_test.sh)" deploy/container_test.sh \
		--server build/sopra-server --bot build/tools/sopra-bot
	if command -v valgrind >/dev/null; then
		vg_unit() {
			local rc=0 t
			# every unit test executable, wherever its folder's CMakeLists puts it
			for t in build/test_* build/*/test_*; do
				[ -f "$t" ] && [ -x "$t" ] || continue
				valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
					--error-exitcode=99 "$t" >/dev/null || { echo "valgrind: $t"; rc=1; }
			done
			return $rc
		}
		step "valgrind (unit tests)" vg_unit
		dirs=(systemtests/scenarios)
		for e in base revised; do
			if [ -d "../shared/conformance/$e" ]; then
				dirs+=("../shared/conformance/$e")
			else
				skipped+=("valgrind (scenarios): ../shared/conformance/$e not found, not run")
			fi
		done
		step "valgrind (scenarios)" build/systemtests/sopra-scenario --valgrind \
			--server build/sopra-server "${dirs[@]}"
	fi
	step "format (.clang-format)" clang-format --dry-run --Werror src/*.c src/*.h include/sopra/*.h
	tidy() { # its "N warnings generated" lines are about system headers, filtered out
		clang-tidy -p build --quiet src/*.c 2> >(grep -v ' warnings\? generated\.$' >&2)
	}
	step "clang-tidy (.clang-tidy)" tidy
	if [ -x fuzz/run.sh ]; then
		step "fuzz (short run)" fuzz/run.sh "${FUZZ_SECONDS:-60}"
	fi
	step "fresh clone: ./setup.sh (tests/fresh_clone_test.sh)" tests/fresh_clone_test.sh
fi

if ((${#skipped[@]})); then
	echo "skipped: $nskipped test(s) in the ctest runs; the suites passed without them:"
	printf '  %s\n' "${skipped[@]}"
fi
if [ "$full" = 0 ]; then
	echo "not run: the --full suites (ASan+UBSan, the example command, deploy manifests," \
		"the container image, valgrind, clang-format, clang-tidy, fuzzing, a fresh clone);" \
		"./test.sh --full runs them, as CI does"
fi
if ((failed)); then
	echo "failed suites: ${failures[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
