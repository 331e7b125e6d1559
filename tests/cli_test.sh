#!/usr/bin/env bash
# Command line and exit codes of sopra-server (README, --help):
# 0 normal end, 1 runtime failure, 2 invalid configuration, 64 usage error
# (a short message: the synopsis and "Try --help", not the whole help);
# the defaults of --config and --timeout; the seed in the log (random without
# --seed), --check, "$schema". (The default port, 7777, is the system test
# server_defaults'.)
# Usage: cli_test.sh SERVER CONFIG
set -u
server=$1
config=$2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check NAME WANT_CODE ARGS... : run the server, compare the exit code
	local name=$1 want=$2
	shift 2
	timeout 10 "$server" "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name: exit $got, want $want; stderr: $(head -c 300 "$tmp/err")"
	fi
}

check "help" 0 --help
grep -q -- "--config" "$tmp/out" || { fail=$((fail + 1)); echo "FAIL help: no --config in the text"; }
check "version" 0 --version
grep -q "^sopra-server " "$tmp/out" || { fail=$((fail + 1)); echo "FAIL version: $(cat "$tmp/out")"; }
check "unknown option" 64 --config "$config" --port 0 --seed 1 --timeout 1 --frobnicate
# a usage error: what is wrong, the synopsis, where the help is; not the help
grep -q "^sopra-server: unknown option '--frobnicate'\$" "$tmp/err" &&
	grep -q "^Usage: sopra-server " "$tmp/err" &&
	grep -q "^Try 'sopra-server --help' for more information.\$" "$tmp/err" &&
	! grep -q -- "--max-strangers N " "$tmp/err" &&
	[ "$(wc -l <"$tmp/err")" -le 8 ] ||
	{ fail=$((fail + 1)); echo "FAIL unknown option: not the short usage: $(cat "$tmp/err")"; }
check "repeated option" 64 --config "$config" --config "$config" --port 0 --seed 1 --timeout 1
check "seed not a number" 64 --config "$config" --port 0 --seed 12x --timeout 1
check "seed overflow" 64 --config "$config" --port 0 --seed 9223372036854775808 --timeout 1
check "port out of range" 64 --config "$config" --port 65536 --seed 1 --timeout 1
check "timeout zero" 64 --config "$config" --port 0 --seed 1 --timeout 0
check "bad rules" 64 --config "$config" --port 0 --seed 1 --timeout 1 --rules crossroads
grep -q "rules" "$tmp/err" || { fail=$((fail + 1)); echo "FAIL bad rules: message does not name --rules"; }
# valid arguments: nobody registers, the registration times out after 1 s: exit 0
check "min seed, registration timeout" 0 --config "$config" --port 0 --seed -9223372036854775808 --timeout 1
check "seed -1, --opt=value form" 0 --config="$config" --port=0 --seed=-1 --timeout=1 --rules=revised
# the defaults: without --config the built-in copy of the example (named in
# the log), without --timeout 30 s
check "no --config" 0 --port 0 --seed 1 --timeout 1
grep -q "^sopra-server: the default game: the built-in copy of resources/example.json" "$tmp/err" &&
	grep -q "listening on .*(rules base, timeout 1 s," "$tmp/err" ||
	{ fail=$((fail + 1)); echo "FAIL no --config: not the built-in game: $(cat "$tmp/err")"; }
check "--config given: no word of the built-in game" 0 --config "$config" --port 0 --seed 1 --timeout 1
! grep -q "built-in" "$tmp/err" ||
	{ fail=$((fail + 1)); echo "FAIL --config given: the log names the built-in game"; }
default_timeout() { # no --timeout: the log says 30 s; SIGTERM ends it (exit 0)
	"$server" --port 0 --seed 1 2>"$tmp/err" >/dev/null &
	local pid=$! i
	for i in $(seq 100); do grep -q "listening on" "$tmp/err" && break; sleep 0.1; done
	kill -TERM $pid
	wait $pid
	local rc=$?
	if grep -q "listening on .*(rules base, timeout 30 s," "$tmp/err" && [ $rc = 0 ]; then
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "FAIL no --timeout: exit $rc, not 30 s: $(cat "$tmp/err")"
}
default_timeout

# invalid configuration: exit 2, one line per problem naming the field
printf '{"maxPlayers": 0}' >"$tmp/bad.json"
check "invalid config" 2 --config "$tmp/bad.json" --port 0 --seed 1 --timeout 1
grep -q "maxPlayers" "$tmp/err" || { fail=$((fail + 1)); echo "FAIL invalid config: maxPlayers not named"; }
check "missing config file" 2 --config "$tmp/nope.json" --port 0 --seed 1 --timeout 1

expect() { # expect NAME FILE REGEX: FILE (out or err) has a line matching REGEX
	grep -Eq -- "$3" "$tmp/$2" && return
	fail=$((fail + 1))
	echo "FAIL $1: no line /$3/ in std$2: $(head -c 300 "$tmp/$2")"
}
expect_not() { # expect_not NAME FILE REGEX: no line of FILE matches REGEX
	grep -Eq -- "$3" "$tmp/$2" || return 0
	fail=$((fail + 1))
	echo "FAIL $1: std$2 has /$3/: $(head -c 300 "$tmp/$2")"
}

# the seed is always logged; without --seed it is random, a valid int64
check "seed given" 0 --config "$config" --port 0 --seed -42 --timeout 1
expect "seed given" err '^sopra-server: seed -42$'
seeds=()
for run in 1 2; do
	check "random seed $run" 0 --config "$config" --port 0 --timeout 1
	expect "random seed $run" err \
		'^sopra-server: seed -?[0-9]+ \(random; pass --seed -?[0-9]+ to replay this game\)$'
	seed=$(sed -n 's/^sopra-server: seed \(-\{0,1\}[0-9]*\) (random; pass --seed \(.*\) to .*/\1 \2/p' "$tmp/err")
	read -r a b <<<"$seed"
	if [ -z "$a" ] || [ "$a" != "$b" ] ||
		! python3 -c 'import sys; v = int(sys.argv[1]); sys.exit(not -2**63 <= v < 2**63)' "$a"; then
		fail=$((fail + 1))
		echo "FAIL random seed $run: not one signed 64-bit seed: '$seed'"
	fi
	seeds+=("$a")
	# logged before the server listens (the log is the record of the game)
	[ "$(grep -n -m1 'seed\|listening' "$tmp/err" | cut -d: -f3)" = " seed $a (random; pass --seed $a to replay this game)" ] ||
		{ fail=$((fail + 1)); echo "FAIL random seed $run: not logged before listening"; }
done
[ "${seeds[0]}" != "${seeds[1]}" ] ||
	{ fail=$((fail + 1)); echo "FAIL random seed: two runs drew the same seed ${seeds[0]}"; }
# the logged seed replays the game: a given seed is accepted as is
check "random seed replayed" 0 --config "$config" --port 0 --timeout 1 --seed "${seeds[0]}"
expect "random seed replayed" err "^sopra-server: seed ${seeds[0]}\$"

# --check: validate only, listen on nothing; --port/--timeout/--seed optional
check "check ok" 0 --check --config "$config"
expect "check ok" out "^$config: ok\$"
expect_not "check ok" err .
check "check ok, other options" 0 --config="$config" --check --port 0 --rules revised \
	--journal "$tmp/check.jnl"
[ ! -e "$tmp/check.jnl" ] || { fail=$((fail + 1)); echo "FAIL check: created the journal"; }
check "check invalid" 2 --check --config "$tmp/bad.json"
expect "check invalid" err "^sopra-server: $tmp/bad.json: maxPlayers: must be >= 1\$"
expect "check invalid" err "^sopra-server: $tmp/bad.json: crises: missing required key\$"
expect_not "check invalid" out .
check "check missing file" 2 --check --config "$tmp/nope.json"
check "check without --config" 64 --check
check "check twice" 64 --check --check --config "$config"
check "check with a value" 64 --check=yes --config "$config"

# "$schema": a string is ignored, anything else is an error
python3 - "$config" "$tmp" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    cfg = json.load(f)
for name, value in (("schema.json", "./config.schema.json"), ("schema-bad.json", 7)):
    with open(f"{sys.argv[2]}/{name}", "w") as f:
        json.dump({"$schema": value, **cfg}, f, indent=1)
PY
check "\$schema --check" 0 --check --config "$tmp/schema.json"
check "\$schema game" 0 --config "$tmp/schema.json" --port 0 --seed 1 --timeout 1
expect "\$schema game" err "listening on"
check "\$schema not a string" 2 --check --config "$tmp/schema-bad.json"
expect "\$schema not a string" err '\$schema: must be a string'
# port in use: exit 1
python3 - "$tmp/port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen()
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(5)
PY
holder=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
check "port in use" 1 --config "$config" --port "$(cat "$tmp/port")" --seed 1 --timeout 1
# --check opens no socket: the port in use does not matter
check "check, port in use" 0 --check --config "$config" --port "$(cat "$tmp/port")" --timeout 1
expect_not "check, port in use" err .
kill $holder 2>/dev/null
wait $holder 2>/dev/null

# --journal-dir: its usage errors, and a port in use does not leave a journal
check "journal-dir without grace" 64 --config "$config" --port 0 --timeout 1 \
	--journal-dir "$tmp/jd"
expect "journal-dir without grace" err "^sopra-server: --journal-dir needs --reconnect-grace"
check "journal-dir and journal" 64 --config "$config" --port 0 --timeout 1 --reconnect-grace 0 \
	--journal-dir "$tmp/jd" --journal "$tmp/j.jnl"
check "journal-dir and check" 64 --check --config "$config" --reconnect-grace 0 --journal-dir "$tmp/jd"
check "journal-dir and resume" 64 --resume "$tmp/j.jnl" --port 0 --journal-dir "$tmp/jd"
check "journal-keep alone" 64 --config "$config" --port 0 --timeout 1 --journal-keep 3
expect "journal-keep alone" err "^sopra-server: --journal-keep needs --journal-dir$"
check "journal-sync alone" 64 --config "$config" --port 0 --timeout 1 --journal-sync always
expect "journal-sync alone" err "^sopra-server: --journal-sync needs a journal"
check "journal-keep negative" 64 --config "$config" --port 0 --timeout 1 --reconnect-grace 0 \
	--journal-dir "$tmp/jd" --journal-keep -1
[ ! -e "$tmp/jd" ] || { fail=$((fail + 1)); echo "FAIL journal-dir: created by a usage error"; }
check "journal-dir in a file" 1 --config "$config" --port 0 --timeout 1 --reconnect-grace 0 \
	--journal-dir "$config"
expect "journal-dir in a file" err "^sopra-server: journal directory $config: not a directory$"
check "journal-dir game" 0 --config "$config" --port 0 --timeout 1 --reconnect-grace 0 \
	--journal-dir "$tmp/jd"
expect "journal-dir game" err "^sopra-server: journal-dir: a new game, journaled in $tmp/jd/game-000001.jnl$"
[ "$(ls "$tmp/jd")" = game-000001.jnl ] || { fail=$((fail + 1)); echo "FAIL journal-dir game: $(ls "$tmp/jd")"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
