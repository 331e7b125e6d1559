"""What the Python system tests share (import sopratest; they run from this
folder, so it is on sys.path).

- Failure / check: a failed expectation; the tests report it per case.
- Server: sopra-server started on a port the kernel picks (--port 0) with its
  stderr in a file, the port read from its "listening on ADDR:PORT" line
  (and the watchers' port from "watchers on ADDR:PORT" with --watch-port).
- ScriptedPlayer: a connection that keeps every line it receives and plays
  a fixed script (the first two characters offered, then always ends its
  turn).
- require_tmux / client_test_args: what a test that drives sopra-client in
  tmux starts with (its arguments; skipped without tmux).
- TmuxServer: a tmux server of the test's own (tmux -L NAME -f /dev/null),
  killed at the end: a person's tmux, its sessions and its configuration are
  never touched, and two test runs never meet.
"""
import argparse
import atexit
import json
import os
import re
import resource
import select
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import time
import uuid


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class ScriptedPlayer:
    """A player on one connection (connect() again for a new one): lines
    keeps every line taken over all its connections. pump() returns what
    has come, take() folds lines in (Session's secret, the characters
    offered, the prompts), act() answers each prompt not yet answered: the
    first two characters offered to a Characters, an end of the turn to
    anything else. The prompt answered is the last of LAST_OF among the
    lines."""

    LAST_OF = ("Characters", "ActNow")

    def __init__(self, port):
        self.lines = []
        self.prompts = 0  # Characters/ActNow taken
        self.acted = 0
        self.secret = None
        self.chars = []
        self.connect(port)

    def connect(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.eof = False

    def send_raw(self, data):
        try:
            self.s.sendall(data)
        except OSError:
            pass

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def pump(self, timeout):
        """Read what is there within timeout seconds; returns the new lines
        (not taken yet)."""
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
                self.chars = [ev["characterId0"], ev["characterId1"]]
            if ev["event"] in ("Characters", "ActNow"):
                self.prompts += 1

    def act(self):
        while self.acted < self.prompts:
            self.acted += 1
            last = [json.loads(l)["event"] for l in self.lines
                    if json.loads(l)["event"] in self.LAST_OF]
            if last and last[-1] == "Characters":
                self.send({"command": "SelectCharacters", "characterId0": self.chars[0],
                           "characterId1": self.chars[1]})
            else:
                self.send({"command": "EndTurn"})

    def over(self):
        """The game is over for this player: GameEnd or its Left, or EOF."""
        return self.eof or any(json.loads(l)["event"] in ("GameEnd", "Left")
                               for l in self.lines[-3:])


def require_tmux(name):
    """Exit unless tmux is installed: skipped (77), or failed under CI=true."""
    if shutil.which("tmux") is None:
        ci = os.environ.get("CI") == "true"
        print("*" * 70 + "\nSKIPPED: %s needs tmux (apt-get install tmux; setup.sh "
              "installs it)" % name + ("; a failure under CI=true" if ci else "") + "\n" +
              "*" * 70, flush=True)
        sys.exit(1 if ci else 77)


def client_test_args(name, more=None):
    """The arguments of a test that drives sopra-client in tmux: --server,
    --client, --config and --workdir (created), and what more(parser) adds;
    the test is skipped without tmux (require_tmux)."""
    ap = argparse.ArgumentParser()
    for a in ("server", "client", "config", "workdir"):
        ap.add_argument("--" + a, required=True)
    if more:
        more(ap)
    args = ap.parse_args()
    require_tmux(name)
    os.makedirs(args.workdir, exist_ok=True)
    return args


def reported_port(text, what="listening on"):
    """The port of the first complete line of text that says `what ADDR:PORT`
    (ADDR 0.0.0.0, [::1], ...: the port follows its last colon), or None."""
    m = re.search(re.escape(what) + r" \S*:(\d+)\b[^\n]*\n", text)
    return int(m.group(1)) if m else None


class Server:
    """sopra-server `program --port PORT *args`, stdin and stdout /dev/null,
    stderr into the file `log` (default: a temp file that close() removes).
    port None: no --port (the server's default).

    The constructor waits up to `wait` s for the listening line and sets
    .port (with --watch-port among args also .watch_port). A server that
    exits first is a Failure, unless exit_ok: then .port is None (see
    text()). env: the server's environment; nofile: its RLIMIT_NOFILE."""

    def __init__(self, program, *args, port=0, log=None, wait=20, env=None, nofile=None,
                 exit_ok=False):
        self.own_log = log is None
        if log is None:
            fd, log = tempfile.mkstemp(prefix="sopra-server-", suffix=".log")
            os.close(fd)
        self.log = log
        self.exited_at = None

        def limits():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        with open(log, "wb") as err:
            port_args = [] if port is None else ["--port", str(port)]
            self.p = subprocess.Popen([program, *port_args, *args],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=err, env=env, preexec_fn=limits if nofile else None)
        self.port = self.watch_port = None
        watch = "--watch-port" in args
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            text = self.text()
            self.port = reported_port(text)
            self.watch_port = reported_port(text, "watchers on") if watch else None
            if self.port and (self.watch_port or not watch):
                return
            if self.p.poll() is not None:
                self.port = self.watch_port = None
                check(exit_ok, "the server exited before listening: " + text[-2000:])
                return
            time.sleep(0.005)
        self.kill()
        raise Failure("the server did not listen within %g s: %s" % (wait, self.text()[-2000:]))

    def text(self):
        """Its stderr so far."""
        with open(self.log, "rb") as f:
            return f.read().decode(errors="replace")

    @property
    def lines(self):
        return self.text().splitlines()

    def status(self, key):
        """A field of /proc/PID/status in KiB (e.g. VmHWM), -1 if absent."""
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return -1

    def wait(self, timeout=20):
        """Its exit status; SIGKILL and a Failure if it runs longer."""
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("the server did not exit within %g s" % timeout) from None
        if self.exited_at is None:
            self.exited_at = time.monotonic()
        return rc

    def kill(self):
        """SIGKILL (unless it has exited); its exit status (-9, or what it
        exited with before)."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        return self.p.wait()

    def sanitizer_clean(self):
        text = self.text()
        check("Sanitizer" not in text and "runtime error" not in text,
              "sanitizer report from the server: " + text[-3000:])

    def close(self):
        """kill(); a temp log is removed."""
        self.kill()
        if self.own_log:
            os.unlink(self.log)


def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def _group_members(pgid):
    """The live processes (not zombies) of process group pgid, as (pid,
    command line) pairs, from /proc."""
    members = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid or fields[0] in ("Z", "X"):
                continue
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            members.append((int(d), cmd[:200]))
        except (OSError, IndexError, ValueError):
            continue
    return members


class TmuxServer:
    """A tmux server of our own: every command runs as `tmux -L NAME -f
    /dev/null` without the caller's TMUX, so a person's tmux server and
    ~/.tmux.conf stay out of it. It is started at once and stays up until
    kill(), which ends it and removes its socket; kill() also runs at exit, and SIGTERM / SIGHUP (e.g. a ctest timeout) exit
    through it when they had no handler. Servers left by a run that was
    killed outright (SIGKILL) are ended by the next run with the same
    prefix."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.name = "%s-%d-%s" % (prefix, os.getpid(), uuid.uuid4().hex[:8])
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.pane_groups = set()  # process groups of panes killed (see _reap_panes)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, _exit_on_signal)
        atexit.register(self.kill)
        self._reap_stale()
        # Up until kill(): with the default exit-empty, killing the last
        # session ends the server, and a new-session right after can meet
        # the server while it shuts down and fail.
        self.run("start-server", ";", "set-option", "-g", "exit-empty", "off", check=True)

    @staticmethod
    def socket_dir():
        return os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", "tmux-%d" % os.getuid())

    def run(self, *args, check=False, name=None):
        """`tmux -L NAME -f /dev/null ARGS...`, output captured as text; with
        check, a Failure when tmux fails. Before a kill-session or
        kill-server, the panes' process groups are noted for kill() to
        reap."""
        if args and args[0] in ("kill-session", "kill-server"):
            self._note_panes(name or self.name)
        argv = ["tmux", "-L", name or self.name, "-f", "/dev/null", *args]
        r = subprocess.run(argv, capture_output=True, text=True, env=self.env)
        if check and r.returncode != 0:
            raise Failure("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
        return r

    def kill(self, name=None):
        name = name or self.name
        self.run("kill-server", name=name)
        try:
            os.unlink(os.path.join(self.socket_dir(), name))
        except OSError:
            pass
        self._reap_panes()

    # How long a pane's programs may take to end once their terminal is
    # gone (SIGHUP): a sanitized client's leak check at exit included.
    PANE_EXIT_GRACE = 10

    def _note_panes(self, name):
        r = subprocess.run(["tmux", "-L", name, "-f", "/dev/null", "list-panes", "-a", "-F",
                            "#{pane_pid}"], capture_output=True, text=True, env=self.env)
        self.pane_groups.update(int(p) for p in r.stdout.split() if p.isdigit())

    def _reap_panes(self):
        """Wait for every noted pane's process group to end; what still runs
        after PANE_EXIT_GRACE seconds is named on stderr and killed, so that
        no test leaves a program behind (a LeakSanitizer check at exit was
        once seen to spin for an hour)."""
        groups = self.pane_groups
        deadline = time.monotonic() + self.PANE_EXIT_GRACE
        left = {g: _group_members(g) for g in groups}
        while any(left.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
            left = {g: _group_members(g) for g in left}
        for g, members in left.items():
            if not members:
                continue
            print("sopratest: WARNING: %d s after its terminal went away, a tmux pane's "
                  "process group %d still ran (%s): killed" % (
                      self.PANE_EXIT_GRACE, g, "; ".join(
                          "%d %s" % (pid, cmd) for pid, cmd in members)),
                  file=sys.stderr, flush=True)
            try:
                os.killpg(g, signal.SIGKILL)
            except OSError:
                pass
        groups.clear()

    def _reap_stale(self):
        try:
            names = os.listdir(self.socket_dir())
        except OSError:
            return
        for name in names:
            m = re.fullmatch(re.escape(self.prefix) + r"-(\d+)-[0-9a-f]{8}", name)
            if m and not _alive(int(m.group(1))):
                self.kill(name)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
