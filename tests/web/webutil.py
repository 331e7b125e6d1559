"""What the tests of tests/web/ share: the server's HTTP port, plain HTTP
requests, event streams read off a socket, the watcher's lines of a journal
(sopra-replay --watch) and the tests' main.

Deadlines here (wait_for, socket timeouts) only guard against a hang: a
test never asserts that something was fast."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "systemtests"))
import sopratest  # noqa: E402
from sopratest import Failure, check  # noqa: E402,F401

# How long a test waits for something that must happen before it calls the
# server hung (not a measurement: on a loaded 2-core machine a step can
# take seconds).
HANG_SEC = 60


def page_port(srv, wait=HANG_SEC):
    """The HTTP port from the server's "the page on ADDR:PORT" line."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        port = sopratest.reported_port(srv.text(), "the page on")
        if port or srv.p.poll() is not None:
            return port
        time.sleep(0.01)
    return None


def wait_for(what, fn, timeout=HANG_SEC, every=0.05):
    """fn()'s first true value; a Failure when there is none within timeout
    seconds (a guard against a hang)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise Failure("no %s within %d s (the guard against a hang)" % (what, timeout))


def info(port):
    """GET /api/info as a dict."""
    with urllib.request.urlopen("http://127.0.0.1:%d/api/info" % port, timeout=HANG_SEC) as r:
        return json.load(r)


def open_stream(port, path, rcvbuf=None):
    """A socket that asked for the event stream at path (GET); rcvbuf: its
    receive buffer, set before connecting (a small one makes a client that
    does not read hold back the server at once)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(HANG_SEC)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode())
    return s


def read_to_end(s):
    """Everything s receives until the server closes it."""
    data = []
    while True:
        try:
            chunk = s.recv(1 << 16)
        except (ConnectionResetError, BrokenPipeError):
            break
        if not chunk:
            break
        data.append(chunk)
    return b"".join(data)


def stream_events(raw):
    """The events of a whole event-stream response (status line and headers
    included, chunked transfer encoding): [(event, data)], event "message"
    for a plain data line; comments skipped."""
    head, _, body = raw.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 200"), "the stream's answer: %r" % head[:200])
    if b"transfer-encoding: chunked" in head.lower():
        out, at = [], 0
        while at < len(body):
            eol = body.index(b"\r\n", at)
            n = int(body[at:eol], 16)
            if n == 0:
                break
            out.append(body[eol + 2:eol + 2 + n])
            at = eol + 2 + n + 2
        body = b"".join(out)
    events = []
    for block in body.decode().split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            events.append((name, "\n".join(data)))
    return events


def watcher_lines(replay, journal):
    """What a watcher got in the game of journal (sopra-replay --watch):
    (the lines, the file's bytes with the {"entry":N} lines, and for each
    entry N the number of lines before its mark)."""
    out = subprocess.run([replay, "--watch", journal], capture_output=True, check=True,
                         timeout=HANG_SEC).stdout
    lines, marks = [], []
    for line in out.decode().splitlines():
        if line.startswith('{"entry":'):
            marks.append(len(lines))
        else:
            lines.append(line)
    return lines, out, marks


def run(name, main):
    """A test's entry point: main(), "NAME: FAILED: why" and exit 1 on a
    Failure."""
    try:
        main()
    except Failure as e:
        print("%s: FAILED: %s" % (name, e), flush=True)
        sys.exit(1)
