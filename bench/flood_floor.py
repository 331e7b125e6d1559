#!/usr/bin/env python3
"""The honest round trip under a connect flood, against the floor.

Usage: bench/flood_floor.py --floor PATH --probe PATH
                            [--server PATH --config PATH] [--rounds N]

--floor is sopra-accept-floor (build/bench/), a server that accepts each
connection and closes it at once and answers one player's lines; --probe
is sopra-rtt-probe (build/systemtests/). Each round floods the floor from
127.0.0.2 exactly as crowd_test.py's address_flood floods sopra-server
(three processes at nice 10, connecting and never sending a byte, 6 s),
with the floor alone on CPU 0 and the probe SCHED_FIFO on the other CPUs,
as crowd_test.py --isolate does, and prints the probe's p99 before and
during the flood. With --server (and --config, as for crowd_test.py) each
round then runs crowd_test.py --isolate --only address_flood against
sopra-server and prints its figures beside the floor's, and the server's
p99 during the flood over the floor's.

A benchmark, not a test: it prints numbers and asserts nothing. Needs two
CPUs and root (SCHED_FIFO). docs/robustness.md, "The honest round trip
during floods", has what it measured.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "systemtests"))
import crowd_test as crowd  # noqa: E402  (the flood, the probe, p99)

FLOOD_PROCESSES = 3
FLOOD_SECONDS = 6
FLOOD_FROM = "127.0.0.2"
PROBE_LINE = '{"command":"Register","playerName":"again"}'


def start_floor(path):
    """The floor on CPU 0; returns (process, port)."""
    r, w = os.pipe()
    p = subprocess.Popen([path, str(w)], pass_fds=(w,))
    os.close(w)
    os.sched_setaffinity(p.pid, {0})
    port = int.from_bytes(os.read(r, 4), sys.byteorder)
    os.close(r)
    return p, port


def floor_round(args):
    """One flood of the floor: a dict of its figures."""
    floor, port = start_floor(args.floor)
    player = socket.create_connection(("127.0.0.1", port))
    # crowd_test's probe, SCHED_FIFO as under its --isolate
    crowd.args_global = types.SimpleNamespace(probe=args.probe, isolate=True)
    probe = crowd.Probe(types.SimpleNamespace(s=player, buf=b""), PROBE_LINE)
    probe.idle()
    t0 = time.monotonic()
    floods = [crowd.Child(lambda: crowd.connect_flood(FLOOD_FROM, port, FLOOD_SECONDS))
              for _ in range(FLOOD_PROCESSES)]
    connects = sum(f.result() for f in floods)
    t1 = time.monotonic()
    idle, busy = probe.idle_samples(t0), probe.window(t0, t1)
    player.close()
    floor.wait(timeout=10)
    return {"rate": connects / (t1 - t0), "idle": crowd.p99(idle), "busy": crowd.p99(busy)}


SERVER_LINE = re.compile(r"\((\d+)/s\).*?idle p50 [0-9.]+ p99 ([0-9.]+) ms.*?"
                         r"during the flood p50 [0-9.]+ p99 ([0-9.]+) ms", re.S)


def server_round(args):
    """crowd_test.py's address_flood against sopra-server, isolated."""
    cmd = [sys.executable, os.path.join(HERE, "..", "systemtests", "crowd_test.py"),
           "--server", args.server, "--config", args.config, "--probe", args.probe,
           "--only", "address_flood", "--isolate"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    m = SERVER_LINE.search(out)
    if not m:
        print(out, file=sys.stderr)
        raise SystemExit("flood_floor.py: no round trip line from crowd_test.py")
    return {"rate": float(m.group(1)), "idle": float(m.group(2)), "busy": float(m.group(3))}


def show(name, r):
    return "%s %6.0f connects/s, p99 idle %.3f flood %.3f ms (%.2fx)" % (
        name, r["rate"], r["idle"], r["busy"], r["busy"] / r["idle"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floor", required=True, help="sopra-accept-floor")
    ap.add_argument("--probe", required=True, help="sopra-rtt-probe")
    ap.add_argument("--server", help="sopra-server: run address_flood against it too")
    ap.add_argument("--config", help="the configuration for --server (h_basic.json)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.server and not args.config:
        ap.error("--server needs --config")
    cpus = os.sched_getaffinity(0) - {0}
    if not cpus:
        ap.error("needs two CPUs or more")
    os.sched_setaffinity(0, cpus)
    os.setpriority(os.PRIO_PROCESS, 0, -10)
    print("flood_floor.py: %s, %d rounds, load %.2f" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), args.rounds, os.getloadavg()[0]))
    for i in range(args.rounds):
        f = floor_round(args)
        line = "round %d: %s" % (i + 1, show("floor", f))
        if args.server:
            s = server_round(args)
            line += "; %s; server/floor during the flood %.2f" % (
                show("server", s), s["busy"] / f["busy"])
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
