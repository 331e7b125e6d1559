#!/usr/bin/env python3
"""Regenerate the committed seed corpus in fuzz/corpus/ (see fuzz/README.md).

    python3 fuzz/make_corpus.py [--shared ../shared]
    python3 fuzz/make_corpus.py --dict-words   (what fuzz/run.sh adds to the .dict files)

fuzz_proto_decode: client lines, every command of the command table
                   (include/sopra/cmd_table.h) valid and broken.
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
import re
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


# ---- the command table ----------------------------------------------------------

def command_table():
    """The rows of include/sopra/cmd_table.h's SOPRA_COMMANDS, in order:
    [(name, [(type, key, domain, flags)])]; flags as written ("0",
    "PROTO_OPTIONAL | PROTO_PAIR")."""
    with open(os.path.join(ROOT, "include", "sopra", "cmd_table.h"), encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    body = re.search(r"^#define SOPRA_COMMANDS\(X\)(.*)$", text, re.M).group(1)
    rows = []
    for row in re.split(r"\bX\(", body)[1:]:
        name = re.match(r'\s*\w+,\s*"(\w+)"', row).group(1)
        params = re.findall(r'PARAM\((\w+),\s*"(\w+)",\s*\w+,\s*(\w+),\s*([^)]*)\)', row)
        assert len(params) == row.count("PARAM("), "cannot read the parameters of " + name
        rows.append((name, [(t, k, d, f.strip()) for t, k, d, f in params]))
    assert rows, "no command rows in cmd_table.h"
    return rows


def dict_words():
    """libFuzzer dictionary entries for the command names and parameter keys
    (fuzz/run.sh adds them to the .dict files of the targets that read
    commands)."""
    words = []
    for name, params in command_table():
        words.append('"\\"%s\\""' % name)
        for _, key, _, _ in params:
            for w in ('"\\"%s\\""' % key, '"\\"%s\\":"' % key):
                if w not in words:
                    words.append(w)
    return words


# ---- fuzz_proto_decode --------------------------------------------------------

# A value of each domain that decodes (the characters offered: 1, then 2).
SAMPLE = {"NAME": '"Anna"', "OWN_CHARACTER": "3", "LOCATION": "2", "ENTRANCE": "1",
          "HAND_CARD": "101", "TARGET": "0", "FLAG": "true"}
WRONG_TYPE = {"INT": ['"1"', "true", "null"], "BOOL": ["1", '"true"', "null"],
              "STRING": ["5", "null"]}


def command_line(name, fields):
    return '{"command":"%s"%s}' % (name, "".join(',"%s":%s' % kv for kv in fields))


def sample_fields(params):
    fields, offered = [], 0
    for typ, key, domain, flags in params:
        if domain == "OFFERED_CHARACTER":
            offered += 1
            fields.append((key, str(offered)))
        else:
            fields.append((key, SAMPLE[domain]))
    return fields


def command_lines(name, params):
    """Lines of one command, from its row: (valid, broken)."""
    full = sample_fields(params)
    with_target = [i for i, p in enumerate(params) if "PROTO_TARGET" in p[3]
                   or "PROTO_PAIR" in p[3]]
    required = [f for f, p in zip(full, params) if "PROTO_OPTIONAL" not in p[3]]
    valid = [command_line(name, required), command_line(name, full)]
    broken = []
    for i, (typ, key, domain, flags) in enumerate(params):
        if "PROTO_OPTIONAL" not in flags:
            broken.append(command_line(name, full[:i] + full[i + 1:]))
        for wrong in WRONG_TYPE[typ]:
            broken.append(command_line(name, full[:i] + [(key, wrong)] + full[i + 1:]))
        if domain == "FLAG":
            valid.append(command_line(name, full[:i] + [(key, "false")] + full[i + 1:]))
        if typ == "STRING":
            for v in ('""', '"\\u00e9\\ud83d\\ude00 \\"q\\" \\\\ \\n"', '"Zoë 😀"'):
                valid.append(command_line(name, full[:i] + [(key, v)] + full[i + 1:]))
            for v in ('"a\\u0000b"', '"\\ud800"'):
                broken.append(command_line(name, full[:i] + [(key, v)] + full[i + 1:]))
    if len(with_target) > 1:  # a pair given half
        for i in with_target:
            broken.append(command_line(name, [f for j, f in enumerate(full)
                                              if j not in with_target or j == i]))
    return valid, broken


def proto_lines():
    table = command_table()
    valid, broken, raw = [], [], []
    for name, params in table:
        v, b = command_lines(name, params)
        valid += v
        broken += b
    # the JSON around a command, on the first commands without parameters
    plain = [name for name, params in table if not params]
    bare, other = plain[0], plain[-1]
    named = [(name, p[1]) for name, params in table for p in params if p[0] == "STRING"][0]
    # numbers, in the first int parameter of the first command with one
    nname, nparams = [(name, params) for name, params in table
                      if any(p[0] == "INT" for p in params)][0]
    nfields = sample_fields(nparams)
    ni = [p[0] for p in nparams].index("INT")

    def number(v):
        return command_line(nname, nfields[:ni] + [(nparams[ni][1], v)] + nfields[ni + 1:])
    valid += [
        ' {"command" : "%s" , "extra" : [1, {"x": null}]} \t' % bare,
        '{"command":"%s"}\r' % bare,
    ]
    valid += [number(v) for v in ("2e3", "-2147483648", "2147483647", "1.0E0")]
    broken += ['', '\r', '   ', 'null', '[]', '"%s"' % bare, '{}', '{"command":null}',
               '{"command":7}', '{"command":"%s"}' % bare.lower(),
               '{"command":"' + 'X' * 80 + '"}',
               '{"command":"%sé' % named[0] + 'é' * 40 + '"}',
               '{"command":"%s"' % bare, '{"command":"%s"} x' % bare,
               '{"command":"%s"}{"command":"%s"}' % (bare, bare),
               '{"command":"%s","command":"%s"}' % (bare, other),
               '{"command":"%s",}' % bare, "{'command':'%s'}" % bare,
               '{"command":"%s"}\x00' % bare]
    broken += [number(v) for v in ("1.5", "2147483648", "-2147483649", "1e400")]
    out = [s.encode() for s in valid + broken]
    for v in (b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"x" * 70000):
        out.append(b'{"command":"%s","%s":"' % (named[0].encode(), named[1].encode()) + v
                   + b'"}')
    out.append(b'\xef\xbb\xbf{"command":"%s"}' % bare.encode())
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
    register = [(name, params[0][1]) for name, params in command_table()
                if params and params[0][0] == "STRING"][0]
    mp = MAX_PLAYERS[cfg]
    out = header(cfg, revised, seed)
    for p in range(mp):
        name = ("P%d" % p).encode() if names else b""
        if text:
            out += line(command_line(register[0], [(register[1], '"P%d"' % p)]), who=12)
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
    # every command as text in a running game, those without parameters last
    rows = sorted(command_table(), key=lambda row: not row[1])
    out.append(game_script(0, True, 14, rounds=1)
               + b"".join(line(command_line(name, sample_fields(params)))
                          for name, params in rows))
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
    ap.add_argument("--dict-words", action="store_true",
                    help="print the dictionary entries of the command table and exit")
    a = ap.parse_args()
    if a.dict_words:
        print("\n".join(dict_words()))
        return
    for l in proto_lines():
        save("fuzz_proto_decode", l)
    for g in game_inputs():
        save("fuzz_game", g)
    for c in config_inputs(a.shared):
        save("fuzz_config", c)


if __name__ == "__main__":
    main()
