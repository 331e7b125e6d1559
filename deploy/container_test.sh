#!/usr/bin/env bash
# The container image, tested (test.sh --full; docs/deployment.md):
#
#   deploy/container_test.sh --server PATH --bot PATH
#
# 1. deploy/build-image.sh --stage: the staged root must hold the server, its
#    libraries (it must run chrooted into the root), the example configs and
#    the unprivileged user.
# 2. With podman, buildah and runc installed: build the image with buildah,
#    check it runs as 65532, play one bot game through a container, and run
#    systemtests/agones_test.py's "normal" case (Ready, health, Shutdown)
#    with the server inside the container. Without them step 2 is skipped
#    with a note (install: apt-get install podman buildah runc).
#
# The podman flags here are for this kind of machine (a sandbox: no image
# registry, crun refuses its cgroup layout, limits cannot be raised): vfs
# storage, runc, host network, explicit ulimits. A normal host needs none of
# them (docs/deployment.md shows the plain commands).
# Prints "N passed, M failed" last; exit status 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

server="" bot=""
while (($#)); do
	case $1 in
	--server) server=$2; shift 2 ;;
	--bot) bot=$2; shift 2 ;;
	*) echo "container_test.sh: unknown argument '$1'" >&2; exit 64 ;;
	esac
done
[ -x "$server" ] && [ -x "$bot" ] || { echo "usage: $0 --server PATH --bot PATH" >&2; exit 64; }

passed=0 failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

work=$(mktemp -d)
tag=localhost/sopra-server:container-test
podman_flags=(--storage-driver vfs)
cleanup() {
	if [ -n "${ctr_pid:-}" ]; then kill "$ctr_pid" 2>/dev/null; fi
	if command -v podman >/dev/null; then
		podman "${podman_flags[@]}" rmi -f "$tag" >/dev/null 2>&1
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. the staged root ------------------------------------------------------
ctx=$work/ctx
if deploy/build-image.sh --server "$server" --stage "$ctx" >/dev/null; then
	root=$ctx/rootfs
	missing=""
	for f in usr/bin/sopra-server etc/sopra/example.json etc/passwd etc/group; do
		[ -f "$root/$f" ] || missing+=" $f"
	done
	grep -q '^sopra:x:65532:65532:' "$root/etc/passwd" || missing+=" (user sopra)"
	ls "$root/etc/sopra/" | grep -q schema && missing+=" (schema must not be there)"
	if [ -n "$missing" ]; then
		bad "staged root: missing$missing"
	elif [ "$(id -u)" -eq 0 ] && out=$(chroot "$root" /usr/bin/sopra-server --version 2>&1); then
		ok "staged root: $(find "$root" -type f | wc -l) files; chrooted: $out"
	elif [ "$(id -u)" -ne 0 ]; then
		ok "staged root: $(find "$root" -type f | wc -l) files (not root: no chroot run)"
	else
		bad "staged root: the server does not run chrooted into it: $out"
	fi
else
	bad "deploy/build-image.sh --stage failed"
	finish
fi

# ---- 2. image, container, game -------------------------------------------------
if ! command -v podman >/dev/null || ! command -v buildah >/dev/null; then
	echo "SKIP image build and container game: podman/buildah not installed" \
		"(apt-get install podman buildah runc)"
	finish
fi
if command -v runc >/dev/null; then podman_flags+=(--runtime runc); fi
run_flags=(--rm --network host --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

if buildah --storage-driver vfs build -q -t "$tag" -f "$ctx/Containerfile" "$ctx" >"$work/build.log" 2>&1; then
	user=$(podman "${podman_flags[@]}" image inspect --format '{{.Config.User}}' "$tag")
	if [ "$user" = "65532:65532" ]; then ok "image built (buildah, FROM scratch), user $user"; else bad "image user '$user'"; fi
else
	bad "buildah build failed: $(tail -5 "$work/build.log")"
	finish
fi

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# one bot game through a container
port=$(free_port)
podman "${podman_flags[@]}" run "${run_flags[@]}" "$tag" --config /etc/sopra/example.json \
	--port "$port" --seed 5 --timeout 10 >"$work/ctr.out" 2>&1 &
ctr_pid=$!
for _ in $(seq 1 100); do
	grep -q "listening on" "$work/ctr.out" && break
	sleep 0.1
done
uid=""
spid=$(pgrep -f "^/usr/bin/sopra-server --config /etc/sopra/example.json --port $port " | head -1)
[ -n "$spid" ] && uid=$(awk '/^Uid:/ { print $2 }' "/proc/$spid/status" 2>/dev/null)
"$bot" --port "$port" --name Anna --seed 1 --quiet >"$work/b1.out" 2>"$work/b1.err" &
b1_pid=$!
for _ in $(seq 1 100); do # the second bot only after the first registered
	grep -q "registered" "$work/b1.out" && break
	sleep 0.1
done
line=$(head -1 "$work/b1.out")
"$bot" --port "$port" --name Ben --seed 2 --start --quiet 2>"$work/b2.err" >/dev/null
b2=$?
wait "$b1_pid"
b1=$?
wait "$ctr_pid"
crc=$?
ctr_pid=""
if [ "$line" = "registered Anna" ] && [ $b1 -eq 0 ] && [ $b2 -eq 0 ] && [ $crc -eq 0 ] &&
	grep -q "result=\(win\|lose\)" "$work/b1.err" && grep -q "result=\(win\|lose\)" "$work/b2.err" &&
	[ "$uid" = 65532 ]; then
	ok "bot game through the container: $(grep -o 'result=[a-z]*' "$work/b2.err"), container exit 0, server uid $uid"
else
	bad "bot game through the container: bots $b1/$b2 ($line), container exit $crc, uid '$uid'"
	sed 's/^/  /' "$work/ctr.out" "$work/b1.err" "$work/b2.err" | tail -20
fi

# the Agones lifecycle with the server in the container
cat >"$work/server-in-container" <<EOF
#!/bin/sh
exec podman ${podman_flags[*]} run ${run_flags[*]} -e AGONES_SDK_HTTP_PORT $tag "\$@"
EOF
chmod +x "$work/server-in-container"
if python3 systemtests/agones_test.py --server "$work/server-in-container" --bot "$bot" \
	--config /etc/sopra/example.json normal >"$work/agones.out" 2>&1; then
	ok "Agones lifecycle in the container: $(grep '^PASS' "$work/agones.out")"
else
	bad "Agones lifecycle in the container"
	sed 's/^/  /' "$work/agones.out" | tail -10
fi
finish
