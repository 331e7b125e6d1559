#!/usr/bin/env python3
"""sopra-server's defaults: the default game is played to its end.

  no_options   `sopra-server` with no option at all listens on port 7777
               (IPv4 and IPv6) with a 30 s timeout and a random seed, names
               the built-in game in its log, sends the bytes of
               resources/example.json as every player's Config, and two
               sopra-bots play it to its end (exit 0 everywhere). When
               port 7777 is taken the case is skipped loudly (exit 77 at the
               end); under CI=true that is a failure.
  journal      the default game with --port 0 --journal FILE only: the
               journal names the built-in game (configPath) and holds its
               text, and sopra-replay reproduces exactly what each bot
               received.

Usage: defaults_test.py --server PATH --bot PATH --replay PATH --config PATH
                        --workdir DIR
--config is resources/example.json, the file that is compiled in.
Ends with "N passed, M failed".
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys

from sopratest import Failure, Server, check

GAME_TIMEOUT = 600  # seconds for a whole bot game on a loaded machine
BUILT_IN = "built-in:resources/example.json"


class Skip(Exception):
    pass


def port_free(port):
    """Whether a server could listen on port (as sopra-server binds:
    SO_REUSEADDR, every IPv4 address)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


class Game:
    """sopra-server with the given options (port None: no --port) and two
    sopra-bots on it."""

    def __init__(self, args, work, *server_args, port=None):
        self.args, self.work = args, work
        os.makedirs(work)
        self.server = Server(args.server, *server_args, port=port,
                             log=os.path.join(work, "server.log"))
        self.port = self.server.port
        self.bots = []

    def bot(self, i, start):
        stream = os.path.join(self.work, "bot%d.stream" % i)
        cmd = [self.args.bot, "--port", str(self.port), "--name", "Bot%d" % i,
               "--seed", str(10 + i), "--quiet", "--stream", stream]
        if start:
            cmd.append("--start")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.bots.append((p, stream))
        line = p.stdout.readline()  # "registered BotN": the next bot comes after
        check(line.startswith("registered "), "bot %d did not register: %r %s" %
              (i, line, p.stderr.read() if p.poll() is not None else ""))

    def play(self):
        """Two bots play the game to its end; every process exits 0."""
        self.bot(1, False)
        self.bot(2, True)
        rc = self.server.wait(GAME_TIMEOUT)
        log = self.server.text()
        check(rc == 0, "the server exited %d: %s" % (rc, log[-2000:]))
        for i, (p, _) in enumerate(self.bots, 1):
            out, err = p.communicate(timeout=60)
            check(p.returncode == 0, "bot %d exited %d: %s" % (i, p.returncode, err))
        check(re.search(r"game over: \w+.*; round \d+, 2 player\(s\) registered", log),
              "no game over with 2 players in the log: " + log[-2000:])

    def stream(self, i):
        with open(self.bots[i - 1][1], "rb") as f:
            return f.read()

    def close(self):
        self.server.close()
        for p, _ in self.bots:
            if p.poll() is None:
                p.kill()
                p.wait()


def config_event(stream):
    first = json.loads(stream.split(b"\n", 1)[0])
    check(first.get("event") == "Config", "the first line is not Config: %r" % first)
    return first["config"].encode()


def case_no_options(args, work):
    if not port_free(7777):
        raise Skip("port 7777 is taken on this machine: `sopra-server` with no options "
                   "cannot be tried (free the port and run again)")
    game = Game(args, work)
    try:
        log = game.server.text()
        check(game.port == 7777, "not on port 7777: " + log)
        check(re.search(r"listening on 0\.0\.0\.0:7777 and \[::\]:7777 \(rules base, "
                        r"timeout 30 s,", log), "not 7777 dual-stack, 30 s, base: " + log)
        check(re.search(r"^sopra-server: seed -?\d+ \(random; pass --seed -?\d+ to replay",
                        log, re.M), "no random seed in the log: " + log)
        check("sopra-server: the default game: the built-in copy of resources/example.json"
              in log, "the log does not name the built-in game: " + log)
        game.play()
        with open(args.config, "rb") as f:
            example = f.read()
        for i in (1, 2):
            check(config_event(game.stream(i)) == example,
                  "bot %d's Config is not the bytes of %s" % (i, args.config))
    finally:
        game.close()


def case_journal(args, work):
    journal = os.path.join(work, "game.jnl")
    game = Game(args, work, "--journal", journal, port=0)
    try:
        game.play()
    finally:
        game.close()
    with open(journal) as f:
        header = json.loads(f.readline())
    check(header["configPath"] == BUILT_IN,
          "configPath is %r, not %r" % (header["configPath"], BUILT_IN))
    with open(args.config) as f:
        check(header["config"] == f.read(), "the journal's config is not the example's text")
    check(header["timeout"] == 30, "the journal's timeout is %r" % header["timeout"])
    for player in (0, 1):
        r = subprocess.run([args.replay, "--player", str(player), journal],
                           capture_output=True, timeout=120)
        check(r.returncode == 0, "sopra-replay exited %d: %s" % (r.returncode, r.stderr))
        check(r.stdout == game.stream(player + 1),
              "sopra-replay --player %d differs from what bot %d received"
              % (player, player + 1))


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--server", "--bot", "--replay", "--config", "--workdir"):
        ap.add_argument(opt, required=True)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    passed = failed = 0
    skipped = []
    for name, case in (("no_options", case_no_options), ("journal", case_journal)):
        try:
            case(args, os.path.join(args.workdir, name))
            passed += 1
            print("PASS " + name, flush=True)
        except Skip as e:
            skipped.append("%s: %s" % (name, e))
        except Failure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
    ci = os.environ.get("CI") == "true"
    for s in skipped:
        print("*" * 70 + "\nSKIPPED: " + s + ("\n(a failure under CI=true)" if ci else "")
              + "\n" + "*" * 70, flush=True)
    if ci:
        failed += len(skipped)
    print("%d passed, %d failed" % (passed, failed))
    if failed:
        sys.exit(1)
    sys.exit(77 if skipped else 0)


if __name__ == "__main__":
    main()
