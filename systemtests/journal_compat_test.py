#!/usr/bin/env python3
"""Journals written by an earlier build still replay and resume identically.

tests/data/journals/ holds journals written by an older sopra-server (the
build named in its README), and what that build's sopra-replay printed for
each, and what its sopra-server sent when each resumable one was resumed.
This test replays and resumes them with the current build and compares:

  replay   sopra-replay of every journal prints the same lines, byte for
           byte (every digest in it checked), and --player N the same
           streams
  resume   for each journal that ends without an end record (the server
           was killed), --resume of a copy: every player reconnects with its
           secret (derived from the header's session key) and gets the same
           history; the resumed game is played on to its end by the same
           script and every player's stream, and sopra-replay of the resumed
           journal, are those of the older build

The journals hold what the older build wrote: player names, a bad line's
message and a Reconnect's secret with backspace and form feed in them
(written as \\u0008 and \\u000c then; the current writer spells them \\b and
\\f, which every JSON reader reads as the same bytes), a lost connection, a
Reconnect, a grace that ran out, a resume record after the end of a game.

  journal_compat_test.py --server S --replay R --data DIR
  journal_compat_test.py --server S --replay R --data DIR --make CONFIG
      (writes the journals and the expected outputs with S and R: only to
      rebuild the fixtures with an older build)

Ends with "N passed, M failed".
"""
import argparse
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

import sopratest
from sopratest import Failure, check


class Server(sopratest.Server):
    """sopra-server on --port 0 (sopratest.Server); close() also checks that
    no sanitizer reported anything."""

    def close(self):
        self.kill()
        self.sanitizer_clean()
        super().close()


class Client(sopratest.ScriptedPlayer):
    """A connection that keeps every line it receives, and a scripted
    player on it (sopratest.ScriptedPlayer)."""


def settle(clients, quiet=0.2, limit=15):
    """Read until nobody has anything to read for `quiet` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        live = [c for c in clients if not c.eof]
        if not live:
            return
        r, _, _ = select.select([c.s for c in live], [], [], quiet)
        if not r:
            return
        for c in live:
            if c.s in r:
                c.take(c.pump(0))


def play(clients, steps=None):
    """Play until the game is over (True) or `steps` actions were taken."""
    n = 0
    while True:
        settle(clients)
        acting = [c for c in clients if c.acted < c.prompts and not c.eof]
        if not acting:
            return all(c.over() for c in clients)
        for c in acting:
            if steps is not None and n >= steps:
                return False
            c.act()
            n += 1


def register(port, names):
    clients = []
    for name in names:
        c = Client(port)
        c.send({"command": "Register", "playerName": name})
        settle([c])
        clients.append(c)
    return clients


def secret_of(journal, player):
    """The secret of player, as the server derives it (docs/journal.md)."""
    with open(journal, "rb") as f:
        header = json.loads(f.readline())
    key = bytes.fromhex(header["sessionKey"])
    return hashlib.sha256(key + player.to_bytes(4, "big")).hexdigest()


def replay(args, journal, *opts):
    r = subprocess.run([args.replay, *opts, journal], capture_output=True)
    check(r.returncode == 0, "sopra-replay %s: exit %d: %s" %
          (os.path.basename(journal), r.returncode, r.stderr.decode(errors="replace")))
    return r.stdout.decode()


def players_of(journal):
    """How many players registered in the journal's game."""
    n = 0
    with open(journal, "rb") as f:
        for line in f.read().split(b"\n")[1:]:
            if line.startswith(b"{\"n\":") and b"\"command\":\"Register\"" in line and \
                    b"\"player\":-1" in line:
                n += 1
    return n


def resume(args, journal, pending, work):
    """Resume a copy of journal; every player comes back and the game is
    played to its end. Returns what each player received after its
    Reconnect and the replay of the resumed journal."""
    copy = os.path.join(work, os.path.basename(journal) + ".resumed")
    shutil.copyfile(journal, copy)
    srv = Server(args.server, "--resume", copy)
    try:
        clients = []
        for p in range(players_of(journal)):
            c = Client(srv.port)
            c.send({"command": "Reconnect", "secret": secret_of(copy, p)})
            settle([c], quiet=0.3)
            # the history: its prompts were answered before the kill, but
            # for the one the game waited for then
            c.acted = c.prompts - pending[p]
            clients.append(c)
        play(clients)
        settle(clients, quiet=0.3)
        srv.wait()
    finally:
        srv.close()
    return {"streams": [c.lines for c in clients], "replay": replay(args, copy)}


# ---- making the fixtures (with an older build) ---------------------------

NAMES = ["Ada\bBell", "Form\ffeed \"q\" \\ tab\t nl\n \u00e9 \U0001f9df"]


def make_plain(args, j):
    """No sessions: names and bad lines with backspace and form feed."""
    srv = Server(args.server, "--config", args.make, "--seed", "11", "--timeout", "30",
                 "--journal", j)
    try:
        stranger = Client(srv.port)
        stranger.send({"command": "Fly\b\f"})
        stranger.send_raw(b"{\"command\":\"Register\",\"playerName\":5}\n")
        settle([stranger])
        clients = register(srv.port, NAMES)
        play(clients)
        srv.wait()
    finally:
        srv.close()


def make_sessions(args, j):
    """Sessions with a grace: a Reconnect whose secret holds backspaces and
    form feeds, a player who drops and comes back, one whose grace runs
    out; the game goes on to its end."""
    srv = Server(args.server, "--config", args.make, "--seed", "12", "--timeout", "30",
                 "--journal", j, "--reconnect-grace", "1")
    try:
        clients = register(srv.port, NAMES)
        play(clients, steps=3)
        thief = Client(srv.port)
        thief.send({"command": "Reconnect", "secret": "\b" * 32 + "\f" * 32})
        settle([thief])
        a, b = clients
        answered = a.acted
        a.s.close()
        time.sleep(0.3)
        a.connect(srv.port)
        a.lines, a.prompts = [], 0
        a.send({"command": "Reconnect", "secret": secret_of(j, 0)})
        settle([a])
        a.acted = answered
        b.s.close()
        b.eof = True
        time.sleep(1.5)  # b's grace runs out
        play([a])
        srv.wait()
    finally:
        srv.close()


def make_killed(args, j):
    """Sessions without a grace; the server is killed in the middle. Returns
    who had a prompt to answer then."""
    srv = Server(args.server, "--config", args.make, "--seed", "13", "--timeout", "30",
                 "--journal", j, "--reconnect-grace", "0")
    try:
        clients = register(srv.port, NAMES)
        play(clients, steps=9)
        settle(clients)
        return [c.acted < c.prompts for c in clients]
    finally:
        srv.close()  # SIGKILL


def make_resumed_end(args, j):
    """The game ends while player 1 is away; the server is killed in the
    epilogue, resumed (a resume record after the end) and killed again
    before anybody came back. Returns who had a prompt to answer."""
    def game(*journal):
        srv = Server(args.server, "--config", args.make, "--seed", "14", "--timeout", "30",
                     "--reconnect-grace", "30", *journal)
        return srv, register(srv.port, NAMES)

    srv, clients = game()  # how many actions the game takes
    try:
        play(clients)
        total = sum(c.acted for c in clients)
    finally:
        srv.close()
    srv, clients = game("--journal", j)
    try:
        check(not play(clients, steps=total - 1), "the game ended early")
        settle(clients)
        last = [c for c in clients if c.acted < c.prompts]
        check(len(last) == 1, "not one player to end the game")
        away = [c for c in clients if c is not last[0]][0]
        away.s.close()
        time.sleep(0.3)  # the server sees the loss first
        last[0].act()
        settle([last[0]])
        check(last[0].over(), "the game did not end")
        time.sleep(0.3)
    finally:
        srv.close()  # SIGKILL in the epilogue
    srv = Server(args.server, "--resume", j)
    time.sleep(0.5)
    srv.close()
    return [False, False]


MAKERS = [("plain", make_plain), ("sessions", make_sessions), ("killed", make_killed),
          ("resumed_end", make_resumed_end)]


def make(args):
    os.makedirs(args.data, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for name, fn in MAKERS:
            j = os.path.join(args.data, name + ".jnl")
            if os.path.exists(j):
                os.unlink(j)
            pending = fn(args, j)
            expected = {"replay": replay(args, j)}
            with open(j, "rb") as f:
                last = f.read().split(b"\n")[-2]
            if not last.startswith(b"{\"end\""):
                expected["pending"] = pending
                expected["resume"] = resume(args, j, pending, work)
            with open(os.path.join(args.data, name + ".expected.json"), "w") as f:
                json.dump(expected, f, indent=1, ensure_ascii=True)
                f.write("\n")
            print("made", name)


# ---- the test --------------------------------------------------------------

def compare(what, got, want):
    if got == want:
        return
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise Failure("%s differs at %d:\n  got  %r\n  want %r" % (what, i, g, w))
    raise Failure("%s: %d items, want %d" % (what, len(got), len(want)))


def case(args, name, work):
    j = os.path.join(args.data, name + ".jnl")
    with open(os.path.join(args.data, name + ".expected.json")) as f:
        want = json.load(f)
    lines = want["replay"].splitlines()
    compare(name + ": replay", replay(args, j).splitlines(), lines)
    for p in range(players_of(j)):
        prefix = "%d\t" % p
        compare("%s: replay --player %d" % (name, p),
                replay(args, j, "--player", str(p)).splitlines(),
                [l[len(prefix):] for l in lines if l.startswith(prefix)])
    if "resume" in want:
        got = resume(args, j, want["pending"], work)
        for p, stream in enumerate(want["resume"]["streams"]):
            compare("%s: resumed, player %d" % (name, p), got["streams"][p], stream)
        compare(name + ": replay of the resumed journal", got["replay"].splitlines(),
                want["resume"]["replay"].splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--make", metavar="CONFIG")
    args = ap.parse_args()
    if args.make:
        make(args)
        return
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        for name, _ in MAKERS:
            try:
                case(args, name, work)
                print("PASS", name)
                passed += 1
            except Exception as e:  # noqa: BLE001
                print("FAIL", name + ":", e)
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
