"""Read deploy/systemd/sopra-server@.service as systemd would, for the tests
that run its ExecStart line without systemd (check_manifests.py,
recovery_test.py).

  settings(path)            {section: {key: [values in order]}}
  Instance(unit, instance, root)
      .env(base)            the environment systemd gives ExecStart: base,
                            then Environment= (EnvironmentFile= is left to
                            the caller: the test sets what it would hold),
                            STATE_DIRECTORY when StateDirectory= is set
      .make_state_dir()     create StateDirectory= under the state root
                            with StateDirectoryMode= (as systemd does
                            before it starts the service)
      .exec_start(env)      the ExecStart line split into words and
                            expanded: specifiers, $$, ${VAR}, quotes
      .umask()              UMask= as a number

Only what this unit uses is handled; anything else is an error, so that a
change of the unit cannot slip past its tests unexpanded. The state root
(%S, systemd's /var/lib) is a folder of the caller's choosing.
"""
import os
import re


class UnitError(Exception):
    pass


def settings(path):
    """The unit's sections, each {key: [value, ...]} in file order."""
    sections, cur = {}, None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                cur = sections.setdefault(line[1:-1], {})
                continue
            if cur is None or "=" not in line:
                raise UnitError("unit: stray line %r" % line)
            k, v = line.split("=", 1)
            cur.setdefault(k.strip(), []).append(v.strip())
    return sections


class Instance:
    """The unit as instance `instance` (the port), with %S at `root`."""

    def __init__(self, unit_path, instance, root):
        self.sections = settings(unit_path)
        self.service = self.sections.get("Service", {})
        self.instance = str(instance)
        self.root = root

    def last(self, key, default=None):
        return self.service.get(key, [default])[-1]

    def specifiers(self, text):
        """%i (the instance), %S (the state root) and %%."""
        out, i = "", 0
        while i < len(text):
            if text[i] != "%":
                out += text[i]
                i += 1
                continue
            nxt = text[i + 1] if i + 1 < len(text) else ""
            table = {"i": self.instance, "S": self.root, "%": "%"}
            if nxt not in table:
                raise UnitError("unit: specifier %%%s not handled here" % nxt)
            out += table[nxt]
            i += 2
        return out

    def state_dir(self):
        """StateDirectory= as an absolute path under the root, or None."""
        sd = self.last("StateDirectory")
        if sd is None:
            return None
        if len(sd.split()) != 1:
            raise UnitError("unit: one StateDirectory= expected, got %r" % sd)
        return os.path.join(self.root, self.specifiers(sd))

    def make_state_dir(self):
        path = self.state_dir()
        if path is None:
            raise UnitError("unit: no StateDirectory=")
        os.makedirs(path, exist_ok=True)
        os.chmod(path, int(self.last("StateDirectoryMode", "0755"), 8))
        return path

    def umask(self):
        return int(self.last("UMask", "0022"), 8)

    def env(self, base):
        env = dict(base)
        for e in self.service.get("Environment", []):
            for kv in e.split():
                k, v = kv.split("=", 1)
                env[k] = self.specifiers(v)
        if self.state_dir():
            env["STATE_DIRECTORY"] = self.state_dir()
        return env

    def exec_start(self, env):
        """ExecStart split and expanded as systemd does for this line:
        specifiers, $$ -> $, ${VAR} from env, '...' and "..." quoting."""
        cmd = self.last("ExecStart")
        if cmd is None:
            raise UnitError("unit: no ExecStart=")
        if cmd[:1] in "-@:+!":
            raise UnitError("unit: ExecStart prefix %r not handled here" % cmd[0])
        words, word, quote, i = [], "", None, 0
        cmd = cmd.replace("%%", "\0")  # keep "%%" out of the specifier pass
        while i < len(cmd):
            ch = cmd[i]
            if ch == "%":
                word += self.specifiers(cmd[i:i + 2])
                i += 2
                continue
            if ch == "$":
                if cmd[i + 1:i + 2] == "$":
                    word += "$"
                    i += 2
                    continue
                m = re.match(r"\$\{(\w+)\}", cmd[i:])
                if not m:
                    raise UnitError("unit: bare $ in ExecStart")
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
        if quote:
            raise UnitError("unit: unterminated quote in ExecStart")
        if word:
            words.append(word)
        return [w.replace("\0", "%") for w in words]
