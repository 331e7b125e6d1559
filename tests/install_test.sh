#!/usr/bin/env bash
# cmake --install into a temporary prefix puts every file where README and
# the man pages say, and the installed server works from there.
# Usage: install_test.sh BUILD_DIR PROGRAM... (the programs CMake installs)
set -u
build=$1
shift
pass=0
fail=0
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
has() { # has PATH [-x]: PATH (under the prefix) is a non-empty file
	if [ -s "$prefix/$1" ] && { [ "${2:-}" != -x ] || [ -x "$prefix/$1" ]; }; then
		ok
	else
		bad "not installed: $1"
	fi
}

if ! cmake --install "$build" --prefix "$prefix" >"$prefix/install.log" 2>&1; then
	cat "$prefix/install.log"
	echo "FAIL cmake --install"
	exit 1
fi

for p in "$@"; do has "bin/$p" -x; done
has share/man/man1/sopra-server.1
for p in sopra-bot sopra-client; do
	case " $* " in *" $p "*) has "share/man/man6/$p.6" ;; esac
done
data=share/sopra-server
has $data/config.schema.json
n=0
for f in "$prefix"/$data/example*.json; do [ -s "$f" ] && n=$((n + 1)); done
[ "$n" -ge 3 ] && ok || bad "$data: $n example configurations, want 3 or more"
doc=share/doc/sopra-server
has $doc/LICENSE
has $doc/README.md
has $doc/docs/protocol.md

# the installed documents' relative links lead to installed files: the
# README's to docs/*.md and the tools' READMEs, theirs to each other
for f in $(cd "$prefix/$doc" && find . -name '*.md' | sort); do
	while IFS= read -r target; do
		case "$target" in /* | *://*) continue ;; esac
		if [ -e "$(dirname "$prefix/$doc/$f")/$target" ]; then
			ok
		else
			bad "$doc/${f#./} links to $target, which is not installed"
		fi
	done < <(grep -o '](\([^)#:]*\)[)#]' "$prefix/$doc/$f" | sed 's/^](//; s/[)#]$//' | sort -u)
done

# the installed man pages name the files where this prefix put them: no
# default-prefix path is left, and every path under the prefix exists
for page in "$prefix"/share/man/man[16]/*; do
	if grep -q '/usr/local/share' "$page"; then
		bad "$page names /usr/local/share, not the prefix $prefix"
	else
		ok
	fi
	while IFS= read -r path; do
		# a path may be a glob (example*.json)
		if compgen -G "$path" >/dev/null; then
			ok
		else
			bad "$page names $path, which is not installed"
		fi
	done < <(sed 's/\\%//g' "$page" | grep -o "$prefix/[^ ]*" | sort -u)
done
# nothing else in bin/: tests, benchmarks and fuzzers are not installed
extra=$(cd "$prefix/bin" && ls | grep -vxF -f <(printf '%s\n' "$@"))
[ -z "$extra" ] && ok || bad "bin/ also holds: $extra"

# the installed programs run; every example is valid, also the one whose
# "$schema" names the schema next to it
"$prefix/bin/sopra-server" --version | grep -q '^sopra-server ' && ok || bad "sopra-server --version"
for f in "$prefix"/$data/example*.json; do
	out=$("$prefix/bin/sopra-server" --check --config "$f" 2>&1)
	[ "$out" = "$f: ok" ] && ok || bad "--check $f: $out"
	s=$(sed -n 's/^ *"\$schema": *"\(.*\)",\{0,1\}$/\1/p' "$f")
	if [ -n "$s" ]; then
		[ -s "$(dirname "$f")/$s" ] && ok || bad "$f: its \$schema $s is not installed next to it"
	fi
done
if command -v man >/dev/null; then
	MANPATH="$prefix/share/man" man -w sopra-server >/dev/null 2>&1 && ok ||
		bad "man -w sopra-server does not find the installed page"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
