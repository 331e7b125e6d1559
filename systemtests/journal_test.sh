#!/usr/bin/env bash
# The journal end to end (docs/journal.md), against the real server:
#
#   1. every scenario runs with --journal, and sopra-replay must reproduce
#      what each client received, byte for byte (sopra-scenario --journal-dir);
#   2. every journal becomes a scenario (sopra-replay --scn) that passes the
#      scenario runner;
#   3. a 4-player game to GameEnd: the journal is under 64 KiB, replays in
#      under 10 ms, its output hashes to the last digest; --at and --player;
#   4. a torn last line is dropped, a corrupt line in the middle is an error,
#      a wrong configuration hash and a changed event stream are caught;
#   5. a journal that cannot be created stops the server before it listens;
#      one that fills up (file size limit) mid-game is logged and stops the
#      server (exit 1), leaving a valid, shorter journal; one that fills up
#      in the digest behind the game's last entry lets the game end (every
#      GameEnd goes out) and still exits 1.
#
# usage: journal_test.sh SERVER REPLAY SCENARIO_RUNNER SOURCE_DIR WORK_DIR [BOT]
set -uo pipefail
server=$1 replay=$2 runner=$3 src=$4 work=$5 bot=${6:-}
rm -rf "$work"
mkdir -p "$work/jnl" "$work/scn" "$work/tmp"
export TMPDIR=$work/tmp
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { # check NAME COMMAND...: passes if the command succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

dirs=("$src/systemtests/scenarios")
for e in base revised; do
	[ -d "$src/../shared/conformance/$e" ] && dirs+=("$src/../shared/conformance/$e")
done

# ---- 1. every scenario, replayed per client ---------------------------------
out=$("$runner" --server "$server" --journal-dir "$work/jnl" --replay "$replay" "${dirs[@]}" 2>&1)
rc=$?
echo "$out" | grep -v '^PASS' | grep -v '^    ' | head -40
echo "$out" | tail -1
check "every scenario with --journal; sopra-replay --conn N = what client N got" [ $rc -eq 0 ]
njnl=$(find "$work/jnl" -name '*.jnl' | wc -l)
check "journals written ($njnl)" [ "$njnl" -gt 100 ]

# ---- 2. every journal as a scenario ------------------------------------------
scn_fail=0
for j in "$work"/jnl/*.jnl; do
	b=$(basename "$j" .jnl)
	"$replay" --scn "$work/scn/$b.scn" "$j" 2>>"$work/scn-notes.txt" || {
		echo "  sopra-replay --scn failed for $j"
		scn_fail=1
	}
done
check "sopra-replay --scn for every journal" [ $scn_fail -eq 0 ]
out=$("$runner" --server "$server" "$work/scn" 2>&1)
rc=$?
echo "$out" | grep -v '^PASS' | grep -v '^    ' | head -20
echo "$out" | tail -1
check "the generated scenarios pass the scenario runner" [ $rc -eq 0 ]

# ---- 3. a 4-player game to GameEnd ---------------------------------------------
full=$work/jnl/scenarios_b_full_game_4p.jnl
check "b_full_game_4p has a journal" [ -f "$full" ]
size=$(stat -c %s "$full")
check "a 4-player game's journal is under 64 KiB ($size bytes)" [ "$size" -lt 65536 ]
"$replay" "$full" >"$work/full.out"
last=$(grep '"digest"' "$full" | tail -1 | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
check "sopra-replay's output hashes to the last digest" \
	[ "$(sha256sum <"$work/full.out" | cut -d' ' -f1)" = "$last" ]
# CPU time, best of 10: the wall clock of a shared machine says more about
# the other processes
best=999
for _ in $(seq 10); do
	ms=$("$replay" --quiet --stats "$full" 2>&1 | sed -n 's/.*cpu \([0-9.]*\) ms.*/\1/p')
	best=$(awk -v a="$best" -v b="$ms" 'BEGIN { print (b < a) ? b : a }')
done
# grep -c reads all of ldd's output: grep -q would stop at the first match,
# ldd then die of SIGPIPE, and pipefail turn the match into a failure
if [ "$(ldd "$replay" 2>/dev/null | grep -c 'libasan\|libubsan')" -gt 0 ]; then
	echo "note its replay takes $best ms of CPU (best of 10); not judged in a sanitizer build"
else
	check "its replay takes under 10 ms (CPU, best of 10: $best ms)" \
		awk -v t="$best" 'BEGIN { exit !(t < 10) }'
fi
at=$("$replay" --at 10 "$full")
check "--at 10 describes the state" grep -q '^round .*food .*morale .*waste' <<<"$at"
check "--at 10 lists locations and characters" \
	bash -c 'grep -q "^locations" <<<"$1" && grep -q "^characters in play" <<<"$1"' _ "$at"
"$replay" --player 2 "$full" >"$work/p2.out"
check "--player 2 = the player-2 lines of the full output" \
	cmp -s "$work/p2.out" <(grep -P '^2\t' "$work/full.out" | cut -f2-)
if [ -n "$bot" ] && [ -x "$bot" ]; then
	# a game of four random players (sopra-bot), as in docs/journal.md
	"$server" --config "$src/resources/example.json" --port 0 --seed 11 --timeout 10 \
		--journal "$work/bots.jnl" 2>"$work/bots.err" &
	spid=$!
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on 0.0.0.0:\([0-9]*\).*/\1/p' "$work/bots.err")
		[ -n "$port" ] && break
		sleep 0.05
	done
	for i in 1 2 3; do
		"$bot" --port "$port" --name "Bot$i" --seed "$i" --quiet >/dev/null 2>&1 &
		sleep 0.2
	done
	"$bot" --port "$port" --name Bot4 --seed 4 --start --quiet >/dev/null 2>&1
	wait $spid
	size=$(stat -c %s "$work/bots.jnl")
	check "a 4-bot game's journal is under 64 KiB ($size bytes)" [ "$size" -lt 65536 ]
	check "a 4-bot game's journal replays" "$replay" --quiet "$work/bots.jnl"
fi

# ---- 4. torn, corrupt, wrong hash, changed stream --------------------------------
n=$(wc -l <"$full")
head -n $((n - 4)) "$full" >"$work/torn.jnl"
sed -n "$((n - 3))p" "$full" | head -c 30 >>"$work/torn.jnl"
"$replay" "$work/torn.jnl" >"$work/torn.out" 2>"$work/torn.err"
rc=$?
check "a torn last line is dropped (exit 0, noted)" \
	bash -c '[ $1 -eq 0 ] && grep -q "dropped" "$2"' _ $rc "$work/torn.err"
check "... and the rest replays to a prefix of the full output" \
	cmp -s "$work/torn.out" <(head -c "$(stat -c %s "$work/torn.out")" "$work/full.out")
{
	head -n $((n / 2)) "$full"
	echo '{"n":7,"ms":0,"comm":1,"pla'
	tail -n +$((n / 2 + 1)) "$full"
} >"$work/corrupt.jnl"
"$replay" "$work/corrupt.jnl" >/dev/null 2>"$work/corrupt.err"
check "a corrupt line in the middle is an error (exit 2)" [ $? -eq 2 ]
sed '1s/"configSha256":"\(.\)/"configSha256":"X/' "$full" >"$work/hash.jnl"
sed -i '1s/"configSha256":"X/"configSha256":"0/' "$work/hash.jnl"
cmp -s "$work/hash.jnl" "$full" && sed -i '1s/"configSha256":"0/"configSha256":"1/' "$work/hash.jnl"
"$replay" "$work/hash.jnl" >/dev/null 2>"$work/hash.err"
rc=$?
check "a wrong configuration hash is an error (exit 2, says so)" \
	bash -c '[ $1 -eq 2 ] && grep -q "hash mismatch" "$2"' _ $rc "$work/hash.err"
sed '1s/\\"maxPlayers\\": 4/\\"maxPlayers\\": 3/' "$full" >"$work/cfg.jnl"
"$replay" "$work/cfg.jnl" >/dev/null 2>"$work/cfg.err"
rc=$?
check "a changed configuration text is an error (exit 2)" \
	bash -c '[ $1 -eq 2 ] && ! cmp -s "$2" "$3" && grep -q "hash mismatch" "$4"' _ $rc \
	"$work/cfg.jnl" "$full" "$work/cfg.err"
awk '/"digest"/ && !done { sub(/"digest":"./, "\"digest\":\"Z"); done = 1 } { print }' "$full" |
	sed 's/"digest":"Z/"digest":"0/' >"$work/stream.jnl"
cmp -s "$work/stream.jnl" "$full" && sed -i '0,/"digest":"0/s//"digest":"1/' "$work/stream.jnl"
"$replay" "$work/stream.jnl" >/dev/null 2>"$work/stream.err"
rc=$?
check "a digest that does not match is exit 1" \
	bash -c '[ $1 -eq 1 ] && grep -q "digest mismatch" "$2"' _ $rc "$work/stream.err"

# ---- 5. a journal that cannot be written -------------------------------------------
cfg=$src/resources/example.json
"$server" --config "$cfg" --port 0 --seed 1 --timeout 5 --journal "$work/no/such/dir.jnl" \
	2>"$work/nodir.err"
rc=$?
check "no such directory: exit 1 before listening" bash -c \
	'[ $1 -eq 1 ] && grep -q "cannot create journal" "$2" && ! grep -q listening "$2"' _ $rc \
	"$work/nodir.err"
echo precious >"$work/exists.jnl"
"$server" --config "$cfg" --port 0 --seed 1 --timeout 5 --journal "$work/exists.jnl" \
	2>"$work/exists.err"
rc=$?
check "an existing journal is never overwritten: exit 1, file untouched" bash -c \
	'[ $1 -eq 1 ] && [ "$(cat "$2")" = precious ] && grep -q "never overwritten" "$3"' _ $rc \
	"$work/exists.jnl" "$work/exists.err"
"$server" --config "$cfg" --port 0 --seed 1 --timeout 5 --journal "$work/x.jnl" \
	--journal-sync sometimes 2>/dev/null
check "--journal-sync sometimes is a usage error (64)" [ $? -eq 64 ]

# limited NAME BYTES: b_full_game_4p against a server whose files may not
# grow past BYTES, its journal NAME.jnl; sets out and rc (the runner's),
# NAME.rc gets the server's exit status and NAME.err what sopra-replay
# --stats said of the journal (replay_rc its exit status). The wrapper
# passes the runner's SIGTERM on and waits for the server's own status.
limited() {
	local name=$1 bytes=$2
	cat >"$work/$name.sh" <<EOF
#!/usr/bin/env bash
prlimit --fsize=$bytes "$server" --journal "$work/$name.jnl" "\$@" &
pid=\$!
trap 'kill -TERM \$pid' TERM
wait \$pid
status=\$?
while kill -0 \$pid 2>/dev/null; do wait \$pid; status=\$?; done
echo \$status >"$work/$name.rc"
EOF
	chmod +x "$work/$name.sh"
	out=$("$runner" --server "$work/$name.sh" -v "$src/systemtests/scenarios/b_full_game_4p.scn" 2>&1)
	rc=$?
	"$replay" --stats "$work/$name.jnl" >/dev/null 2>"$work/$name.err"
	replay_rc=$?
}

# 15 KiB hold the header and a few entries of the 4-player scenario, which
# then fails: the server stops where the journal ends (a resume would
# continue the game from there; its exit status, 1, is resume_bots_test's:
# the runner kills a server whose scenario failed)
limited limited $((15 * 1024))
check "file size limit mid-game: the server stops, the scenario fails" [ $rc -ne 0 ]
check "... the failure is logged loudly" grep -q "JOURNAL FAILED: write to" <<<"$out"
check "... and says the server stops" grep -q "JOURNAL FAILED: the server stops" <<<"$out"
check "... and the journal is a valid, shorter journal (no end record)" bash -c \
	'[ $1 -eq 0 ] && grep -q "no end record" "$2" && ! grep -q dropped "$2"' _ $replay_rc \
	"$work/limited.err"

# the limit inside the last digest line of b_full_game_4p's journal (3.):
# the entry that ended the game is written and synced, GameEnd goes out,
# the digest behind it cannot be written; the server must still exit 1
last_entry=$(LC_ALL=C grep -b '^{"n":' "$full" | tail -1) # OFFSET:LINE
last_line=${last_entry#*:}
end_of_last_entry=$((${last_entry%%:*} + $(LC_ALL=C printf '%s\n' "$last_line" | wc -c)))
limited digest-limited $((end_of_last_entry + 20))
check "file size limit in the last digest: the game ends, the scenario passes" [ $rc -eq 0 ]
check "... the failure is logged loudly" grep -q "JOURNAL FAILED: write to" <<<"$out"
check "... and the server exits 1" [ "$(cat "$work/digest-limited.rc" 2>/dev/null)" = 1 ]
check "... its journal holds every entry (valid, no end record)" bash -c \
	'[ $1 -eq 0 ] && grep -q "no end record" "$2" &&
	 [ "$(grep -c "^{\"n\":" "$3")" = "$(grep -c "^{\"n\":" "$4")" ]' _ $replay_rc \
	"$work/digest-limited.err" "$work/digest-limited.jnl" "$full"

echo "journal: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
