#!/usr/bin/env python3
"""Bad input to the HTTP port of sopra-server (--http-port; docs/web.md):
every case gets a clear answer and the server stays within its limits.

  http_input_test.py --server PATH --bot PATH --replay PATH

Wrong methods (405 with Allow), unknown paths (404), a body over 64 KiB
(413, after the server read the body: no reset), a command that is not one
line of strict JSON (400 with the JSON check's message), a missing or
unknown secret (403), a seat request with neither or both of name and
secret (400), a client that sends half a request (the server closes it),
and 1,000 event streams at once from one address
(--max-watchers-per-address 64): as many as the watcher limit get the
stream, and one more for each that fell silent and was replaced by a
newcomer, the others 503; the server's memory stays bounded and a TCP
player is still served meanwhile. Every answer's body is a JSON object with an
"error" text.

A browser that never reads: a game of two bots is played while one event
stream takes nothing (a 4 KiB receive buffer) and two others read. The
bots play to the end, the two streams end with exactly what a watcher gets
(sopra-replay --watch of the game's journal), the server's memory stays
bounded, and the stream that did not read is closed when the server exits.

No timed assertions: the deadlines (webutil.HANG_SEC) only guard against
a hang; the seconds are printed.
"""
import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from webutil import (HANG_SEC, Failure, check, open_stream, page_port, read_to_end,  # noqa: E402
                     run, sopratest, stream_events, watcher_lines)

# what src/http.c and src/net.c promise
MAX_WATCHERS = 64
# src/http.c: a stream whose browser has this much unsent stops reading
STREAM_HIGH = 256 << 10


def send_body_late(s, body, what):
    """Send body after a pause, in pieces: the server has seen the head by
    then. A server that answers and closes without reading the body resets
    the connection when the pieces arrive, and a client can lose the answer
    to that reset: each piece must go through."""
    time.sleep(0.3)
    for at in range(0, len(body), 1 << 16):
        try:
            s.sendall(body[at:at + (1 << 16)])
        except (ConnectionResetError, BrokenPipeError) as e:
            raise Failure("%s: the server reset the connection after %d of %d body bytes "
                          "instead of reading them (%s)" % (what, at, len(body), e))


def request(port, method, path, body=b"", headers=None, timeout=HANG_SEC):
    """One HTTP/1.1 request on a new connection: (status, headers, body).
    A body over 64 KiB is sent after the head (send_body_late)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    hd = {"Host": "x", "Content-Length": str(len(body)), "Connection": "close"}
    hd.update(headers or {})
    head = "%s %s HTTP/1.1\r\n%s\r\n" % (method, path,
                                         "".join("%s: %s\r\n" % kv for kv in hd.items()))
    if len(body) > 1 << 16:
        s.sendall(head.encode())
        send_body_late(s, body, "%s %s" % (method, path))
    else:
        s.sendall(head.encode() + body)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            break
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    check(lines and lines[0].startswith("HTTP/1.1 "), "no status line for %s %s: %r" %
          (method, path, data[:200]))
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return status, headers, rest


def expect_error(port, method, path, status, words, body=b"", headers=None):
    got, hd, rest = request(port, method, path, body, headers)
    check(got == status, "%s %s: status %d, expected %d (%r)" % (method, path, got, status, rest[:200]))
    if status != 413:  # evhttp answers an over-long body itself
        err = json.loads(rest)["error"]
        check(words in err, "%s %s: error %r does not say %r" % (method, path, err, words))
    if status == 405:
        check("allow" in hd, "%s %s: 405 without Allow" % (method, path))
    print("http_input_test: %s %s -> %d %s" % (method, path, got, rest[:80].decode(errors="replace").strip()),
          flush=True)


def seat(port):
    """A seat's stream (a socket reading it) and its secret."""
    s = open_stream(port, "/api/play?name=Eve")
    data = b""
    while b'"secret":"' not in data or not data.split(b'"secret":"')[1].count(b'"'):
        chunk = s.recv(65536)
        check(chunk, "the seat's stream ended: %r" % data[:300])
        data += chunk
    return s, data.split(b'"secret":"')[1].split(b'"')[0].decode()


def tcp_register(port):
    """A TCP player registers; seconds until its Config line arrived (a
    Failure after HANG_SEC: the guard against a hang)."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=HANG_SEC)
    s.sendall(b'{"command":"Register","playerName":"Tcp"}\n')
    data = b""
    while b"\n" not in data:
        chunk = s.recv(65536)
        check(chunk, "the TCP player got no Config")
        data += chunk
    check(data.startswith(b'{"event":"Config"'), "the TCP player got %r" % data[:80])
    return s, time.monotonic() - t0


def many_watchers(srv, port, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * n)), hard))
    rss0 = srv.status("VmRSS")
    socks = [open_stream(port, "/api/watch") for _ in range(n)]
    ok = refused = 0
    for s in socks:
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        if data.startswith(b"HTTP/1.1 200"):
            ok += 1
        elif data.startswith(b"HTTP/1.1 503"):
            refused += 1
    rss = srv.status("VmRSS")
    print("http_input_test: %d event streams: %d served, %d refused (503); RSS %d -> %d KiB" %
          (n, ok, refused, rss0, rss), flush=True)
    # a stream the browser does not read becomes silent (docs/protocol.md,
    # "Watching"): a newcomer on the full port takes its place
    evicted = srv.text().count("evicted: the watch port is full")
    print("http_input_test: %d silent streams replaced by newcomers" % evicted, flush=True)
    check(ok == MAX_WATCHERS + evicted and refused == n - ok,
          "%d of %d streams served, %d refused, %d replaced; the limit is %d" %
          (ok, n, refused, evicted, MAX_WATCHERS))
    check(rss - rss0 < 64 * 1024, "the server grew by %d KiB for %d streams" % (rss - rss0, n))
    tcp, secs = tcp_register(srv.port)
    print("http_input_test: a TCP player registered meanwhile (in %.3f s)" % secs, flush=True)
    for s in socks:
        s.close()
    return tcp


def half_request(port):
    """A client sends half a request, then nothing: the server closes the
    connection (the request time limit, 10 s or --timeout). The socket's
    deadline only guards against a hang."""
    slow = socket.create_connection(("127.0.0.1", port), timeout=HANG_SEC)
    slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
    t0 = time.monotonic()
    try:
        closed = read_to_end(slow)
    except socket.timeout:
        raise Failure("a client that sent half a request was kept %d s (the guard against a "
                      "hang)" % HANG_SEC)
    finally:
        slow.close()
    print("http_input_test: a client that sent half a request was closed (after %.1f s; %r)"
          % (time.monotonic() - t0, closed[:40]), flush=True)


def padded_config(work):
    """resources/example.json with 2 MiB of blanks inside its object: every
    watcher's Config line then carries that much, more than a stream that
    is not read may hold (STREAM_HIGH) plus the kernel's buffers."""
    with open(os.path.join(HERE, "..", "..", "resources", "example.json")) as f:
        text = f.read()
    at = text.index("{") + 1
    path = os.path.join(work, "padded.json")
    with open(path, "w") as f:
        f.write(text[:at] + " " * (2 << 20) + text[at:])
    return path


def reader(port, out):
    """A watcher's stream read to its end into out (a thread)."""
    s = open_stream(port, "/api/watch")
    try:
        out.append(read_to_end(s))
    except socket.timeout:
        out.append(None)
    finally:
        s.close()


def stalled_stream(a):
    """A game of two bots while one browser's stream is never read."""
    work = tempfile.mkdtemp(prefix="sopra-http-stall-")
    journal = os.path.join(work, "game.jnl")
    srv = sopratest.Server(a.server, "--http-port", "0", "--bind", "127.0.0.1", "--timeout",
                           "60", "--seed", "5", "--journal", journal, "--config",
                           padded_config(work))
    stalled = None
    try:
        port = page_port(srv)
        check(port, "no 'the page on ADDR:PORT' line")
        rss0 = srv.status("VmRSS")
        stalled = open_stream(port, "/api/watch", rcvbuf=4096)
        outs = [[], []]
        threads = [threading.Thread(target=reader, args=(port, o)) for o in outs]
        for t in threads:
            t.start()
        bots = [subprocess.Popen([a.bot, "--port", str(srv.port), "--seed", str(k), "--name",
                                  "Bot %d" % k, "--strategy", "greedy", "--quiet"] +
                                 (["--start"] if k == 2 else []),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for k in (1, 2)]
        rss_max = rss0
        while any(b.poll() is None for b in bots):
            try:
                rss_max = max(rss_max, srv.status("VmHWM"))
            except FileNotFoundError:  # the server is gone
                break
            time.sleep(0.05)
        for b in bots:
            rc = b.wait(HANG_SEC)
            check(rc == 0, "a bot exited %d: %s" % (rc, b.stderr.read().decode()[-500:]))
        rc = srv.wait(HANG_SEC)
        check(rc == 0, "the server exited %s: %s" % (rc, srv.text()[-2000:]))
        for t in threads:
            t.join(HANG_SEC)
            check(not t.is_alive(), "a reading watcher's stream did not end (the guard against "
                  "a hang)")
        want, _, _ = watcher_lines(a.replay, journal)
        for k, o in enumerate(outs):
            check(o[0] is not None, "reading watcher %d: no end of its stream" % k)
            events = stream_events(o[0])
            got = [d for e, d in events if e == "message"]
            check(got, "reading watcher %d: no line; its stream: %s" % (k, [
                (e, d[:80]) for e, d in events][:10]))
            check(got == want, "reading watcher %d got %d lines, a watcher's %d; the first "
                  "difference at %s" % (k, len(got), len(want), next(
                      (i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got),
                                                                                    len(want)))))
        stalled.settimeout(HANG_SEC)
        taken = len(read_to_end(stalled))
        print("http_input_test: a stream not read during a game of %d lines (Config %d KiB): "
              "the bots finished, 2 readers got every line exactly, the one not read was cut "
              "off at the server's exit (it had %d KiB in the kernel's buffers); RSS %d -> peak %d KiB" %
              (len(want), len(want[0]) >> 10, taken >> 10, rss0, rss_max), flush=True)
        # the server holds at most a stream's mark plus the server's own
        # output budget for it, not a copy per line
        check(rss_max - rss0 < 64 * 1024, "the server grew by %d KiB" % (rss_max - rss0))
        srv.sanitizer_clean()
    finally:
        if stalled:
            stalled.close()
        srv.close()
        subprocess.run(["rm", "-rf", work])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--bot", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--watchers", type=int, default=1000)
    a = ap.parse_args()
    # ASan's quarantine of freed memory capped at 16 MiB: streams replaced
    # by newcomers free theirs, and the default 256 MiB would count in the
    # RSS bound (a build without ASan ignores it)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16").lstrip(":")
    srv = sopratest.Server(a.server, "--http-port", "0", "--bind", "127.0.0.1", "--timeout", "60",
                           "--max-watchers-per-address", str(MAX_WATCHERS), nofile=8192, env=env)
    port = page_port(srv)
    check(port, "no 'the page on ADDR:PORT' line")
    keep = []
    try:
        expect_error(port, "GET", "/nope", 404, "no such path: /nope")
        expect_error(port, "GET", "/api/nope?x=1", 404, "no such path")
        expect_error(port, "DELETE", "/", 405, "takes GET or HEAD")
        expect_error(port, "PUT", "/app.js", 405, "takes GET or HEAD")
        expect_error(port, "POST", "/api/info", 405, "takes GET, HEAD")
        expect_error(port, "GET", "/api/command", 405, "takes POST")
        expect_error(port, "HEAD", "/api/watch", 405, "takes GET")
        expect_error(port, "GET", "/api/play", 400, "give either name=NAME or secret=SECRET")
        expect_error(port, "GET", "/api/play?name=a&secret=b", 400, "either")
        expect_error(port, "GET", "/api/play?secret=xyz", 400, "64 lowercase hex digits")
        expect_error(port, "GET", "/api/play?name=" + "n" * 65, 400, "longer than 64 bytes")
        expect_error(port, "POST", "/api/bots", 403, "--http-bots")
        expect_error(port, "POST", "/api/command", 403, "X-Sopra-Secret header is missing",
                     b'{"command":"StartGame"}')
        expect_error(port, "POST", "/api/command", 403, "no seat with this secret",
                     b'{"command":"StartGame"}', {"X-Sopra-Secret": "0" * 64})
        stream, secret = seat(port)
        keep.append(stream)
        hs = {"X-Sopra-Secret": secret}
        expect_error(port, "POST", "/api/command", 400, "malformed JSON at byte 11: unexpected end",
                     b'{"command":', hs)
        expect_error(port, "POST", "/api/command", 400, "malformed JSON at byte 0",
                     b"\xff\xfe", hs)
        expect_error(port, "POST", "/api/command", 400, "line break",
                     b'{"command":"StartGame"}\n{"command":"Leave"}', hs)
        expect_error(port, "POST", "/api/command", 400, "empty", b"", hs)
        expect_error(port, "POST", "/api/command", 413, "", b"x" * (1 << 20), hs)
        # a command that is JSON but no valid command: queued, and the
        # game's own answer comes on the seat's stream, as over TCP
        st, _, body = request(port, "POST", "/api/command", b'{"command":"Fly"}', hs)
        check(st == 200 and b"queued" in body, "a JSON command was not queued: %d %r" % (st, body))
        data = b""
        while b"unknown command" not in data:
            chunk = stream.recv(65536)
            check(chunk, "no CommandFailed on the seat's stream")
            data += chunk
        check(b'data: {"event":"CommandFailed","message":"unknown command \\"Fly\\""}' in data,
              "the seat's stream: %r" % data[-300:])
        print("http_input_test: an unknown command over HTTP got the game's CommandFailed",
              flush=True)
        half_request(port)
        keep.append(many_watchers(srv, port, a.watchers))
        check(srv.p.poll() is None, "the server exited: " + srv.text()[-2000:])
        srv.sanitizer_clean()
    finally:
        for s in keep:
            s.close()
        srv.close()
    stalled_stream(a)
    print("http_input_test: ok", flush=True)


if __name__ == "__main__":
    run("http_input_test", main)
