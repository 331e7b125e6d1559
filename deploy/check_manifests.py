#!/usr/bin/env python3
"""Check the deployment files under deploy/ (test.sh --full; docs/deployment.md).

  deploy/check_manifests.py [--server PATH]

- agones/*.yaml: well-formed YAML with the expected kinds and fields: the
  ConfigMap holds resources/example.json unchanged; the GameServer and the
  Fleet template expose the --port as a TCP containerPort, mount the
  ConfigMap where --config points, pass a valid --seed, --rules and
  --timeout, run as the image's user (deploy/Containerfile) and set a health
  period of at least twice the server's ping interval
  (AGONES_HEALTH_INTERVAL_MS in include/sopra/agones.h); the
  GameServerAllocation selects that Fleet by name and labels.
- With --server: the container args of each manifest, with the config path
  and port made local, start a real server that listens (then SIGTERM, exit 0).
- systemd/sopra-server@.service: the expected sandboxing and restart settings,
  `systemd-analyze verify` silent (when installed), and its ExecStart line,
  expanded as systemd would, starts the server on the instance's port.

Ends with "N passed, M failed"; exit status 1 if anything failed. Needs the
yaml module (Debian: python3-yaml); if this python lacks it, /usr/bin/python3
is tried.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import yaml
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("check_manifests.py: the yaml module is missing (apt-get install python3-yaml)")
    print("0 passed, 1 failed")
    sys.exit(1)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGONES = os.path.join(ROOT, "deploy", "agones")
UNIT = os.path.join(ROOT, "deploy", "systemd", "sopra-server@.service")


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def load(name):
    with open(os.path.join(AGONES, name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, "%s: %d documents, expected 1" % (name, len(docs)))
    check(isinstance(docs[0], dict), "%s: not a mapping" % name)
    return docs[0]


def get(obj, path, typ=None):
    cur = obj
    for key in path.split("."):
        if isinstance(cur, list):
            check(key.isdigit() and int(key) < len(cur), "missing %s" % path)
            cur = cur[int(key)]
        else:
            check(isinstance(cur, dict) and key in cur, "missing %s" % path)
            cur = cur[key]
    if typ is not None:
        check(isinstance(cur, typ), "%s: %r is not a %s" % (path, cur, typ.__name__))
    return cur


def health_interval_s():
    with open(os.path.join(ROOT, "include", "sopra", "agones.h")) as f:
        m = re.search(r"#define AGONES_HEALTH_INTERVAL_MS (\d+)", f.read())
    check(m, "AGONES_HEALTH_INTERVAL_MS not found in agones.h")
    return int(m.group(1)) / 1000.0


def image_user():
    with open(os.path.join(ROOT, "deploy", "Containerfile")) as f:
        m = re.search(r"^USER (\d+):(\d+)$", f.read(), re.M)
    check(m, "Containerfile: no numeric USER uid:gid")
    return int(m.group(1)), int(m.group(2))


def parse_args(args):
    """The server's options from a container's args (--opt VALUE pairs)."""
    check(isinstance(args, list) and all(isinstance(a, str) for a in args),
          "args must be a list of strings (quote numbers)")
    opts, i = {}, 0
    while i < len(args):
        check(args[i].startswith("--") and i + 1 < len(args), "args: bad option %r" % args[i])
        check(args[i][2:] not in opts, "args: %s twice" % args[i])
        opts[args[i][2:]] = args[i + 1]
        i += 2
    for k in ("config", "port", "seed", "timeout"):
        check(k in opts, "args: --%s missing" % k)
    check(set(opts) <= {"config", "port", "seed", "timeout", "rules"},
          "args: unknown options %s" % sorted(set(opts)))
    check(re.fullmatch(r"[+-]?\d+", opts["seed"]) and
          -2 ** 63 <= int(opts["seed"]) < 2 ** 63, "args: --seed not a 64-bit integer")
    check(opts["port"].isdigit() and 1 <= int(opts["port"]) <= 65535, "args: --port")
    check(opts["timeout"].isdigit() and int(opts["timeout"]) >= 1, "args: --timeout")
    check(opts.get("rules", "base") in ("base", "revised"), "args: --rules")
    return opts


def check_gameserver_spec(spec, where, configmap_name):
    """A GameServer spec (also a Fleet's template.spec); returns the container's args."""
    cname = get(spec, "container", str)
    ports = get(spec, "ports", list)
    check(len(ports) >= 1, where + ": no ports")
    port = ports[0]
    check(get(port, "protocol") == "TCP", where + ": the port's protocol must be TCP")
    check(port.get("portPolicy", "Dynamic") in ("Dynamic", "Static", "Passthrough"),
          where + ": portPolicy")
    health = get(spec, "health", dict)
    check(not health.get("disabled", False), where + ": health checking disabled")
    period = get(health, "periodSeconds", int)
    interval = health_interval_s()
    check(period >= 2 * interval,
          "%s: health.periodSeconds %d < 2 x the server's %.0f s ping interval" %
          (where, period, interval))
    check(get(health, "failureThreshold", int) >= 1, where + ": failureThreshold")
    pod = get(spec, "template.spec", dict)
    containers = [c for c in get(pod, "containers", list) if c.get("name") == cname]
    check(len(containers) == 1, where + ": no container named %r" % cname)
    c = containers[0]
    get(c, "image", str)
    opts = parse_args(get(c, "args"))
    check(int(opts["port"]) == get(port, "containerPort", int),
          where + ": --port %s but containerPort %s" % (opts["port"], port["containerPort"]))
    # --config lies in a volume mounted from the ConfigMap
    vols = {v["name"]: v for v in get(pod, "volumes", list)}
    found = None
    for m in get(c, "volumeMounts", list):
        mp = m["mountPath"].rstrip("/") + "/"
        if opts["config"].startswith(mp):
            v = vols.get(m["name"], {})
            check(get(v, "configMap.name") == configmap_name,
                  where + ": --config is not in the ConfigMap %s" % configmap_name)
            found = opts["config"][len(mp):]
    check(found, where + ": --config %s is not under a mounted volume" % opts["config"])
    sc = get(c, "securityContext", dict)
    uid, gid = image_user()
    check(sc.get("runAsNonRoot") is True, where + ": runAsNonRoot")
    check(sc.get("runAsUser") == uid and sc.get("runAsGroup") == gid,
          where + ": runAsUser/runAsGroup differ from the Containerfile's USER")
    check(sc.get("allowPrivilegeEscalation") is False, where + ": allowPrivilegeEscalation")
    return opts, found


RESULTS = []


def case(name):
    def wrap(fn):
        RESULTS.append((name, fn))
        return fn
    return wrap


STATE = {}


@case("configmap.yaml: ConfigMap with resources/example.json")
def t_configmap():
    cm = load("configmap.yaml")
    check(cm.get("apiVersion") == "v1" and cm.get("kind") == "ConfigMap", "kind ConfigMap")
    STATE["configmap"] = get(cm, "metadata.name", str)
    data = get(cm, "data", dict)
    check("example.json" in data, "data.example.json missing")
    with open(os.path.join(ROOT, "resources", "example.json")) as f:
        want = json.load(f)
    check(json.loads(data["example.json"]) == want,
          "data.example.json differs from resources/example.json")
    STATE["files"] = data


@case("gameserver.yaml: GameServer")
def t_gameserver():
    gs = load("gameserver.yaml")
    check(gs.get("apiVersion") == "agones.dev/v1" and gs.get("kind") == "GameServer",
          "apiVersion agones.dev/v1, kind GameServer")
    get(gs, "metadata.name", str)
    opts, cfg = check_gameserver_spec(get(gs, "spec", dict), "GameServer", STATE["configmap"])
    check(cfg in STATE["files"], "GameServer: --config names %s, not in the ConfigMap" % cfg)
    STATE.setdefault("args", []).append(("GameServer", get(gs, "spec.template.spec.containers.0.args")))


@case("fleet.yaml: Fleet")
def t_fleet():
    fl = load("fleet.yaml")
    check(fl.get("apiVersion") == "agones.dev/v1" and fl.get("kind") == "Fleet",
          "apiVersion agones.dev/v1, kind Fleet")
    STATE["fleet"] = get(fl, "metadata.name", str)
    check(get(fl, "spec.replicas", int) >= 1, "spec.replicas")
    check(fl["spec"].get("scheduling", "Packed") in ("Packed", "Distributed"), "spec.scheduling")
    opts, cfg = check_gameserver_spec(get(fl, "spec.template.spec", dict), "Fleet",
                                      STATE["configmap"])
    check(cfg in STATE["files"], "Fleet: --config names %s, not in the ConfigMap" % cfg)
    STATE["fleet_labels"] = get(fl, "spec.template.metadata.labels", dict)
    STATE.setdefault("args", []).append(
        ("Fleet", get(fl, "spec.template.spec.template.spec.containers.0.args")))


@case("gameserverallocation.yaml: GameServerAllocation of the Fleet")
def t_allocation():
    a = load("gameserverallocation.yaml")
    check(a.get("apiVersion") == "allocation.agones.dev/v1" and
          a.get("kind") == "GameServerAllocation",
          "apiVersion allocation.agones.dev/v1, kind GameServerAllocation")
    sels = get(a, "spec.selectors", list)
    check(len(sels) >= 1, "no selectors")
    labels = get(sels[0], "matchLabels", dict)
    check(labels.get("agones.dev/fleet") == STATE.get("fleet"),
          "selector agones.dev/fleet=%r, the Fleet is %r" %
          (labels.get("agones.dev/fleet"), STATE.get("fleet")))
    for k, v in labels.items():
        if k != "agones.dev/fleet":
            check(STATE["fleet_labels"].get(k) == v,
                  "selector label %s=%s is not on the Fleet's GameServers" % (k, v))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run_listening(argv, env=None, what=""):
    """Start argv, wait for "listening on", SIGTERM it, expect exit 0."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env)
    try:
        # the log starts with the seed ("sopra-server: seed N ..."), then
        # "listening on"; read up to it (EOF: the server did not start)
        lines = []
        while len(lines) < 20:
            line = p.stderr.readline().decode(errors="replace")
            lines.append(line)
            if not line or "listening on" in line:
                break
        check("listening on" in line, "%s: did not listen: %r" % (what, "".join(lines)))
        p.send_signal(signal.SIGTERM)
        rc = p.wait(10)
        check(rc == 0, "%s: exit %d after SIGTERM" % (what, rc))
        return line
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def t_args_run(server):
    tmp = tempfile.mkdtemp()
    try:
        for name, content in STATE["files"].items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(content)
        for where, args in STATE["args"]:
            opts = parse_args(args)
            local = list(args)
            local[local.index("--config") + 1] = os.path.join(tmp, os.path.basename(opts["config"]))
            local[local.index("--port") + 1] = str(free_port())
            env = dict(os.environ)
            env.pop("AGONES_SDK_HTTP_PORT", None)
            run_listening([server] + local, env, where + " args")
    finally:
        shutil.rmtree(tmp)


def unit_settings():
    sections, cur = {}, None
    with open(UNIT) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                cur = sections.setdefault(line[1:-1], {})
                continue
            check(cur is not None and "=" in line, "unit: stray line %r" % line)
            k, v = line.split("=", 1)
            cur.setdefault(k.strip(), []).append(v.strip())
    return sections


@case("systemd/sopra-server@.service: sandboxing and restart policy")
def t_unit():
    s = unit_settings()
    svc = s.get("Service", {})
    want = {"DynamicUser": "yes", "ProtectSystem": "strict", "NoNewPrivileges": "yes",
            "ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes",
            "RestrictNamespaces": "yes", "Restart": "always", "CapabilityBoundingSet": ""}
    for k, v in want.items():
        check(svc.get(k, [None])[-1] == v, "unit: %s=%s expected, got %s" % (k, v, svc.get(k)))
    check("2" in svc.get("RestartPreventExitStatus", [""])[-1].split(),
          "unit: exit 2 (invalid configuration) must not be restarted")
    check(any(x.startswith("-/etc/sopra/") for x in svc.get("EnvironmentFile", [])),
          "unit: optional EnvironmentFile under /etc/sopra")
    check("--port %i" in svc.get("ExecStart", [""])[-1], "unit: --port %i in ExecStart")
    check(s.get("Install", {}).get("WantedBy") == ["multi-user.target"], "unit: WantedBy")
    if shutil.which("systemd-analyze"):
        tmp = tempfile.mkdtemp()
        try:
            shutil.copy(UNIT, tmp)
            inst = os.path.join(tmp, "sopra-server@7001.service")
            os.symlink(os.path.join(tmp, "sopra-server@.service"), inst)
            r = subprocess.run(["systemd-analyze", "verify", inst], capture_output=True,
                               text=True, timeout=60)
            msgs = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
            check(r.returncode == 0 and not msgs, "systemd-analyze verify: %s" % msgs)
        finally:
            shutil.rmtree(tmp)
    STATE["unit"] = s


def expand_exec(cmd, env, instance):
    """systemd's expansion of one ExecStart line, for this line's features:
    specifiers %i and %%, $$ -> $, ${VAR} substitution, '...' quoting."""
    out, word, i, quote, words = [], "", 0, None, []
    while i < len(cmd):
        ch = cmd[i]
        if ch == "%":
            nxt = cmd[i + 1]
            check(nxt in "i%", "unit: specifier %%%s not handled here" % nxt)
            word += instance if nxt == "i" else "%"
            i += 2
            continue
        if ch == "$":
            if cmd[i + 1] == "$":
                word += "$"
                i += 2
                continue
            m = re.match(r"\$\{(\w+)\}", cmd[i:])
            check(m, "unit: bare $ in ExecStart")
            word += env.get(m.group(1), "")
            i += m.end()
            continue
        if quote:
            if ch == quote:
                quote = None
            else:
                word += ch
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            if word:
                words.append(word)
            word = ""
        else:
            word += ch
        i += 1
    if word:
        words.append(word)
    return words


def t_unit_run(server):
    svc = STATE["unit"]["Service"]
    env = dict(os.environ)
    env.pop("AGONES_SDK_HTTP_PORT", None)
    for e in svc.get("Environment", []):
        for kv in e.split():
            k, v = kv.split("=", 1)
            env[k] = v
    env["SOPRA_CONFIG"] = os.path.join(ROOT, "resources", "example.json")
    port = free_port()
    words = expand_exec(svc["ExecStart"][-1], env, str(port))
    words = [w.replace("/usr/bin/sopra-server", os.path.abspath(server)) for w in words]
    line = run_listening(words, env, "unit ExecStart")
    check((":%d " % port) in line, "unit: not listening on the instance's port: %r" % line)


def main():
    server = None
    if "--server" in sys.argv:
        server = sys.argv[sys.argv.index("--server") + 1]
    cases = list(RESULTS)
    if server:
        cases.append(("manifest args start the server", lambda: t_args_run(server)))
        cases.append(("unit ExecStart starts the server on %i", lambda: t_unit_run(server)))
    passed = failed = 0
    for name, fn in cases:
        try:
            fn()
            passed += 1
            print("PASS", name)
        except (Failure, KeyError, TypeError, ValueError, OSError, yaml.YAMLError,
                subprocess.SubprocessError) as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
