#!/usr/bin/env python3
"""sopra-client's seat, its way back and its failures, tested as a person
meets them (docs/client.md): a real sopra-server, sopra-client in tmux on a
private socket (sopratest.TmuxServer), keys sent with send-keys, the screen
read with capture-pane.

- grace: a game on a server with --reconnect-grace played to its end; the
  session file exists with mode 0600 while the game runs and is gone after;
- cut: the client's TCP connection is cut mid-game by a proxy the test
  controls (the client is not touched); it comes back by itself, the game
  goes on to its end (at the default --pace, the other cases at --pace 0);
- restart: the client quits with c (close, come back later) and a new
  sopra-client --reconnect takes the seat back; the game goes on to its end;
- same name: a player named Anna registers and goes away, then the client
  registers as Anna too (no sessions): it plays the second Anna's seat;
- edition: the server plays revised, the client and its bot base: the
  client names the fix (--rules revised), the bot's death is reported;
- bots-log: --bots-log to a missing folder is an error before anything
  starts (the server sees no connection);
- dead bot: a bot killed mid-game is reported with how it died.

Without tmux the test is skipped loudly (exit 77), and fails under CI=true.
"""
import os
import shutil
import signal
import socket
import stat
import threading
import time

import sopratest
from sopratest import Failure, Server, TmuxServer
from client_test import TIMEOUT, Tmux, fail, status_line

class Proxy(threading.Thread):
    """A TCP proxy on 127.0.0.1 (port 0) to the server's port: every
    connection is piped through. cut(k) closes the k-th connection (both
    sides), as a network that drops it would."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.target = port
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.pairs = []
        self.lock = threading.Lock()

    def run(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.pairs.append((c, s))
            for a, b in ((c, s), (s, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self, k):
        with self.lock:
            for x in self.pairs[k]:
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def count(self):
        with self.lock:
            return len(self.pairs)


class Case:
    """One scenario: a server, a tmux server, a work folder, a state dir."""

    def __init__(self, args, name, *server_args):
        self.args, self.name = args, name
        self.dir = os.path.join(args.workdir, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.state = os.path.join(self.dir, "state")
        self.tmux = TmuxServer("sopra-session-test")
        self.srv = Server(args.server, "--config", args.config, "--seed", "5", *server_args,
                          log=os.path.join(self.dir, "server.log"), wait=TIMEOUT)
        self.sessions = 0

    def client(self, opts, w=160, h=50, pace="--pace 0"):
        """A client in tmux; pace: "--pace 0" shows the bot's moves at once,
        "" keeps the client's default pace."""
        self.sessions += 1
        # the shell stays after the client: what it printed last stays on the screen
        cmd = "env XDG_STATE_HOME=%s %s %s %s; sleep 3600" % (self.state, self.args.client,
                                                               opts, pace)
        return Tmux(self.tmux, "%s-%d" % (self.name, self.sessions), w, h, cmd)

    def save(self, what, screen):
        with open(os.path.join(self.dir, what + ".txt"), "w") as f:
            f.write(screen)

    def close(self):
        self.tmux.kill()
        self.srv.close()


def play_to_end(t, turns_before=None, max_turns=400):
    """Pick the first pair offered, end every turn at once, until the end.
    turns_before(n) runs at our n-th turn before it is ended. The number of
    our turns."""
    turns = 0
    for _ in range(max_turns):
        s = t.wait(lambda s: "Game over" in s or "Your turn" in status_line(s) or
                 "Pick:" in s or "!!" in s, "our turn or the end")
        if "!!" in s:
            fail("the client reports a problem:\n" + s)
        if "Game over" in s:
            return turns
        if "Pick:" in s:
            t.keys("1")
            t.wait(lambda s: "Pick:" not in s, "the selection")
            continue
        turns += 1
        if turns_before and turns_before(turns) is False:
            return turns
        head = s.splitlines()[0]
        t.keys("e")
        # our next turn is in a later round: the header changes
        t.wait(lambda s: "Your turn" not in status_line(s) or s.splitlines()[0] != head,
             "the turn to end")
    fail("the game did not end")


def session_files(case):
    d = os.path.join(case.state, "sopra-client")
    return [os.path.join(d, f) for f in os.listdir(d)] if os.path.isdir(d) else []


BOT = "--bots 1 --bot-strategy greedy --bot-seed 3"


def case_grace(args):
    c = Case(args, "grace", "--reconnect-grace", "30", "--timeout", "120")
    try:
        t = c.client("--port %d --name Anna %s --start" % (c.srv.port, BOT))
        t.wait(lambda s: "Pick:" in s, "the offer")
        files = session_files(c)
        if len(files) != 1 or stat.S_IMODE(os.stat(files[0]).st_mode) != 0o600:
            fail("the session file: %s" % [(f, oct(os.stat(f).st_mode)) for f in files])
        turns = play_to_end(t)
        s = t.screen()
        c.save("end", s)
        if "unknown event" in s or "contradicts" in s:
            fail("the client did not follow the game:\n" + s)
        if session_files(c):
            fail("the session file is still there after the end: %s" % session_files(c))
        print("grace: a whole game with sessions, %d turns; the secret kept 0600, then gone"
              % turns, flush=True)
    finally:
        c.close()


def case_cut(args):
    c = Case(args, "cut", "--reconnect-grace", "30", "--timeout", "120")
    proxy = Proxy(c.srv.port)
    proxy.start()
    try:
        # the default pace: the history after the cut is folded at once, the
        # bot's moves after it are held back as usual
        t = c.client("--port %d --name Anna %s --start" % (proxy.port, BOT), pace="")
        state = {}

        def cut_at_turn(n):
            if n != 2:
                return True
            before = proxy.count()
            proxy.cut(0)  # the client's connection: it registered first
            s = t.wait(lambda s: "-- the connection is lost" in s and
                     "-- back in the game: the server sent the" in s, "the way back")
            c.save("back", s)
            if proxy.count() <= before:
                fail("no new connection after the cut")
            state["back"] = s
            return True

        turns = play_to_end(t, cut_at_turn)
        if "back" not in state:
            fail("the game ended before the cut")
        s = t.screen()
        c.save("end", s)
        print("cut: connection cut at our turn 2, back by itself, the game went on to its "
              "end (%d turns)" % turns, flush=True)
    finally:
        c.close()


def case_restart(args):
    # the bot inside the first client leaves with it and never comes back: the
    # game waits out its grace before our next turn, so the grace stays well
    # below the screen waits' TIMEOUT (60 s) and well above a client's restart
    c = Case(args, "restart", "--reconnect-grace", "25", "--timeout", "120")
    try:
        t = c.client("--port %d --name Anna %s --start" % (c.srv.port, BOT))
        t.wait(lambda s: "Your turn" in status_line(s) or "Pick:" in s, "the game")
        if "Pick:" in t.screen():
            t.keys("1")
        t.wait(lambda s: "Your turn" in status_line(s), "our first turn")
        t.keys("q")
        s = t.wait(lambda s: "c: close, come back later" in s, "the quit question")
        c.save("question", s)
        t.keys("c")
        s = t.wait(lambda s: "come back with: sopra-client --reconnect" in s, "the way back")
        c.save("closed", s)
        t2 = c.client("--reconnect --port %d --name Anna" % c.srv.port)
        s = t2.wait(lambda s: "back in the game" in s and "Your turn" in status_line(s),
                 "our turn again")
        c.save("reconnected", s)
        turns = play_to_end(t2)
        print("restart: closed with c, sopra-client --reconnect took the seat back, the "
              "game went on to its end (%d more turns)" % turns, flush=True)
    finally:
        c.close()


def case_same_name(args):
    c = Case(args, "samename", "--timeout", "120")
    try:
        raw = socket.create_connection(("127.0.0.1", c.srv.port))
        raw.sendall(b'{"command":"Register","playerName":"Anna"}\n')
        got = b""
        while b"Config" not in got:
            got += raw.recv(65536)
        raw.close()  # the first Anna goes away during the registration
        t = c.client("--port %d --name Anna %s --start" % (c.srv.port, BOT))
        s = t.wait(lambda s: "Pick:" in s or "!!" in s, "our offer")
        if "!!" in s:
            fail("two players named Anna:\n" + s)
        turns = play_to_end(t)
        s = t.screen()
        c.save("end", s)
        print("same name: the second Anna played her own seat to the end (%d turns)" % turns,
              flush=True)
    finally:
        c.close()


def case_edition(args):
    c = Case(args, "edition", "--rules", "revised", "--timeout", "120")
    try:
        t = c.client("--port %d --name Anna %s --start" % (c.srv.port, BOT))
        t.wait(lambda s: "Pick:" in s, "the offer")
        t.keys("1")
        s = t.wait(lambda s: "start again with --rules revised" in status_line(s) and
                 "!! Bot1 stopped (exit 2): protocol violation" in s, "the fix and the bot")
        c.save("mismatch", s)
        print("edition: the client names --rules revised, the bot's death is reported",
              flush=True)
    finally:
        c.close()


def case_bots_log(args):
    c = Case(args, "botslog", "--timeout", "120")
    try:
        missing = os.path.join(c.dir, "no-such-folder")
        t = c.client("--port %d --name Anna --bots 1 --bots-log %s --start" %
                     (c.srv.port, missing))
        s = t.wait(lambda s: "sopra-client: --bots-log %s: No such file or directory" % missing
                 in s, "the error")
        c.save("error", s)
        time.sleep(0.5)
        if "conn" in c.srv.text():
            fail("the client connected before it checked --bots-log:\n" + c.srv.text())
        print("bots-log: a missing folder is an error before anything starts", flush=True)
    finally:
        c.close()


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except OSError:
                pass
    return out


def case_dead_bot(args):
    c = Case(args, "deadbot", "--timeout", "120")
    try:
        t = c.client("--port %d --name Anna %s --start" % (c.srv.port, BOT))
        t.wait(lambda s: "Pick:" in s, "the offer")
        clients = children(t.pid())  # the shell's
        bots = children(clients[0]) if len(clients) == 1 else []
        if len(bots) != 1:
            fail("the client's children: %s" % bots)
        os.kill(bots[0], signal.SIGKILL)
        s = t.wait(lambda s: "Bot1 was killed by signal 9" in s, "the report")
        c.save("report", s)
        print("dead bot: a bot killed mid-game is reported", flush=True)
    finally:
        c.close()


CASES = {"grace": case_grace, "cut": case_cut, "restart": case_restart,
         "same-name": case_same_name, "edition": case_edition, "bots-log": case_bots_log,
         "dead-bot": case_dead_bot}


def main():
    args = sopratest.client_test_args("client_session_test", lambda ap: ap.add_argument(
        "cases", nargs="*", help="default: all (%s)" % ", ".join(CASES)))
    for name in args.cases or CASES:
        try:
            CASES[name](args)
        except Failure as e:
            fail("%s: %s" % (name, e))
    print("client_session_test: ok", flush=True)


if __name__ == "__main__":
    main()
