#!/usr/bin/env bash
# Build the sopra-server container image (deploy/Containerfile,
# docs/deployment.md).
#
#   deploy/build-image.sh [--server PATH] [--tag NAME] [--stage DIR | --storage DIR]
#
#   --server PATH  the sopra-server binary to package (default:
#                  build-release/sopra-server, the Release build of the
#                  README, built first if it is not there)
#   --tag NAME     the image name (default sopra-server:latest)
#   --stage DIR    only stage the build context into DIR (an empty or new
#                  directory) and stop: DIR/Containerfile, DIR/rootfs/ and
#                  DIR/state/, ready for `podman build DIR` or `buildah bud DIR`
#   --storage DIR  build into a container storage of its own under DIR
#                  (created if missing), not the host's: --root DIR/root
#                  --runroot DIR/run --storage-driver vfs (podman also
#                  --tmpdir DIR/tmp). Podman sees the image only with the
#                  same options (deploy/container_test.sh uses this).
#
# The image starts FROM scratch: rootfs/ holds the binary as
# /usr/bin/sopra-server, every shared library it needs (from ldd; for the
# Release build, which links libevent, nettle and zlib in: libc, libcjson, the
# loader) at its own path, the example
# configurations under /etc/sopra/ and an /etc/passwd and /etc/group with
# the user sopra (65532), which the image runs as; state/ becomes the
# journal directory /var/lib/sopra, owned by that user.
#
# BUILDER: the build command (default: podman, else buildah; e.g.
# BUILDER=buildah).
set -euo pipefail
cd "$(dirname "$0")/.."

server=""
tag="sopra-server:latest"
stage=""
storage=""
while (($#)); do
	case $1 in
	--server) server=$2; shift 2 ;;
	--tag) tag=$2; shift 2 ;;
	--stage) stage=$2; shift 2 ;;
	--storage) storage=$2; shift 2 ;;
	-h | --help) sed -n '2,32p' "$0"; exit 0 ;;
	*) echo "build-image.sh: unknown argument '$1'" >&2; exit 64 ;;
	esac
done

if [ -z "$server" ]; then
	server=build-release/sopra-server
	if [ ! -x "$server" ]; then
		cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
		cmake --build build-release --target sopra-server -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
	fi
fi
[ -x "$server" ] || { echo "build-image.sh: no executable $server" >&2; exit 1; }
if [ -n "$stage" ] && [ -n "$storage" ]; then
	echo "build-image.sh: --stage only stages; --storage is for a build" >&2
	exit 64
fi

tmp=""
if [ -z "$stage" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	stage=$tmp
fi
mkdir -p "$stage"
if [ -n "$(ls -A "$stage")" ]; then
	echo "build-image.sh: $stage is not empty" >&2
	exit 1
fi
root=$stage/rootfs
mkdir -p "$root/usr/bin" "$root/etc/sopra" "$root/var/lib" "$stage/state"
chmod 0700 "$stage/state"
install -m 0755 "$server" "$root/usr/bin/sopra-server"

# Shared libraries and the program interpreter, at the paths the binary
# looks for them (a static binary: "not a dynamic executable", nothing).
if ldd "$server" >/dev/null 2>&1; then
	ldd "$server" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' |
		while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
fi

for f in resources/*.json; do
	case $f in *schema*) continue ;; esac
	install -m 0644 "$f" "$root/etc/sopra/"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nsopra:x:65532:65532:sopra-server:/nonexistent:/sbin/nologin\n' \
	>"$root/etc/passwd"
printf 'root:x:0:\nsopra:x:65532:\n' >"$root/etc/group"
cp deploy/Containerfile "$stage/Containerfile"

if [ -z "$tmp" ]; then
	echo "build-image.sh: staged $stage (Containerfile, state/, rootfs/: $(find "$root" -type f | wc -l) files)"
	exit 0
fi

builder=${BUILDER:-}
if [ -z "$builder" ]; then
	if command -v podman >/dev/null; then
		builder=podman
	elif command -v buildah >/dev/null; then
		builder=buildah
	else
		echo "build-image.sh: neither podman nor buildah found (apt-get install podman)" >&2
		exit 1
	fi
fi
global=()
if [ -n "$storage" ]; then
	mkdir -p "$storage"
	storage=$(cd "$storage" && pwd)
	global=(--root "$storage/root" --runroot "$storage/run" --storage-driver vfs)
	case ${builder%% *} in
	*podman) global+=(--tmpdir "$storage/tmp") ;;
	esac
fi
# podman and buildah both take "[global options] build -t TAG -f FILE CONTEXT"
# (BUILDER is split into words on purpose)
# shellcheck disable=SC2086
$builder "${global[@]}" build -t "$tag" -f "$stage/Containerfile" "$stage"
echo "build-image.sh: built $tag from $server"
