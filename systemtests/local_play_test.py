#!/usr/bin/env python3
"""Play in one command: `sopra-client --local --bots 2` as a person uses it.

Each case runs the client in a tmux server of its own (sopratest.TmuxServer:
a private socket, killed at the end) with $XDG_STATE_HOME in the work
directory, and
follows every process the client started (its children: the local
sopra-server and the two sopra-bots):

  whole_game   the board appears, the person picks characters and ends each
               turn until "Game over"; the server ends with the game (by
               itself, before the client quits); q ends the client, which
               prints where the game's journal is; the journal ends with
               "game over" and sopra-replay checks it.
  quit         q and y in the middle of the game: the client, the server and
               the bots are gone; the journal ends with "stopped".
  ctrl_c       C-c (SIGINT to the terminal's processes): all gone, the
               journal ends with "stopped".
  hangup       the terminal goes away (tmux kill-server: SIGHUP, which the
               server ignores): all gone, the client stopped the server in
               order (the journal ends with "stopped").
  sigkill      the client is killed with SIGKILL: its children die with it.

"Gone" means no such process runs any more (a zombie waiting for its reaper
counts as gone). Without tmux the test is skipped loudly (exit 77); under
CI=true that is a failure.

Usage: local_play_test.py --client PATH --replay PATH --workdir DIR
Ends with "N passed, M failed".
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import sopratest
from sopratest import Failure, TmuxServer, check

TIMEOUT = 60.0    # for one thing to show up on a loaded machine
GAME_TIMEOUT = 900.0  # for a whole game


def proc_stat(pid):
    """(state, parent pid, start time) of a process, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def children(pid):
    """The processes whose parent is pid: {pid: start time}."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st[1] == pid:
                out[int(name)] = st[2]
    return out


def running(pid, start):
    """Whether the process pid that started at `start` still runs (not a
    zombie, not a new process that reused the pid)."""
    st = proc_stat(pid)
    return st is not None and st[2] == start and st[0] != "Z"


class Session:
    """The client in a tmux server of its own; its processes followed."""

    def __init__(self, args, name, extra=()):
        self.args = args
        self.work = os.path.join(args.workdir, name)
        self.state = os.path.join(self.work, "state")
        os.makedirs(self.state)
        self.server = TmuxServer("sopra-local-play")
        self.tmux("set-option", "-g", "remain-on-exit", "on")  # the last output stays readable
        cmd = "exec env XDG_STATE_HOME=%s %s --local --bots 2 --name Anna %s" % (
            self.state, args.client, " ".join(extra))
        self.tmux("new-session", "-d", "-s", "play", "-x", "100", "-y", "40", cmd)
        self.pid = int(self.tmux("display-message", "-p", "-t", "play", "#{pane_pid}"))
        self.start = proc_stat(self.pid)[2]
        self.procs = {}  # every child of the client seen: pid -> start time

    def tmux(self, *a):
        return self.server.run(*a, check=True).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "play")

    def keys(self, *k):
        self.tmux("send-keys", "-t", "play", *k)

    def follow(self):
        """Note the client's children (they are all started after the board)."""
        st = proc_stat(self.pid)
        if st and st[0] != "Z":
            self.procs.update(children(self.pid))

    def wait(self, pred, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        s = ""
        while time.monotonic() < deadline:
            s = self.screen()
            self.follow()
            if pred(s):
                return s
            time.sleep(0.1)
        raise Failure("no %s after %d s; the screen:\n%s" % (what, timeout, s))

    def board(self):
        """The board with the two bots in: the local server and the bots run."""
        s = self.wait(lambda s: re.search(r"^Round .*\[PLAY base\]", s, re.M) and
                      "Bot2 is player 2" in s, "board with both bots")
        self.wait(lambda s: len(self.procs) == 3, "server and two bots as the client's "
                  "children (%s)" % self.procs)
        exes = sorted(os.path.basename(os.readlink("/proc/%d/exe" % p)) for p in self.procs)
        check(exes == ["sopra-bot", "sopra-bot", "sopra-server"],
              "the client's children are %s" % exes)
        return s

    def server_pid(self):
        for p, start in self.procs.items():
            try:
                if os.path.basename(os.readlink("/proc/%d/exe" % p)) == "sopra-server":
                    return p, start
            except OSError:
                pass
        raise Failure("no sopra-server among the client's children")

    def client_gone(self):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            st = proc_stat(self.pid)
            if st is None or st[0] == "Z" or self.tmux("display-message", "-p", "-t", "play",
                                                        "#{pane_dead}").strip() == "1":
                return
            time.sleep(0.1)
        raise Failure("the client did not end:\n" + self.screen())

    def all_gone(self):
        """The client and every process it started end (within TIMEOUT)."""
        check(len(self.procs) == 3, "not 3 processes followed: %s" % self.procs)
        deadline = time.monotonic() + TIMEOUT
        every = dict(self.procs)
        every[self.pid] = self.start
        while time.monotonic() < deadline:
            left = [p for p, start in every.items() if running(p, start)]
            if not left:
                return
            time.sleep(0.1)
        raise Failure("left behind: %s" % ", ".join(
            "%d (%s)" % (p, os.path.basename(os.readlink("/proc/%d/exe" % p)))
            for p in left))

    def journal(self):
        files = [f for f in os.listdir(os.path.join(self.state, "sopra-server"))
                 if f.endswith(".jnl")]
        check(len(files) == 1, "not one journal in the state directory: %s" % files)
        return os.path.join(self.state, "sopra-server", files[0])

    def journal_end(self):
        with open(self.journal()) as f:  # a torn one may end in zero bytes
            last = f.read().split("\0", 1)[0].rstrip("\n").rsplit("\n", 1)[-1]
        return json.loads(last).get("end")

    def close(self):
        for p, start in self.procs.items():
            if running(p, start):
                os.kill(p, signal.SIGKILL)
        self.server.kill()


def action_bar(screen):
    """The action bar: the row above the status line, and the row above
    that when the bar takes two (its first row then starts "Keys:")."""
    lines = screen.rstrip("\n").split("\n")
    if len(lines) > 2 and lines[-3].startswith("Keys: "):
        return lines[-3] + " " + lines[-2]
    return lines[-2] if len(lines) > 1 else ""


def case_whole_game(args, t):
    t.board()
    server, start = t.server_pid()
    deadline = time.monotonic() + GAME_TIMEOUT
    while True:
        check(time.monotonic() < deadline, "the game did not end:\n" + t.screen())
        s = t.screen()
        t.follow()
        if "Game over" in s:
            break
        if "Pick:" in s:
            t.keys("1")  # the first pair of characters
        elif re.search(r"(^| )e:", action_bar(s)):
            t.keys("e")  # end the turn
        time.sleep(0.2)
    end = t.wait(lambda s: re.search(r"Game over: the colony has (WON|LOST)", s), "result")
    # the server ends with the game, by itself: the client still runs
    deadline = time.monotonic() + TIMEOUT
    while running(server, start):
        check(time.monotonic() < deadline, "the server still runs after the game's end")
        time.sleep(0.1)
    check(proc_stat(t.pid) is not None and proc_stat(t.pid)[0] != "Z",
          "the client did not wait for the person at the end")
    t.keys("q")
    t.client_gone()
    t.all_gone()
    journal = t.journal()
    out = t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "play")  # wrapped, scrolled
    check("the game's journal: %s" % journal in out,
          "the client does not say where the journal is:\n" + out)
    check(t.journal_end() == "game over", "the journal ends with %r" % t.journal_end())
    r = subprocess.run([args.replay, "--quiet", journal], capture_output=True, text=True)
    check(r.returncode == 0, "sopra-replay: %d %s" % (r.returncode, r.stderr))
    print("  whole_game: %s" % re.search(r"Game over: the colony has \w+", end).group(0),
          flush=True)


def mid_game(t):
    """The board, and the game under way (the selection or our turn)."""
    t.board()
    t.wait(lambda s: "Pick:" in s or re.search(r"(^| )e:", action_bar(s)), "game under way")


def stopped_in_order(t):
    """Every process is gone and the server closed its journal: "stopped"."""
    t.all_gone()
    check(t.journal_end() == "stopped", "the journal ends with %r" % t.journal_end())


def case_quit(args, t):
    mid_game(t)
    t.keys("Escape")
    t.keys("q")
    t.wait(lambda s: "Quit the game?" in s, "the question whether to quit")
    t.keys("y")
    stopped_in_order(t)


def case_ctrl_c(args, t):
    mid_game(t)
    t.keys("C-c")
    stopped_in_order(t)


def case_hangup(args, t):
    mid_game(t)
    t.server.kill()  # tmux kill-server: the terminal goes away
    stopped_in_order(t)  # the server ignores SIGHUP: the client stopped it


def case_sigkill(args, t):
    mid_game(t)
    os.kill(t.pid, signal.SIGKILL)
    t.all_gone()


CASES = [("whole_game", case_whole_game, ()), ("quit", case_quit, ()),
         ("ctrl_c", case_ctrl_c, ()), ("hangup", case_hangup, ()),
         ("sigkill", case_sigkill, ())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    for k in ("client", "replay", "workdir"):
        setattr(args, k, os.path.abspath(getattr(args, k)))
    sopratest.require_tmux("local_play_test")
    shutil.rmtree(args.workdir, ignore_errors=True)
    passed = failed = 0
    for name, case, extra in CASES:
        if args.only and name != args.only:
            continue
        t = None
        try:
            t = Session(args, name, extra)
            case(args, t)
            passed += 1
            print("PASS " + name, flush=True)
        except Failure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
        finally:
            if t:
                t.close()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
