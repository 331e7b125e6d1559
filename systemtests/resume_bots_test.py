#!/usr/bin/env python3
"""Real games resumed after SIGKILLs in the middle of play (docs/journal.md, "Resuming").

For each game (its own seeds, 2-4 sopra-bots, base or revised rules):

  reference  the server with --journal --reconnect-grace 0 and bots with
             --reconnect --stream play to the end uninterrupted; each bot's
             stream of received lines is the reference (sopra-replay
             --player N must print it too)
  killed     the same game (configuration, rules, server and bot seeds), but
             while the bots play the server is SIGKILLed after a random delay
             (a timer, not an idle point: the bots play a game in a few tens
             of milliseconds, the delay is drawn from that span), restarted
             with --resume on the same port, and the bots come back by
             themselves (sopra-bot --reconnect); once every bot has settled
             its return ("reconnect K: ..." on its stderr) the next kill is
             timed, up to --kills per game. Then:
               - every bot exits 0 with win, lose or left;
               - each bot's final stream (the history of its last Reconnect
                 and what followed; Session lines aside, their secrets differ
                 per run) equals its reference byte for byte;
               - sopra-replay of the resumed journal exits 0 (every digest
                 matched), and what it prints per player is the bot's streams
                 one after the other, one per connection: the last equals the
                 bot's final stream, Session included, and every earlier one
                 is a prefix of it.

No bot may miss the end of the game. A kill after the game's last entry was
written but before every bot saw the end leaves a finished journal: --resume
runs the epilogue (docs/protocol.md, "After the end"), in which the bots that
had not received GameEnd come back for their histories; the bots that had
are gone, so that server waits out its --timeout: once every bot has ended,
the test stops it with SIGTERM. A resumed game that ends while a bot is
still away waits for it the same way, and exits by itself when it is back.

With --disk-full each game is played a third time with its journal on a disk
that fills up in the middle of play: a tmpfs of a few pages when the test
runs as root and may mount one (ENOSPC), else a file size limit (EFBIG). The
server must exit 1 with "JOURNAL FAILED: write to ...: <the cause>"; what
every bot had received by then must be a prefix of its reference stream
(nothing it saw is rolled back); then, with room again, --resume on the same
port, and the bots come back and finish with streams equal to the reference
(and the replay checks above).

Per kill the test notes what was in flight: a journal whose last line is
torn, a bot whose connection dropped inside a line (cut), a bot whose last
command was lost and sent again (resent), a bot whose last command was taken
but whose answer it had not seen before the drop (answered). The totals are
printed at the end (also how many kills left a finished journal and how many
bots came back for the end), then "N passed, M failed".

Usage: resume_bots_test.py --server PATH --bot PATH --replay PATH --config PATH
                           [--games N] [--kills K] [--seed S] [--keep] [--disk-full]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import sopratest
from sopratest import Failure, check

SESSION = b'{"event":"Session",'
CONFIG = b'{"event":"Config",'
RECONNECT_WAIT = 20  # s a bot keeps trying to come back (--reconnect)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Server(sopratest.Server):
    """sopra-server on port (0: the kernel picks one) with argv, its stderr
    in the file log; .port is None when it exited before listening (see
    text())."""

    def __init__(self, args, log, port, *argv):
        super().__init__(args.server, *argv, port=port, log=log, exit_ok=True)


class Bot:
    def __init__(self, args, wd, port, i, seed, rules, start):
        self.name = "B%d" % i
        self.stream = os.path.join(wd, self.name + ".stream")
        self.err = os.path.join(wd, self.name + ".err")
        self.log = os.path.join(wd, self.name + ".log")
        cmd = [args.bot, "--port", str(port), "--name", self.name, "--seed", str(seed),
               "--rules", rules, "--quiet", "--reconnect", str(RECONNECT_WAIT),
               "--stream", self.stream, "--log", self.log]
        if start:
            cmd.append("--start")
        self.cmd = " ".join(cmd)
        with open(self.err, "wb") as err:
            self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        line = self.p.stdout.readline().decode(errors="replace").strip()
        check(line == "registered " + self.name,
              "%s did not register (%r): %s" % (self.name, line, self.errtext()[-500:]))

    def errtext(self):
        return read(self.err).decode(errors="replace")

    def returns(self):
        """The "reconnect K: ..." lines: one per settled return."""
        return re.findall(r"^bot \S+: reconnect \d+: (.*)$", self.errtext(), re.M)

    def finish(self, timeout):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Failure("%s did not finish: %s" % (self.name, self.errtext()[-800:]))
        self.p.stdout.close()
        err = self.errtext()
        m = re.search(r"result=(\w+)", err)
        check("Sanitizer" not in err and "runtime error" not in err,
              "sanitizer report from %s: %s" % (self.name, err[-3000:]))
        return rc, m.group(1) if m else "?"

    def lines(self):
        return read(self.stream).split(b"\n")[:-1]


def game_lines(lines):
    return [l for l in lines if not l.startswith(SESSION)]


def entries(journal):
    """The journal's entries but Reconnect records (those differ per run);
    not a last line still being written."""
    return [e for e in (json.loads(l) for l in read(journal).split(b"\n")[1:-1]
                        if l.startswith(b'{"n":'))
            if "reconnect" not in e]


def play_time(journal):
    """Seconds from the entry that started the game to the last entry, in
    the server's clock (the journal's "ms")."""
    es = entries(journal)
    start = max(i for i, e in enumerate(es) if e.get("command") in ("Register", "StartGame"))
    return max(0.002, (es[-1]["ms"] - es[start]["ms"]) / 1000)


def replay_segments(args, journal, player):
    """sopra-replay --player N: the player's lines, cut into one part per
    connection (each Reconnect's history starts with Config)."""
    r = subprocess.run([args.replay, "--player", str(player), journal], capture_output=True)
    check(r.returncode == 0, "sopra-replay --player %d: exit %d: %s" %
          (player, r.returncode, r.stderr.decode(errors="replace")[-1000:]))
    parts = []
    for line in r.stdout.split(b"\n")[:-1]:
        if line.startswith(CONFIG) or not parts:
            parts.append([])
        parts[-1].append(line)
    return parts


class Game:
    def __init__(self, args, n, rnd):
        self.n = n
        self.rules = rnd.choice(["base", "revised"])
        self.sync = rnd.choice(["turn", "always"])
        self.seed = rnd.randrange(1, 1 << 31)
        self.nbots = rnd.randint(2, 4)
        self.bot_seeds = [rnd.randrange(1, 1 << 31) for _ in range(self.nbots)]
        self.kill_rnd = random.Random(rnd.random())
        self.dir = os.path.join(args.workdir, "game%d" % n)

    def describe(self):
        return "game %d: %s sync=%s seed=%d bots=%s" % (self.n, self.rules, self.sync, self.seed,
                                                        self.bot_seeds)

    def server_args(self, journal):
        return ["--config", self.args.config, "--seed", str(self.seed), "--timeout", "30",
                "--rules", self.rules, "--journal", journal, "--reconnect-grace", "0",
                "--journal-sync", self.sync]

    def start(self, wd, journal):
        os.makedirs(wd)
        srv = Server(self.args, os.path.join(wd, "server.err"), 0, *self.server_args(journal))
        check(srv.port, "server exited at once: " + srv.text()[-1000:])
        bots = []
        try:
            for i, s in enumerate(self.bot_seeds):
                bots.append(Bot(self.args, wd, srv.port, i, s, self.rules,
                                i == self.nbots - 1 and self.nbots < 4))
        except Failure:
            srv.kill()
            for b in bots:
                b.p.kill()
            raise
        return srv, bots

    def finish_bots(self, bots, timeout=60):
        for b in bots:
            rc, res = b.finish(timeout)
            check(rc == 0 and res in ("win", "lose", "left"),
                  "%s: exit %d, result %s: %s" % (b.name, rc, res, b.errtext()[-800:]))

    def reference(self, args):
        self.args = args
        wd = os.path.join(self.dir, "reference")
        journal = os.path.join(wd, "game.jnl")
        srv, bots = self.start(wd, journal)
        rc = srv.p.wait(60)
        self.finish_bots(bots)
        self.duration = play_time(journal)
        self.nentries = len(entries(journal))
        srv.sanitizer_clean()
        check(rc == 0, "server exit %d" % rc)
        self.ref = []
        for i, b in enumerate(bots):
            lines = b.lines()
            check(len(lines) > 2 and lines[0].startswith(CONFIG) and
                  lines[1].startswith(SESSION), "%s: no Config, Session first" % b.name)
            parts = replay_segments(args, journal, i)
            check(parts == [lines], "reference: sopra-replay --player %d differs from %s's "
                  "stream" % (i, b.name))
            self.ref.append(game_lines(lines))

    def killed(self, args, stats):
        wd = os.path.join(self.dir, "killed")
        journal = os.path.join(wd, "game.jnl")
        srv, bots = self.start(wd, journal)
        port = srv.port
        kills = 0
        try:
            while kills < args.kills and any(b.p.poll() is None for b in bots):
                # a delay within the time the rest of the game takes
                # uninterrupted (as far as the journal tells)
                left = 1 - len(entries(journal)) / self.nentries
                if left < 0.1:
                    break
                time.sleep(self.kill_rnd.uniform(0, self.duration * left))
                rc = srv.kill()
                if rc != -signal.SIGKILL:
                    break  # it had ended by itself
                srv.sanitizer_clean()
                kills += 1
                # the content ends at the zero tail the writer takes ahead
                # (docs/journal.md); a torn line is one cut before it
                torn = read(journal).split(b"\0", 1)[0][-1:] != b"\n"
                srv = self.resume(args, os.path.join(wd, "server%d.err" % kills), port, journal)
                stats.kill(torn, self.settle(bots, kills))
                if srv.p.poll() is not None:
                    break  # the resumed server has ended
            self.finish_bots(bots)
            self.server_end(srv, stats)
        except BaseException:
            for b in bots:
                b.p.kill()
            raise
        finally:
            srv.kill()
        stats.games_killed += kills > 0
        stats.count_epilogues(wd)
        self.compare(args, journal, bots)
        return kills

    def resume(self, args, err, port, journal):
        """A server resuming journal on the port the killed one had (so the
        bots' --reconnect finds it), its log in err."""
        srv = Server(args, err, port, "--resume", journal, "--journal-sync", self.sync)
        check(srv.port == port, "resumed on port %s, not %d: %s" %
              (srv.port, port, srv.text()[-1500:]))
        return srv

    def disk_full(self, args, stats):
        """The same game with its journal on a disk that fills up mid-game:
        a tmpfs of a few pages when the test runs as root and may mount one
        (ENOSPC), else a file size limit (EFBIG). The server must exit 1
        saying why; every bot's stream so far must be a prefix of the
        reference; once there is room, --resume on the same port and the
        bots (--reconnect) finish the game with the reference streams."""
        wd = os.path.join(self.dir, "full")
        disk = os.path.join(wd, "disk")
        os.makedirs(disk)
        ref = read(os.path.join(self.dir, "reference", "game.jnl"))
        # the disk fills before the end of the game's last entry: no later
        # than where that line starts
        last_entry = ref.rindex(b'\n{"n":') + 1
        how = full_disk(disk, ref.index(b"\n") + 1, last_entry, wd, args.server)
        journal = os.path.join(disk, "game.jnl")
        self.args = argparse.Namespace(**vars(args))
        self.args.server = how["server"]
        try:
            srv, bots = self.start(os.path.join(wd, "run"), journal)
        finally:
            self.args = args
        port = srv.port
        try:
            rc = srv.p.wait(60)
            text = srv.text()
            check(rc == 1, "the server exited %d on a full disk, not 1: %s" % (rc, text[-1500:]))
            check("JOURNAL FAILED: write to" in text and how["error"] in text,
                  "no JOURNAL FAILED ... %s in the log: %s" % (how["error"], text[-1500:]))
            srv.sanitizer_clean()
            seen = [game_lines(b.lines()) for b in bots]
            for i, b in enumerate(bots):
                check(seen[i] == self.ref[i][:len(seen[i])], "%s: what it saw before the "
                      "failure is no prefix of the reference" % b.name)
            check(any(len(seen[i]) < len(self.ref[i]) for i in range(len(bots))),
                  "the journal did not fail before the end of the game")
            how["make_room"]()
            srv = self.resume(args, os.path.join(wd, "resumed.err"), port, journal)
            self.settle(bots, 1)
            self.finish_bots(bots)
            self.server_end(srv, stats)
            self.compare(args, journal, bots)
        except BaseException:
            for b in bots:
                b.p.kill()
            raise
        finally:
            srv.kill()
            if os.path.exists(journal):  # kept for a look when the test fails
                shutil.copy(journal, os.path.join(wd, "game.jnl"))
            how["release"]()
        stats.disk_full += 1
        stats.disk_full_how = how["what"]
        return min(len(x) for x in seen)

    @staticmethod
    def server_end(srv, stats):
        """Every bot has ended; the server ends too (exit 0). Only in the
        epilogue of a finished journal's resume may it still wait: for the
        bots that had received the end before the kill and are gone. Those
        are stopped here with SIGTERM."""
        try:
            rc = srv.p.wait(5)
        except subprocess.TimeoutExpired:
            check("its players may come back for the end" in srv.text(),
                  "the server did not end after the bots: " + srv.text()[-1500:])
            srv.p.send_signal(signal.SIGTERM)
            rc = srv.p.wait(10)
            stats.epilogues_stopped += 1
        srv.sanitizer_clean()
        check(rc == 0, "server exit %d: %s" % (rc, srv.text()[-1500:]))

    def settle(self, bots, kills):
        """Wait until every bot still playing has settled its return after
        kill number `kills` (its "reconnect" line for it) or has ended; their
        return lines."""
        deadline = time.monotonic() + RECONNECT_WAIT + 10
        while True:
            back = [b.returns() for b in bots]
            if all(len(r) >= kills or b.p.poll() is not None for b, r in zip(bots, back)):
                return [r[kills - 1] for r in back if len(r) >= kills]
            check(time.monotonic() < deadline, "the bots did not come back: " +
                  "; ".join(b.errtext()[-300:] for b in bots))
            time.sleep(0.001)

    def compare(self, args, journal, bots):
        for i, b in enumerate(bots):
            lines = b.lines()
            got = game_lines(lines)
            ref = self.ref[i]
            parts = replay_segments(args, journal, i)
            for k, part in enumerate(parts):
                part = game_lines(part)
                check(part == ref[:len(part)], "%s: connection %d's lines in the replay are "
                      "no prefix of the reference" % (b.name, k + 1))
            check(parts[-1] == lines, "%s: the replay's last part (%d lines) differs from its "
                  "final stream (%d lines)" % (b.name, len(parts[-1]), len(lines)))
            if got != ref:
                k = next((k for k, (x, y) in enumerate(zip(got, ref)) if x != y),
                         min(len(got), len(ref)))
                raise Failure("%s: its final stream differs from the reference at line %d "
                              "(%d vs %d lines): %r vs %r" %
                              (b.name, k + 1, len(got), len(ref), got[k:k + 1], ref[k:k + 1]))


def full_disk(disk, header, last, wd, server):
    """Make the directory disk hold the journal's header (`header` bytes)
    and some of its entries, but not the game's last entry, whose line
    starts at byte `last`: a tmpfs of whole pages between the two (as root
    where mount works), else a wrapper around the server that sets the file
    size limit halfway, to the byte (prlimit; bash's ulimit -f counts KiB,
    which can be more than a short game's entries). Returns the server to run, the error its log names,
    what was used, make_room() (the tmpfs grown, or the limit gone: the
    server as given) and release() (the tmpfs unmounted)."""
    page = 4096
    pages = [p * page for p in range(header // page + 1, last // page + 1)
             if header + 512 <= p * page <= last - 512]
    if pages and os.geteuid() == 0 and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=%d" % pages[len(pages) // 2], "tmpfs", disk],
            capture_output=True).returncode == 0:
        def grow():
            subprocess.run(["mount", "-o", "remount,size=16m", disk], check=True)

        def release():
            subprocess.run(["umount", "-l", disk], capture_output=True)
        return {"server": server, "error": "No space left on device",
                "what": "a tmpfs of a few pages", "make_room": grow, "release": release}
    limit = header + (last - header) // 2
    wrapper = os.path.join(wd, "limited-server.sh")
    with open(wrapper, "w") as f:
        f.write('#!/usr/bin/env bash\nexec prlimit --fsize=%d:%d "%s" "$@"\n' % (limit, limit, server))
    os.chmod(wrapper, 0o755)
    return {"server": wrapper, "error": "File too large",
            "what": "a file size limit",
            "make_room": lambda: None, "release": lambda: None}


class Stats:
    def __init__(self):
        self.kills = self.torn = self.inflight = self.games_killed = 0
        self.over_at_kill = self.back_over = self.back_away = self.epilogues_stopped = 0
        self.returns = {"cut": 0, "resent": 0, "answered": 0, "none": 0}
        self.waits = []
        self.disk_full = 0
        self.disk_full_how = ""

    def kill(self, torn, returns):
        self.kills += 1
        self.torn += torn
        busy = torn
        for r in returns:
            fields = dict(f.split("=", 1) for f in r.split())
            if fields["cut"] == "1":
                self.returns["cut"] += 1
                busy = True
            self.returns[fields["last-command"]] += 1
            busy |= fields["last-command"] in ("resent", "answered")
            self.waits.append(float(fields["wait"]))
        self.inflight += busy

    def count_epilogues(self, wd):
        """From the resumed servers' logs: which resumed a finished journal,
        and how many bots came back for the end there or in a resumed game
        that ended while they were away."""
        for k in range(1, 1000):
            path = os.path.join(wd, "server%d.err" % k)
            if not os.path.exists(path):
                return
            text = read(path).decode(errors="replace")
            back = text.count("the game is over; closing it after the history")
            if "its players may come back for the end" in text:
                self.over_at_kill += 1
                self.back_over += back
            else:
                self.back_away += back

    def show(self):
        if self.disk_full:
            print("full disks: %d game(s) failed on %s, exited 1 and were resumed to the "
                  "reference streams" % (self.disk_full, self.disk_full_how))
        print("kills=%d in-flight=%d (journal tail torn: %d; bot returns: %d with a cut "
              "line, %d resent their lost command, %d found its answer in the history, "
              "%d had nothing in doubt); waits: max %.2f s, total %.2f s" %
              (self.kills, self.inflight, self.torn, self.returns["cut"],
               self.returns["resent"], self.returns["answered"], self.returns["none"],
               max(self.waits, default=0), sum(self.waits)))
        print("games killed: %d; resumes of a finished journal (killed after the game's "
              "last entry): %d, where %d bot(s) came back for the end (%d of those servers "
              "stopped in their epilogue after every bot had ended); bots that came back for "
              "the end of a resumed game that ended while they were away: %d" %
              (self.games_killed, self.over_at_kill, self.back_over, self.epilogues_stopped,
               self.back_away))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--kills", type=int, default=4, help="at most this many per game")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--disk-full", action="store_true",
                    help="also play each game with its journal on a disk that fills up")
    args = ap.parse_args()
    print("seed", args.seed)
    rnd = random.Random(args.seed)
    args.workdir = tempfile.mkdtemp(prefix="resume-bots-")
    stats = Stats()
    passed = failed = 0
    t0 = time.monotonic()
    for n in range(args.games):
        game = Game(args, n, rnd)
        try:
            game.reference(args)
            kills = game.killed(args, stats)
            full = ""
            if args.disk_full:
                full = "; the disk full after %d lines, resumed" % game.disk_full(args, stats)
            print("PASS %s: %.0f ms of play uninterrupted, %d kill(s)%s" %
                  (game.describe(), game.duration * 1000, kills, full))
            passed += 1
            if not args.keep:
                shutil.rmtree(game.dir, ignore_errors=True)
        except Exception as e:  # noqa: BLE001
            print("FAIL %s: %s (kept in %s)" % (game.describe(), e, game.dir))
            failed += 1
            args.keep = True
    stats.show()
    print("time %.1f s" % (time.monotonic() - t0))
    if not args.keep:
        shutil.rmtree(args.workdir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
