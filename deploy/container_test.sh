#!/usr/bin/env bash
# The container image, tested (test.sh --full; docs/deployment.md):
#
#   deploy/container_test.sh --server PATH --bot PATH
#
# 1. deploy/build-image.sh --stage: the staged root must hold the server, its
#    libraries (it must run chrooted into the root), the example configs, the
#    unprivileged user and the journal directory.
# 2. With podman, buildah and runc installed:
#    - the host's podman, with its own defaults, is used first (podman
#      images: that creates its storage with the default driver, as on any
#      host that ran a container), and must show the same images,
#      containers and volumes at the end: everything below works in a
#      storage of its own, --root/--runroot/--tmpdir under this test's
#      scratch folder with the vfs driver, never /var/lib/containers;
#    - build the image with deploy/build-image.sh --storage (buildah),
#      check it runs as 65532 and declares the journal volume;
#    - its default arguments start a table that journals in /var/lib/sopra;
#    - play one bot game through a container;
#    - run systemtests/agones_test.py's "normal" case (Ready, health, the
#      seed annotation, Shutdown) with the server inside the container;
#    - crash recovery (deploy/recovery_test.py container): a container with
#      --restart=on-failure and a named volume for its journals, its server
#      SIGKILLed mid-game: podman restarts it, it resumes the game, and the
#      bots (--reconnect) finish with the streams of an uninterrupted game.
#    Without them step 2 is skipped with a note (install: apt-get install
#    podman buildah runc).
#
# The podman flags here are for this kind of machine (a sandbox: no image
# registry, crun refuses its cgroup layout, limits cannot be raised): runc,
# host network, explicit ulimits; and the storage of its own. A normal host
# needs none of them (docs/deployment.md shows the plain commands).
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
replay=$(dirname "$bot")/sopra-replay

passed=0 failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# short: podman's sockets live under the run root, and socket paths are
# limited to 108 bytes
work=$(mktemp -d /tmp/sopra-ct.XXXXXX)
storage=$work/storage
tag=localhost/sopra-server:container-test
podman_flags=(--root "$storage/root" --runroot "$storage/run" --tmpdir "$storage/tmp"
	--storage-driver vfs)
ctr_pid=""
cleanup() {
	if [ -n "$ctr_pid" ]; then kill "$ctr_pid" 2>/dev/null; fi
	if command -v podman >/dev/null && [ -d "$storage" ]; then
		podman "${podman_flags[@]}" rm -a -f -v >/dev/null 2>&1
		podman "${podman_flags[@]}" volume prune -f >/dev/null 2>&1
		podman "${podman_flags[@]}" rmi -a -f >/dev/null 2>&1
	fi
	# nothing of the storage may stay mounted before it goes
	grep -o " $work/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount "$m"; done
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
	[ -d "$root/var/lib" ] && [ -d "$ctx/state" ] || missing+=" (the journal directory)"
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
run_flags=(--network host --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
pm() { podman "${podman_flags[@]}" "$@"; }

# The host's podman with its defaults, as a host that ran containers has
# used it. Its view before and after this test must be the same.
host_view() {
	podman images --format '{{.ID}} {{.Repository}}:{{.Tag}}' &&
		podman ps -a --format '{{.ID}} {{.Names}} {{.Status}}' &&
		podman volume ls --format '{{.Name}}'
}
host_cache=/var/lib/containers/cache
host_cache_was=0
[ -e "$host_cache" ] && host_cache_was=1
if host_before=$(host_view 2>"$work/host.err"); then
	host_ok=1
else
	host_ok=0
	echo "NOTE the host's podman does not run with its defaults here:" \
		"$(tail -1 "$work/host.err"); the storage of its own is used all the same"
fi

if BUILDER=buildah deploy/build-image.sh --server "$server" --tag "$tag" --storage "$storage" \
	>"$work/build.log" 2>&1; then
	user=$(pm image inspect --format '{{.Config.User}}' "$tag")
	volumes=$(pm image inspect --format '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}' "$tag")
	if [ "$user" = "65532:65532" ] && [ "$volumes" = "/var/lib/sopra " ]; then
		ok "image built (deploy/build-image.sh --storage, buildah, FROM scratch), user $user, volume $volumes"
	else
		bad "image user '$user', volumes '$volumes'"
	fi
else
	bad "deploy/build-image.sh --storage failed: $(tail -5 "$work/build.log")"
	finish
fi
# containers/image keeps a blob-info cache at /var/lib/containers/cache
# whatever --root says; the build made it only if it was not there
if [ "$host_cache_was" = 0 ] && [ -e "$host_cache" ]; then
	rm -rf "$host_cache"
	rmdir /var/lib/containers 2>/dev/null
fi

# the image's default arguments: a table journaling in its volume (no
# network of its own here: its port 7777 stays inside the container)
if cid=$(pm run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$tag"); then
	for _ in $(seq 1 100); do
		pm logs "$cid" 2>&1 | grep -q "listening on" && break
		sleep 0.1
	done
	pm stop -t 10 "$cid" >/dev/null
	code=$(pm inspect --format '{{.State.ExitCode}}' "$cid")
	logs=$(pm logs "$cid" 2>&1)
	if [ "$code" = 0 ] &&
		grep -q "journal-dir: a new game, journaled in /var/lib/sopra/game-000001.jnl" <<<"$logs" &&
		grep -q "seed -\{0,1\}[0-9]* (random" <<<"$logs" && grep -q ":7777 " <<<"$logs"; then
		ok "the image's default arguments: a table on 7777 with a random seed, journaling in /var/lib/sopra; SIGTERM, exit 0"
	else
		bad "the image's default arguments: exit $code"
		sed 's/^/  /' <<<"$logs" | tail -10
	fi
	pm rm -v "$cid" >/dev/null
else
	bad "the image's default arguments: podman run failed"
fi

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# one bot game through a container
port=$(free_port)
pm run --rm "${run_flags[@]}" "$tag" --config /etc/sopra/example.json \
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
{
	echo '#!/bin/sh'
	printf 'exec podman'
	printf ' %q' "${podman_flags[@]}" run --rm "${run_flags[@]}" -e AGONES_SDK_HTTP_PORT "$tag"
	echo ' "$@"'
} >"$work/server-in-container"
chmod +x "$work/server-in-container"
if python3 systemtests/agones_test.py --server "$work/server-in-container" --bot "$bot" \
	--config /etc/sopra/example.json normal >"$work/agones.out" 2>&1; then
	ok "Agones lifecycle in the container: $(grep '^PASS' "$work/agones.out")"
else
	bad "Agones lifecycle in the container"
	sed 's/^/  /' "$work/agones.out" | tail -10
fi

# crash recovery through the image
replay_opt=()
[ -x "$replay" ] && replay_opt=(--replay "$replay")
if python3 deploy/recovery_test.py container --bot "$bot" --image "$tag" "${replay_opt[@]}" \
	--podman "$(printf '%q ' podman "${podman_flags[@]}")" --run-flags "${run_flags[*]}" \
	>"$work/recovery.out" 2>&1; then
	ok "$(sed -n 's/^PASS //p' "$work/recovery.out")"
else
	bad "crash recovery in the container"
	sed 's/^/  /' "$work/recovery.out" | tail -15
fi

# the host's podman saw none of it
if [ "$host_ok" = 1 ]; then
	if host_after=$(host_view 2>&1) && [ "$host_after" = "$host_before" ]; then
		ok "the host's podman (default storage, driver $(podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null)) is untouched"
	else
		bad "the host's podman changed: before: $host_before; after: $host_after"
	fi
fi
finish
