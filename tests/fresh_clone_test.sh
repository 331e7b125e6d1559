#!/usr/bin/env bash
# The README's first command on a fresh clone of the committed HEAD (what a
# newcomer gets; uncommitted changes are not in it), in a temporary folder:
#
#   ci          CI=true ./setup.sh: installs what is missing, builds, plays
#               one game of two bots on the default game to its end and
#               exits 0 (the journal replays)
#   no tty      ./setup.sh with stdin not a terminal only builds (a script
#               that runs it to build is not kept waiting); so does
#               ./setup.sh --build-only
#   terminal    ./setup.sh in a terminal (tmux on a private socket) serves
#               the default game on port 7777 and says how to join; two bots
#               play a game to its end, its journal is kept, and Ctrl-C
#               stops it (exit 0). Skipped loudly when tmux is missing or
#               port 7777 is taken (a failure under CI=true).
#
# It builds the whole project once more: ./test.sh runs it with --full only.
# Usage: tests/fresh_clone_test.sh
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
skipped=()
tmp=$(mktemp -d)
sock=sopra-fresh-clone-$$ # a tmux server of our own; a person's is never touched
unset TMUX TMUX_PANE
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

commit=$(git -C "$src" rev-parse HEAD)
echo "fresh clone of $commit (uncommitted changes are not in it)"
git clone -q "$src" "$tmp/sopra-server" && git -C "$tmp/sopra-server" checkout -q "$commit" ||
	{ echo "FAIL cannot clone $src at $commit"; exit 1; }
cd "$tmp/sopra-server" || exit 1
export XDG_STATE_HOME=$tmp/state

# ci: the whole path, install to the end of a bot game
start=$(date +%s)
CI=true timeout 3600 ./setup.sh </dev/null >"$tmp/ci.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^setup: a bot game on the default game ran to its end; its journal replays: $tmp/state/sopra-server/bot-game-.*\.jnl\$" "$tmp/ci.out" &&
	grep -q "^sopra-server: game over: .*; round [0-9]*, 2 player(s) registered\$" "$tmp/ci.out" &&
	[ -x build/sopra-server ]; then
	ok "ci: CI=true ./setup.sh built and played a bot game to its end in $(($(date +%s) - start)) s"
else
	bad "ci: exit $rc; the last lines:"
	tail -30 "$tmp/ci.out"
fi

# no tty: built only, at once (WERROR=1: the same cmake options as CI=true,
# so nothing is built again)
for args in "" "--build-only"; do
	env -u CI WERROR=1 timeout 600 ./setup.sh $args </dev/null >"$tmp/notty.out" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q "^setup: built build/sopra-server\$" "$tmp/notty.out" &&
		! grep -q "listening on\|serving" "$tmp/notty.out"; then
		ok "no tty: ./setup.sh $args only built"
	else
		bad "no tty: ./setup.sh $args: exit $rc: $(tail -5 "$tmp/notty.out")"
	fi
done

# terminal: serve, a game, Ctrl-C
port_free() {
	python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("0.0.0.0", 7777))
except OSError: sys.exit(1)'
}
pane() { tmux -L "$sock" capture-pane -p -J -S - -t serve; }
wait_pane() { # REGEX WHAT: wait up to 60 s for a line of the pane
	local i
	for i in $(seq 600); do
		pane | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	bad "terminal: no $2 after 60 s; the pane:"
	pane | grep -v '^$' | tail -20
	return 1
}
serve_in_terminal() {
	printf 'set -g remain-on-exit on\n' >"$tmp/tmux.conf"
	tmux -L "$sock" -f "$tmp/tmux.conf" new-session -d -s serve -x 200 -y 50 \
		"env -u CI WERROR=1 XDG_STATE_HOME=$XDG_STATE_HOME ./setup.sh; echo setup-exit=\$?" ||
		{ bad "terminal: tmux"; return; }
	wait_pane "listening on 0\.0\.0\.0:7777" "server on 7777" || return
	pane | grep -q "build/client/sopra-client --port 7777 --name YOUR_NAME" &&
		pane | grep -q "nc localhost 7777" ||
		{ bad "terminal: no join lines"; pane | grep -v '^$' | head -30; return; }
	build/tools/sopra-bot --port 7777 --name Bot1 --seed 3 --quiet >"$tmp/bot1.out" 2>&1 &
	local i
	for i in $(seq 300); do grep -q "^registered" "$tmp/bot1.out" && break; sleep 0.1; done
	timeout 600 build/tools/sopra-bot --port 7777 --name Bot2 --seed 4 --quiet --start \
		>/dev/null 2>&1 || bad "terminal: the second bot failed"
	wait
	wait_pane "^setup: the game's journal: $XDG_STATE_HOME/sopra-server/game-.*\.jnl" \
		"journal line" || return
	wait_pane "^setup: a new game on port 7777" "next game" || return
	local journal
	journal=$(pane | sed -n "s/^setup: the game's journal: //p" | head -1)
	tmux -L "$sock" send-keys -t serve C-c
	wait_pane "^setup: stopped" "stop after Ctrl-C" || return
	wait_pane "^setup-exit=[0-9]+" "exit of setup.sh" || return
	if ! pane | grep -q "^setup-exit=0\$"; then
		bad "terminal: after Ctrl-C: $(pane | grep "^setup-exit=")"
	elif ! build/tools/sopra-replay --quiet "$journal"; then
		bad "terminal: the game's journal $journal does not replay"
	elif [ "$(ls "$XDG_STATE_HOME/sopra-server" | grep -c '^game-')" != 1 ]; then
		bad "terminal: not one game journal (the unplayed game's must be gone):" \
			"$(ls "$XDG_STATE_HOME/sopra-server")"
	else
		ok "terminal: ./setup.sh served the default game on 7777; a bot game, Ctrl-C, exit 0"
	fi
}
if ! command -v tmux >/dev/null; then
	skipped+=("terminal: tmux is not installed")
elif ! port_free; then
	skipped+=("terminal: port 7777 is taken: ./setup.sh's serving could not be tried")
else
	serve_in_terminal
fi

for s in "${skipped[@]}"; do
	echo "SKIPPED: $s"
	[ "${CI:-}" = "true" ] && bad "$s (CI=true)"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
