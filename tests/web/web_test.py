#!/usr/bin/env python3
"""The browser page of sopra-server --http-port in a real browser (headless
Chromium through Selenium; docs/web.md).

  web_test.py --server PATH --replay PATH --artifacts DIR

1. A person opens the page, registers, adds two bot team mates with the
   page's button, starts the game and plays it to its end (the 8 rounds of
   resources/example.json, or a loss before) clicking only the buttons the
   page shows (the legal commands the server lists).
2. A second browser watches from the start and ends with the same board.
   On the person's turn both pages say whose turn it is ("Your turn" /
   "Anna's turn") and count the seconds of the --timeout down.
3. Mid-game the person's page is reloaded: it comes back to its seat
   (Reconnect with the secret the page kept) with the same board.
4. Time travel while the game goes on (on the person's turn in round 2,
   after the reload): the watcher steps back to the board after the events of each
   journal entry N of the game so far (the journal read by `sopra-replay
   --watch`), and it equals `sopra-replay --at N`; the person jumps to
   round 1 (no action buttons in the past) and both return to the live
   board with *Live*.
5. The game's journal, as `sopra-replay --watch` prints it, is replayed in
   the page: the board after every entry N equals `sopra-replay --at N`.
   (Compared: food, morale, waste, starvation tokens, each location's
   entrances, characters and cards left, the children, every hand.)
6. The page at phone width has no horizontal scrolling.

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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from webutil import (HANG_SEC, check, info, page_port, run, sopratest, wait_for,  # noqa: E402
                     watcher_lines)

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
      const hands = {};
      for (const p of document.querySelectorAll('#players .player'))
        hands[p.dataset.player] = [...p.querySelectorAll('.card')].map(c => Number(c.dataset.card));
      const stat = id => document.querySelector('#' + id + ' b').textContent;
      return { locs, hands, food: stat('st-food'), morale: stat('st-morale'), waste: stat('st-waste'),
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


def buttons(d):
    """The action buttons the page shows: [(label, command object)]."""
    return [(b["label"], json.loads(b["command"])) for b in js(d, """
      return [...document.querySelectorAll('#actions button.action')].map(
          b => ({label: b.textContent, command: b.dataset.command}));""")]


def click_action(d, label):
    """Click the action button labelled label; False if there is none."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    for _ in range(10):
        try:
            for b in d.find_elements(By.CSS_SELECTOR, "#actions button.action"):
                if b.text == label:
                    b.click()
                    return True
            return False
        except StaleElementReferenceException:
            continue  # the page drew its buttons anew meanwhile: look again
    return False


def over(d):
    return js(d, "return !!(S.live && S.live.over)")


def text_of(d, element_id):
    return js(d, "return document.getElementById(arguments[0]).textContent", element_id)


def check_turn(person, watcher):
    """On the person's turn: the person's page says so, the watcher's names
    the person, and both count the --timeout (60 s) down."""
    wait_for("'Your turn' on the person's page", lambda: text_of(person, "turn") == "Your turn")
    wait_for("'Anna's turn' on the watcher's page",
             lambda: text_of(watcher, "turn") == "Anna's turn")
    for d, who in ((person, "person"), (watcher, "watcher")):
        left = wait_for("the %s's countdown" % who,
                        lambda: re.fullmatch(r"(\d+) s left", text_of(d, "countdown")))
        check(0 <= int(left.group(1)) <= 60, "the %s's countdown says %r of a 60 s timeout" %
              (who, left.group(0)))
    print("web_test: on the person's turn: 'Your turn' / 'Anna's turn', countdown %r" %
          text_of(watcher, "countdown"), flush=True)


def set_slider(d, step):
    js(d, "const s = document.getElementById('slider'); s.value = arguments[0];"
          "s.dispatchEvent(new Event('input'));", step)


def live_time_travel(person, watcher, cfg, replay, journal, artifacts):
    """While the game waits for the person: the watcher steps back to the
    board after several journal entries (the journal so far), each equal to
    sopra-replay --at N; the person jumps to round 1 and back; both return
    to live."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    n_live = js(person, "return S.events.length")
    wait_for("the watcher at the person's event %d" % n_live,
             lambda: js(watcher, "return S.events.length") == n_live)
    live_board = board_facts(person)
    live_buttons = buttons(person)
    snap = journal + ".snapshot"
    shutil.copyfile(journal, snap)
    lines, _, marks = watcher_lines(replay, snap)
    # a step of the page is an event it folds: the lines after the Config
    folded = set(js(watcher, "return Object.keys(fold)"))
    steps = [sum(1 for line in lines[:m] if json.loads(line).get("event") in folded)
             for m in marks]
    check(steps[-1] == n_live, "the journal so far has %d events for the page, the page %d" %
          (steps[-1], n_live))
    entries = len(marks)
    for n in range(1, entries + 1):
        set_slider(watcher, steps[n - 1])
        # the last step is the live board
        at = steps[n - 1] if steps[n - 1] < n_live else None
        check(js(watcher, "return S.step") == at, "the watcher is not at step %s" % at)
        text = subprocess.run([replay, "--at", str(n), snap], capture_output=True, check=True,
                              text=True).stdout
        compare_with_describe(board_facts(watcher), text, n)
        if steps[n - 1] < n_live:
            check(text_of(watcher, "turn") == "Live: Anna's turn",
                  "a step back, the watcher's page says %r" % text_of(watcher, "turn"))
        if n == entries // 2:
            shot(watcher, cfg, artifacts, "5-travel-watcher-entry-%d" % n)
    # the person: Jump to round 1, no buttons in the past, then Live
    Select(person.find_element(By.ID, "round-jump")).select_by_visible_text("1")
    first_round = js(person, "return S.events.findIndex(x => x.e.event === 'NextRound') + 1")
    wait_for("the person's page in round 1", lambda: js(person, "return S.step") == first_round)
    check(buttons(person) == [], "the person's page offers actions in the past: %s" %
          buttons(person))
    set_slider(watcher, first_round)
    check(board_facts(person) == board_facts(watcher),
          "at step %d the person's and the watcher's boards differ" % first_round)
    # the seat shows the dice of that step (the watcher's box of the person), not the live ones
    seat = js(person, "return [...document.querySelectorAll('#dice .die')].map(x => x.textContent)")
    box = js(watcher, "return document.querySelector("
                      "'#players .player[data-player=\"' + arguments[0] + '\"] .dice').textContent",
             js(person, "return S.me.player"))
    check(" ".join(seat) == box.replace("dice", "", 1).strip(),
          "at step %d the person's seat shows dice %s, the watcher %r" % (first_round, seat, box))
    shot(person, cfg, artifacts, "5-travel-person-round-1")
    for d in (person, watcher):
        d.find_element(By.ID, "live").click()
        wait_for("the live board", lambda: js(d, "return S.step") is None)
        check(board_facts(d) == live_board, "back to live, the board is not the live one")
    check(buttons(person) == live_buttons, "back to live, the person's actions differ: %s / %s"
          % (buttons(person), live_buttons))
    os.unlink(snap)
    print("web_test: live time travel: the watcher's board after journal entries 1..%d of the "
          "game so far matches sopra-replay --at; both pages returned to live" % entries,
          flush=True)


# What the person clicks: mostly what defends the colony, and a turn ends
# only now and then before its dice are used (a person who only ends turns
# loses within a few rounds).
DEFENCE = ("Barricade", "Attack", "ContributeCard", "CleanWaste", "Search")


def choose(bs, rnd):
    """The label of the button to click among bs [(label, command)]."""
    good = [l for l, c in bs if c["command"] in DEFENCE]
    other = [l for l, c in bs if c["command"] not in ("Leave", "EndTurn")]
    end = [l for l, c in bs if c["command"] == "EndTurn"]
    if good and rnd.random() < 0.8:
        return rnd.choice(good)
    if other and (not end or rnd.random() < 0.5):
        return rnd.choice(other)
    return end[0] if end else rnd.choice([l for l, c in bs if c["command"] != "Leave"])


def play_game(d, watcher, cfg, srv, artifacts, rnd, replay, journal):
    """Click through the game; reload once in round 2 and travel in time
    right after it. Returns (the number of commands clicked, the last
    round)."""
    clicks = 0
    reloaded = False
    shots = set()
    last_events, progress_at = -1, time.monotonic()
    while not over(d):
        bs = buttons(d)
        facts = js(d, "return [S.events.length, S.live ? S.live.round : null]")
        if facts[0] != last_events:
            last_events, progress_at = facts[0], time.monotonic()
        check(bs or time.monotonic() - progress_at < HANG_SEC,
              "no event and no action for %d s (the guard against a hang); the page: %s, %s; "
              "its last events %s; the server: %s" % (
                  HANG_SEC, text_of(d, "status"), text_of(d, "turn"),
                  js(d, "return S.events.slice(-5).map(x => x.text)"), srv.text()[-1500:]))
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
        if reloaded and "travel" not in shots:
            check_turn(d, watcher)
            live_time_travel(d, watcher, cfg, replay, journal, artifacts)
            shots.add("travel")
            continue
        pick = choose(bs, rnd)
        seen = js(d, "return [S.events.length, JSON.stringify(S.me)]")
        if click_action(d, pick):
            clicks += 1
            # the answer: events, the server's next "me" event (the
            # buttons may be the same ones) or a refusal
            wait_for("an answer to " + pick, lambda: over(d) or js(
                d, "return [S.events.length, JSON.stringify(S.me)]") != seen or js(
                    d, "return S.failed"))
            check(not js(d, "return S.failed"), "the server refused %r, a button of the page: %s"
                  % (pick, js(d, "return S.failed")))
        if "midgame" not in shots and facts[1] and facts[1] >= 3:
            shot(d, cfg, artifacts, "5-midgame")
            shot(watcher, cfg, artifacts, "5-midgame-watcher")
            shots.add("midgame")
    check(reloaded, "the game ended before round 2: no reload was tried")
    check("travel" in shots, "the game ended before the person's turn after the reload: no "
          "live time travel was tried")
    return clicks, js(d, "return S.live.round")


def replay_check(d, cfg, replay, journal, artifacts, port):
    _, out, marks = watcher_lines(replay, journal)
    path = os.path.join(artifacts, "game.ndjson")
    with open(path, "wb") as f:
        f.write(out)
    entries = len(marks)
    check(entries > 10, "the journal has only %d entries" % entries)
    d.get("http://127.0.0.1:%d/" % port)
    from selenium.webdriver.common.by import By
    d.find_element(By.ID, "replay-file").send_keys(path)
    wait_for("the replay", lambda: js(d, "return S.mode === 'replay' && S.marks.length") == entries)
    for n in range(1, entries + 1):
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
    players = text.split("players:\n")[1].split("locations (per entrance")[0]
    for line in players.splitlines():
        pm = re.match(r"\s+(\d+) .*; hand: ?(.*)$", line)
        check(pm, "cannot read %r" % line)
        want = sorted(int(c.split()[0]) for c in pm.group(2).split(", ")) if pm.group(2) != \
            "empty" else []
        got = sorted(page["hands"].get(pm.group(1), []))
        check(got == want, "entry %d, player %s: hand %s on the page, %s in sopra-replay" %
              (n, pm.group(1), got, want))
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
        clicks, rounds = play_game(person, watcher, cfg, srv, a.artifacts,
                                   random.Random(a.seed), a.replay, journal)
        wait_for("the watcher's end", lambda: over(watcher))
        wait_for("the watcher's last event",
                 lambda: board_facts(watcher)["events"] == board_facts(person)["events"])
        pf, wf = board_facts(person), board_facts(watcher)
        check(pf == wf, "the watcher's board differs from the player's:\n%s\n%s" % (pf, wf))
        result = js(person, "return S.live.result")
        shot(person, cfg, a.artifacts, "6-end")
        shot(watcher, cfg, a.artifacts, "6-end-watcher")
        print("web_test: the game ended (%s) in round %s of %d after %d clicks; %d events; the "
              "watcher saw the same board" % (result, rounds, cfg["goal"]["rounds"], clicks,
                                              pf["events"]), flush=True)
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
    run("web_test", main)
