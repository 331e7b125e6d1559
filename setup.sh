#!/usr/bin/env bash
# The first of the README's two commands: install what is missing (Debian
# packages), build into build/, then run the server's main job.
#
#   ./setup.sh               install and build; then, when stdin is a
#                            terminal, serve the default game (--serve).
#                            Without a terminal it stops after the build and
#                            says so, so a script is never kept waiting.
#   ./setup.sh --build-only  install and build, nothing else (for scripts:
#                            say it explicitly)
#   ./setup.sh --serve       install, build and serve the default game even
#                            without a terminal
#   ./setup.sh --web         install, build and serve the default game to
#                            browsers too: the page on http://localhost:8080/
#                            (play with up to 3 bot team mates, watch,
#                            replay; docs/web.md), one game after another
#   ./setup.sh --bot-game    install, build, and play one game of two
#                            sopra-bots on the default game to its end; exit
#                            0 when it ended and its journal replays. With
#                            CI=true this is what ./setup.sh does.
#
# Serving: build/sopra-server with no options (the built-in
# resources/example.json, port 7777, a random seed, a 30 s timeout), in the
# foreground, one game after another until Ctrl-C. Each game is journaled
# to $XDG_STATE_HOME/sopra-server/game-TIME-PID-N.jnl (default ~/.local/state) so
# it can be replayed; a game nobody joined leaves no journal.
#
# Safe to run again: apt skips what is installed, cmake rebuilds only what
# changed. Under CI (CI=true) or with WERROR=1, warnings are errors.
#
# The tools only the full suite uses (valgrind, clang and its fuzzer runtime,
# clang-format, clang-tidy, python3-yaml, podman/buildah/runc, strace,
# chromium with chromium-driver and python3-selenium for the browser test, groff)
# are not installed here: ./test.sh --full (what CI runs) installs them itself.
set -euo pipefail
cd "$(dirname "$0")"

mode=""
case "${1:-}" in
"") ;;
--build-only) mode=build ;;
--serve) mode=serve ;;
--web) mode=web ;;
--bot-game) mode=bot-game ;;
-h | --help)
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit 0
	;;
*)
	echo "setup.sh: unknown option '$1'" >&2
	echo "Usage: ./setup.sh [--build-only | --serve | --web | --bot-game]" >&2
	echo "Try './setup.sh --help' for more information." >&2
	exit 64
	;;
esac
if [ $# -gt 1 ]; then
	echo "setup.sh: one option at most (got: $*)" >&2
	exit 64
fi
if [ -z "$mode" ]; then
	if [ "${CI:-}" = "true" ]; then
		mode=bot-game
	elif [ -t 0 ]; then
		mode=serve
	else
		mode=build-notty
	fi
fi

install_packages() {
	local packages=(
		build-essential cmake pkg-config # the compiler and the build
		libevent-dev libcjson-dev nettle-dev zlib1g-dev # the server (nettle: the journal's SHA-256; zlib: its Config line)
		libncurses-dev # sopra-client, the terminal client (not built without it)
		libcmocka-dev python3 # the unit tests; the python system tests
		tmux # the client's system tests play it in a terminal (skipped without)
	)
	local missing=() p sudo=""
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	echo "setup: installing ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

build() {
	local werror=OFF
	if [ "${CI:-}" = "true" ] || [ "${WERROR:-}" = "1" ]; then werror=ON; fi
	cmake -S . -B build -DWERROR="$werror" -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build -j"$(nproc)"
	echo "setup: built build/sopra-server"
}

state_dir() { # where games' journals go (created)
	local dir=${XDG_STATE_HOME:-$HOME/.local/state}/sopra-server
	mkdir -p "$dir"
	echo "$dir"
}

how_to_join() { # PORT JOURNAL_DIR
	cat <<EOF

setup: serving the default game on port $1, one game after another (Ctrl-C stops).
  Join it from another terminal:
    build/client/sopra-client --port $1 --name YOUR_NAME            # then S starts the game
    build/client/sopra-client --port $1 --name YOUR_NAME --bots 2 --start   # with two bot team mates
    nc localhost $1     # by hand: {"command":"Register","playerName":"Anna"}, then {"command":"StartGame"}
  Or play alone, without this server: build/client/sopra-client --local --bots 2
  Each game's journal goes to $2/ (replay: build/client/sopra-client --replay FILE)

EOF
}

serve() { # one default game after another, in the foreground (args: more server options)
	local dir journal rc stop=0 n=0
	dir=$(state_dir)
	how_to_join 7777 "$dir"
	if (($#)); then echo "setup: in a browser: http://localhost:8080/ (the page: play, watch, replay)"; fi
	# The server gets Ctrl-C too and ends its game in order. Between games
	# no subshell runs (a Ctrl-C would end it, and bash with it).
	trap 'stop=1' INT TERM
	while [ "$stop" = 0 ]; do
		n=$((n + 1)) # two games may start within a second
		printf -v journal '%s/game-%(%Y%m%d-%H%M%S)T-%s-%d.jnl' "$dir" -1 $$ $n
		rc=0
		build/sopra-server --journal "$journal" "$@" || rc=$?
		if [ "$rc" -ne 0 ] && [ "$stop" = 0 ]; then
			echo "setup: sopra-server exited $rc (see its log above)" >&2
			return "$rc"
		fi
		if [ -f "$journal" ] && ! grep -q '"command":"Register"' "$journal"; then
			rm -f "$journal" # nobody joined within the timeout: nothing to replay
		elif [ -f "$journal" ]; then
			echo "setup: the game's journal: $journal"
		fi
		[ "$stop" = 0 ] && echo "setup: a new game on port 7777 (Ctrl-C stops)"
	done
	trap - INT TERM
	echo "setup: stopped"
}

# bot_game's processes and temporary file, for the EXIT trap
server="" bot1="" bot2="" log=""
cleanup() {
	local p
	for p in $server $bot1 $bot2; do kill "$p" 2>/dev/null || true; done
	[ -z "$log" ] || rm -f "$log" "$log.bot1"
}

bot_game() { # one game of two sopra-bots on the default game (CI's proof of the run path)
	local dir journal port="" i rc
	trap cleanup EXIT
	dir=$(state_dir)
	journal=$dir/bot-game-$(date +%Y%m%d-%H%M%S)-$$.jnl
	log=$(mktemp)
	# the default game on a free port (CI may run more than one at once)
	timeout 900 build/sopra-server --port 0 --journal "$journal" 2>"$log" &
	server=$!
	for i in $(seq 300); do
		port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\)[ ,].*/\1/p' "$log" | head -1)
		[ -n "$port" ] && break
		kill -0 $server 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		cat "$log" >&2
		echo "setup: the server did not start" >&2
		return 1
	fi
	build/tools/sopra-bot --port "$port" --name Bot1 --seed 1 --quiet >"$log.bot1" 2>>"$log" &
	bot1=$!
	for i in $(seq 300); do # the second bot starts the game once the first is in
		grep -q "^registered " "$log.bot1" && break
		sleep 0.1
	done
	build/tools/sopra-bot --port "$port" --name Bot2 --seed 2 --quiet --start >/dev/null 2>>"$log" &
	bot2=$!
	rc=0
	wait $server || rc=$?
	wait $bot1 || rc=$((rc ? rc : $?))
	wait $bot2 || rc=$((rc ? rc : $?))
	server="" bot1="" bot2="" # ended
	local outcome
	outcome=$(grep -m1 "game over:" "$log" || true)
	if [ "$rc" -ne 0 ] || [ -z "$outcome" ]; then
		cat "$log" >&2
		echo "setup: the bot game failed (exit $rc)" >&2
		return 1
	fi
	build/tools/sopra-replay --quiet "$journal" || {
		echo "setup: sopra-replay does not reproduce $journal" >&2
		return 1
	}
	grep -m1 "seed" "$log"
	echo "$outcome"
	echo "setup: a bot game on the default game ran to its end; its journal replays: $journal"
}

install_packages
build
case "$mode" in
build) ;;
build-notty)
	echo "setup: stdin is not a terminal: built only (./setup.sh --serve serves the" \
		"default game anyway; --build-only says you only want the build)"
	;;
serve) serve ;;
web) serve --http-port 8080 --http-bots 3 ;;
bot-game) bot_game ;;
esac
