#!/usr/bin/env python3
"""sopra-client as a person learns the game with it (docs/client.md, docs/playing.md).

A real sopra-server (--port 0) and sopra-client in a detached tmux session
of a fixed size on a tmux server of the test's own (tmux -L, -f /dev/null,
killed at the end); keys with send-keys, the screen with capture-pane, and
exact text asserted:

- pick_and_look (80x30, a solo game on example.json, seed 11): the pick
  menu shows each offered character's attack, search, status and ability
  (a long one wrapped); `?` inside the menu shows the help and the menu is
  back after it; a key that means nothing in the menu hints at `?`; after
  the pick, `;` and a character's key show what it is; `s` with every
  character in the colony says why Search is not possible, and that log
  entry is wrapped at 80 columns.
- badge (80x24, revised): the header row keeps "[PLAY revised]" whole.
- countdown (120x30, --timeout 6 for the server and the client): the
  selection shows the seconds left and that the server removes the player
  after the timeout; the seconds go down; when the server removes the
  player, the client says that it was the timeout.

Without tmux the test is skipped loudly (exit 77), and fails under CI=true.
"""
import os
import re
import sys
import time

import sopratest
from sopratest import Failure, Server, TmuxServer, check

TIMEOUT = 60.0


class Session:
    def __init__(self, tmux, name, w, h, cmd):
        self.tmux, self.name = tmux, name
        tmux.run("new-session", "-d", "-s", name, "-x", str(w), "-y", str(h), cmd, check=True)
        tmux.run("set-option", "-t", name, "remain-on-exit", "on")

    def screen(self):
        return self.tmux.run("capture-pane", "-p", "-t", self.name).stdout

    def keys(self, *keys):
        # tmux reads a lone ";" as its command separator: "\\;" is the key
        for k in keys:
            self.tmux.run("send-keys", "-t", self.name, "\\;" if k == ";" else k, check=True)

    def wait(self, pred, what):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            s = self.screen()
            if pred(s):
                return s
            time.sleep(0.05)
        raise Failure("timed out waiting for %s; the screen:\n%s" % (what, self.screen()))

    def wait_line(self, line):
        """A row of the screen that is exactly `line` (trailing blanks aside)."""
        return self.wait(lambda s: line in [r.rstrip() for r in s.split("\n")], repr(line))


def rows(screen):
    return [r.rstrip() for r in screen.rstrip("\n").split("\n")]


def start(args, tmux, name, w, h, timeout, *client_args, rules="base"):
    srv = Server(args.server, "--config", args.config, "--seed", "11", "--timeout",
                 str(timeout), "--rules", rules, log=os.path.join(args.workdir, name + "-server.log"),
                 wait=TIMEOUT)
    cmd = "%s --port %d --name Anna --start --pace 0 %s" % (args.client, srv.port,
                                                           " ".join(client_args))
    return srv, Session(tmux, name, w, h, cmd)


def case_pick_and_look(args, tmux):
    srv, t = start(args, tmux, "pick", 80, 30, 120)
    try:
        s = t.wait(lambda s: " Pick: key or Up/Down+Enter, Esc back, ? help" in s, "the pick menu")
        want = [" Ravi Anand: attack 4+ search 3+ status 27; wound: after a normal move, a",
                "   rolled frostbite counts as a wound",
                " Tom Kowalski: attack 3+ search 3+ status 14; feed (y): +2 food, once a round",
                " [1] Ravi Anand + Tom Kowalski"]
        for line in want:
            check(line in rows(s), "the pick menu lacks %r:\n%s" % (line, s))
        print("  pick menu: each character's attack, search, status and ability", flush=True)

        t.keys("?")
        s = t.wait_line(" (A menu is open: it is still there when you close this help.)")
        check(" sopra-client: keys (docs/playing.md explains the game)" in rows(s),
              "no help in the menu:\n" + s)
        t.keys(" ")
        t.wait_line(" Pick: key or Up/Down+Enter, Esc back, ? help")
        t.keys("z")
        t.wait(lambda s: rows(s)[-1].startswith(
            "Key 'z' does nothing in this menu (the keys in [ ], Esc back): press ? for help"),
            "the hint at ?")
        print("  ? inside the menu: help, then the menu again; an unknown key hints at ?",
              flush=True)

        t.keys("2")  # Ravi Anand + Jonas Weber: the next screen is our turn
        t.wait(lambda s: rows(s)[-1].startswith("Your turn"), "our turn")
        t.keys(";")
        s = t.wait_line(" Look at: key or Up/Down+Enter, Esc back, ? help")
        key = [k for k, label in re.findall(r"^ \[(\w)\] (.*)$", s, re.M)
               if label.startswith("Ravi Anand (Anna)")]
        check(len(key) == 1, "Ravi Anand is not in the look list:\n" + s)
        t.keys(key[0])
        s = t.wait_line(" Look (any key: back to the list, Esc: close)")
        want = [" Ravi Anand (#6): Anna's, at Colony",
                " attack: needs a die of 4 or more; search: 3 or more",
                " Social status 27: the lowest status here dies first to zombies and bites",
                " Ability: wound: after a normal move, a rolled frostbite counts as a wound",
                " Injuries: none (3 injuries kill)"]
        check(rows(s)[3:8] == want, "the look at Ravi Anand:\n" + s)
        t.keys("Escape")
        t.wait(lambda s: "Look" not in s.split("\n")[2], "the look to close")
        print("  ; on a character: its attack, search, status, ability and injuries", flush=True)

        t.keys("s")
        s = t.wait_line("-- Search is not possible now: all your characters: in the colony, "
                        "which has no")
        i = rows(s).index("-- Search is not possible now: all your characters: in the colony, "
                          "which has no")
        check(rows(s)[i + 1] == "  cards to search", "the entry is not wrapped:\n" + s)
        print("  a refusal's reason, in the log wrapped at 80 columns", flush=True)
        t.keys("q", "y")
    finally:
        srv.close()


def case_countdown(args, tmux):
    srv, t = start(args, tmux, "countdown", 120, 30, 6, "--timeout 6")
    try:
        pat = re.compile(r"^Pick two characters: press p +0:0(\d) left: you will be removed "
                         r"after the timeout$")
        s = t.wait(lambda s: pat.match(rows(s)[-1]), "the countdown")
        first = int(pat.match(rows(s)[-1]).group(1))
        check(1 <= first <= 6, "the countdown starts at 0:0%d" % first)
        t.wait(lambda s: pat.match(rows(s)[-1]) and int(pat.match(rows(s)[-1]).group(1)) < first,
               "the countdown to go down from 0:0%d" % first)
        s = t.wait_line("Timeout: no command within the server's 6 s, so it removed you from "
                        "the game")
        check("|Anna left the game" in [r[r.find("|"):] for r in rows(s)],
              "no Left in the log:\n" + s)
        print("  countdown from 0:0%d, then the timeout named" % first, flush=True)
        t.keys("q")
    finally:
        srv.close()


def case_badge(args, tmux):
    """At 80 columns the header keeps the [PLAY revised] badge whole."""
    srv, t = start(args, tmux, "badge", 80, 24, 120, "--rules revised", rules="revised")
    try:
        t.wait(lambda s: " Pick:" in s, "the pick menu")
        t.keys("1")
        s = t.wait(lambda s: rows(s)[0].startswith("Round 1/8"), "round 1")
        want = "Round 1/8 Food 0 Morale 7 Waste 0 Starvation 0 Children 2"
        check(rows(s)[0] == want + " " * (80 - len(want) - 14) + "[PLAY revised]",
              "the header at 80 columns:\n" + s)
        print("  the header at 80 columns: %s" % rows(s)[0], flush=True)
        t.keys("q", "y")
    finally:
        srv.close()


def main():
    args = sopratest.client_test_args("client_ux_test")
    failed = 0
    for name, case in (("pick_and_look", case_pick_and_look), ("countdown", case_countdown),
                       ("badge", case_badge)):
        tmux = TmuxServer("sopra-client-ux-test")
        print(name + ":", flush=True)
        try:
            case(args, tmux)
        except Failure as e:
            print("FAIL %s: %s" % (name, e), flush=True)
            failed += 1
        finally:
            tmux.kill()
    print("client_ux_test: %s" % ("ok" if not failed else "%d failed" % failed), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
