#!/usr/bin/env bash
# Adding the example command Wait took its row (include/sopra/cmd_table.h),
# its handler (src/game.c) and its tests (here), and nothing else: no other
# source, header, script or scenario names it.
#
# usage: files_test.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
found=$(grep -rlE '"Wait"|CMD_WAIT|cmd_wait' --include='*.c' --include='*.h' --include='*.py' \
	--include='*.sh' --include='*.scn' --exclude-dir='build*' . | sort)
want=$(printf '%s\n' ./include/sopra/cmd_table.h ./src/game.c)
others=$(echo "$found" | grep -v '^./tests/example_command/')
echo "files naming Wait:"
echo "$found" | sed 's/^/  /'
[ "$others" = "$want" ] || {
	echo "FAIL: outside its tests, Wait should be named in exactly:"
	echo "$want" | sed 's/^/  /'
	exit 1
}
