#!/usr/bin/env python3
"""Crash recovery where the server runs (docs/deployment.md, "Crash recovery").

  recovery_test.py systemd --server PATH --bot PATH --config PATH [--replay PATH]
  recovery_test.py container --podman CMD --image TAG --bot PATH
                             [--run-flags FLAGS] [--replay PATH]

A "table" is one place where games are served: a systemd instance or a
container. In both the server runs with --journal-dir, and the test plays
the same game twice with three `sopra-bot --reconnect`s (fixed server and
bot seeds):

  reference  uninterrupted, in a journal directory of its own;
  crash      the bots connect through a relay that counts their lines; at
             half the reference's entries it holds every further line (the
             server settles: what it took is journaled, the held lines are
             "in the network"), the server is SIGKILLed, the held lines go
             to the dead connections, and the table brings the server back
             as it would after a real crash; the bots come back by
             themselves (and send their lost commands again). Every bot
             must end with its result, and its final stream (Session lines
             aside: their secrets differ per run) must equal its reference
             stream byte for byte. The journal directory must hold the one
             journal, closed with "game over", mode 0600 (with --replay:
             sopra-replay checks every digest in it).

systemd: the unit deploy/systemd/sopra-server@.service, read with
deploy/unitfile.py: StateDirectory= is created under a scratch root with
its mode, and the ExecStart line, expanded as systemd would (specifiers,
$$, quoting), is run with the unit's Environment= and UMask= (the settings
of /etc/sopra/game-PORT.env come from the environment: SOPRA_CONFIG, a
fixed SOPRA_SEED). The test is the service manager: after the SIGKILL it
waits RestartSec= and starts the line again (Restart=always), as it does
after a game ends. Then the rotation: started again after the finished
game, the table keeps that journal and starts a new game in
game-000002.jnl (with a seed of its own, SOPRA_SEED=random), stopped with
SIGTERM; started once more with SOPRA_JOURNAL_KEEP=1, it starts
game-000003.jnl and deletes game-000001.jnl.

container: `podman run -d --restart=on-failure -v VOLUME:/var/lib/sopra
IMAGE ... --journal-dir /var/lib/sopra` with a named volume of its own;
the crash is a SIGKILL of the server process (PID 1 of the container)
from the host, and podman restarts the container by its restart policy.
Also: the container restarted exactly once and exited 0 at the end.
--podman is the podman command with its global options (container_test.sh
passes its own storage), --run-flags the extra `podman run` flags.

Prints PASS/FAIL lines, then "N passed, M failed"; exit status 1 on any
failure.
"""
import argparse
import os
import threading
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
UNIT = os.path.join(HERE, "systemd", "sopra-server@.service")
sys.path.insert(0, HERE)
import unitfile  # noqa: E402

SESSION = b'{"event":"Session",'
SERVER_SEED = 4711
BOT_SEEDS = (21, 22, 23)
RECONNECT_WAIT = 20  # s a bot keeps trying to come back
TIMEOUT = 30         # the server's --timeout
CONTAINER_JOURNALS = "/var/lib/sopra"


class Failure(Exception):
    pass


def check(cond, what):
    """what: the message, or a function that makes it (called on failure)."""
    if not cond:
        raise Failure(what() if callable(what) else what)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def journals(d):
    """The journal files in d, oldest first."""
    return sorted(n for n in os.listdir(d) if re.fullmatch(r"game-\d+\.jnl", n))


def entries(path):
    """Entry records in a journal (up to the zero tail a running or killed
    server leaves)."""
    try:
        data = read(path).split(b"\0", 1)[0]
    except FileNotFoundError:
        return 0
    return data.count(b'\n{"n":')


def wait_until(pred, timeout, what, interval=0.02):
    end = time.monotonic() + timeout
    while not pred():
        check(time.monotonic() < end, what)
        time.sleep(interval)


# ---- the relay between the bots and the server ------------------------------------

class Relay:
    """Bots connect here; each connection is relayed to the server's port.
    The bots' lines are counted; the hold_at-th and every later one wait
    until release(), and `held` is set then. While the server is down the
    relay does not listen either (down(), up()): the bots find the port
    closed, as they would without it."""

    def __init__(self, server_port, hold_at):
        self.server_port = server_port
        self.hold_at = hold_at
        self.lines = 0
        self.lock = threading.Lock()
        self.held = threading.Event()
        self.go = threading.Event()
        self.go.set()
        self.port = 0
        self.up()

    def up(self):
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", self.port))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        threading.Thread(target=self._accept, args=(self.lsock,), daemon=True).start()

    def down(self):
        self.lsock.close()

    def _accept(self, lsock):
        while True:
            try:
                down, _ = lsock.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.server_port), timeout=2)
                up.settimeout(None)
            except OSError:
                down.close()
                continue
            threading.Thread(target=self._to_server, args=(down, up), daemon=True).start()
            threading.Thread(target=self._to_bot, args=(up, down), daemon=True).start()

    def _count(self):
        with self.lock:
            self.lines += 1
            if self.lines == self.hold_at:
                self.go.clear()
                self.held.set()

    def _to_server(self, down, up):
        buf = b""
        try:
            while True:
                data = down.recv(65536)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._count()
                    self.go.wait()
                    up.sendall(line + b"\n")
        except OSError:
            pass
        self._close(up, down)

    @staticmethod
    def _to_bot(up, down):
        try:
            while True:
                data = up.recv(65536)
                if not data:
                    break
                down.sendall(data)
        except OSError:
            pass
        Relay._close(up, down)

    @staticmethod
    def _close(*socks):
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def release(self):
        self.go.set()

    def close(self):
        self.go.set()
        self.down()


# ---- the bots -------------------------------------------------------------------

class Bot:
    def __init__(self, args, wd, port, i, start):
        self.name = "B%d" % i
        self.stream = os.path.join(wd, self.name + ".stream")
        self.err = os.path.join(wd, self.name + ".err")
        cmd = [args.bot, "--port", str(port), "--name", self.name, "--seed",
               str(BOT_SEEDS[i]), "--quiet", "--reconnect", str(RECONNECT_WAIT),
               "--stream", self.stream]
        if start:
            cmd.append("--start")
        with open(self.err, "wb") as err:
            self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        line = self.p.stdout.readline().decode(errors="replace").strip()
        check(line == "registered " + self.name,
              "%s did not register (%r): %s" % (self.name, line, self.errtext()[-500:]))

    def errtext(self):
        return read(self.err).decode(errors="replace")

    def finish(self, timeout=60):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Failure("%s did not finish: %s" % (self.name, self.errtext()[-800:]))
        self.p.stdout.close()
        m = re.search(r"result=(\w+)", self.errtext())
        check(rc == 0 and m and m.group(1) in ("win", "lose"),
              "%s: exit %d, %s" % (self.name, rc, self.errtext()[-800:]))
        return [l for l in read(self.stream).split(b"\n")[:-1] if not l.startswith(SESSION)]

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def play(args, table, wd, kill_at=None):
    """One game of three bots at the table, through a relay; with kill_at,
    the server is killed when the relay has held the bots' kill_at-th line,
    and the table brings it back. Returns each bot's stream (Session lines
    aside) and the number of entries in the journal."""
    os.makedirs(wd)
    table.start()
    relay = Relay(table.port, kill_at)
    bots = []
    try:
        for i in range(len(BOT_SEEDS)):
            bots.append(Bot(args, wd, relay.port, i, i == len(BOT_SEEDS) - 1))
        if kill_at is not None:
            check(relay.held.wait(30), "the bots sent only %d lines" % relay.lines)
            path = table.journal_path()
            # settled: the server has taken and journaled what it got
            wait_until(lambda: entries(path) >= kill_at - 1, 10,
                       "the journal holds %d entries, not %d" % (entries(path), kill_at - 1))
            time.sleep(0.1)
            relay.down()
            table.crash()
            relay.release()
            check(b'{"end":' not in read(path), "the killed game's journal is closed")
            table.recover()
            relay.up()
        streams = [b.finish() for b in bots]
        rc = table.finish()
        check(rc == 0, "the server's last exit status %s: %s" % (rc, table.log()[-1500:]))
    finally:
        relay.close()
        for b in bots:
            b.kill()
        table.close()
    return streams, entries(table.journal_path())


def check_journal_dir(args, d, want_names):
    names = journals(d)
    check(names == want_names, "journals %s, expected %s" % (names, want_names))
    for n in names:
        mode = stat.S_IMODE(os.stat(os.path.join(d, n)).st_mode)
        check(mode == 0o600, "%s: mode %o, expected 600" % (n, mode))
    last = os.path.join(d, names[-1])
    tail = read(last).rstrip(b"\n").rsplit(b"\n", 1)[-1]
    check(tail.startswith(b'{"end":"game over"'), "%s does not end with the game: %r" %
          (names[-1], tail[:80]))
    if args.replay:
        r = subprocess.run([args.replay, "--quiet", last], capture_output=True)
        check(r.returncode == 0, "sopra-replay %s: exit %d: %s" %
              (last, r.returncode, r.stderr.decode(errors="replace")[-500:]))


def compare(ref, got):
    for i, (a, b) in enumerate(zip(ref, got)):
        if a != b:
            k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            raise Failure("B%d's stream differs from the uninterrupted game's at line %d "
                          "(%d vs %d lines): %r vs %r" %
                          (i, k + 1, len(b), len(a), b[k:k + 1], a[k:k + 1]))


def crash_and_resume(args, make_table, wd):
    """The reference game, then the same game with a crash; the checks."""
    ref, n = play(args, make_table("reference"), os.path.join(wd, "reference"))
    check(n >= 9, "the reference game has only %d entries" % n)
    table = make_table("crash")
    got, _ = play(args, table, os.path.join(wd, "crash"), kill_at=n // 2)
    check("journal-dir: resuming" in table.log(),
          "the restarted server did not resume: " + table.log()[-1500:])
    compare(ref, got)
    check_journal_dir(args, table.journal_dir(), ["game-000001.jnl"])
    return table, n


# ---- systemd ---------------------------------------------------------------------

class SystemdTable:
    """The unit's instance PORT, its state under root, run without systemd:
    each start runs the expanded ExecStart line; the test restarts it."""

    def __init__(self, args, root, port, settings):
        self.args = args
        self.port = port
        self.inst = unitfile.Instance(UNIT, port, root)
        self.state = self.inst.make_state_dir()
        base = dict(os.environ)
        base.pop("AGONES_SDK_HTTP_PORT", None)
        self.env = self.inst.env(base)
        self.env.update(settings)  # what /etc/sopra/game-PORT.env would hold
        self.words = [w.replace("/usr/bin/sopra-server", os.path.abspath(args.server))
                      for w in self.inst.exec_start(self.env)]
        self.restart_sec = float(self.inst.last("RestartSec", "0.1").rstrip("s"))
        self.logs = []
        self.p = None

    def start(self):
        path = os.path.join(self.inst.root, "server%d.err" % len(self.logs))
        self.logs.append(path)
        umask = self.inst.umask()
        with open(path, "wb") as err:
            self.p = subprocess.Popen(self.words, env=self.env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err,
                                      preexec_fn=lambda: os.umask(umask))
        wait_until(lambda: "listening on" in self.log_of(path) or self.p.poll() is not None,
                   20, "the server did not listen")
        check(self.p.poll() is None, "the server exited at once: " + self.log_of(path))

    @staticmethod
    def log_of(path):
        return read(path).decode(errors="replace")

    def log(self):
        return self.log_of(self.logs[-1])

    def journal_dir(self):
        return self.state

    def journal_path(self):
        names = journals(self.state)
        return os.path.join(self.state, names[-1])

    def crash(self):
        self.p.send_signal(signal.SIGKILL)
        rc = self.p.wait()
        check(rc == -signal.SIGKILL, "the server was not killed (exit %d)" % rc)

    def recover(self):
        time.sleep(self.restart_sec)  # Restart=always, RestartSec=
        self.start()

    def finish(self, timeout=20):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Failure("the server did not exit after the game: " + self.log()[-1500:])

    def stop(self):
        """systemctl stop: SIGTERM, exit 0."""
        self.p.send_signal(signal.SIGTERM)
        return self.finish()

    def close(self):
        if self.p and self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def systemd_rotation(args, table):
    """The table after its finished game: a new game in the next journal,
    then the oldest journal deleted with SOPRA_JOURNAL_KEEP=1."""
    d = table.journal_dir()
    table.env["SOPRA_SEED"] = "random"
    table.start()
    log = table.log()
    check(table.stop() == 0, "SIGTERM: exit status")
    check(re.search(r"not resuming \S+/game-000001\.jnl: its game was closed \(game over\)", log)
          and "a new game, journaled in %s/game-000002.jnl" % d in log,
          "after a finished game: " + log[-1500:])
    check("(random; pass --seed" in log, "SOPRA_SEED=random: no random seed: " + log[-800:])
    table.env["SOPRA_JOURNAL_KEEP"] = "1"
    table.words = [w.replace("/usr/bin/sopra-server", os.path.abspath(args.server))
                   for w in table.inst.exec_start(table.env)]
    table.start()
    log = table.log()
    check(table.stop() == 0, "SIGTERM: exit status")
    check("a new game, journaled in %s/game-000003.jnl" % d in log and
          "removed %s/game-000001.jnl" % d in log, "rotation: " + log[-1500:])
    names = journals(d)
    check(names == ["game-000002.jnl", "game-000003.jnl"], "after the rotation: %s" % names)
    check(b'{"end":"stopped"' in read(os.path.join(d, names[0])),
          "the stopped game's journal has no end record")


def run_systemd(args, wd):
    root = os.path.join(wd, "state-root")

    def make_table(name):
        return SystemdTable(args, os.path.join(root, name), free_port(),
                            {"SOPRA_CONFIG": os.path.abspath(args.config),
                             "SOPRA_SEED": str(SERVER_SEED),
                             "SOPRA_TIMEOUT": str(TIMEOUT)})

    results = []
    table = None
    try:
        table, n = crash_and_resume(args, make_table, wd)
        d = table.journal_dir()
        dmode = stat.S_IMODE(os.stat(d).st_mode)
        check(dmode == 0o700, "state directory mode %o, expected 700" % dmode)
        results.append(("unit ExecStart: SIGKILL mid-game (%d entries), restarted: the bots "
                        "finish with the uninterrupted streams" % n, None))
    except Failure as e:
        results.append(("unit ExecStart: SIGKILL mid-game, restarted", e))
        return results
    try:
        systemd_rotation(args, table)
        results.append(("unit ExecStart after a finished game: a new game, journals rotated",
                        None))
    except Failure as e:
        results.append(("unit ExecStart after a finished game", e))
    finally:
        table.close()
    return results


# ---- container -------------------------------------------------------------------

class ContainerTable:
    """A container of the image with a named volume of its own for the
    journals and --restart=on-failure."""

    def __init__(self, args, name):
        self.args = args
        self.podman = shlex.split(args.podman)
        self.name = "sopra-recovery-%d-%s" % (os.getpid(), name)
        self.volume = self.name
        self.port = free_port()
        self.started = False
        self.pm("volume", "create", self.volume)
        self.mountpoint = self.pm("volume", "inspect", "--format", "{{.Mountpoint}}",
                                  self.volume).strip()

    def pm(self, *argv, check_rc=True):
        r = subprocess.run(self.podman + list(argv), capture_output=True, text=True, timeout=120)
        if check_rc:
            check(r.returncode == 0, "podman %s: exit %d: %s" %
                  (" ".join(argv[:2]), r.returncode, r.stderr[-800:]))
        return r.stdout

    def start(self):
        self.pm("run", "-d", "--name", self.name, "--restart=on-failure",
                "-v", "%s:%s" % (self.volume, CONTAINER_JOURNALS),
                *shlex.split(self.args.run_flags), self.args.image,
                "--config", "/etc/sopra/example.json", "--port", str(self.port),
                "--seed", str(SERVER_SEED), "--timeout", str(TIMEOUT),
                "--reconnect-grace", "30", "--journal-dir", CONTAINER_JOURNALS)
        self.started = True
        self.wait_listening(1)

    def wait_listening(self, times):
        """The server's times-th start. Between a crash and podman's
        restart the container is "exited" for a moment: that is no reason
        to stop waiting (a look that caught it failed the test on a busy
        machine). A look is a podman process, which takes the container's
        lock, as podman's restart does: one every 250 ms."""
        def why():
            return ("the container's server did not listen (state %s, %s restart(s)): %s" %
                    (self.state(), self.restarts_or("?"), self.log()[-800:]))
        wait_until(lambda: self.log().count("listening on") >= times, 60, why, interval=0.25)

    def restarts_or(self, default):
        out = self.pm("inspect", "--format", "{{.RestartCount}}", self.name,
                      check_rc=False).strip()
        return out if out.isdigit() else default

    def log(self):
        r = subprocess.run(self.podman + ["logs", self.name], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        return r.stdout

    def state(self):
        return self.pm("inspect", "--format", "{{.State.Status}}", self.name,
                       check_rc=False).strip()

    def journal_dir(self):
        return self.mountpoint

    def journal_path(self):
        wait_until(lambda: journals(self.mountpoint), 10, "no journal in the volume")
        return os.path.join(self.mountpoint, journals(self.mountpoint)[-1])

    def pid(self):
        return int(self.pm("inspect", "--format", "{{.State.Pid}}", self.name).strip())

    def crash(self):
        """SIGKILL the server (PID 1 in the container) from the host."""
        os.kill(self.pid(), signal.SIGKILL)

    def recover(self):
        """podman restarts the container (--restart=on-failure)."""
        self.wait_listening(2)

    def finish(self, timeout=30):
        out = self.pm("wait", self.name).strip()
        return int(out) if out.lstrip("-").isdigit() else out

    def restarts(self):
        return int(self.pm("inspect", "--format", "{{.RestartCount}}", self.name).strip())

    def close(self):
        pass  # the container stays for the checks; remove() takes it away

    def remove(self):
        if self.started:
            self.pm("rm", "-f", self.name, check_rc=False)
        self.pm("volume", "rm", "-f", self.volume, check_rc=False)


def run_container(args, wd):
    tables = []

    def make_table(name):
        t = ContainerTable(args, name)
        tables.append(t)
        return t

    try:
        table, n = crash_and_resume(args, make_table, wd)
        check(table.restarts() == 1, "the container restarted %d times, expected 1" %
              table.restarts())
        return [("container: the server SIGKILLed mid-game (%d entries), restarted by "
                 "podman (--restart=on-failure), resumed from its volume: the bots finish "
                 "with the uninterrupted streams" % n, None)]
    except Failure as e:
        return [("container: SIGKILL mid-game, restarted, resumed", e)]
    finally:
        for t in tables:
            t.remove()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("where", choices=["systemd", "container"])
    ap.add_argument("--server")
    ap.add_argument("--bot", required=True)
    ap.add_argument("--config", default=os.path.join(ROOT, "resources", "example.json"))
    ap.add_argument("--replay")
    ap.add_argument("--podman", default="podman")
    ap.add_argument("--image")
    ap.add_argument("--run-flags", default="")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if args.where == "systemd" and not args.server:
        ap.error("systemd needs --server")
    if args.where == "container" and not args.image:
        ap.error("container needs --image")
    wd = tempfile.mkdtemp(prefix="sopra-recovery-")
    try:
        results = (run_systemd if args.where == "systemd" else run_container)(args, wd)
    except (Failure, unitfile.UnitError, OSError, subprocess.SubprocessError) as e:
        results = [(args.where, e)]
    failed = 0
    for name, err in results:
        if err is None:
            print("PASS", name)
        else:
            failed += 1
            print("FAIL %s: %s" % (name, err))
    if failed or args.keep:
        print("work directory kept:", wd)
    else:
        shutil.rmtree(wd, ignore_errors=True)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
