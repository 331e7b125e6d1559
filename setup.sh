#!/usr/bin/env bash
# Install what building, playing and the plain ./test.sh need (Debian
# packages) and build sopra-server into build/. Safe to run again: apt skips
# what is installed, cmake rebuilds only what changed. Under CI (CI=true)
# warnings are errors.
#
# The tools only the full suite uses (valgrind, clang and its fuzzer runtime,
# clang-format, clang-tidy, python3-yaml, podman/buildah/runc, strace, groff)
# are not installed here: ./test.sh --full (what CI runs) installs them itself.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
	build-essential cmake pkg-config # the compiler and the build
	libevent-dev libcjson-dev nettle-dev # the server (nettle: the journal's SHA-256)
	libncurses-dev # sopra-client, the terminal client (not built without it)
	libcmocka-dev python3 # the unit tests; the python system tests
	tmux # the client's system test plays it in a terminal (skipped without)
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	echo "setup: installing ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

werror=OFF
if [ "${CI:-}" = "true" ] || [ "${WERROR:-}" = "1" ]; then werror=ON; fi
cmake -S . -B build -DWERROR="$werror" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
echo "setup: built build/sopra-server"
