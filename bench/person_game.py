#!/usr/bin/env python3
"""A scripted person in sopra-client with two search bot team mates.

Starts sopra-server (--journal WORKDIR/game.jnl) and sopra-client --bots 2
(the bots play sopra-bot --strategy search) in a tmux server of its own, plays
the person's seat through the client's menus with the simple rule below, and
prints the result (docs/bots.md, "A person with two search team mates").

usage: person_game.py BUILD_DIR CONFIG SEED RULES WORKDIR
"""
import os, re, subprocess, sys, time
ROOT, CFG = sys.argv[1], sys.argv[2]
seed, rules, work = int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.makedirs(work, exist_ok=True)
sock = "search-person-%d" % os.getpid()
jnl = os.path.join(work, "game.jnl")
srvlog = open(os.path.join(work, "server.log"), "w+")
srv = subprocess.Popen([ROOT + "/sopra-server", "--config", CFG, "--port", "0", "--seed", str(seed),
                        "--timeout", "300", "--rules", rules, "--journal", jnl], stderr=srvlog)
port = None
for _ in range(200):
    srvlog.seek(0)
    m = re.search(r"listening on 0\.0\.0\.0:(\d+)", srvlog.read())
    if m:
        port = int(m.group(1)); break
    time.sleep(0.05)
cmd = "%s/client/sopra-client --port %d --name Anna --rules %s --bots 2 --bot-seed %d --bots-log %s --start" % (
    ROOT, port, rules, seed, work)
def tmux(*a, **k):
    return subprocess.run(["tmux", "-L", sock] + list(a), capture_output=True, text=True, **k)
tmux("new-session", "-d", "-s", "p", "-x", "120", "-y", "40", cmd)
def screen():
    return tmux("capture-pane", "-p", "-t", "p").stdout
def keys(*k):
    tmux("send-keys", "-t", "p", *k)
def status(s):
    l = s.rstrip("\n").split("\n"); return l[-1] if l else ""
def bar(s):
    l = s.rstrip("\n").split("\n"); return l[-2] if len(l) > 1 else ""
def items(s):
    return re.findall(r"\[(\w)\] (.*?)\s*$", s, re.M)
def wait(pred, secs=300):
    t = time.time() + secs
    while time.time() < t:
        s = screen()
        if pred(s): return s
        time.sleep(0.1)
    raise SystemExit("timeout:\n" + screen())
def header(s):
    m = re.search(r"food (\d+).*?morale (-?\d+).*?waste (\d+)", s)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (0, 0, 0)
def pick(key, want):
    keys(key)
    s = wait(lambda s: items(s), 30)
    for k, label in items(s):
        if want(label):
            keys(k); return label
    keys("Escape"); wait(lambda s: not items(s), 30); return None
# The person: each turn, in this order, as long as the menus offer it: use
# abilities (feed, heal, kill, barricade), contribute to the crisis, play food
# when the colony has little, move a character out of the colony to a
# location (fuel first), search, attack, barricade, clean waste when it
# piles up, then end the turn.
PLAN = [("y", lambda l: True), ("c", lambda l: True), ("u", lambda l: "food(" in l),
        ("m", lambda l: "colony ->" in l.lower() or "42 ->" in l),
        ("s", lambda l: True), ("a", lambda l: True), ("b", lambda l: True),
        ("w", lambda l: True)]
turns = 0
while True:
    s = wait(lambda s: "Game over" in s or "Your turn" in status(s) or "Pick:" in s)
    if "Game over" in s: break
    if "Pick:" in s:
        keys("1"); wait(lambda s: "Pick:" not in s, 60); continue
    turns += 1
    moved = barricaded = 0
    for _ in range(12):
        acted = False
        for key, want in PLAN:
            s = screen()
            if re.search(r"(^| )%s:" % re.escape(key), bar(s)) is None: continue
            food, morale, waste = header(s)
            if key == "u" and food >= 4: continue
            if key == "w" and waste < 6: continue
            if key == "m" and moved >= 1: continue
            if key == "b" and barricaded >= 1: continue
            if pick(key, want) is None: continue
            if key == "m": moved += 1
            if key == "b": barricaded += 1
            s = wait(lambda s: not status(s).startswith("Sent:"), 60)
            acted = True
            break
        if not acted or "Your turn" not in status(screen()): break
    if "Your turn" in status(screen()):
        keys("e")
        time.sleep(0.5)
s = screen()
print(seed, rules, "turns", turns, "RESULT:", [l for l in s.split("\n") if "Game over" in l])
open(os.path.join(work, "end.txt"), "w").write(s)
keys("q"); time.sleep(0.5)
tmux("kill-server")
srv.wait(30)
