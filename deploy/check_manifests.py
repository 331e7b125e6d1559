#!/usr/bin/env python3
"""Check the deployment files under deploy/ (test.sh --full; docs/deployment.md).

  deploy/check_manifests.py [--server PATH [--bot PATH]]

- agones/*.yaml: well-formed YAML with the expected kinds and fields: the
  ConfigMap holds resources/example.json unchanged; the GameServer and the
  Fleet template expose the --port as a TCP containerPort, mount the
  ConfigMap where --config points, pass a valid --rules and --timeout and
  no --seed (every game draws its own), keep the journals (--journal-dir,
  with --reconnect-grace) on a writable emptyDir that outlives a container
  restart, leave the pod's restartPolicy at Always (a crashed container
  restarts in place and resumes its game), run as the image's user
  (deploy/Containerfile) and set a health period of at least twice the
  server's ping interval (AGONES_HEALTH_INTERVAL_MS in
  include/sopra/agones.h); the GameServerAllocation selects that Fleet by
  name and labels.
- With --server: the container args of each manifest, with the config path,
  the journal directory and the port made local, start a real server that
  listens (then SIGTERM, exit 0).
- systemd/sopra-server@.service: the expected sandboxing, state directory
  and restart settings, `systemd-analyze verify` silent (when installed),
  and its ExecStart line, expanded as systemd would (deploy/unitfile.py),
  starts the server on the instance's port with its journals in the state
  directory. (deploy/recovery_test.py crashes and resumes it.)

- With --server and --bot, where strace and systemd-analyze are installed:
  every system call the server makes under the unit's ExecStart -- a new
  journaled game, SIGKILLed, resumed and played to its end by two bots, the
  next game stopped with SIGTERM -- is allowed by its SystemCallFilter=.

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
sys.path.insert(0, os.path.join(ROOT, "deploy"))
import unitfile  # noqa: E402


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
    for k in ("config", "port", "timeout", "journal-dir", "reconnect-grace"):
        check(k in opts, "args: --%s missing" % k)
    check("seed" not in opts,
          "args: --seed: every game of a manifest would deal the same; leave it out "
          "(the server draws one and reports it as the annotation agones.dev/sdk-seed)")
    check(set(opts) <= {"config", "port", "timeout", "rules", "journal-dir",
                        "reconnect-grace", "journal-keep", "journal-sync"},
          "args: unknown options %s" % sorted(set(opts)))
    check(opts["port"].isdigit() and 1 <= int(opts["port"]) <= 65535, "args: --port")
    check(opts["timeout"].isdigit() and int(opts["timeout"]) >= 1, "args: --timeout")
    check(opts["reconnect-grace"].isdigit(), "args: --reconnect-grace")
    check(opts.get("rules", "base") in ("base", "revised"), "args: --rules")
    return opts


def mounted_volume(c, vols, path, where):
    """The volume (and its mount) that holds path in container c."""
    for m in get(c, "volumeMounts", list):
        mp = m["mountPath"].rstrip("/") + "/"
        if (path.rstrip("/") + "/").startswith(mp):
            return vols.get(m["name"], {}), m
    raise Failure("%s: %s is not under a mounted volume" % (where, path))


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
    v, m = mounted_volume(c, vols, opts["config"], where)
    check(get(v, "configMap.name") == configmap_name,
          where + ": --config is not in the ConfigMap %s" % configmap_name)
    found = opts["config"][len(m["mountPath"].rstrip("/") + "/"):]
    # the journals on a writable emptyDir: it lives as long as the pod, so a
    # container restarted in place finds the crashed game's journal
    v, m = mounted_volume(c, vols, opts["journal-dir"], where)
    check("emptyDir" in v, where + ": --journal-dir %s is not on an emptyDir" %
          opts["journal-dir"])
    check(not m.get("readOnly", False), where + ": the journal volume is mounted read-only")
    check(pod.get("restartPolicy", "Always") == "Always",
          where + ": restartPolicy %r: a crashed container must restart in place" %
          pod.get("restartPolicy"))
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
            local[local.index("--journal-dir") + 1] = os.path.join(tmp, where + "-journals")
            env = dict(os.environ)
            env.pop("AGONES_SDK_HTTP_PORT", None)
            run_listening([server] + local, env, where + " args")
    finally:
        shutil.rmtree(tmp)


def unit_settings():
    try:
        return unitfile.settings(UNIT)
    except unitfile.UnitError as e:
        raise Failure(str(e))


@case("systemd/sopra-server@.service: sandboxing, state directory and restart policy")
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
    check(svc.get("StateDirectory", [""])[-1] == "sopra/%i" and
          svc.get("StateDirectoryMode", [""])[-1] == "0700",
          "unit: StateDirectory=sopra/%i with StateDirectoryMode=0700 expected")
    check("--journal-dir %S/sopra/%i" in svc.get("ExecStart", [""])[-1],
          "unit: --journal-dir %S/sopra/%i (the state directory) in ExecStart")
    check(svc.get("UMask", [""])[-1] == "0077", "unit: UMask=0077 expected")
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
            # the exposure docs/deployment.md states
            r = subprocess.run(["systemd-analyze", "security", "--offline=true",
                                "--no-pager", "sopra-server@7001.service"], cwd=tmp,
                               capture_output=True, text=True, timeout=60)
            m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
            check(m and float(m.group(1)) <= 1.1,
                  "systemd-analyze security: exposure %s, documented 1.1" %
                  (m.group(1) if m else r.stdout[-300:] + r.stderr[-300:]))
        finally:
            shutil.rmtree(tmp)
    STATE["unit"] = s


def t_unit_run(server):
    port = free_port()
    tmp = tempfile.mkdtemp()
    try:
        inst = unitfile.Instance(UNIT, port, tmp)
        state = inst.make_state_dir()
        base = dict(os.environ)
        base.pop("AGONES_SDK_HTTP_PORT", None)
        env = inst.env(base)
        env["SOPRA_CONFIG"] = os.path.join(ROOT, "resources", "example.json")
        words = inst.exec_start(env)
        words = [w.replace("/usr/bin/sopra-server", os.path.abspath(server)) for w in words]
        line = run_listening(words, env, "unit ExecStart")
        check((":%d " % port) in line, "unit: not listening on the instance's port: %r" % line)
        check(os.listdir(state) == ["game-000001.jnl"],
              "unit: the game is not journaled in its state directory: %s" %
              os.listdir(state))
    except unitfile.UnitError as e:
        raise Failure(str(e))
    finally:
        shutil.rmtree(tmp)


def syscall_filter_allows(svc):
    """The system calls the unit's SystemCallFilter= lines allow, from
    `systemd-analyze syscall-filter`'s groups: an allow list (with @default,
    which systemd adds to every allow list), minus each "~" list."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True,
                         text=True, timeout=60).stdout
    groups, cur = {}, None
    for line in out.splitlines():
        item = line.strip()
        if line.startswith("@"):
            cur = groups.setdefault(item, [])
        elif cur is not None and item and not item.startswith("#"):
            cur.append(item)

    def expand(items):
        names = set()
        for item in items:
            if item.startswith("@"):
                check(item in groups, "unit: unknown system call group %s" % item)
                names |= expand(groups[item])
            else:
                names.add(item)
        return names

    allowed = None
    for value in svc.get("SystemCallFilter", []):
        if value.startswith("~"):
            check(allowed is not None, "unit: SystemCallFilter= starts with a deny list")
            allowed -= expand(value[1:].split())
        else:
            allowed = (allowed or set()) | expand(["@default"] + value.split())
    check(allowed, "unit: no SystemCallFilter=")
    return allowed


class Traced:
    """The unit's ExecStart words run under strace -f (the trace in path);
    the server is strace's child."""

    def __init__(self, words, env, path, umask):
        self.log = path + ".err"
        with open(self.log, "wb") as err:
            self.p = subprocess.Popen(["strace", "-f", "-qq", "-o", path] + words, env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=err, preexec_fn=lambda: os.umask(umask))
        deadline = time.monotonic() + 20
        while "listening on" not in self.text():
            check(self.p.poll() is None and time.monotonic() < deadline,
                  "unit under strace: the server did not listen: " + self.text()[-800:])
            time.sleep(0.05)

    def text(self):
        with open(self.log, "rb") as f:
            return f.read().decode(errors="replace")

    def signal(self, sig):
        with open("/proc/%d/task/%d/children" % (self.p.pid, self.p.pid)) as f:
            os.kill(int(f.read().split()[0]), sig)

    def wait(self):
        return self.p.wait(30)


def bot_process(bot, port, name, start):
    cmd = [bot, "--port", str(port), "--name", name, "--seed", "3", "--quiet",
           "--reconnect", "20"] + (["--start"] if start else [])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline().decode(errors="replace").strip()
    check(line == "registered " + name, "bot %s did not register: %r" % (name, line))
    return p


def t_unit_syscalls(server, bot):
    """Every system call the server (and the sh of ExecStart) makes under the
    unit -- a new game journaled, SIGKILLed with a player registered,
    resumed, played to its end by two bots, then the next game started and
    stopped with SIGTERM -- is one the unit's SystemCallFilter= allows (any
    other would kill the server with SIGSYS under systemd)."""
    allowed = syscall_filter_allows(STATE["unit"]["Service"])
    port = free_port()
    tmp = tempfile.mkdtemp()
    bots = []
    try:
        inst = unitfile.Instance(UNIT, port, tmp)
        inst.make_state_dir()
        base = dict(os.environ)
        base.pop("AGONES_SDK_HTTP_PORT", None)
        env = inst.env(base)
        env["SOPRA_CONFIG"] = os.path.join(ROOT, "resources", "example.json")
        words = [w.replace("/usr/bin/sopra-server", os.path.abspath(server))
                 for w in inst.exec_start(env)]
        traces = [os.path.join(tmp, "trace%d" % k) for k in range(3)]
        run = Traced(words, env, traces[0], inst.umask())
        bots.append(bot_process(bot, port, "Anna", False))
        run.signal(signal.SIGKILL)
        run.wait()
        run = Traced(words, env, traces[1], inst.umask())
        check("journal-dir: resuming" in run.text(), "unit under strace: no resume")
        bots.append(bot_process(bot, port, "Ben", True))
        for b in bots:
            check(b.wait(60) == 0, "a bot failed")
        check(run.wait() == 0, "unit under strace: exit status")
        run = Traced(words, env, traces[2], inst.umask())
        run.signal(signal.SIGTERM)
        check(run.wait() == 0, "unit under strace: SIGTERM, exit status")
        used = set()
        for path in traces:
            with open(path) as f:
                used |= set(re.findall(r"^\d+ +(\w+)\(", f.read(), re.M))
        check(len(used) > 20, "too few system calls traced: %s" % sorted(used))
        check(used <= allowed, "unit: SystemCallFilter= forbids %s, which the server calls" %
              sorted(used - allowed))
        STATE["syscalls"] = len(used)
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
                b.wait()
        shutil.rmtree(tmp)


def main():
    server = bot = None
    if "--server" in sys.argv:
        server = sys.argv[sys.argv.index("--server") + 1]
    if "--bot" in sys.argv:
        bot = sys.argv[sys.argv.index("--bot") + 1]
    cases = list(RESULTS)
    if server:
        cases.append(("manifest args start the server", lambda: t_args_run(server)))
        cases.append(("unit ExecStart starts the server on %i", lambda: t_unit_run(server)))
    if server and bot:
        missing = [t for t in ("strace", "systemd-analyze") if not shutil.which(t)]
        if missing:
            print("SKIP unit SystemCallFilter= against a traced game: %s not installed" %
                  " and ".join(missing))
        else:
            cases.append(("unit SystemCallFilter= allows every system call of a journaled "
                          "game, its crash and resume", lambda: t_unit_syscalls(server, bot)))
    passed = failed = 0
    for name, fn in cases:
        try:
            fn()
            passed += 1
            print("PASS", name)
        except (Failure, KeyError, TypeError, ValueError, OSError, yaml.YAMLError,
                subprocess.SubprocessError, unitfile.UnitError) as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
