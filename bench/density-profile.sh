#!/usr/bin/env bash
# Where the servers' CPU goes per command at a person's pace (docs/performance.md,
# "Density"): plays one level of bench/density.sh and, in the middle of it,
# counts the servers' system calls by kind, context switches and page faults
# with `perf stat`, and samples their stacks with `perf record`, sorted into
# wake-up and sleep, the TCP sends, the reads and the work in user space.
#
#   bench/density-profile.sh [GAMES [SECONDS]] [-- sopra-density options]
#                                  default 300 games, 12 s of counting
#
# Needs perf (Debian: linux-perf) and the privilege to attach to the servers.
# Counts are per command offered (GAMES / 2 per second at the default pace;
# the density table beside them shows they were all carried). Counts hold on
# a loaded machine; the split of the CPU time moves with the caches that
# other work leaves, so compare it only with runs at a similar load.
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-300}
secs=${2:-12}
shift $(($# > 2 ? 2 : $#))
[ "${1:-}" = "--" ] && shift
command -v perf >/dev/null || { echo "density-profile: needs perf" >&2; exit 1; }
dir=${BENCH_BUILD_DIR:-build-bench}
out=$(mktemp -d "${TMPDIR:-/tmp}/density-profile.XXXXXX")
bench=
trap 'if [ -n "$bench" ]; then kill -- -"$bench" 2>/dev/null; wait "$bench"; fi; rm -rf "$out"' EXIT
BENCH_BUILD_DIR=$dir setsid bench/density.sh --games "$games" --seconds $((secs * 2 + 6)) "$@" \
	>"$out/table.md" 2>"$out/progress" &
bench=$!
until grep -q 'playing' "$out/progress" 2>/dev/null; do
	kill -0 "$bench" 2>/dev/null || { cat "$out/progress" >&2; exit 1; }
	sleep 0.5
done
sleep 3
# the servers: children of the bench's workers, on its generated configuration
pids=$(pgrep -f -- "--config [^ ]*sopra-bench-density-" | paste -sd, -)
n=$(echo "$pids" | tr , '\n' | grep -c . || true)
[ "$n" -gt 0 ] || { echo "density-profile: no servers found" >&2; exit 1; }
events=task-clock,context-switches,page-faults,raw_syscalls:sys_enter
for s in read writev epoll_wait; do events+=",syscalls:sys_enter_$s"; done
perf stat -x, -e "$events" -p "$pids" -- sleep "$secs" 2>"$out/stat" >/dev/null
perf record -q -o "$out/perf.data" -F 2999 -g -p "$pids" -- sleep "$secs" 2>/dev/null >/dev/null
perf script -i "$out/perf.data" -F comm,ip,sym,dso 2>/dev/null >"$out/stacks" || true
wait "$bench" || true
bench=
period_ms=2000
prev=""
for a in "$@"; do
	[ "$prev" = "--period-ms" ] && period_ms=$a
	prev=$a
done
python3 - "$out/stat" "$out/stacks" "$n" "$secs" "$period_ms" <<'EOF'
import collections, sys
stat, stacks, n, secs, period_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
cmds = n * secs * 1000.0 / period_ms
print(f"density-profile: {n} servers, {secs:.0f} s, about {cmds:.0f} commands offered\n")
print("| per command | count |\n|---|---|")
for line in open(stat):
    f = line.strip().split(",")
    if len(f) < 3 or not f[0].replace(".", "").isdigit():
        continue
    v, name = float(f[0]), f[2]
    if name == "task-clock":  # msec
        print(f"| server CPU (us) | {v * 1000 / cmds:.1f} |")
    else:
        name = name.replace("raw_syscalls:sys_enter", "system calls").replace("syscalls:sys_enter_", "")
        print(f"| {name} | {v / cmds:.2f} |")
# one sample: its frames, innermost first
samples, cur = [], []
for line in open(stacks):
    if line and not line[0].isspace():
        if cur:
            samples.append(cur)
        cur = []
    elif line.strip():
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            cur.append(parts[1])
if cur:
    samples.append(cur)
def kind(frames):
    leaf = frames[0]
    chain = " ".join(frames)
    if "kallsyms" not in leaf:
        # a sample that lands on the instruction after the system call
        # that blocked is the wake-up, taken with interrupts off
        if leaf.startswith("epoll_wait "):
            return "wake-up and sleep (scheduler, context switch, epoll)"
        return "user space: parse, apply, encode, libevent, malloc"
    if "epoll_wait" in chain:
        return "wake-up and sleep (scheduler, context switch, epoll)"
    if "writev" in chain:
        if "exit_to_user_mode_loop" in chain or "schedule" in chain:
            return "preempted after a send (the woken client ran)"
        return "TCP sends (loopback: the client's receive and wake-up too)"
    if "sys_read" in chain:
        return "reading the command"
    return "other kernel (interrupts, timers)"
count = collections.Counter(kind(s) for s in samples)
if samples:
    print(f"\n| where the servers' CPU went ({len(samples)} samples) | share |\n|---|---|")
    for k, v in count.most_common():
        print(f"| {k} | {100 * v / len(samples):.0f} % |")
EOF
echo
cat "$out/table.md"
