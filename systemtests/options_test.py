#!/usr/bin/env python3
"""Server options for people and hosts: where it listens, what
watchers see, what the log says about a game's outcome.

  dual_stack   without --bind the server takes IPv6 and IPv4 clients
  bind         --bind 127.0.0.1 / ::1 / localhost: only those addresses
  watchers     --watch-port: a watcher from the start and one that joins
               late both get exactly the Config and every line sent to all
               players (a player's stream without its private events), and
               what they send changes nothing
  outcome      the log names the outcome and what ended the game

Usage: options_test.py --server PATH --config PATH
Ends with "N passed, M failed".
"""
import argparse
import json
import select
import socket
import subprocess
import sys
import time

import sopratest
from sopratest import Failure, check

PRIVATE = {"Config", "Characters", "ActNow", "CommandFailed"}


class Server(sopratest.Server):
    """sopra-server --port 0 with the test's configuration, seed 56 and
    `extra` options."""

    def __init__(self, args, *extra, timeout=10):
        super().__init__(args.server, "--config", args.config, "--seed", "56",
                         "--timeout", str(timeout), *extra)


def connect(host, port):
    return socket.create_connection((host, port), timeout=5)


class Lines:
    """A connection that collects every line it receives."""

    def __init__(self, sock):
        self.s = sock
        self.buf = b""
        self.lines = []
        self.eof = False

    def pump(self, timeout):
        r, _, _ = select.select([self.s], [], [], timeout)
        if not r:
            return False
        d = self.s.recv(1 << 16)
        if not d:
            self.eof = True
            return False
        self.buf += d
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.lines.append(line)
        return True

    def send(self, obj):
        self.s.sendall(json.dumps(obj).encode() + b"\n")


def event(line):
    return json.loads(line)["event"]


def case_dual_stack(args):
    srv = Server(args)
    try:
        check("listening on 0.0.0.0:%d and [::]:%d" % (srv.port, srv.port) in srv.text(),
              "log line: " + srv.text()[:200])
        for host, name in (("::1", "six"), ("127.0.0.1", "four")):
            c = Lines(connect(host, srv.port))
            c.send({"command": "Register", "playerName": name})
            while not c.lines:
                check(c.pump(5), "no answer over " + host)
            check(event(c.lines[0]) == "Config", "no Config over " + host)
    finally:
        srv.close()


def reachable(host, port):
    try:
        connect(host, port).close()
        return True
    except OSError:
        return False


def case_bind(args):
    for addr, yes, no in (("127.0.0.1", "127.0.0.1", "::1"), ("::1", "::1", "127.0.0.1")):
        srv = Server(args, "--bind", addr)
        try:
            check(reachable(yes, srv.port), "--bind %s: %s refused" % (addr, yes))
            check(not reachable(no, srv.port), "--bind %s: %s accepted" % (addr, no))
        finally:
            srv.close()
    srv = Server(args, "--bind", "localhost")
    try:
        names = {ai[4][0] for ai in socket.getaddrinfo("localhost", srv.port,
                                                       type=socket.SOCK_STREAM)}
        for host in names:
            check(reachable(host, srv.port), "--bind localhost: %s refused" % host)
    finally:
        srv.close()
    bad = subprocess.run([args.server, "--config", args.config, "--port", "0", "--seed", "1",
                          "--timeout", "1", "--bind", "no.such.host.invalid"],
                         capture_output=True, text=True, timeout=20)
    check(bad.returncode == 1 and
          "cannot listen on no.such.host.invalid: the name does not resolve" in bad.stderr,
          "a bad --bind: rc %d, %s" % (bad.returncode, bad.stderr[:200]))


def play_out(players, others, deadline_s=20):
    """Both players answer Characters and every ActNow; collect lines of
    everybody until GameEnd reached the players and the server closed."""
    deadline = time.monotonic() + deadline_s
    everyone = players + others
    seen = {id(p): 0 for p in players}
    while not all(c.eof for c in everyone):
        check(time.monotonic() < deadline, "game did not end")
        for c in everyone:
            if c.eof:
                continue
            c.pump(0.02)
        for p in players:
            for line in p.lines[seen[id(p)]:]:
                ev = json.loads(line)
                if ev["event"] == "Characters":
                    p.send({"command": "SelectCharacters", "characterId0": ev["characterId0"],
                            "characterId1": ev["characterId1"]})
                elif ev["event"] == "ActNow":
                    p.send({"command": "EndTurn"})
            seen[id(p)] = len(p.lines)


def case_watchers(args):
    srv = Server(args, "--watch-port", "0")
    try:
        early = Lines(connect("127.0.0.1", srv.watch_port))
        early.send({"command": "Register", "playerName": "sneaky"})  # ignored
        a = Lines(connect("127.0.0.1", srv.port))
        a.send({"command": "Register", "playerName": "A"})
        while not a.lines:
            a.pump(5)
        b = Lines(connect("::1", srv.port))
        b.send({"command": "Register", "playerName": "B"})  # maxPlayers 2: starts
        while len(b.lines) < 3:
            b.pump(5)
        late = Lines(connect("::1", srv.watch_port))
        play_out([a, b], [early, late])
        public_a = [l for l in a.lines if event(l) not in PRIVATE]
        public_b = [l for l in b.lines if event(l) not in PRIVATE]
        check(public_a == public_b, "the players' public streams differ")
        check(any(event(l) == "GameEnd" for l in public_a), "no GameEnd")
        for w, name in ((early, "early"), (late, "late")):
            check(w.lines and event(w.lines[0]) == "Config", name + ": no Config first")
            check(json.loads(w.lines[0])["config"] == json.loads(a.lines[0])["config"],
                  name + ": another Config")
            check(w.lines[1:] == public_a,
                  "%s watcher: %d lines, the players' public stream has %d" %
                  (name, len(w.lines) - 1, len(public_a)))
        check(srv.p.wait(5) == 0, "exit code")
        print("    watchers: %d public lines, identical for both watchers and both players"
              % len(public_a))
    finally:
        srv.close()


def case_outcome(args):
    srv = Server(args)
    try:
        a = Lines(connect("127.0.0.1", srv.port))
        a.send({"command": "Register", "playerName": "A"})
        b = Lines(connect("127.0.0.1", srv.port))
        b.send({"command": "Register", "playerName": "B"})
        play_out([a, b], [])
        win = [json.loads(l)["win"] for l in a.lines if event(l) == "GameEnd"][0]
        text = srv.text()
        want = "game over: won: the goal was reached" if win else "game over: lost:"
        check(want in text, "no '%s' in the log" % want)
        check("round 1, 2 player(s) registered" in text, "no round/players in the outcome")
    finally:
        srv.close()
    srv = Server(args, timeout=1)
    try:
        c = Lines(connect("127.0.0.1", srv.port))
        c.send({"command": "Leave"})  # a stranger's Leave aborts the registration
        check(srv.p.wait(5) == 0, "exit code")
        check("game over: registration aborted by conn 1's Leave (not registered)" in srv.text(),
              "abort cause not logged: " + srv.text()[-300:])
    finally:
        srv.close()


CASES = [("dual_stack", case_dual_stack), ("bind", case_bind), ("watchers", case_watchers),
         ("outcome", case_outcome)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--config", required=True)
    args = ap.parse_args()
    passed = failed = 0
    for name, fn in CASES:
        try:
            fn(args)
            print("PASS " + name, flush=True)
            passed += 1
        except (Failure, OSError, ValueError, KeyError, IndexError,
                subprocess.TimeoutExpired) as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
