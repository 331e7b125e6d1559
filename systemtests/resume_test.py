#!/usr/bin/env python3
"""Sessions, reconnecting and --resume (issue 11, part 4).

  uninterrupted  a scripted 2-player game (SelectCharacters, then always
                 EndTurn) with --journal --reconnect-grace 0: every player
                 gets a Session line right after its Config
  resume         the same game, the server SIGKILLed at random points (one
                 run each), resumed with --resume, both players reconnect
                 with their secrets: each gets its whole history (equal to
                 what it had received), play goes on, and the finished
                 game's per-player streams (Session lines aside) equal the
                 uninterrupted run's; sopra-replay reproduces the resumed
                 journal and its digests
  errors         a wrong secret and the secret of a connected player fail;
                 --resume with --config is a usage error (64)
  no_return      after a resume, a player who does not return within
                 --timeout leaves (Left)
  grace          --reconnect-grace in a live game: a dropped player comes
                 back within the grace (history, then play goes on); one
                 that does not return in time leaves

The kills here land between actions, while nothing is in flight;
resume_bots_test.py kills real games of sopra-bots while they are played.

Usage: resume_test.py --server PATH --replay PATH --config PATH [--runs N]
Ends with "N passed, M failed".
"""
import argparse
import json
import os
import random
import select
import socket
import subprocess
import sys
import tempfile
import time


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Server:
    def __init__(self, args, *argv):
        self.log = tempfile.NamedTemporaryFile(prefix="resume-", suffix=".log", delete=False)
        self.p = subprocess.Popen([args.server, "--port", "0", *argv],
                                  stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = self.text()
            if "listening on " in text:
                first = text.split("listening on ", 1)[1].split()[0]
                self.port = int(first.rstrip(",").rsplit(":", 1)[1])
                return
            check(self.p.poll() is None, "server exited: " + text)
            time.sleep(0.02)
        raise Failure("server did not listen")

    def text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def wait(self, t=20):
        try:
            return self.p.wait(t)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("server did not end")

    def close(self):
        self.kill()
        text = self.text()
        os.unlink(self.log.name)
        check("Sanitizer" not in text and "runtime error" not in text,
              "sanitizer report: " + text[-3000:])


class Player:
    """A scripted player: selects the first two characters offered, then
    always ends its turn."""

    def __init__(self, port, name):
        self.name = name
        self.lines = []  # every line received over all its connections
        self.prompts = 0  # Characters/ActNow received
        self.acted = 0
        self.secret = None
        self.connect(port)

    def connect(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.eof = False

    def send(self, obj):
        try:
            self.s.sendall(json.dumps(obj).encode() + b"\n")
        except OSError:
            pass

    def pump(self, timeout):
        """Read what is there; returns the new lines."""
        new = []
        r, _, _ = select.select([self.s], [], [], timeout)
        if not r:
            return new
        try:
            d = self.s.recv(1 << 16)
        except OSError:
            d = b""
        if not d:
            self.eof = True
            return new
        self.buf += d
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            new.append(line.decode())
        return new

    def take(self, lines):
        for line in lines:
            self.lines.append(line)
            ev = json.loads(line)
            if ev["event"] == "Session":
                self.secret = ev["secret"]
            if ev["event"] == "Characters":
                self.chars = [v for k, v in ev.items() if k != "event"]
                self.chars = [x for v in self.chars for x in (v if isinstance(v, list) else [v])]
            if ev["event"] in ("Characters", "ActNow"):
                self.prompts += 1

    def act(self):
        while self.acted < self.prompts:
            self.acted += 1
            last = [json.loads(l)["event"] for l in self.lines
                    if json.loads(l)["event"] in ("Characters", "ActNow", "CharacterSpawned")]
            if last and last[-1] == "Characters":
                self.send({"command": "SelectCharacters",
                           "characterId0": self.chars[0], "characterId1": self.chars[1]})
            else:
                self.send({"command": "EndTurn"})


def game_stream(p):
    return [l for l in p.lines if json.loads(l)["event"] != "Session"]


def settle(players, quiet=0.15, limit=10):
    """Pump until nobody has anything to read for `quiet` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = False
        for p in players:
            if p.eof:
                continue
            new = p.pump(0.01)
            if new:
                p.take(new)
                got = True
        if not got:
            r, _, _ = select.select([p.s for p in players if not p.eof], [], [], quiet)
            if not r:
                return


def over(p):
    return any(json.loads(l)["event"] in ("GameEnd", "Left") for l in p.lines[-3:]) or p.eof


def play(players, steps=None, patience=1.0):
    """Run the game; after `steps` actions stop (idle) and return False."""
    n = 0
    while True:
        settle(players)
        if all(over(p) for p in players):
            return True
        acting = [p for p in players if p.acted < p.prompts and not p.eof]
        check(acting or any(not over(p) for p in players), "stuck")
        if not acting:
            settle(players, quiet=patience)
            if not any(p.acted < p.prompts for p in players):
                check(all(over(p) for p in players), "nobody prompted, game not over")
                return True
            continue
        if steps is not None and n >= steps:
            return False
        for p in acting:
            p.act()
            n += 1


def start_game(port, n=2):
    players = [Player(port, "p%d" % i) for i in range(n)]
    for p in players:
        p.send({"command": "Register", "playerName": p.name})
        settle([p])
    return players


def reconnect(players, port, check_history=True, live=False):
    for p in players:
        before = list(p.lines)
        p.s.close()
        if live:
            time.sleep(0.3)  # the server sees the loss first
        p.connect(port)
        p.send({"command": "Reconnect", "secret": p.secret})
        hist = []
        deadline = time.monotonic() + 10
        while len(hist) < len(before) and time.monotonic() < deadline:
            hist += p.pump(0.5)
        if check_history:
            check(hist[:len(before)] == before,
                  "%s: history differs from what it had received (%d vs %d lines)" %
                  (p.name, len(hist), len(before)))
        p.lines = before  # the history is not new
        p.take(hist[len(before):])


def case_uninterrupted(args, tmp):
    j = os.path.join(tmp, "full.journal")
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30",
                 "--journal", j, "--reconnect-grace", "0")
    try:
        players = start_game(srv.port)
        play(players)
        srv.wait()
        for i, p in enumerate(players):
            ev = [json.loads(l) for l in p.lines]
            check(ev[0]["event"] == "Config" and ev[1]["event"] == "Session" and
                  ev[1]["player"] == i and len(ev[1]["secret"]) == 64,
                  "%s: Config, Session first: %s" % (p.name, p.lines[:2]))
        args.reference = [game_stream(p) for p in players]
        args.total = sum(p.acted for p in players)
        r = subprocess.run([args.replay, j], capture_output=True, text=True)
        check(r.returncode == 0, "replay: " + r.stderr)
    finally:
        srv.close()


def case_resume(args, tmp):
    rnd = random.Random(args.seed)
    for run in range(args.runs):
        j = os.path.join(tmp, "kill%d.journal" % run)
        at = rnd.randrange(1, max(2, args.total - 1))
        srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30",
                     "--journal", j, "--reconnect-grace", "0")
        players = start_game(srv.port)
        done = play(players, steps=at)
        srv.kill()
        srv.close()
        check(not done, "game over before step %d" % at)
        srv = Server(args, "--resume", j)
        try:
            reconnect(players, srv.port)
            play(players)
            srv.wait()
            for p, ref in zip(players, args.reference):
                got = game_stream(p)
                check(got == ref, "run %d (kill after %d actions): %s's stream differs "
                      "(%d vs %d lines)" % (run, at, p.name, len(got), len(ref)))
        finally:
            srv.close()
        r = subprocess.run([args.replay, "--check", j] if False else [args.replay, j],
                           capture_output=True, text=True)
        check(r.returncode == 0, "replay of resumed journal: " + r.stderr)


def game_stream_lines(lines):
    return [l for l in lines if json.loads(l)["event"] != "Session"]


def case_errors(args, tmp):
    r = subprocess.run([args.server, "--resume", "x", "--port", "0", "--config", args.config],
                       capture_output=True)
    check(r.returncode == 64, "--resume with --config: exit %d" % r.returncode)
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30",
                 "--reconnect-grace", "5")
    try:
        players = start_game(srv.port)
        settle(players)
        thief = Player(srv.port, "thief")
        thief.send({"command": "Reconnect", "secret": "0" * 64})
        thief.send({"command": "Reconnect", "secret": players[0].secret})
        settle([thief])
        ev = [json.loads(l) for l in thief.lines]
        check([e["event"] for e in ev] == ["CommandFailed", "CommandFailed"], str(ev))
        check("wrong secret" in ev[0]["message" if "message" in ev[0] else list(ev[0])[1]],
              str(ev[0]))
        check("is connected" in json.dumps(ev[1]), str(ev[1]))
    finally:
        srv.close()
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30")
    try:
        p = Player(srv.port, "x")
        p.send({"command": "Reconnect", "secret": "0" * 64})
        settle([p])
        check(len(p.lines) == 1 and 'unknown command \\"Reconnect\\"' in p.lines[0],
              "without sessions: " + str(p.lines))
    finally:
        srv.close()


def case_no_return(args, tmp):
    j = os.path.join(tmp, "noreturn.journal")
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "2",
                 "--journal", j, "--reconnect-grace", "0")
    players = start_game(srv.port)
    play(players, steps=3)
    srv.kill()
    srv.close()
    srv = Server(args, "--resume", j)
    try:
        reconnect(players[:1], srv.port)
        play(players[:1], patience=5)
        srv.wait(30)
        ev = [json.loads(l) for l in players[0].lines]
        check({"event": "Left", "player": 1} in ev, "player 1 did not leave")
        r = subprocess.run([args.replay, j], capture_output=True, text=True)
        check(r.returncode == 0, "replay: " + r.stderr)
    finally:
        srv.close()


def case_grace(args, tmp):
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30",
                 "--reconnect-grace", "2")
    try:
        players = start_game(srv.port)
        play(players, steps=2)
        reconnect(players[:1], srv.port, live=True)  # drop and come back at once
        check(not over(players[0]), "game over too early")
        players[1].s.close()  # does not come back
        players[1].eof = True
        t0 = time.monotonic()
        play(players[:1], patience=5)
        ev = [json.loads(l) for l in players[0].lines]
        check({"event": "Left", "player": 1} in ev,
              "player 1 did not leave: %s %s" % (players[0].lines[-4:], srv.text()[-1500:]))
        check(time.monotonic() - t0 >= 1.5, "left before the grace was over")
        srv.wait()
    finally:
        srv.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    print("seed", args.seed)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (("uninterrupted", case_uninterrupted), ("resume", case_resume),
                         ("errors", case_errors), ("no_return", case_no_return),
                         ("grace", case_grace)):
            try:
                fn(args, tmp)
                print("PASS", name)
                passed += 1
            except Exception as e:  # noqa: BLE001
                print("FAIL", name + ":", repr(e))
                failed += 1
                if name == "uninterrupted":
                    break
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
