#!/usr/bin/env bash
# The man pages (man/): every option a program's --help lists is described in
# its page, and groff finds nothing to warn about in any page.
# Usage: man_test.sh MAN_DIR PROGRAM... (each with a page MAN_DIR/NAME.[16])
set -u
mandir=$1
shift
pass=0
fail=0
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

for prog in "$@"; do
	name=$(basename "$prog")
	page=$(ls "$mandir/$name".[16] 2>/dev/null | head -1)
	if [ -z "$page" ]; then
		bad "$name: no man page in $mandir"
		continue
	fi
	# the page's text with roff's \- as -
	text=$(sed 's/\\-/-/g' "$page")
	for opt in $("$prog" --help | grep -o -- '^ *--[a-z][a-z-]*' | sort -u); do
		if grep -q -- "^\.[A-Z]* *$opt\b\|^\.[A-Z]* .*$opt\b" <<<"$text"; then
			pass=$((pass + 1))
		else
			bad "$page: option $opt of '$name --help' is not described"
		fi
	done
done

pages=("$mandir"/*.[16])
if command -v groff >/dev/null; then
	for page in "${pages[@]}"; do
		warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
		if [ -z "$warnings" ]; then
			pass=$((pass + 1))
		else
			bad "groff -man -ww $page: $warnings"
		fi
	done
else
	echo "SKIPPED: ${#pages[@]} groff lint(s) of the man pages: groff is not installed" \
		"(./test.sh --full installs groff-base)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
