#!/usr/bin/env python3
"""The browser page of sopra-server --http-port in a real browser (headless
Chromium through Selenium; docs/web.md).

  web_test.py --server PATH --replay PATH --artifacts DIR

1. A person opens the page, registers, adds two bot team mates with the
   page's button, starts the game and plays it to its end clicking only the
   buttons the page shows (the legal commands the server lists).
2. A second browser watches from the start and ends with the same board.
3. Mid-game the person's page is reloaded: it comes back to its seat
   (Reconnect with the secret the page kept) with the same board.
4. The game's journal, as `sopra-replay --watch` prints it, is replayed in
   the page: the board after entry N equals `sopra-replay --at N`.
5. The page at phone width has no horizontal scrolling.

Each state is kept as a screenshot in DIR (with the board's elements
checked first). Without Chromium, chromedriver or python3-selenium the test
says so and exits 77 (ctest: skipped); with CI=true that is a failure.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "systemtests"))
sys.path.insert(0, HERE)
import sopratest  # noqa: E402
from sopratest import Failure, check  # noqa: E402
from webutil import page_port  # noqa: E402

SKIP = 77


def need_browser():
    """Selenium's webdriver module and the paths of chromium and
    chromedriver, or a loud skip (a failure under CI=true)."""
    missing = []
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        # Debian's python3-selenium is for /usr/bin/python3: use it if this
        # is another interpreter (a pyenv, say)
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != \
                os.path.realpath("/usr/bin/python3") and not os.environ.get("WEB_TEST_REEXEC"):
            os.environ["WEB_TEST_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3", "-B", *sys.argv])
        missing.append("python3-selenium")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium:
        missing.append("chromium")
    if not driver:
        missing.append("chromium-driver")
    if missing:
        # "SKIPPED: N ..." at the start of a line: ./test.sh lists it
        msg = ("SKIPPED: 1 browser test: it needs %s (Debian packages; "
               "./test.sh --full installs them)" % ", ".join(missing))
        print(msg, flush=True)
        if os.environ.get("CI") == "true":
            print("web_test: FAILED: CI=true and the browser is missing", flush=True)
            sys.exit(1)
        sys.exit(SKIP)
    return chromium, driver


def browser(chromium, driver, width=1280, height=1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--window-size=%d,%d" % (width, height), "--no-first-run",
              "--user-data-dir=" + tempfile.mkdtemp(prefix="sopra-web-chrome-")):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(driver), options=opts)


def wait_for(what, fn, timeout=30, every=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise Failure("timed out waiting for " + what)


def js(d, script, *args):
    return d.execute_script(script, *args)


def board_facts(d):
    """What the page shows of the board, as plain data."""
    return js(d, """
      const locs = {};
      for (const l of document.querySelectorAll('#board .location')) {
        locs[l.dataset.id] = {
          entrances: [...l.querySelectorAll('.entrance')].map(
              e => [Number(e.dataset.zombies), Number(e.dataset.barricades)]),
          chars: [...l.querySelectorAll('.character')].map(c => Number(c.dataset.id)).sort((a, b) => a - b),
          pile: l.querySelector('.pile').textContent };
      }
      const stat = id => document.querySelector('#' + id + ' b').textContent;
      return { locs, food: stat('st-food'), morale: stat('st-morale'), waste: stat('st-waste'),
               starvation: stat('st-starvation'), round: stat('st-round'),
               events: S.events.length };""")


def check_board_elements(d, cfg, what):
    """The board's elements are there: every location with its entrances,
    the colony's stats, the log and the time slider."""
    locs = js(d, "return [...document.querySelectorAll('#board .location')].map("
                 "l => [Number(l.dataset.id), l.querySelectorAll('.entrance').length])")
    want = []
    for entry in cfg["locations"]:
        l = entry.get("colony", entry)
        want.append([l["identifier"], l["entrances"]])
    check(locs == want, "%s: locations and entrances shown %s, configured %s" % (what, locs, want))
    stats = js(d, "return [...document.querySelectorAll('#stats .stat')].map(s => s.id)")
    for s in ("st-round", "st-morale", "st-food", "st-waste", "st-starvation", "st-crisis",
              "st-goal"):
        check(s in stats, "%s: no %s among the stats %s" % (what, s, stats))
    check(js(d, "return !!document.getElementById('slider') && !!document.getElementById('log')"),
          what + ": no time slider or log")


def shot(d, cfg, artifacts, name, board=True):
    if board:
        check_board_elements(d, cfg, name)
    path = os.path.join(artifacts, name + ".png")
    check(d.save_screenshot(path), "cannot save " + path)
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", path + " is no PNG")
    w, h = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    check(w >= 300 and h >= 300 and os.path.getsize(path) > 5000,
          "%s: a %dx%d screenshot of %d bytes" % (path, w, h, os.path.getsize(path)))
    print("web_test: screenshot %s (%dx%d)" % (path, w, h), flush=True)


def info(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/api/info" % port, timeout=5) as r:
        return json.load(r)


def buttons(d):
    """The action buttons the page shows: [(label, command object)]."""
    return [(b["label"], json.loads(b["command"])) for b in js(d, """
      return [...document.querySelectorAll('#actions button.action')].map(
          b => ({label: b.textContent, command: b.dataset.command}));""")]


def click_action(d, label):
    from selenium.webdriver.common.by import By
    for b in d.find_elements(By.CSS_SELECTOR, "#actions button.action"):
        if b.text == label:
            b.click()
            return True
    return False


def over(d):
    return js(d, "return !!(S.live && S.live.over)")


def play_game(d, watcher, cfg, srv, artifacts, rnd):
    """Click through the game; reload once in round 2. Returns the number
    of commands clicked."""
    clicks = 0
    reloaded = False
    shots = set()
    last_events = -1
    stall_since = time.monotonic()
    while not over(d):
        bs = buttons(d)
        facts = js(d, "return [S.events.length, S.live ? S.live.round : null]")
        if facts[0] != last_events:
            last_events, stall_since = facts[0], time.monotonic()
        check(time.monotonic() - stall_since < 60, "the game made no progress for 60 s")
        if "selection" not in shots and any(c["command"] == "SelectCharacters" for _, c in bs):
            shot(d, cfg, artifacts, "2-selection")
            shots.add("selection")
        if facts[1] == 2 and not reloaded and bs:
            before = board_facts(d)
            shot(d, cfg, artifacts, "3-before-reload")
            d.refresh()
            wait_for("the seat after the reload",
                     lambda: "You are" in js(d, "return document.getElementById('me-line').textContent"))
            wait_for("the history after the reload",
                     lambda: board_facts(d)["events"] >= before["events"])
            after = board_facts(d)
            # the same game, maybe a step further (nothing waits for a reload)
            check(after["round"] == before["round"] and after["locs"].keys() == before["locs"].keys(),
                  "after the reload the board differs: %s / %s" % (before, after))
            shot(d, cfg, artifacts, "4-after-reload")
            reloaded = True
            continue
        if not bs:
            time.sleep(0.05)
            continue
        labels = [l for l, c in bs if c["command"] != "Leave"]
        end = [l for l, c in bs if c["command"] == "EndTurn"]
        pick = end[0] if end and rnd.random() < 0.7 else rnd.choice(labels)
        before_n = len(bs)
        if click_action(d, pick):
            clicks += 1
            # the next buttons come with the server's next "me" event
            wait_for("an answer to " + pick,
                     lambda: over(d) or buttons(d) != bs or not buttons(d), timeout=30)
        if "midgame" not in shots and facts[1] and facts[1] >= 3:
            shot(d, cfg, artifacts, "5-midgame")
            shot(watcher, cfg, artifacts, "5-midgame-watcher")
            shots.add("midgame")
        del before_n
    check(reloaded, "the game ended before round 2: no reload was tried")
    return clicks


def replay_check(d, cfg, replay, journal, artifacts, port):
    out = subprocess.run([replay, "--watch", journal], capture_output=True, check=True).stdout
    path = os.path.join(artifacts, "game.ndjson")
    with open(path, "wb") as f:
        f.write(out)
    entries = sum(1 for line in out.splitlines() if line.startswith(b'{"entry":'))
    check(entries > 10, "the journal has only %d entries" % entries)
    d.get("http://127.0.0.1:%d/" % port)
    from selenium.webdriver.common.by import By
    d.find_element(By.ID, "replay-file").send_keys(path)
    wait_for("the replay", lambda: js(d, "return S.mode === 'replay' && S.marks.length") == entries)
    for n in sorted({1, entries // 3, entries // 2, entries - 1, entries}):
        js(d, "const s = document.getElementById('slider'); s.value = S.marks[arguments[0] - 1];"
              "s.dispatchEvent(new Event('input'));", n)
        page = board_facts(d)
        text = subprocess.run([replay, "--at", str(n), journal], capture_output=True, check=True,
                              text=True).stdout
        compare_with_describe(page, text, n)
        if n == entries // 2:
            shot(d, cfg, artifacts, "7-replay-entry-%d" % n)
    print("web_test: the replay matches sopra-replay --at at entries 1..%d" % entries, flush=True)


def compare_with_describe(page, text, n):
    m = re.search(r"round (\d+) of \d+, food (-?\d+), morale (-?\d+), waste (\d+), "
                  r"starvation tokens (\d+)", text)
    check(m, "no state line in sopra-replay --at %d: %s" % (n, text[:300]))
    rnd, food, morale, waste, starv = m.groups()
    check([page["food"], page["morale"], page["waste"], page["starvation"]] ==
          [food, morale, waste, starv],
          "entry %d: the page shows food/morale/waste/starvation %s, sopra-replay %s" %
          (n, [page["food"], page["morale"], page["waste"], page["starvation"]],
           [food, morale, waste, starv]))
    locs = text.split("locations (per entrance: zombies/barricades):\n")[1].split("characters in play:")[0]
    for line in locs.splitlines():
        lm = re.match(r"\s+(\d+) .*?:((?: \d+/\d+)+);(?: children (\d+);)? (\d+) cards to search; "
                      r"characters:(.*)$", line)
        check(lm, "cannot read %r" % line)
        lid, ents, children, left, chars = lm.groups()
        want = [[int(z), int(b)] for z, b in (e.split("/") for e in ents.split())]
        got = page["locs"][lid]
        check(got["entrances"] == want, "entry %d, location %s: entrances %s on the page, %s in "
              "sopra-replay" % (n, lid, got["entrances"], want))
        wc = [] if chars.strip() == "none" else sorted(int(c) for c in chars.split())
        check(got["chars"] == wc, "entry %d, location %s: characters %s on the page, %s in "
              "sopra-replay" % (n, lid, got["chars"], wc))
        if children is None:
            check(got["pile"] == "%s cards to search" % left,
                  "entry %d, location %s: %r, sopra-replay %s cards" % (n, lid, got["pile"], left))
        else:
            check(got["pile"] == "%s children" % children,
                  "entry %d, colony: %r, sopra-replay %s children" % (n, got["pile"], children))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    chromium, driver = need_browser()
    os.makedirs(a.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="sopra-web-")
    journal = os.path.join(work, "game.jnl")
    cfg_path = os.path.join(HERE, "..", "..", "resources", "example.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    srv = sopratest.Server(a.server, "--http-port", "0", "--http-bots", "2", "--seed",
                           str(a.seed), "--timeout", "60", "--journal", journal,
                           "--bind", "127.0.0.1", "--config", cfg_path)
    port = page_port(srv)
    check(port, "no 'the page on ADDR:PORT' line: " + srv.text())
    person = watcher = None
    try:
        person = browser(chromium, driver)
        watcher = browser(chromium, driver)
        url = "http://127.0.0.1:%d/" % port
        watcher.get(url + "?watch=1")
        person.get(url)
        from selenium.webdriver.common.by import By
        wait_for("the lobby", lambda: "players" in person.find_element(By.ID, "lobby-info").text)
        shot(person, cfg, a.artifacts, "0-lobby", board=False)
        person.find_element(By.ID, "name").send_keys("Anna")
        person.find_element(By.ID, "join").click()
        wait_for("the seat", lambda: "You are" in person.find_element(By.ID, "me-line").text)
        for _ in range(2):
            wait_for("the bot button", lambda: person.find_element(By.ID, "add-bot").is_displayed())
            person.find_element(By.ID, "add-bot").click()
            time.sleep(0.2)
        wait_for("two bots registered", lambda: info(port)["players"] == 3)
        shot(person, cfg, a.artifacts, "1-joined")
        wait_for("the start button", lambda: click_action(person, "Start the game"))
        clicks = play_game(person, watcher, cfg, srv, a.artifacts, random.Random(a.seed))
        wait_for("the watcher's end", lambda: over(watcher))
        time.sleep(0.5)
        pf, wf = board_facts(person), board_facts(watcher)
        check(pf == wf, "the watcher's board differs from the player's:\n%s\n%s" % (pf, wf))
        result = js(person, "return S.live.result")
        shot(person, cfg, a.artifacts, "6-end")
        shot(watcher, cfg, a.artifacts, "6-end-watcher")
        print("web_test: the game ended (%s) after %d clicks; %d events; the watcher saw the "
              "same board" % (result, clicks, pf["events"]), flush=True)
        rc = srv.wait(20)
        check(rc == 0, "the server exited %s" % rc)
        # the replay and the phone width need a server for the page only
        srv2 = sopratest.Server(a.server, "--http-port", "0", "--bind", "127.0.0.1",
                                "--timeout", "60")
        port2 = page_port(srv2)
        try:
            replay_check(person, cfg, a.replay, journal, a.artifacts, port2)
            person.set_window_size(390, 844)
            time.sleep(0.3)
            width = js(person, "return [document.documentElement.scrollWidth, window.innerWidth]")
            shot(person, cfg, a.artifacts, "8-phone-width")
            check(width[0] <= width[1], "at phone width the page scrolls sideways: %s" % width)
        finally:
            srv2.close()
    finally:
        for d in (person, watcher):
            if d:
                d.quit()
        srv.close()
        shutil.rmtree(work, ignore_errors=True)
    print("web_test: ok", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("web_test: FAILED: %s" % e, flush=True)
        sys.exit(1)
