#!/usr/bin/env python3
"""Regenerate the committed seed corpus in fuzz/corpus/ (see fuzz/README.md).

    python3 fuzz/make_corpus.py [--shared ../shared]

fuzz_proto_decode: client lines, every command valid and broken.
fuzz_config:       the small configs of shared/conformance/base, resources/,
                   systemtests/scenarios/ (mostly invalid ones), the configs
                   embedded in fuzz_game, and hand-made broken ones.
fuzz_game:         scripts in fuzz_game.c's binary format that register,
                   select and play rounds up to colony phases and game ends.

Files are named by content hash, so rerunning only adds what is new; it
removes nothing (delete a corpus directory first for a clean rebuild).
"""
import argparse
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "corpus")
MAX_CONFIG_BYTES = 30000  # "small" configs only: the committed corpus stays < 1 MB


def save(target, data, prefix=""):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = prefix + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_proto_decode --------------------------------------------------------

def proto_lines():
    valid = [
        '{"command":"Register","playerName":"Anna"}',
        '{"command":"Register","playerName":""}',
        '{"command":"Register","playerName":"\\u00e9\\ud83d\\ude00 \\"q\\" \\\\ \\n"}',
        '{"command":"Register","playerName":"Zoë 😀"}',
        '{"command":"StartGame"}',
        '{"command":"SelectCharacters","characterId0":1,"characterId1":2}',
        '{"command":"Leave"}',
        '{"command":"EndTurn"}',
        '{"command":"Move","characterId":3,"locationId":2}',
        '{"command":"Move","characterId":3,"locationId":2,"fuel":true}',
        '{"command":"Move","characterId":3,"locationId":2,"fuel":false}',
        '{"command":"Search","characterId":3}',
        '{"command":"Attack","characterId":3,"entrance":0}',
        '{"command":"Barricade","characterId":3,"entrance":1}',
        '{"command":"CleanWaste","characterId":3}',
        '{"command":"ContributeCard","cardId":101}',
        '{"command":"UseCard","cardId":101}',
        '{"command":"UseCard","cardId":101,"characterId":3,"target":0}',
        '{"command":"UseAbility","characterId":3}',
        '{"command":"UseAbility","characterId":3,"target":2}',
        ' {"command" : "EndTurn" , "extra" : [1, {"x": null}]} \t',
        '{"command":"Search","characterId":2e3}',
        '{"command":"Search","characterId":-2147483648}',
        '{"command":"Search","characterId":2147483647}',
        '{"command":"Search","characterId":1.0E0}',
        '{"command":"EndTurn"}\r',
    ]
    broken = [
        '',
        '\r',
        '   ',
        'null',
        '[]',
        '"EndTurn"',
        '{}',
        '{"command":null}',
        '{"command":7}',
        '{"command":"endturn"}',
        '{"command":"' + 'X' * 80 + '"}',
        '{"command":"Registér' + 'é' * 40 + '"}',
        '{"command":"EndTurn"',
        '{"command":"EndTurn"} x',
        '{"command":"EndTurn"}{"command":"EndTurn"}',
        '{"command":"Register"}',
        '{"command":"Register","playerName":5}',
        '{"command":"Register","playerName":"a\\u0000b"}',
        '{"command":"Register","playerName":"\\ud800"}',
        '{"command":"SelectCharacters","characterId0":1}',
        '{"command":"SelectCharacters","characterId0":"1","characterId1":2}',
        '{"command":"Move","characterId":3}',
        '{"command":"Move","characterId":3,"locationId":2,"fuel":1}',
        '{"command":"Move","characterId":3,"locationId":2,"fuel":"true"}',
        '{"command":"Move","characterId":3,"locationId":2,"fuel":null}',
        '{"command":"Search","characterId":1.5}',
        '{"command":"Search","characterId":2147483648}',
        '{"command":"Search","characterId":-2147483649}',
        '{"command":"Search","characterId":1e400}',
        '{"command":"Search","characterId":true}',
        '{"command":"Attack","characterId":3}',
        '{"command":"Barricade","entrance":1}',
        '{"command":"ContributeCard"}',
        '{"command":"UseCard","cardId":101,"characterId":3}',
        '{"command":"UseCard","cardId":101,"target":0}',
        '{"command":"UseAbility","characterId":3,"target":null}',
        '{"command":"EndTurn","command":"Leave"}',
        '{"command":"EndTurn",}',
        "{'command':'EndTurn'}",
        '{"command":"EndTurn"}\x00',
    ]
    out = [s.encode() for s in valid + broken]
    out.append(b'{"command":"Register","playerName":"\xff\xfe"}')
    out.append(b'{"command":"Register","playerName":"\xc0\xaf"}')
    out.append(b'{"command":"Register","playerName":"\xed\xa0\x80"}')
    out.append(b'\xef\xbb\xbf{"command":"EndTurn"}')
    out.append(b'{"command":"Register","playerName":"' + b'x' * 70000 + b'"}')
    return out


# ---- fuzz_game -------------------------------------------------------------------

# op low nibble = enum cmd_type (event.h order)
REGISTER, START, SELECT, LEAVE, END, MOVE, SEARCH, ATTACK, BARRICADE, CLEAN, \
    CONTRIBUTE, USECARD, ABILITY = range(13)
TIMEOUT, DISCONNECT, LINE = 13, 14, 15
MAX_PLAYERS = [1, 2, 3, 4]  # solo, duo, trio, quad


def header(cfg, revised, seed):
    return bytes([cfg | (4 if revised else 0)]) + struct.pack("<q", seed)


def line(text, who=0):
    b = text.encode()
    assert len(b) < 256
    return bytes([who << 4 | LINE, len(b)]) + b


def turn(k):
    """One turn's worth of actions, varied by k, ending with EndTurn."""
    acts = [
        bytes([MOVE, k % 4, 1 + k % 3, k & 1]),
        bytes([SEARCH, k % 2]),
        bytes([ATTACK, k % 2, k % 3]),
        bytes([BARRICADE, k % 2, k % 2]),
        bytes([USECARD, k % 5, 0]),
        bytes([USECARD, k % 5, 1 | (k % 3) << 1, k % 2, k % 3]),
        bytes([CONTRIBUTE, k % 5]),
        bytes([CLEAN, k % 2]),
        bytes([ABILITY, k % 2, 1 | (k % 3) << 1, k % 4]),
        bytes([ABILITY, k % 2, 0]),
        bytes([SEARCH, 1 - k % 2]),
        bytes([MOVE, 1 - k % 2, 0xA0 + k % 5, 0]),
    ]
    n = 2 + k % 5
    return b"".join(acts[(k * 7 + i * 5) % len(acts)] for i in range(n)) + bytes([END])


def game_script(cfg, revised, seed, rounds, extra=b"", names=True, text=False):
    mp = MAX_PLAYERS[cfg]
    out = header(cfg, revised, seed)
    for p in range(mp):
        name = ("P%d" % p).encode() if names else b""
        if text:
            out += line('{"command":"Register","playerName":"P%d"}' % p, who=12)
        else:
            out += bytes([REGISTER, len(name)]) + name
    for p in range(mp):
        out += bytes([SELECT, p % 4, p % 3])
    k = seed & 0xFF
    for _ in range(rounds):
        for _ in range(mp):
            out += turn(k)
            k += 1
    return out + extra


def game_inputs():
    out = []
    for cfg in range(4):
        for revised in (False, True):
            for seed in (1, 42, 12345, -7):
                out.append(game_script(cfg, revised, seed, rounds=2 + (seed & 3)))
    # long games up to their end
    for cfg in range(4):
        out.append(game_script(cfg, cfg % 2 == 1, 99, rounds=10))
    # registration: StartGame early, abort, timeout, text lines
    out.append(header(1, False, 5) + bytes([REGISTER, 1]) + b"A" + bytes([START])
               + bytes([SELECT, 0, 0]) + turn(3) * 4)
    out.append(header(2, True, 6) + bytes([REGISTER, 0, END]))
    out.append(header(0, False, 7) + bytes([TIMEOUT]))
    out.append(header(1, True, 8) + bytes([REGISTER, 0, 0xC0 | START, REGISTER, 0,
                                           0xD0 | REGISTER, 0, 1, 0]))
    out.append(game_script(1, False, 9, rounds=2, text=True))
    # leaving, timeouts and lost connections in selection and in turns
    out.append(game_script(1, False, 10, rounds=0) + bytes([LEAVE]) + turn(1) * 6)
    out.append(header(2, False, 11) + bytes([REGISTER, 0] * 3) + bytes([TIMEOUT, SELECT, 0, 1,
                                                                        DISCONNECT, 1])
               + turn(2) * 8)
    out.append(game_script(3, True, 12, rounds=1) + bytes([TIMEOUT, DISCONNECT, 0]) + turn(4) * 10)
    out.append(game_script(2, True, 13, rounds=1) + bytes([DISCONNECT, 0, DISCONNECT, 0,
                                                           DISCONNECT, 0]))
    # commands as text in a running game
    out.append(game_script(0, True, 14, rounds=1) + line('{"command":"EndTurn"}')
               + line('{"command":"Search","characterId":1}')
               + line('{"command":"Move","characterId":10,"locationId":2,"fuel":true}')
               + line('{"command":"UseCard","cardId":7,"characterId":1,"target":1}')
               + line('{"command":"Leave"}'))
    return out


# ---- fuzz_config -------------------------------------------------------------------

def broken_configs(base_text):
    cfg = json.loads(base_text)
    out = [
        b"", b" ", b"{}", b"[]", b"null", b"{", b'{"maxPlayers": 01}', b'{"a": 1.}',
        b'{"a": "\x01"}', b'{"a": "\\u0000"}', b'{"a": "\\ud800"}', b'{"a": "\\udc00x"}',
        b'{"a": "\xc3"}', b'{"a": "\xed\xa0\x80"}', b"\xef\xbb\xbf{}", b"{} {}", b"{}\x00",
        b"[" * 70 + b"]" * 70, b'{"a":' * 40 + b"1" + b"}" * 40,
        b'{"maxPlayers": 1, "maxPlayers": 2}', b'{"maxPlayers": 1e999}',
        b'{"maxPlayers": -0.0}', b'{"maxPlayers": 2147483648}',
        b'{"' + b"k" * 300 + b'": 1}', b'{"\\u00e9\\ud83d\\ude00' + "é".encode() * 40 + b'": 1}',
    ]

    def variant(f):
        c = json.loads(base_text)
        f(c)
        out.append(json.dumps(c, ensure_ascii=False).encode())

    variant(lambda c: c.update(maxPlayers=0))
    variant(lambda c: c.update(maxPlayers=100))
    variant(lambda c: c["characters"].pop())
    variant(lambda c: c["crises"].clear())
    variant(lambda c: c["cards"].append(c["cards"][0]))
    variant(lambda c: c["locations"].append(c["locations"][0]))
    variant(lambda c: c["locations"].pop(0))
    variant(lambda c: c["goal"].update(barricades=3, locationWithZombies=1))
    variant(lambda c: c["goal"].pop("survive", None) or c["goal"].pop("barricades", None))
    variant(lambda c: c["goal"].update(zombiesColony=1000, zombiesLocations=-1))
    variant(lambda c: c["characters"][0].update(attack=7, search=0, status=None))
    variant(lambda c: c["characters"][0].update(ability={"kill": {"locationId": 999,
                                                                  "dieValue": 7}}))
    variant(lambda c: c["characters"][0].update(ability={"wound": {"before": "cut",
                                                                   "after": 1}}))
    variant(lambda c: c["characters"][1].update(ability={"heal": {}, "feed": {}}))
    variant(lambda c: c["cards"][0].update(extra=1))
    variant(lambda c: c.update(extra=[1, 2, 3]))
    variant(lambda c: c.update(goal=5, cards={}, characters="x", locations=None, crises=[1]))
    variant(lambda c: c["locations"][1].update(cards=[999999] * 3, entrances=0))
    # huge but valid counts: many characters
    big = json.loads(base_text)
    big["characters"] = [dict(big["characters"][i % len(big["characters"])],
                              identifier=1000 + i, status=5000 + i) for i in range(60)]
    out.append(json.dumps(big).encode())
    return out


def config_inputs(shared):
    out = []
    srcs = []
    base = os.path.join(shared, "conformance", "base")
    if os.path.isdir(base):
        srcs += [os.path.join(base, f) for f in sorted(os.listdir(base)) if f.endswith(".json")]
    else:
        print("make_corpus: %s not found, skipping the conformance configs" % base,
              file=sys.stderr)
    for d in ("resources", os.path.join("systemtests", "scenarios")):
        p = os.path.join(ROOT, d)
        srcs += [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".json")]
    for p in srcs:
        with open(p, "rb") as f:
            data = f.read()
        if len(data) <= MAX_CONFIG_BYTES:
            out.append(data)
    # the configs embedded in fuzz_game
    with open(os.path.join(HERE, "fuzz_game_configs.h"), encoding="utf-8") as f:
        text = f.read()
    for name in ("solo", "duo", "trio"):
        body = text.split("fuzz_cfg_%s[] = {" % name)[1].split("NULL,")[0]
        pieces = [l.strip()[1:-2] for l in body.strip().splitlines()]
        s = "".join(pieces).encode().decode("unicode_escape").encode("latin-1")
        out.append(s)
    with open(os.path.join(ROOT, "resources", "example-barricades.json"), "rb") as f:
        out += broken_configs(f.read().decode())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    a = ap.parse_args()
    for l in proto_lines():
        save("fuzz_proto_decode", l)
    for g in game_inputs():
        save("fuzz_game", g)
    for c in config_inputs(a.shared):
        save("fuzz_config", c)


if __name__ == "__main__":
    main()
