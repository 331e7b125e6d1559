"""What the browser tests of tests/web/ share."""
import time

import sopratest


def page_port(srv, wait=20):
    """The HTTP port from the server's "the page on ADDR:PORT" line."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        port = sopratest.reported_port(srv.text(), "the page on")
        if port or srv.p.poll() is not None:
            return port
        time.sleep(0.01)
    return None
