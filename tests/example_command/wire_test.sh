#!/usr/bin/env bash
# The example command Wait over the wire (CMakeLists.txt here): wait.scn
# through the scenario runner against the real server with --journal;
# sopra-replay must reproduce what the client received from the journal,
# and the journal, read back by its wire names, must make a scenario
# (sopra-replay --scn) that passes again.
#
# usage: wire_test.sh SERVER REPLAY SCENARIO_RUNNER HERE WORK_DIR
set -uo pipefail
server=$1 replay=$2 runner=$3 here=$4 work=$5
rm -rf "$work"
mkdir -p "$work/jnl" "$work/scn"
fail() {
	echo "FAIL $*"
	exit 1
}

"$runner" --server "$server" --journal-dir "$work/jnl" --replay "$replay" "$here/wait.scn" ||
	fail "wait.scn with --journal, replayed by sopra-replay"
jnl=("$work"/jnl/*.jnl)
[ -f "${jnl[0]}" ] || fail "no journal written"
grep -q '"command":"Wait","characterId":101' "${jnl[0]}" || fail "no Wait in ${jnl[0]}"
"$replay" --scn "$work/scn/wait.scn" "${jnl[0]}" || fail "sopra-replay --scn"
grep -q '^1 > Wait 101$' "$work/scn/wait.scn" || fail "no Wait in the journal's scenario"
"$runner" --server "$server" "$work/scn" || fail "the journal's scenario"
echo "ok: Wait decoded, applied, journaled, replayed and read back"
