#!/bin/bash
# e2e_install: perfconv installed as Debian users install it (issue 35): `make install
# DESTDIR PREFIX` puts each file in its place and `make uninstall` takes them away;
# the man pages render without a warning and hold every option each command's --help
# names (and name none it does not); the bash completion offers the options, formats,
# backends and recordings; both systemd units pass `systemd-analyze verify`; and the
# units' own command lines, run as systemd would run them (their environment file, %i),
# record a program in chunks and send each chunk to a receiver on loopback.
source "$(dirname "$0")/e2e_lib.sh"
at_exit() { kill_pids; }
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
# the build the tests run is the one installed (make check under SANITIZE installs its own)
MK=(make --no-print-directory -s)
[[ $PERFCONV == */build-san/perfconv ]] && MK+=(SANITIZE=address,undefined)

# --- 1. make install, make uninstall ------------------------------------------------
D=$TMP/destdir
if "${MK[@]}" install DESTDIR="$D" PREFIX=/usr >"$TMP/install.log" 2>&1; then
	want="0755 usr/bin/perfconv
0644 usr/share/man/man1/perfconv.1
0644 usr/share/man/man1/perfconv-upload.1
0644 usr/share/man/man1/perfconv-info.1
0644 usr/share/bash-completion/completions/perfconv
0644 usr/lib/systemd/system/perfconv-record@.service
0644 usr/lib/systemd/system/perfconv-upload@.service
0755 usr/libexec/perfconv/perfconv-record
0755 usr/libexec/perfconv/perfconv-upload
0644 usr/share/doc/perfconv/examples/service.conf"
	[ -f build/libperfconv-jvmti.so ] && want="$want
0644 usr/lib/perfconv/libperfconv-jvmti.so"
	got=$(cd "$D" && find . -type f -printf '%m %P\n' | sed 's/^755 /0755 /; s/^644 /0644 /' | sort)
	if [ "$got" = "$(sort <<<"$want")" ] && "$D/usr/bin/perfconv" --version >/dev/null &&
		grep -q '^ExecStart=/usr/libexec/perfconv/perfconv-record %i$' "$D/usr/lib/systemd/system/perfconv-record@.service" &&
		grep -q 'exec "${PERFCONV:-/usr/bin/perfconv}"' "$D/usr/libexec/perfconv/perfconv-upload"; then
		ok "make install DESTDIR PREFIX=/usr: $(wc -l <<<"$got") files in their places, with their modes; the units run /usr/libexec/perfconv's scripts, which run /usr/bin/perfconv"
	else
		bad "make install: $(diff <(sort <<<"$want") <(echo "$got") | tr '\n' ' ')"
	fi
	"${MK[@]}" uninstall DESTDIR="$D" PREFIX=/usr >>"$TMP/install.log" 2>&1
	left=$(find "$D" -type f | sed "s|^$D/||")
	[ -z "$left" ] && ok "make uninstall: no file left" || bad "make uninstall left: $left"
else
	bad "make install failed: $(tail -5 "$TMP/install.log")"
fi

# --- 2. man pages ---------------------------------------------------------------------
P=$TMP/prefix
"${MK[@]}" install PREFIX="$P" >"$TMP/install2.log" 2>&1 || bad "make install PREFIX=$P: $(tail -3 "$TMP/install2.log")"
# the options a --help text defines: what starts each of its option lines, before the
# description (two spaces), e.g. "-i, --input FILE", "--symfs DIR, --kallsyms FILE,"
help_opts() {
	python3 -c '
import re, sys
for line in sys.stdin:
    if re.match(r"^ {2,8}-", line):
        spec = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        print("\n".join(re.findall(r"--[a-z][a-z-]*", spec)))' | sort -u
}
page_text() { MANWIDTH=200 man -l "$1" 2>/dev/null | col -b; }
# the options a page's OPTIONS section defines: its entries' first lines
page_opts() {
	page_text "$1" | awk '/^OPTIONS/ { o = 1; next } /^[A-Z]/ { o = 0 } o && /^       -/' |
		grep -o -- '--[a-z][a-z-]*' | sort -u
}
# missing PAGE_TEXT HELP_OPTS: the options not in the page's text, one per line
missing() { local o; for o in $(cat "$2"); do grep -q -- "$o\\b" "$1" || echo "$o"; done; }
declare -A PAGE=([convert]=perfconv [upload]=perfconv-upload [info]=perfconv-info [diff]=perfconv)
# sub CMD: the subcommand's word (none for a conversion)
sub() { [ "$1" = convert ] || echo "$1"; }
for cmd in convert upload info diff; do
	page=$P/share/man/man1/${PAGE[$cmd]}.1
	"$PERFCONV" $(sub $cmd) --help | help_opts >"$TMP/opts-$cmd"
	warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	page_text "$page" >"$TMP/page-$cmd"
	miss=$(missing "$TMP/page-$cmd" "$TMP/opts-$cmd")
	# an option the page defines that the command does not have (upload and diff take
	# every conversion option too)
	extra=$(comm -23 <(page_opts "$page") <(sort -u "$TMP/opts-$cmd" $([ "$cmd" = upload ] || [ "$cmd" = diff ] && echo "$TMP/opts-convert")))
	if [ -s "$page" ] && [ -z "$warn" ] && [ -z "$miss" ] && [ -z "$extra" ] && [ "$(wc -l <"$TMP/opts-$cmd")" -ge 5 ]; then
		ok "man ${PAGE[$cmd]}: renders without warnings; all $(wc -l <"$TMP/opts-$cmd") options of 'perfconv $(sub $cmd) --help' in it, none it does not have"
	else
		bad "man ${PAGE[$cmd]}: warnings: ${warn:-none}; missing: ${miss:-none}; not in --help: ${extra:-none}"
	fi
done
# the check finds an option left out: the page without --no-cache, --trust-folder
grep -v -- '--no-cache' "$TMP/page-convert" >"$TMP/page-cut"
grep -v -- '--trust-folder' "$TMP/page-upload" >"$TMP/page-cut-upload"
[ "$(missing "$TMP/page-cut" "$TMP/opts-convert")" = --no-cache ] &&
	[ "$(missing "$TMP/page-cut-upload" "$TMP/opts-upload")" = --trust-folder ] &&
	ok "a page without --no-cache (or --trust-folder) is found to lack it" ||
	bad "the check does not find a left-out option: '$(missing "$TMP/page-cut" "$TMP/opts-convert")'"
# man finds the pages where they are installed
MANPATH=$P/share/man man -w perfconv-upload 2>/dev/null | grep -q "^$P/share/man/man1/perfconv-upload.1" &&
	ok "man -w perfconv-upload finds the installed page" || bad "man -w perfconv-upload: $(MANPATH=$P/share/man man -w perfconv-upload 2>&1)"

# the README a newcomer reads in five minutes, every document it sends to there, and
# every man page named in it installed
n=$(wc -l <README.md)
links=$(grep -o '](docs/[A-Za-z_]*\.md)' README.md | sed 's/^](//; s/)$//' | sort -u)
gone=$(for l in $links; do [ -f "$l" ] || echo "$l"; done)
docs_unlinked=$(for f in docs/*.md; do grep -q "]($f)" README.md || [ "$f" = docs/ARCHITECTURE.md ] || echo "$f"; done)
[ "$n" -lt 300 ] && [ -z "$gone" ] && [ -z "$docs_unlinked" ] && [ "$(wc -w <<<"$links")" -ge 6 ] &&
	ok "README.md: $n lines (under 300), links to $(wc -w <<<"$links") documents in docs/, all there, none unlinked" ||
	bad "README.md: $n lines; links to missing: ${gone:-none}; docs not linked: ${docs_unlinked:-none}"

# --- 3. bash completion ---------------------------------------------------------------
# complete WORDS...: what the completion offers for the last word (empty: a new word)
complete_words() {
	(cd "$TMP/files" && bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_perfconv; printf "%s\n" "${COMPREPLY[@]}"' _ "$P/share/bash-completion/completions/perfconv" "$@") | sort -u
}
mkdir -p "$TMP/files/rec.d"
touch "$TMP/files/perf.data" "$TMP/files/perf.data.2026120512000000" "$TMP/files/web.data" "$TMP/files/notes.txt"
formats=$("$PERFCONV" --help | awk '/^Formats:/ { f = 1; next } f && /^  [a-z]/ { print $1 }' | sort)
backends=$("$PERFCONV" upload --help | grep -o -- '--to [a-z|]*' | head -1 | cut -d' ' -f2 | tr '|' '\n' | sort)
[ "$(complete_words perfconv -f '')" = "$formats" ] && [ "$(complete_words perfconv --format s)" = "$(grep '^s' <<<"$formats")" ] &&
	ok "completion after -f: the $(wc -l <<<"$formats") formats of --help ($(echo $formats))" ||
	bad "completion after -f: '$(complete_words perfconv -f '' | tr '\n' ' ')', --help's: $(echo $formats)"
[ "$(complete_words perfconv upload --to '')" = "$backends" ] &&
	ok "completion after --to: the backends of upload --help ($(echo $backends))" ||
	bad "completion after --to: '$(complete_words perfconv upload --to '' | tr '\n' ' ')', --help's: $(echo $backends)"
for cmd in convert upload info diff; do
	offered=$(complete_words perfconv $(sub $cmd) --)
	miss=$(comm -23 "$TMP/opts-$cmd" <(echo "$offered"))
	[ -z "$miss" ] && ok "completion of 'perfconv $(sub $cmd) --': every option of its --help ($(wc -l <"$TMP/opts-$cmd"))" ||
		bad "completion of 'perfconv $(sub $cmd) --' lacks: $(echo $miss)"
done
got=$(complete_words perfconv diff -f '' | tr '\n' ' ')
[ "$got" = "folded pprof svg top " ] && "$PERFCONV" diff --help | tr '\n' ' ' | grep -q 'folded:.*top:.*pprof:.*svg:' &&
	ok "completion after diff -f: the formats of diff --help ($got)" || bad "completion after diff -f: '$got'"
got=$(complete_words perfconv -i '' | tr '\n' ' ')
[ "$got" = "perf.data perf.data.2026120512000000 rec.d web.data " ] &&
	ok "completion after -i: recordings and directories ($got), not notes.txt" || bad "completion after -i: '$got'"
got=$(complete_words perfconv '' | tr '\n' ' ')
[ "$got" = "diff info perf.data perf.data.2026120512000000 rec.d upload web.data " ] &&
	ok "completion of the first word: the subcommands and recordings" || bad "completion of the first word: '$got'"

# --- 4. the systemd units -----------------------------------------------------------
U=$P/lib/systemd/system
if command -v systemd-analyze >/dev/null; then
	for u in record upload; do
		# a template is verified as an instance of it
		cp "$U/perfconv-$u@.service" "$U/perfconv-$u@web.service"
		if out=$(MANPATH=$P/share/man: systemd-analyze verify "$U/perfconv-$u@web.service" 2>&1) && [ -z "$out" ]; then
			ok "systemd-analyze verify perfconv-$u@.service: accepted (its commands and man page found)"
		else
			bad "systemd-analyze verify perfconv-$u@.service: $out"
		fi
		rm -f "$U/perfconv-$u@web.service"
	done
else
	skip "systemd-analyze is not installed (Debian's systemd)"
fi

# --- 5. the units' command lines, as systemd runs them --------------------------------
# the chunks in a folder, as the watcher knows them (perf.data.unreadable is not one)
nchunks() { ls "$1" 2>/dev/null | grep -c '^perf\.data\.[0-9]\{8,\}$'; }
no_chunks() { [ "$(nchunks "$1")" = 0 ]; }
chunks_at_least() { [ "$(nchunks "$1")" -ge "$2" ]; } # DIR N
# DIR's newest chunk is named for a centisecond that has passed: perf names the chunk it
# ends with then for a later one (within the same, it would replace that chunk)
past_newest() {
	local newest
	newest=$(ls "$1" 2>/dev/null | sed -n 's/^perf\.data\.\([0-9]\{16\}\)$/\1/p' | sort | tail -1)
	[[ $(date +%Y%m%d%H%M%S%2N) > $newest ]]
}
# busy STOPFILE: a program busy until STOPFILE exists (not for a fixed time: perf may
# take seconds to start on a loaded machine, and must still find it running); $prog
busy() {
	rm -f "$1"
	sh -c 'while [ ! -e "$1" ]; do :; done' sh "$1" &
	prog=$!
	echo "$prog" >"$TMP/prog.pid"
}
# unit_cmd UNIT KEY INSTANCE: the command line of KEY= (ExecStart, ExecStopPost), %i put in
unit_cmd() { sed -n "s/^$2=//p" "$U/$1" | sed 's/^[-+@!:]*//; s/%i/'"$3"'/g'; }
# as_unit CONF CMD...: CMD with the unit's environment file (KEY=VALUE lines, systemd's
# quotes) and nothing else of this shell's but PATH, SIGINT as systemd leaves it (a
# background job's is ignored, and the recorder's script stops perf on it). It execs:
# run it with & (the job's pid is then the command's, as systemd's main pid) or in ( ).
as_unit() {
	local conf=$1
	shift
	exec env -i --default-signal=INT PATH="$PATH" bash -c 'set -a; source "$1"; set +a; shift; exec "$@"' _ "$conf" "$@"
}
if [ "$(id -u)" = 0 ] && perf record -q -e cpu-clock -o "$TMP/probe.data" true 2>/dev/null && receivers_ready; then
	start_receiver sink pyroscope
	S=$TMP/spool
	# the program: busy until told to stop
	busy "$TMP/stop1"
	cat >"$TMP/web.conf" <<EOF
# as /etc/perfconv/web.conf would say
PERFCONV_TARGET=pidfile:$TMP/prog.pid
PERFCONV_CALL_GRAPH=fp
PERFCONV_JIT=yes
PERFCONV_FREQUENCY=499
PERFCONV_CHUNK=1s
PERFCONV_SPOOL=$S
PERFCONV_CONFDIR=$TMP
PERFCONV_BACKEND=pyroscope
PERFCONV_URL=$URL_sink
PERFCONV_LABELS="env=test team=perf"
PERFCONV_UPLOAD_ARGS="--reject-older-than 0"
EOF
	sed -i '/--reject-older-than/d' "$TMP/web.conf"
	rec=$(unit_cmd perfconv-record@.service ExecStart web)
	stop=$(unit_cmd perfconv-record@.service ExecStopPost web)
	up=$(unit_cmd perfconv-upload@.service ExecStart web)
	# ExecStart; KillSignal=SIGINT while the program still runs, once perf has named
	# a chunk (however long it took to start); ExecStopPost
	for try in 1 2 3; do
		as_unit "$TMP/web.conf" $rec 2>"$TMP/rec.err" &
		rpid=$!
		wait_for 60 chunks_at_least "$S/web" 1 && break
		[ $try = 3 ] && break
		lost_alarm $try
		kill -INT $rpid
		wait $rpid
		rm -f "$S/web"/perf.data*
	done
	wait_for 120 past_newest "$S/web"
	kill -INT $rpid
	wait $rpid
	# perf ends by the signal it was stopped with (raised again): 130 is SIGINT's, which
	# systemd counts as a clean stop
	rrc=$?
	(as_unit "$TMP/web.conf" $stop 2>>"$TMP/rec.err")
	touch "$TMP/stop1"
	wait $prog
	chunks=$(nchunks "$S/web")
	plain=$( [ -e "$S/web/perf.data" ] && echo "perf.data left" || echo "no perf.data left")
	if [ "$rrc" = 130 ] && [ "$chunks" -ge 2 ] && [ ! -e "$S/web/perf.data" ] &&
		grep -q "perf record -e cpu-clock -p $prog -g -k 1 -F 499 --switch-output=1s -o $S/web/perf.data" "$TMP/rec.err"; then
		ok "perfconv-record@web: perf record -p (from the pid file) -g -k 1 -F 499, $chunks chunks, the last one named by perf at SIGINT"
	else
		bad "perfconv-record@web: exit $rrc, $chunks chunks, $plain: $(tail -5 "$TMP/rec.err")"
	fi
	# perf killed (systemd's SIGKILL after TimeoutStopSec, the machine's power): the
	# perf.data it left has no header, nothing can read it; ExecStopPost says so and
	# keeps it aside, not as a chunk the sender would fail on every hour. Killed in the
	# file perf opened at a switch (the first one has a header from the start), once it
	# holds data, and not during the next switch: chunks of 3 s here, the kill within
	# a moment of the first one named.
	sed 's/^PERFCONV_CHUNK=.*/PERFCONV_CHUNK=3s/' "$TMP/web.conf" >"$TMP/web-kill.conf"
	busy "$TMP/stop2"
	before=$(nchunks "$S/web")
	as_unit "$TMP/web-kill.conf" $rec 2>"$TMP/rec2.err" &
	rpid=$!
	wait_for 120 chunks_at_least "$S/web" $((before + 1))
	wait_for 120 test -s "$S/web/perf.data"
	# (the script and perf, as systemd kills every process of the unit)
	kill -KILL $rpid $(pgrep -P $rpid -x perf)
	{ wait $rpid; } 2>/dev/null
	had=$( [ -s "$S/web/perf.data" ] && echo yes)
	(as_unit "$TMP/web-kill.conf" $stop 2>>"$TMP/rec2.err")
	touch "$TMP/stop2"
	wait $prog
	chunks=$(nchunks "$S/web")
	[ "$had" = yes ] && [ ! -e "$S/web/perf.data" ] && [ -s "$S/web/perf.data.unreadable" ] &&
		grep -q "perf was killed before it wrote its header: the [0-9]* bytes it recorded since its last chunk cannot be read; kept as perf.data.unreadable, not sent" "$TMP/rec2.err" &&
		ok "perf killed: ExecStopPost says its perf.data cannot be read and keeps it aside as perf.data.unreadable" ||
		bad "perf killed: perf.data there: ${had:-no}; after: $(ls "$S/web" | tr '\n' ' '); $(tail -2 "$TMP/rec2.err")"
	# a perf.data perf finished but did not name (an older perf; perf record without
	# --switch-output): named as a chunk by the next ExecStart (here ExecStopPost), sent
	cp "$(ls "$S"/web/perf.data.[0-9]* | head -1)" "$S/web/perf.data"
	(as_unit "$TMP/web.conf" $stop 2>"$TMP/rec3.err")
	[ ! -e "$S/web/perf.data" ] && [ "$(nchunks "$S/web")" = $((chunks + 1)) ] &&
		grep -q "the chunk perf was writing when it stopped, named perf.data.[0-9]* to be sent" "$TMP/rec3.err" &&
		ok "a finished perf.data left by perf is named as a chunk ($(grep -o 'named perf.data.[0-9]*' "$TMP/rec3.err")) and goes to the sender" ||
		bad "a finished perf.data: $(ls "$S/web" | tr '\n' ' '); $(cat "$TMP/rec3.err")"
	chunks=$(nchunks "$S/web")
	# the samples perf recorded in them
	recorded=0
	for c in "$S"/web/perf.data.[0-9]*; do
		recorded=$((recorded + $(perf script -i "$c" -F tid 2>/dev/null | wc -l)))
	done
	# ExecStart of the sender, until every chunk is sent; SIGTERM as systemctl stop
	as_unit "$TMP/web.conf" $up 2>"$TMP/up.err" &
	upid=$!
	PIDS+=("$upid")
	# (a function: the count is taken at each try, not once)
	wait_for 120 no_chunks "$S/web"
	kill -TERM $upid
	wait $upid
	urc=$?
	sent=$(nchunks "$S/web/sent")
	acc=$(python3 tests/receivers/logq.py "$LOG_sink" count accepted)
	labels=$(python3 tests/receivers/logq.py "$LOG_sink" last labels)
	got=$(python3 -c 'import json, sys; print(sum(json.loads(l).get("samples", 0) for l in open(sys.argv[1])
		if json.loads(l)["outcome"] == "accepted"))' "$LOG_sink")
	if [ "$urc" = 0 ] && [ "$sent" = "$chunks" ] && [ "$acc" = "$chunks" ] && [ "$got" = "$recorded" ] &&
		[[ $labels == *'"service_name": "web"'* ]] && [[ $labels == *'"env": "test"'* ]] && [[ $labels == *'"team": "perf"'* ]]; then
		ok "perfconv-upload@web: each of the $chunks chunks arrived ($acc profiles, $got samples, as perf recorded), service web, env=test, team=perf; moved to sent/; SIGTERM ends it with 0"
	else
		bad "perfconv-upload@web: exit $urc, $sent of $chunks sent, $acc accepted, $got samples of $recorded, labels $labels: $(ls -R "$S/web" | tr "\n" " ") $(grep -v "sent to" "$TMP/up.err" | tail -5)"
	fi
	# what is not right is said before anything runs
	printf '%s\n' PERFCONV_BACKEND=pyroscope "PERFCONV_CONFDIR=$TMP" >"$TMP/bad.conf"
	cp "$TMP/bad.conf" "$TMP/web.conf"
	out=$( (as_unit "$TMP/bad.conf" "$P/libexec/perfconv/perfconv-record" ../etc) 2>&1); r1=$?
	out2=$( (as_unit "$TMP/bad.conf" "$P/libexec/perfconv/perfconv-record" web) 2>&1); r2=$?
	[ $r1 = 2 ] && [ $r2 = 2 ] && [[ $out == *'instance "../etc": only'* ]] && [[ $out2 == *'PERFCONV_TARGET is not set'* ]] &&
		ok "an instance with a slash, and a configuration without a target, are refused: '$out'" ||
		bad "bad instance or configuration: $r1 '$out', $r2 '$out2'"
else
	skip "the units' commands: need root, perf record and the receivers"
fi
finish e2e-install
