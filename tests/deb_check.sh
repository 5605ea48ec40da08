#!/bin/bash
# deb_check: the Debian package as a Debian 12 user gets it (issue 35, item 5; .ci/run
# runs it in its fresh root after the README's commands): `make deb` builds it with
# Debian's tools and lintian passes it without errors; it installs with apt (its
# dependencies from the archive), its perfconv converts a bundled recording to the same
# bytes as the build's, `man perfconv` and the completion work, systemd-analyze
# verifies its units and none is enabled; /etc/perfconv is there, root's alone, and the
# README's and the man page's recipes for an instance run in it as written; `apt-get
# purge` leaves none of its files, nothing its services made, no /etc/perfconv, and no
# enable link of an instance (its prerm). Run as root on a machine where perfconv is
# not installed.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export DEBIAN_FRONTEND=noninteractive

if dpkg-query -W -f '${Status}' perfconv 2>/dev/null | grep -q "install ok installed"; then
	echo "deb_check: perfconv is installed here already: run it where it is not" >&2
	exit 1
fi
if make --no-print-directory deb >"$TMP/deb.log" 2>&1; then
	ok "make deb: $(ls build/deb/*.deb | tr '\n' ' '); lintian: $(grep -c '^E:' build/deb/lintian.log) errors, $(grep -c '^W:' build/deb/lintian.log) warnings"
else
	bad "make deb: $(tail -15 "$TMP/deb.log")"
	echo "deb_check: $pass passed, $fail failed"
	exit 1
fi
DEB=$(ls build/deb/perfconv_*.deb)
version=$(dpkg-deb -f "$DEB" Version)
if apt-get install -y -q "./$DEB" >"$TMP/apt.log" 2>&1; then
	ok "apt-get install ./$DEB: $(dpkg-deb -f "$DEB" Depends)"
else
	bad "apt-get install: $(tail -5 "$TMP/apt.log")"
fi
dpkg -L perfconv | sort >"$TMP/files"

[ "$(perfconv --version)" = "perfconv $version" ] && [ "$(command -v perfconv)" = /usr/bin/perfconv ] &&
	ok "/usr/bin/perfconv --version: $(perfconv --version)" || bad "perfconv --version: '$(perfconv --version 2>&1)', package $version"
./perfconv -q -i testdata/mt-g.data -o "$TMP/built.pb.gz"
/usr/bin/perfconv -q -i testdata/mt-g.data -o "$TMP/installed.pb.gz"
cmp -s "$TMP/built.pb.gz" "$TMP/installed.pb.gz" && [ -s "$TMP/installed.pb.gz" ] &&
	ok "the installed perfconv converts testdata/mt-g.data to the same pprof as the build's ($(stat -c %s "$TMP/installed.pb.gz") bytes)" ||
	bad "the installed perfconv's pprof differs from the build's"
page=$(MANWIDTH=80 man perfconv 2>"$TMP/man.err" | col -b)
[[ $page == *"perfconv - convert Linux perf recordings"* ]] && [ ! -s "$TMP/man.err" ] &&
	[ "$(man -w perfconv-upload)" = /usr/share/man/man1/perfconv-upload.1.gz ] &&
	ok "man perfconv, man perfconv-upload: installed and shown" || bad "man perfconv: $(head -3 "$TMP/man.err") $(man -w perfconv-upload 2>&1)"
got=$(bash -c 'source /usr/share/bash-completion/completions/perfconv
	COMP_WORDS=(perfconv upload --to ""); COMP_CWORD=3; _perfconv; echo "${COMPREPLY[*]}"')
[ "$got" = "datadog pyroscope parca otlp" ] && ok "completion after upload --to: $got" || bad "completion after --to: '$got'"
for u in record upload; do
	cp "/lib/systemd/system/perfconv-$u@.service" "$TMP/perfconv-$u@web.service"
	out=$(systemd-analyze verify "$TMP/perfconv-$u@web.service" 2>&1)
	[ -z "$out" ] && ok "systemd-analyze verify perfconv-$u@.service (installed)" || bad "systemd-analyze verify perfconv-$u@: $out"
done
# the JVMTI agent: in the package, and a JVM that loads it writes its jitdump
agent=/usr/lib/perfconv/libperfconv-jvmti.so
if grep -qx "$agent" "$TMP/files" && command -v java >/dev/null; then
	mkdir -p "$TMP/jit"
	java -agentpath:"$agent"=dir="$TMP/jit" -version >/dev/null 2>"$TMP/java.err"
	dump=$(ls "$TMP"/jit/jit-*.dump 2>/dev/null | head -1)
	[ -n "$dump" ] && [ "$(head -c 4 "$dump")" = DTiJ ] && [ "$(stat -c %s "$dump")" -gt 40 ] &&
		ok "the package's JVMTI agent ($agent): java -version with it wrote $(basename "$dump") ($(stat -c %s "$dump") bytes)" ||
		bad "the package's JVMTI agent wrote no jitdump: $(tail -2 "$TMP/java.err")"
else
	bad "the JVMTI agent is not in the package ($agent), or no java to load it"
fi
# /etc/perfconv: shipped root's alone (the tokens and keys go there), and the README's
# and the man page's recipes for an instance work in it as they are written
st=$(stat -c '%U:%G %a' /etc/perfconv 2>/dev/null)
[ "$st" = "root:root 700" ] && grep -qx /etc/perfconv "$TMP/files" &&
	ok "/etc/perfconv: in the package, root:root 0700" || bad "/etc/perfconv: '${st:-not there}'"
readme_cmds=$(awk '/^## Continuous profiling on a fleet/ { s = 1 } s && /^```sh/ { b = 1; next } b && /^```/ { exit } b' README.md |
	sed 's/ *#.*//' | grep '^install ')
man_cmds=$(MANWIDTH=200 man perfconv-upload 2>/dev/null | col -b | awk '/^SERVICES/ { s = 1; next } /^[A-Z]/ { s = 0 } s' |
	sed 's/^[[:space:]]*//' | grep '^install ')
if [ "$(wc -l <<<"$readme_cmds")" = 2 ] && [ -n "$man_cmds" ] && bash -e <<<"$readme_cmds" 2>"$TMP/recipe.err" &&
	bash -e <<<"$(sed 's|/etc/perfconv/web|/etc/perfconv/man|' <<<"$man_cmds")" 2>>"$TMP/recipe.err" &&
	[ "$(stat -c '%U %a' /etc/perfconv/web.conf /etc/perfconv/web.key /etc/perfconv/man.conf | sort -u)" = "root 600" ]; then
	ok "the README's recipe ($(wc -l <<<"$readme_cmds") install lines) and the man page's ($(wc -l <<<"$man_cmds")) run as written: web.conf, web.key, root's, 0600"
else
	bad "the recipes: README: '$readme_cmds'; man: '$man_cmds': $(cat "$TMP/recipe.err"); $(ls -l /etc/perfconv 2>&1)"
fi
# the installed sender with that configuration as systemd gives it (perfconv stood in
# for by true), then with it readable by all: said, with the chmod
upload_unit() {
	env -i PATH=/usr/bin:/bin bash -c 'set -a; source /etc/perfconv/web.conf; set +a; PERFCONV=/bin/true exec /usr/libexec/perfconv/perfconv-upload web' 2>&1
}
quiet=$(upload_unit)
chmod 644 /etc/perfconv/web.conf
loud=$(upload_unit)
[ -z "$quiet" ] && [[ $loud == "perfconv-upload: /etc/perfconv/web.conf: warning: readable by others (mode 644)"*"(chmod 600 /etc/perfconv/web.conf)" ]] &&
	ok "the installed perfconv-upload: nothing said of the recipe's 0600 configuration; of one made 0644: $loud" ||
	bad "the installed perfconv-upload: at 0600 said '$quiet'; at 0644 '$loud'"
enabled=$(find /etc/systemd/system -name 'perfconv*' 2>/dev/null)
[ -z "$enabled" ] && ok "no unit enabled or started by the install" || bad "units enabled: $enabled"
# the spool the units write: shipped (their ReadWritePaths= needs it), root's alone
st=$(stat -c '%U:%G %a' /var/spool/perfconv 2>/dev/null)
[ "$st" = "root:root 700" ] && grep -qx /var/spool/perfconv "$TMP/files" &&
	ok "/var/spool/perfconv: in the package, root:root 0700" || bad "/var/spool/perfconv: '${st:-not there}'"
# an instance of each enabled as the recipe enables them (no systemd runs here: the
# links alone; the booted stage sees the services stopped): the purge leaves none
systemctl enable perfconv-record@web perfconv-upload@web >"$TMP/enable.log" 2>&1
nlinks=$(find /etc/systemd/system -name 'perfconv-*@web.service' | wc -l)

# what the services make, for the purge to take away
mkdir -p /var/spool/perfconv/web/sent /var/cache/perfconv/symbols
touch /var/spool/perfconv/web/perf.data.2026120508000000 /var/cache/perfconv/symbols/x
if apt-get purge -y -q perfconv >"$TMP/purge.log" 2>&1; then
	left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <"$TMP/files")
	leftdirs=$(while read -r f; do case $f in /usr/libexec/perfconv | /usr/lib/perfconv | /usr/share/doc/perfconv*) [ -e "$f" ] && echo "$f";; esac; done <"$TMP/files")
	links=$(find /etc/systemd/system -name 'perfconv-*@*.service' 2>/dev/null)
	if [ -z "$left$leftdirs" ] && [ ! -e /var/spool/perfconv ] && [ ! -e /var/cache/perfconv ] && [ ! -e /etc/perfconv ] && ! command -v perfconv >/dev/null &&
		! dpkg-query -W perfconv >/dev/null 2>&1 && [ "$nlinks" -ge 2 ] && [ -z "$links" ]; then
		ok "apt-get purge perfconv: none of its $(grep -c . "$TMP/files") paths left, nor the spool and cache its services made, nor /etc/perfconv with the instance's configuration and key, nor the $nlinks enable links of the instances (prerm)"
	else
		bad "after purge: files $left $leftdirs; spool $(ls -d /var/spool/perfconv 2>/dev/null); cache $(ls -d /var/cache/perfconv 2>/dev/null); $(ls -d /etc/perfconv 2>/dev/null); enable links before $nlinks ($(cat "$TMP/enable.log")), after: $links"
	fi
else
	bad "apt-get purge: $(tail -5 "$TMP/purge.log")"
fi
echo "deb_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
