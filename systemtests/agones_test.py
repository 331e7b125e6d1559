#!/usr/bin/env python3
"""System test of the Agones SDK lifecycle (src/agones.c, docs/deployment.md).

A local HTTP endpoint on a random loopback port stands in for the SDK
sidecar; sopra-server runs with AGONES_SDK_HTTP_PORT pointing at it and two
sopra-bot clients play a game through a small TCP relay that records what the
server sent them. Cases:

  normal     POST /ready (the game port accepts connections by then),
             /health right after and every interval (>= 2 seen), /shutdown
             once GameEnd was flushed to every player: exactly that sequence,
             each a POST of "{}" as application/json, all over one
             keep-alive connection; and one PUT /metadata/annotation
             {"key":"seed","value":SEED} after the first /health, where
             SEED is the seed the server drew and logged (no --seed).
  late       the sidecar's port refuses connections for the first 1.5 s:
             the server retries /ready with backoff, registration goes on
             meanwhile, then the same sequence as "normal".
  error500   the sidecar answers 500 to everything: the game is played to its
             end regardless, /ready is retried with growing gaps, no /health
             (never Ready), /shutdown is retried until the bounded wait ends,
             the server exits 0 in time, and the failures are logged.
  unset      without AGONES_SDK_HTTP_PORT: no request, and one socket fewer
             than the same server with the SDK connected; an invalid value
             ("abc") is logged and ignored.
  resume     --journal-dir: the server is SIGKILLed while one bot waits in
             the registration, and started again on the same port and
             directory: it resumes the game and sends no /ready (its
             GameServer is past Ready), /health at once, the same seed
             annotation; the bot comes back (--reconnect), a second one
             joins, the game ends, /shutdown.

Usage: agones_test.py --server PATH --bot PATH --config PATH [--verbose]
Ends with "N passed, M failed"; exit status 1 if anything failed.
"""
import argparse
import http.server
import json
import os
import re
import select
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import sopratest
from sopratest import Failure, check

HEALTH_INTERVAL = 2.0     # AGONES_HEALTH_INTERVAL_MS
SHUTDOWN_WAIT = 3.0       # AGONES_SHUTDOWN_WAIT_MS
RETRY_MIN = 0.1           # AGONES_RETRY_MIN_MS
RETRY_MAX = 1.0           # AGONES_RETRY_MAX_MS
VERBOSE = False


def log(*a):
    if VERBOSE:
        print("  [%.3f]" % time.monotonic(), *a, flush=True)


# ---- the fake SDK sidecar ---------------------------------------------------

class Sidecar:
    """HTTP/1.1 keep-alive endpoint on 127.0.0.1:<random>. status: the answer
    to every POST. With listen=False the port is bound but not listening
    (connections are refused) until listen_in(seconds). on_request(path) runs
    in the handler before the answer, under no lock."""

    def __init__(self, status=200, listen=True, on_request=None):
        self.requests = []  # (monotonic time, method, path, content type, body, extra)
        self.peers = []     # the client port of each POST
        self.lock = threading.Lock()
        self.status = status
        self.on_request = on_request
        side = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n) if n else b""
                t = time.monotonic()
                extra = side.on_request(self.path) if side.on_request else None
                with side.lock:
                    side.requests.append((t, self.command, self.path,
                                          self.headers.get("Content-Type"), body, extra))
                    side.peers.append(self.client_address[1])
                log("sidecar:", self.path, side.status)
                out = b"{}"
                self.send_response(side.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_PUT = do_POST

            def do_GET(self):
                with side.lock:
                    side.requests.append((time.monotonic(), "GET", self.path, None, b"", None))
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler,
                                                     bind_and_activate=False)
        self.httpd.daemon_threads = True
        self.httpd.server_bind()  # bound: the port is ours, but refuses until listen()
        self.port = self.httpd.server_address[1]
        self.listening_at = None
        if listen:
            self.listen_in(0.0)

    def listen_in(self, delay):
        threading.Thread(target=self._run, args=(delay,), daemon=True).start()

    def _run(self, delay):
        if delay:
            time.sleep(delay)
        self.httpd.server_activate()
        self.listening_at = time.monotonic()
        log("sidecar listening on", self.port)
        self.httpd.serve_forever(poll_interval=0.05)

    def paths(self):
        with self.lock:
            return [r[2] for r in self.requests]

    def wait_for(self, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred(self.paths()):
                return True
            time.sleep(0.02)
        return pred(self.paths())

    def close(self):
        if self.listening_at is not None:
            self.httpd.shutdown()
        self.httpd.server_close()


# ---- a relay between each bot and the server, recording what the server sent

class Relay:
    """Listens on 127.0.0.1:<random>; each accepted client gets its own
    connection to the server. Bytes from the server are recorded before they
    are passed on, under a lock, so that flushed() can tell exactly what the
    server has written so far: what was relayed plus what still waits in the
    kernel (peeked, not consumed)."""

    def __init__(self, server_port):
        self.server_port = server_port
        self.lock = threading.Lock()
        self.links = []  # [upstream socket, bytes received from the server]
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                down, _ = self.lsock.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.server_port))
            link = [up, bytearray()]
            with self.lock:
                self.links.append(link)
            threading.Thread(target=self._pump, args=(down, up, None), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, down, link), daemon=True).start()

    def _pump(self, src, dst, link):
        try:
            while True:
                select.select([src], [], [])
                if link is None:
                    data = src.recv(65536)
                else:
                    with self.lock:
                        data = src.recv(65536)
                        link[1] += data
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (dst,):
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def flushed(self):
        """What the server has sent on each link by now, relayed or not."""
        out = []
        with self.lock:
            for up, got in self.links:
                pending = b""
                try:
                    pending = up.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                except (BlockingIOError, OSError):
                    pass
                out.append(bytes(got) + pending)
        return out

    def close(self):
        self.lsock.close()
        with self.lock:
            for up, _ in self.links:
                up.close()


# ---- processes -----------------------------------------------------------------

class Server(sopratest.Server):
    """sopra-server on `port` (0: the kernel picks) with
    AGONES_SDK_HTTP_PORT=env_port (None: unset); seed None: no --seed (the
    server draws one); extra: more options."""

    def __init__(self, args, env_port, seed=7, port=0, extra=()):
        env = dict(os.environ)
        env.pop("AGONES_SDK_HTTP_PORT", None)
        if env_port is not None:
            env["AGONES_SDK_HTTP_PORT"] = str(env_port)
        seed_opt = [] if seed is None else ["--seed", str(seed)]
        super().__init__(args.server, "--config", args.config, *seed_opt, "--timeout", "20",
                         *extra, port=port, env=env)
        self.listening_at = time.monotonic()

    def seed(self):
        """The seed the server logged (drawn, given or from the journal)."""
        end = time.monotonic() + 5
        while time.monotonic() < end:
            for line in list(self.lines):
                m = re.search(r"seed (-?\d+)", line)
                if m:
                    return m.group(1)
            time.sleep(0.02)
        raise Failure("no seed in the log: %s" % self.lines)

    def accepts(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def sockets(self):
        n = 0
        for fd in os.listdir("/proc/%d/fd" % self.p.pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (self.p.pid, fd)).startswith("socket:"):
                    n += 1
            except OSError:
                pass
        return n

    def close(self):
        """kill(); with --verbose its log; the log removed."""
        self.kill()
        for line in self.lines:
            log("server:", line)
        super().close()


def start_bot(args, port, name, seed, start, reconnect=False):
    cmd = [args.bot, "--port", str(port), "--name", name, "--seed", str(seed), "--quiet"]
    if start:
        cmd.append("--start")
    if reconnect:
        cmd += ["--reconnect", "20"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    return p


def wait_registered(bot, name):
    line = bot.stdout.readline().decode(errors="replace")
    check(line.strip() == "registered " + name, "bot %s did not register (%r)" % (name, line))


def finish_bots(bots, timeout=30):
    results = []
    for b in bots:
        try:
            out, err = b.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            b.kill()
            raise Failure("a bot did not finish")
        err = err.decode(errors="replace")
        m = re.search(r"result=(\w+)", err)
        results.append((b.returncode, m.group(1) if m else "?", err.strip()))
    for rc, res, err in results:
        check(rc == 0 and res in ("win", "lose"), "bot failed: rc=%d %s" % (rc, err))
    return results


def play(args, server, relay_port, before_start=None):
    """Two bots through the relay; the second starts the game."""
    b1 = start_bot(args, relay_port, "Anna", 11, False)
    wait_registered(b1, "Anna")
    if before_start:
        before_start()
    b2 = start_bot(args, relay_port, "Ben", 12, True)
    wait_registered(b2, "Ben")
    return finish_bots([b1, b2])


ANNOTATE = "/metadata/annotation"


def check_requests(side, seed=None):
    """Every request well-formed: the lifecycle ones a POST of "{}", the
    annotation a PUT of {"key":"seed","value":seed} (at most one). Returns
    the lifecycle requests and the annotations' times."""
    with side.lock:
        reqs = list(side.requests)
    lifecycle, annotated = [], []
    for t, method, path, ctype, body, extra in reqs:
        check(ctype == "application/json", "%s: Content-Type %r" % (path, ctype))
        if path == ANNOTATE:
            check(method == "PUT", "%s %s: not a PUT" % (method, path))
            check(json.loads(body) == {"key": "seed", "value": seed},
                  "annotation %r, expected the seed %s" % (body, seed))
            annotated.append(t)
            continue
        check(method == "POST", "%s %s: not a POST" % (method, path))
        check(body == b"{}", "%s: body %r" % (path, body))
        lifecycle.append((t, method, path, ctype, body, extra))
    check(len(annotated) <= 1, "the seed was annotated %d times" % len(annotated))
    return lifecycle, annotated


def check_sequence(paths):
    check(len(paths) >= 3 and paths[0] == "/ready" and paths[-1] == "/shutdown" and
          all(p == "/health" for p in paths[1:-1]),
          "sequence is not /ready, /health..., /shutdown: %s" % paths)


def check_annotated(side, annotated, seed):
    """The seed annotation came once, after /ready and the first /health
    (it never holds those back)."""
    paths = side.paths()
    check(len(annotated) == 1, "no seed annotation: %s" % paths)
    k = paths.index(ANNOTATE)
    check(k >= 1 and paths[k - 1] == "/health", "the annotation was not sent after the first "
          "/health: %s" % paths)


# ---- the cases -------------------------------------------------------------------

def lifecycle(args, listen_after):
    state = {}
    started = threading.Event()

    def on_request(path):
        started.wait(10)  # the server's port and the relay are known
        if path == "/ready":
            return state["server"].accepts()
        if path == "/shutdown":
            # GameEnd must have been written to every player already
            return [b'"GameEnd"' in got for got in state["relay"].flushed()]
        return None

    side = Sidecar(200, not listen_after, on_request)
    t0 = time.monotonic()
    srv = Server(args, side.port, seed=None)  # a seed of its own, reported
    if listen_after:
        side.listen_in(listen_after)  # from the moment the server listens
    state["server"] = srv
    relay = Relay(srv.port)
    state["relay"] = relay
    started.set()
    try:
        def before_start():
            # Bot 1 registered while the sidecar may still be down: the game
            # goes on regardless. Now wait for Ready and the periodic ping.
            check(side.wait_for(lambda p: p.count("/health") >= 2,
                                listen_after + HEALTH_INTERVAL + 2.5),
                  "no /ready and two /health: %s" % side.paths())

        play(args, srv, relay.port, before_start)
        rc = srv.wait(SHUTDOWN_WAIT + 5)
        check(rc == 0, "server exit %d" % rc)
        check(any("(random; pass --seed" in l for l in srv.lines), "the seed was not drawn")
        reqs, annotated = check_requests(side, srv.seed())
        check_annotated(side, annotated, srv.seed())
        paths = [r[2] for r in reqs]
        check_sequence(paths)
        check(reqs[0][5] is True, "the game port did not accept connections at /ready")
        check(len(relay.links) == 2 and reqs[-1][5] == [True, True],
              "/shutdown before GameEnd was flushed to every player: %s" % reqs[-1][5])
        gaps = [b[0] - a[0] for a, b in zip(reqs[1:-1], reqs[2:-1])]
        check(all(HEALTH_INTERVAL * 0.8 <= g <= HEALTH_INTERVAL * 1.5 for g in gaps),
              "health pings not every %.0f s: %s" % (HEALTH_INTERVAL, gaps))
        if listen_after:
            check(reqs[0][0] - side.listening_at <= RETRY_MAX + 0.5,
                  "/ready came %.2f s after the sidecar listened" %
                  (reqs[0][0] - side.listening_at))
            check(any("POST /ready failed" in l for l in srv.lines),
                  "the refused /ready was not logged")
        # gone once /shutdown is accepted, not at the end of the 3 s wait
        # (the margin is for a slow machine or a container's teardown)
        check(srv.exited_at - reqs[-1][0] < SHUTDOWN_WAIT - 0.5,
              "server lingered %.2f s after /shutdown" % (srv.exited_at - reqs[-1][0]))
        check(len(set(side.peers)) == 1,
              "not one keep-alive connection: client ports %s" % side.peers)
        log("sequence:", side.paths(), "in %.2f s" % (time.monotonic() - t0))
    finally:
        srv.close()
        relay.close()
        side.close()


def case_normal(args):
    lifecycle(args, 0.0)


def case_late(args):
    lifecycle(args, 1.5)


def case_error500(args):
    side = Sidecar(500)
    srv = Server(args, side.port)
    try:
        # a few /ready retries (0.1 + 0.2 s backoff) before the game starts
        play(args, srv, srv.port,
             lambda: check(side.wait_for(lambda p: p.count("/ready") >= 3, 5),
                           "/ready was not retried: %s" % side.paths()))
        game_over = time.monotonic()
        rc = srv.wait(SHUTDOWN_WAIT + 5)
        check(rc == 0, "server exit %d" % rc)
        check(srv.exited_at - game_over <= SHUTDOWN_WAIT + 1.5,
              "exit %.2f s after the game; the wait is bounded by %.0f s" %
              (srv.exited_at - game_over, SHUTDOWN_WAIT))
        reqs, annotated = check_requests(side, srv.seed())
        paths = [r[2] for r in reqs]
        check("/health" not in paths, "/health although never Ready: %s" % paths)
        check(not annotated, "annotated although /ready was never accepted: %s" % paths)
        k = paths.index("/shutdown") if "/shutdown" in paths else -1
        check(k > 0 and all(p == "/ready" for p in paths[:k]) and
              all(p == "/shutdown" for p in paths[k:]),
              "expected /ready retries, then /shutdown retries: %s" % paths)
        check(len(paths) - k >= 2, "/shutdown was not retried: %s" % paths)
        ready_t = [r[0] for r in reqs[:k]]
        gaps = [b - a for a, b in zip(ready_t, ready_t[1:])]
        backoff = [min(RETRY_MIN * 2 ** i, RETRY_MAX) for i in range(len(gaps))]
        check(all(g >= 0.9 * b for g, b in zip(gaps, backoff)),
              "/ready retried sooner than the backoff %s: %s" % (backoff, gaps))
        check(any("POST /ready failed (HTTP 500)" in l for l in srv.lines),
              "the 500 was not logged")
        check(any("/shutdown not accepted" in l for l in srv.lines),
              "the unaccepted /shutdown was not logged")
    finally:
        srv.close()
        side.close()


def case_unset(args):
    side = Sidecar(200)
    srv = Server(args, None)
    with_sdk = Server(args, side.port, seed=8)
    try:
        check(side.wait_for(lambda p: "/health" in p, 5), "the SDK server sent no /health")
        time.sleep(0.2)
        n_plain, n_sdk = srv.sockets(), with_sdk.sockets()
        check(n_plain == n_sdk - 1,
              "sockets without the SDK: %d, with it: %d (expected one fewer)" %
              (n_plain, n_sdk))
        with_sdk.p.send_signal(signal.SIGTERM)
        check(with_sdk.wait(SHUTDOWN_WAIT + 5) == 0, "SIGTERM: exit status")
        check(side.paths()[-1] == "/shutdown", "no /shutdown after SIGTERM: %s" % side.paths())
        n_before = len(side.paths())
        play(args, srv, srv.port)
        check(srv.wait(5) == 0, "server exit status")
        check(len(side.paths()) == n_before, "requests without AGONES_SDK_HTTP_PORT")
        check(not any("agones" in l for l in srv.lines), "agones log lines without the variable")
        bad = Server(args, "abc", seed=9)
        try:
            bad.p.send_signal(signal.SIGTERM)
            check(bad.wait(5) == 0, "invalid variable: exit status")
            check(any("AGONES_SDK_HTTP_PORT='abc' is not a port" in l for l in bad.lines),
                  "invalid variable not logged")
        finally:
            bad.close()
    finally:
        srv.close()
        with_sdk.close()
        side.close()


def case_resume(args):
    side = Sidecar(200)
    jdir = tempfile.mkdtemp(prefix="agones-journals-")
    extra = ("--journal-dir", jdir, "--reconnect-grace", "0")
    srv = Server(args, side.port, seed=None, extra=extra)
    bots = []
    again = None
    try:
        bots.append(start_bot(args, srv.port, "Anna", 11, False, reconnect=True))
        wait_registered(bots[0], "Anna")
        check(side.wait_for(lambda p: ANNOTATE in p, 5), "no annotation: %s" % side.paths())
        seed = srv.seed()
        srv.kill()
        n_first = len(side.paths())
        again = Server(args, side.port, seed=None, port=srv.port, extra=extra)
        check(any("journal-dir: resuming" in l for l in again.lines),
              "the second server did not resume: %s" % again.lines)
        check(again.seed() == seed, "resumed with seed %s, not %s" % (again.seed(), seed))
        # Anna comes back by herself, then Ben joins and starts
        check(side.wait_for(lambda p: len(p) > n_first, 5), "the resumed server sent nothing")
        bots.append(start_bot(args, again.port, "Ben", 12, True))
        wait_registered(bots[1], "Ben")
        finish_bots(bots)
        check(again.wait(SHUTDOWN_WAIT + 5) == 0, "resumed server: exit status")
        with side.lock:
            reqs = list(side.requests)[n_first:]
        paths = [r[2] for r in reqs]
        check("/ready" not in paths, "a resumed game sent /ready: %s" % paths)
        check(paths[0] == "/health" and paths[-1] == "/shutdown" and
              paths.count(ANNOTATE) == 1 and
              all(p in ("/health", ANNOTATE) for p in paths[1:-1]),
              "resumed: expected /health, the annotation, /health..., /shutdown: %s" % paths)
        check(reqs[0][0] - again.listening_at < 0.5,
              "the first /health came %.2f s after listening" %
              (reqs[0][0] - again.listening_at))
        check(json.loads(reqs[paths.index(ANNOTATE)][4]) == {"key": "seed", "value": seed},
              "resumed: annotation %r" % reqs[paths.index(ANNOTATE)][4])
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
        srv.close()
        if again:
            again.close()
        side.close()
        shutil.rmtree(jdir, ignore_errors=True)


class EndlessSidecar:
    """127.0.0.1:<random>: answers every request with 200 and a body that
    never ends (no Content-Length: it would end with the connection), as
    fast as the client reads it. sent: the body bytes written so far."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        chunk = b"[" + b"0," * 32768
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                got = c.recv(4096)
                if not got:
                    return
                head += got
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Connection: close\r\n\r\n")
            while not self.closed:
                c.sendall(chunk)
                self.sent += len(chunk)
        except OSError:
            pass
        finally:
            c.close()

    def close(self):
        self.closed = True
        self.sock.close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def case_endless_body(args):
    """A sidecar whose answer never ends: the server reads at most
    AGONES_MAX_BODY_BYTES of it, fails the request and retries; its memory
    stays where it was."""
    side = EndlessSidecar()
    srv = Server(args, side.port)
    try:
        time.sleep(0.5)
        before = rss_kib(srv.p.pid)
        time.sleep(3)
        after = rss_kib(srv.p.pid)
        log("endless body: %d bytes offered; RSS %d -> %d KiB" % (side.sent, before, after))
        check(after - before < 8 * 1024,
              "RSS grew from %d to %d KiB reading an endless body" % (before, after))
        check(srv.p.poll() is None, "the server died")
        check(any("/ready failed" in l for l in srv.lines),
              "the failed /ready was not logged: %s" % srv.lines[-5:])
        check(srv.accepts(), "the server no longer accepts players")
    finally:
        srv.close()
        side.close()


CASES = [("normal", case_normal), ("late", case_late), ("error500", case_error500),
         ("unset", case_unset), ("resume", case_resume), ("endless_body", case_endless_body)]


def main():
    global VERBOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    VERBOSE = args.verbose
    passed = failed = 0
    for name, fn in CASES:
        if args.cases and name not in args.cases:
            continue
        t = time.monotonic()
        try:
            fn(args)
            passed += 1
            print("PASS %s (%.1f s)" % (name, time.monotonic() - t), flush=True)
        except Failure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
