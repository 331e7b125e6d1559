#!/usr/bin/env python3
"""Sessions, reconnecting and --resume (docs/protocol.md, "Reconnecting";
docs/journal.md, "Resuming").

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
  end_resume     a journal whose last entry ended the game (the server was
                 killed before GameEnd went out): --resume starts the
                 epilogue; a stranger's command gets "the game is over"; a
                 player who reconnects gets its whole history, ending with
                 GameEnd, and EOF; the server exits by itself after
                 --timeout when one player does not come back, at once
                 when both do, and after --timeout when nobody does
  end_away       --reconnect-grace in a live game: a player away when the
                 game ends comes back afterwards and gets its history with
                 GameEnd; then the server exits by itself

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
import subprocess
import sys
import tempfile
import time

import sopratest
from sopratest import check


class Server(sopratest.Server):
    """sopra-server --port 0 with argv; close() also checks its log for
    sanitizer reports."""

    def __init__(self, args, *argv):
        super().__init__(args.server, *argv)

    def close(self):
        self.kill()
        try:
            self.sanitizer_clean()
        finally:
            super().close()


class Player(sopratest.ScriptedPlayer):
    """A scripted player (sopratest.ScriptedPlayer) with a name; a prompt
    it answers is the last Characters or ActNow unless characters spawned
    since."""

    LAST_OF = ("Characters", "ActNow", "CharacterSpawned")

    def __init__(self, port, name):
        self.name = name
        super().__init__(port)


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


def play(players, steps=None, patience=1.0):
    """Run the game; after `steps` actions stop (idle) and return False."""
    n = 0
    while True:
        settle(players)
        if all(p.over() for p in players):
            return True
        acting = [p for p in players if p.acted < p.prompts and not p.eof]
        check(acting or any(not p.over() for p in players), "stuck")
        if not acting:
            settle(players, quiet=patience)
            if not any(p.acted < p.prompts for p in players):
                check(all(p.over() for p in players), "nobody prompted, game not over")
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


def full_game(args, journal, timeout):
    """The scripted game played to its end with --journal and sessions."""
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", str(timeout),
                 "--journal", journal, "--reconnect-grace", "0")
    try:
        players = start_game(srv.port)
        play(players)
        srv.wait()
    finally:
        srv.close()
    return players


def case_uninterrupted(args, tmp):
    j = os.path.join(tmp, "full.journal")
    players = full_game(args, j, 30)
    for i, p in enumerate(players):
        ev = [json.loads(l) for l in p.lines]
        check(ev[0]["event"] == "Config" and ev[1]["event"] == "Session" and
              ev[1]["player"] == i and len(ev[1]["secret"]) == 64,
              "%s: Config, Session first: %s" % (p.name, p.lines[:2]))
    args.reference = [game_stream(p) for p in players]
    args.total = sum(p.acted for p in players)
    r = subprocess.run([args.replay, j], capture_output=True, text=True)
    check(r.returncode == 0, "replay: " + r.stderr)


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
        check(not players[0].over(), "game over too early")
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


def read_to_eof(p, limit=10):
    """The lines p gets until the server closes the connection."""
    lines = []
    deadline = time.monotonic() + limit
    while not p.eof and time.monotonic() < deadline:
        lines += p.pump(0.5)
    check(p.eof, "%s: the server did not close the connection" % p.name)
    return lines


def come_back_for_end(p, port, ref):
    """p reconnects after the end: its whole history, which ends with
    GameEnd and equals ref (Session aside), then EOF."""
    p.connect(port)
    p.send({"command": "Reconnect", "secret": p.secret})
    hist = read_to_eof(p)
    check(hist and json.loads(hist[-1])["event"] == "GameEnd",
          "%s: the history does not end with GameEnd: %s" % (p.name, hist[-2:]))
    check(game_stream_lines(hist) == ref, "%s: history after the end differs from its "
          "stream (%d vs %d lines)" % (p.name, len(game_stream_lines(hist)), len(ref)))


def timed_exit(srv, limit):
    t0 = time.monotonic()
    rc = srv.wait(limit)
    check(rc == 0, "server exit %d: %s" % (rc, srv.text()[-1500:]))
    return time.monotonic() - t0


def case_end_resume(args, tmp):
    j = os.path.join(tmp, "ended.journal")
    players = full_game(args, j, 3)
    refs = [game_stream(p) for p in players]
    # as if killed after the game's last entry, before GameEnd went out:
    # the end record (written at the close) goes
    with open(j, "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    check(lines[-1].startswith(b'{"end":"game over"'), "no end record: %r" % lines[-1:])
    with open(j, "wb") as f:
        f.write(b"\n".join(lines[:-1]) + b"\n")
    # one comes back, the other does not: the server waits --timeout (3 s)
    srv = Server(args, "--resume", j)
    try:
        late = Player(srv.port, "late")
        late.send({"command": "Register", "playerName": "late"})
        late.send({"command": "Reconnect", "secret": "0" * 64})
        settle([late])
        check([json.loads(l).get("message") for l in late.lines] ==
              ["the game is over", "Reconnect: wrong secret"], "stranger: %s" % late.lines)
        come_back_for_end(players[0], srv.port, refs[0])
        took = timed_exit(srv, 20)
        check(took >= 1.5, "exited %.1f s after the return, before the timeout" % took)
        check("did not come back within 3 s" in srv.text() and "player(s) 1 did" in srv.text(),
              "no epilogue timeout in the log: " + srv.text()[-1500:])
    finally:
        srv.close()
    # both come back: the server exits at once after the second
    srv = Server(args, "--resume", j)
    try:
        for p, ref in zip(players, refs):
            come_back_for_end(p, srv.port, ref)
        took = timed_exit(srv, 20)
        check(took < 1.5, "exit %.1f s after every player came back" % took)
        check("every player who had missed the end has received it" in srv.text(),
              "log: " + srv.text()[-1500:])
    finally:
        srv.close()
    # nobody comes back: --timeout
    srv = Server(args, "--resume", j)
    try:
        took = timed_exit(srv, 20)
        check(took >= 2, "exit after %.1f s, not after the timeout" % took)
        check("player(s) 0, 1 did not come back" in srv.text(), "log: " + srv.text()[-1500:])
    finally:
        srv.close()
    r = subprocess.run([args.replay, j], capture_output=True, text=True)
    check(r.returncode == 0, "replay: " + r.stderr)
    for i, ref in enumerate(refs):
        r = subprocess.run([args.replay, "--player", str(i), j], capture_output=True, text=True)
        got = game_stream_lines(r.stdout.splitlines())
        n = 2 + (i == 0)  # the game, then each return
        check(got == ref * n, "replay --player %d: %d lines, not %d x %d" %
              (i, len(got), n, len(ref)))


def case_end_away(args, tmp):
    srv = Server(args, "--config", args.config, "--seed", "7", "--timeout", "30",
                 "--reconnect-grace", "30")
    try:
        players = start_game(srv.port)
        check(not play(players, steps=args.total - 1), "game over too early")
        settle(players)
        acting = [p for p in players if p.acted < p.prompts]
        check(len(acting) == 1, "not one player to end the game: %d" % len(acting))
        last = acting[0]
        away = [p for p in players if p is not last][0]
        away.s.close()  # away (the grace runs) when the game ends
        time.sleep(0.3)  # the server sees the loss first
        last.act()
        last.take(read_to_eof(last))
        check(game_stream(last) == args.reference[players.index(last)],
              "%s: its stream differs from the uninterrupted game's" % last.name)
        time.sleep(0.3)
        check(srv.p.poll() is None, "the server did not wait for the away player")
        come_back_for_end(away, srv.port, args.reference[players.index(away)])
        took = timed_exit(srv, 20)
        check(took < 1.5, "exit %.1f s after the away player came back" % took)
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
                         ("grace", case_grace), ("end_resume", case_end_resume),
                         ("end_away", case_end_away)):
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
