#!/usr/bin/env bash
# Install the build dependencies (Debian packages) and build sopra-server
# into build/. Safe to run again: apt skips what is installed, cmake
# rebuilds only what changed. Under CI (CI=true) warnings are errors.
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake pkg-config libevent-dev libcjson-dev libcmocka-dev nettle-dev
          valgrind clang libclang-rt-14-dev clang-format clang-tidy
          python3-yaml podman buildah runc libncurses-dev tmux)
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
