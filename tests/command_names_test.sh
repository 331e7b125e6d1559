#!/usr/bin/env bash
# One place per command (docs/design.md, "Adding a command"): the name of a
# command of the command table ("Barricade") or its enumerator
# (CMD_BARRICADE) appears, comments included, in at most 3 C and Python
# files outside the tests and the benchmarks -- its row
# (include/sopra/cmd_table.h), its handler (src/game.c) and a client's words
# for it (client/command_words.h). Everything else derives a command from
# those (its parameters' domains, its roles, its die) and does not name it.
#
# Usage: command_names_test.sh [SOURCE_DIR]   (default: the repository)
# Prints every command over the limit with the files that name it; exit 1
# if there is one.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
limit=3

# The rows of the command table proper (not the test build's example command).
rows=$(sed -n '/^#define SOPRA_COMMANDS(X)/,/SOPRA_EXAMPLE_COMMANDS(X)$/p' \
	include/sopra/cmd_table.h |
	sed -n 's/.*X(\([A-Z_][A-Z0-9_]*\), "\([A-Za-z]*\)".*/\1 \2/p')
if [ -z "$rows" ]; then
	echo "command_names_test: no rows found in include/sopra/cmd_table.h"
	exit 2
fi

# The C and Python files of the server, the clients, the bots, the tools and
# the shared helpers, less the tests: unit tests (test_*), the Python system
# tests (*_test.py) and their shared module (sopratest.py), the system test
# programs (their command lines are test input) and the client's drawing
# benchmark. The scenario runner counts.
mapfile -t files < <(find src include client tools bots common systemtests \
	-type f \( -name '*.c' -o -name '*.h' -o -name '*.py' \) \
	! -name 'test_*' ! -name '*_test.py' \
	! -path 'systemtests/selftest.c' ! -path 'systemtests/faults.c' \
	! -path 'systemtests/fairness.c' ! -path 'systemtests/sopratest.py' \
	! -path 'client/draw_bench.c' | sort)

bad=0
checked=0
while read -r id name; do
	checked=$((checked + 1))
	mapfile -t hits < <(grep -lwE -- "$name|CMD_$id" "${files[@]}")
	if [ "${#hits[@]}" -gt "$limit" ]; then
		echo "$name (CMD_$id) is named in ${#hits[@]} files, at most $limit:"
		printf '  %s\n' "${hits[@]}"
		bad=1
	fi
done <<<"$rows"
echo "command_names_test: $checked commands in ${#files[@]} files," \
	"$([ $bad = 0 ] && echo "each named in at most $limit" || echo "some named too often")"
exit $bad
