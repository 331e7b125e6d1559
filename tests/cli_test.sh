#!/usr/bin/env bash
# Command line and exit codes of sopra-server (README, --help):
# 0 normal end, 1 runtime failure, 2 invalid configuration, 64 usage error.
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
check "no arguments" 64
check "missing --seed" 64 --config "$config" --port 0 --timeout 1
check "unknown option" 64 --config "$config" --port 0 --seed 1 --timeout 1 --frobnicate
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
# invalid configuration: exit 2, one line per problem naming the field
printf '{"maxPlayers": 0}' >"$tmp/bad.json"
check "invalid config" 2 --config "$tmp/bad.json" --port 0 --seed 1 --timeout 1
grep -q "maxPlayers" "$tmp/err" || { fail=$((fail + 1)); echo "FAIL invalid config: maxPlayers not named"; }
check "missing config file" 2 --config "$tmp/nope.json" --port 0 --seed 1 --timeout 1
# port in use: exit 1
python3 - "$tmp/port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen()
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(5)
PY
holder=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
check "port in use" 1 --config "$config" --port "$(cat "$tmp/port")" --seed 1 --timeout 1
kill $holder 2>/dev/null
wait $holder 2>/dev/null

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
