#!/usr/bin/env bash
# A usage error is short in every program: an unknown option prints one line
# naming it, the program's synopsis and "Try 'NAME --help' for more
# information." (at most 8 lines, never the option list), and the status of a
# usage error; --help still prints the whole help on stdout, status 0.
# Usage: usage_test.sh PROGRAM:STATUS... (STATUS: the program's usage error)
set -u
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

for arg in "$@"; do
	prog=${arg%:*}
	want=${arg##*:}
	name=$(basename "$prog")
	"$prog" --no-such-option >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" != "$want" ]; then
		bad "$name --no-such-option: exit $rc, want $want"
	elif ! head -1 "$tmp/err" | grep -q "^$name: .*--no-such-option"; then
		bad "$name: the first line does not name the option: $(head -1 "$tmp/err")"
	elif ! grep -q "^Usage: $name " "$tmp/err"; then
		bad "$name: no synopsis: $(cat "$tmp/err")"
	elif [ "$(tail -1 "$tmp/err")" != "Try '$name --help' for more information." ]; then
		bad "$name: the last line is not the pointer to --help: $(tail -1 "$tmp/err")"
	elif [ "$lines" -gt 8 ] || [ -s "$tmp/out" ]; then
		bad "$name: $lines lines on stderr (and $(wc -c <"$tmp/out") bytes on stdout)"
	else
		pass=$((pass + 1))
	fi
	"$prog" --help >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(wc -l <"$tmp/out")" -gt "$lines" ] && [ ! -s "$tmp/err" ]; then
		pass=$((pass + 1))
	else
		bad "$name --help: exit $rc, $(wc -l <"$tmp/out") lines on stdout"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
