#!/usr/bin/env bash
# The bots against a real sopra-server, as processes over TCP: in each
# edition a game of three sopra-bots (search, greedy, search with a small
# fixed budget) runs to its end, no command of theirs is refused (failed=0
# in every summary) and each reports the game's end (win or lose).
# Usage: bots_game_test.sh SERVER BOT CONFIG
set -u
server=$1
bot=$2
config=$3
pass=0
fail=0
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

game() { # game RULES SEED
	local rules=$1 seed=$2
	"$server" --config "$config" --port 0 --timeout 60 --seed "$seed" --rules "$rules" \
		2>"$tmp/server.err" &
	srv=$!
	local port=
	for _ in $(seq 200); do
		port=$(grep -o 'listening on 0\.0\.0\.0:[0-9]*' "$tmp/server.err" | grep -o '[0-9]*$')
		[ -n "$port" ] && break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		fail=$((fail + 1))
		echo "FAIL $rules: the server did not start: $(head -c 300 "$tmp/server.err")"
		return
	fi
	local common=(--port "$port" --rules "$rules" --quiet --idle 120)
	"$bot" "${common[@]}" --seed 1 --strategy search --iterations 30 >/dev/null 2>"$tmp/b1" &
	local b1=$!
	sleep 0.2
	"$bot" "${common[@]}" --seed 2 --strategy greedy >/dev/null 2>"$tmp/b2" &
	local b2=$!
	sleep 0.2
	"$bot" "${common[@]}" --seed 3 --strategy search --iterations 30 --start >/dev/null \
		2>"$tmp/b3"
	wait "$b1" "$b2"
	wait "$srv"
	srv=
	for b in b1 b2 b3; do
		local summary
		summary=$(tail -1 "$tmp/$b")
		if grep -q ' failed=0 result=\(win\|lose\)$' <<<"$summary"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL $rules $b: $summary"
		fi
	done
}

game base 11
game revised 12
echo "bots_game_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
