#!/bin/bash
# booted: the fleet recipe in a booted Debian 12 (issue 44, acceptance 1; .ci/run's
# stage after the fresh root's, `make check-booted` by hand).
#
#   bash tests/booted.sh ROOTDIR DEB
#
# ROOTDIR (made, then removed; it must not exist or be empty) gets a Debian 12 root made
# by .ci/mmdebstrap as CI's fresh root is, with systemd, dbus, linux-perf, iproute2,
# nodejs (the receiver) and what DEB depends on and recommends; it is booted under its
# own systemd (systemd-nspawn -b, tests/booted/container.sh). In it: web.service (dd,
# busy in user space and in the kernel) runs, tests/receivers/receiver.mjs stands in
# for Pyroscope on 127.0.0.1:4040, and the README's recipe for a fleet -- the sh block
# under its "fleet recipe" marker, extracted here, run as written -- installs DEB and
# enables perfconv-record@web and perfconv-upload@web. Then, each a named ok/FAIL line:
# both units active (and never restarted); their systemd-analyze security scores;
# profiles with samples at the receiver; kernel frames named; after web.service
# restarts, profiles with samples still (the recorder following it, not restarted);
# the journal of a quiet minute at most one line a chunk for each unit; in that
# minute, a mistyped instance failed and not restarted, and a target not running
# waited for quietly, then recorded; the receiver down (said as nothing answering) and
# back, every chunk's samples at the receiver; the key through LoadCredential=;
# `apt-get purge` with both running leaves no process, no unit, no enable link
# (tests/booted/CHECKS.md: what the units branch asked of it). Chunks of 5 s
# (PERFCONV_CHUNK, set by tests/booted/editor with the edit the recipe names), so that
# all of it takes a few minutes.
# BOOTED_ROOT_TAR=FILE.tar: the root unpacked from FILE (made there by .ci/mmdebstrap
# when missing) instead of made anew: for runs by hand, not CI's.
# Waits are on conditions with deadlines; the quiet minute is a measured window. The
# container is powered off, unmounted, its cgroups and ROOTDIR removed however it ends.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -eq 2 ] || { echo "usage: bash tests/booted.sh ROOTDIR DEB" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "FAIL booted: needs root (systemd-nspawn, mmdebstrap)"; exit 1; }
ROOT=$(realpath -m "$1")
DEB=$(realpath "$2")
if [ -e "$ROOT" ] && [ -n "$(ls -A "$ROOT")" ]; then
	echo "booted: $ROOT is not empty: give a folder to make (it is removed at the end)" >&2
	exit 2
fi
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
T0=$SECONDS
took() { echo "booted: $1 in $((SECONDS - ${2:-T0})) s"; }
WORK=$(mktemp -d /var/tmp/perfconv-booted-work.XXXXXX)
# shellcheck source=tests/booted/container.sh
. tests/booted/container.sh
finish() {
	stop_ct
	rm -rf --one-file-system "$ROOT" "$WORK"
	echo "booted: $pass passed, $fail failed, in $((SECONDS - T0)) s"
}
# shellcheck disable=SC2154 # rc is the trap's own
trap 'rc=$?; finish; [ $fail -eq 0 ] && [ $rc -eq 0 ]; exit $?' EXIT
trap 'echo "booted: interrupted"; exit 130' INT TERM

command -v systemd-nspawn >/dev/null || apt-get install -y -q systemd-container >/dev/null
# the receiver's pprof decoder (tests/browser's npm packages)
[ -f tests/browser/node_modules/pprof-format/package.json ] ||
	(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) >"$WORK/npm.log" 2>&1 ||
	{ bad "npm ci in tests/browser (the receiver's pprof-format): $(tail -3 "$WORK/npm.log")"; exit 1; }

# --- The README's recipe, as it is written -------------------------------------------
awk '/<!-- fleet recipe:/ { m = 1; next } m && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b' README.md >"$WORK/recipe.sh"
if [ ! -s "$WORK/recipe.sh" ] || ! grep -q 'systemctl enable' "$WORK/recipe.sh"; then
	bad "the README's fleet recipe: no sh block with systemctl enable after its <!-- fleet recipe: --> marker"
	exit 1
fi

# --- The root, booted ------------------------------------------------------------------
t=$SECONDS
pkgs=systemd,systemd-sysv,dbus,linux-perf,iproute2,nodejs
for f in Depends Recommends; do
	# each dependency's first alternative, by name
	for p in $(dpkg-deb -f "$DEB" "$f" | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g'); do
		pkgs=$pkgs,$p
	done
done
mkdir -p "$ROOT"
if [ -n "${BOOTED_ROOT_TAR:-}" ]; then
	[ -s "$BOOTED_ROOT_TAR" ] || .ci/mmdebstrap "$BOOTED_ROOT_TAR" --include="$pkgs" >"$WORK/mmdebstrap.log" 2>&1 ||
		{ bad "mmdebstrap: $(tail -5 "$WORK/mmdebstrap.log")"; exit 1; }
	tar -C "$ROOT" -xf "$BOOTED_ROOT_TAR"
elif ! .ci/mmdebstrap "$ROOT" --include="$pkgs" >"$WORK/mmdebstrap.log" 2>&1; then
	bad "mmdebstrap: $(tail -5 "$WORK/mmdebstrap.log")"
	exit 1
fi
took "root made (mmdebstrap --include=$pkgs)" $t
# what the tests bring: the receiver and its decoder, web.service, the recipe's stand-ins
B=$ROOT/root/booted
mkdir -p "$B/tests/receivers" "$B/tests/booted" "$B/tests/browser/node_modules" "$B/bin" "$B/saved" \
	"$ROOT/root/recipe/build/deb"
cp tests/receivers/receiver.mjs tests/receivers/rules.mjs "$B/tests/receivers/"
cp tests/booted/query.mjs "$B/tests/booted/"
cp tests/browser/package.json "$B/tests/browser/"
cp -r tests/browser/node_modules/pprof-format "$B/tests/browser/node_modules/"
cp tests/booted/editor tests/booted/make "$B/bin/"
cp tests/booted/web.service "$ROOT/etc/systemd/system/"
cp "$DEB" "$ROOT/root/recipe/build/deb/"
cp "$WORK/recipe.sh" "$ROOT/root/recipe/recipe.sh"
echo "booted-$$" >"$ROOT/etc/hostname"

t=$SECONDS
if ! boot_ct; then
	bad "systemd-nspawn -b: the container did not boot: $(tail -5 "$WORK/console.log")"
	exit 1
fi
took "booted: $(in_ct systemctl --version | head -1), $(in_ct perf version)" $t

# receiver: the receiver started as a service of the container's, on 127.0.0.1:4040
receiver() {
	rm -f "$B/receiver.port"
	in_ct systemd-run --quiet --collect --unit=booted-receiver -p WorkingDirectory=/root/booted \
		node tests/receivers/receiver.mjs --backend pyroscope --log /root/booted/receiver.log \
		--port-file /root/booted/receiver.port --port 4040 --save /root/booted/saved --reject-older-than 0 &&
		wait_until 60 test -s "$B/receiver.port"
}
accepted=0 with_samples=0 empty=0 samples=0 refused=0 twice=0 PROFILES=
# profiles [SINCE]: what reached the receiver (tests/booted/query.mjs), as shell variables
# (accepted, with_samples, empty, samples, twice...)
profiles() {
	local v
	v=$(in_ct node /root/booted/tests/booted/query.mjs --sh profiles /root/booted/receiver.log "${1:-0}") || return 1
	eval "$v"
	# shellcheck disable=SC2154 # set by the eval
	PROFILES=$json
}
units_state() { in_ct systemctl is-active perfconv-record@web perfconv-upload@web | tr '\n' ' ' | sed 's/ $//'; }
journal() { # UNIT [journalctl options]: the unit's journal, messages only
	local u=$1
	shift
	in_ct journalctl -q -o cat -u "$u" "$@"
}
say_journal() { # the two units' last lines, for a FAIL's detail
	local u
	for u in record upload; do
		echo "  perfconv-$u@web: $(journal "perfconv-$u@web" -n 4 | tr '\n' '|')"
	done
}

in_ct systemctl start web.service || bad "web.service did not start"
receiver || bad "the receiver did not start on 127.0.0.1:4040: $(in_ct journalctl -q -o cat -u booted-receiver | tail -3)"

# --- the recipe --------------------------------------------------------------------------
sed 's/^/  recipe: /' "$WORK/recipe.sh"
t=$SECONDS
if run_ct -p WorkingDirectory=/root/recipe -E PATH=/root/booted/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	-E EDITOR=/root/booted/bin/editor -E DEBIAN_FRONTEND=noninteractive \
	bash -e recipe.sh </dev/null >"$WORK/recipe.log" 2>&1; then
	ok "the README's fleet recipe ran as written ($(grep -c . "$WORK/recipe.sh") lines; \$EDITOR: $(in_ct grep -E '^PERFCONV_(TARGET|BACKEND|URL|CHUNK)=' /etc/perfconv/web.conf | tr '\n' ' '))"
else
	bad "the README's fleet recipe: $(tail -5 "$WORK/recipe.log")"
fi
took "recipe" $t

# --- both units active, and profiles with samples at the receiver ----------------------
# active, and still so with no restart once two profiles have come (a unit whose process
# fails is active a moment between its restarts)
both_active() { [ "$(units_state)" = "active active" ]; }
restarts() { in_ct systemctl show -P NRestarts perfconv-record@web perfconv-upload@web | grep . | tr '\n' ' ' | sed 's/ $//'; }
wait_until 20 both_active
act_at=$SECONDS
t=$SECONDS
got_samples() { profiles && [ "$with_samples" -ge "$1" ]; }
if wait_until 60 got_samples 2; then flowing=1; else flowing=0; fi
if both_active && [ "$(restarts)" = "0 0" ]; then
	ok "perfconv-record@web and perfconv-upload@web active, and $((SECONDS - act_at)) s later still, never restarted"
else
	bad "the units after the recipe: $(units_state) (record, upload), restarts $(restarts): $(in_ct systemctl status --no-pager -n 0 perfconv-record@web perfconv-upload@web | grep -E 'Active:|Process:' | tr -s ' ' | tr '\n' '|')"
	say_journal
fi
# the hardening as the running systemd scores it (issue 44, acceptance 2)
for u in upload:2.5 record:4.5; do
	score=$(in_ct systemd-analyze security --no-pager "perfconv-${u%%:*}@web.service" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	if [ -n "$score" ] && awk -v s="$score" -v m="${u#*:}" 'BEGIN { exit !(s <= m) }'; then
		ok "systemd-analyze security perfconv-${u%%:*}@web: $score (at most ${u#*:})"
	else
		bad "systemd-analyze security perfconv-${u%%:*}@web: ${score:-no score} (at most ${u#*:})"
	fi
done
if [ $flowing = 1 ]; then
	ok "profiles with samples at the receiver: $accepted accepted, $with_samples with samples ($samples samples), $refused refused, $((SECONDS - t)) s after the recipe"
else
	profiles
	bad "no 2 profiles with samples at the receiver within 60 s: $PROFILES"
	say_journal
fi

# --- kernel frames named ----------------------------------------------------------------
named=0 unnamed=0 json=
eval "$(in_ct node /root/booted/tests/booted/query.mjs --sh kernel /root/booted/saved)"
# named, all but a few (an address kallsyms has no symbol for, as perf leaves it too)
if [ "$named" -gt 0 ] && [ $((unnamed * 20)) -le $((named + unnamed)) ]; then
	ok "kernel frames named: $json"
else
	bad "kernel frames not named (counted by samples, [kernel.kallsyms]+0x... for unnamed): $json"
	say_journal
fi

# --- the target restarted ----------------------------------------------------------------
t=$SECONDS
restart_at=$(date +%s)
record_restarts=$(in_ct systemctl show -P NRestarts perfconv-record@web)
in_ct systemctl restart web.service
# the chunks begun after the restart: two with samples within 60 s. One empty between
# is allowed: the chunk perf, still on the deleted control group, recorded before the
# recreated one was followed; more than one is perf left there.
after_restart() { profiles $((restart_at + 1)) && [ "$with_samples" -ge 2 ]; }
if [ $flowing = 0 ]; then
	bad "after web.service restarted: not checked, no profile reached the receiver before"
elif ! wait_until 60 after_restart; then
	bad "after web.service restarted: no 2 profiles with samples of chunks begun after it within 60 s ($empty empty: perf still on the old cgroup?): $PROFILES"
	say_journal
elif [ "$empty" -gt 1 ]; then
	bad "after web.service restarted: $empty empty profiles before samples came back (perf left on the old cgroup for $empty chunks): $PROFILES"
	say_journal
elif [ "$(in_ct systemctl show -P NRestarts perfconv-record@web)" != "$record_restarts" ]; then
	bad "after web.service restarted: perfconv-record@web was restarted by systemd ($record_restarts, now $(in_ct systemctl show -P NRestarts perfconv-record@web) restarts), not following its target"
	say_journal
else
	ok "after web.service restarted: $with_samples profiles with samples ($samples) of chunks begun since, $empty empty between, within $((SECONDS - t)) s, the recorder not restarted; said: $(journal perfconv-record@web --since "@$restart_at" | grep -m1 -i 'again\|restart' | cut -c1-120)"
fi

# --- a quiet minute's journal ------------------------------------------------------------
# steady state, 60 s measured: each unit at most one line a chunk (5 s chunks: 12, and
# one more for a chunk at each end of the window, whose seconds are whole)
# In the same minute, instances of their own (their journals apart from web's): webb,
# mistyped (no webb.conf), and gone, whose target (gone.service) is not running; its
# sender points where nothing listens, so that nothing of it reaches the receiver.
in_ct sed -e 's|^PERFCONV_TARGET=.*|PERFCONV_TARGET=unit:gone.service|' -e 's|^PERFCONV_URL=.*|PERFCONV_URL=http://127.0.0.1:4041|' \
	/etc/perfconv/web.conf >"$ROOT/etc/perfconv/gone.conf"
chmod 600 "$ROOT/etc/perfconv/gone.conf"
cp "$ROOT/etc/perfconv/web.key" "$ROOT/etc/perfconv/gone.key"
since=$(date +%s)
in_ct systemctl start perfconv-record@webb >"$WORK/webb.log" 2>&1
webb_rc=$?
in_ct systemctl start perfconv-record@gone >"$WORK/gone.log" 2>&1
# the window itself is what is measured (lines per elapsed second, the bound from the
# seconds that really passed), not a wait for a state: no condition can end it sooner
sleep 60
until=$(date +%s)
bound=$(((until - since) / 5 + 1))
quiet=1
for u in record upload; do
	n=$(journal "perfconv-$u@web" --since "@$since" --until "@$until" | wc -l)
	if [ "$n" -gt "$bound" ]; then
		quiet=0
		bad "the journal of a quiet minute: perfconv-$u@web wrote $n lines in $((until - since)) s, over one a chunk ($bound); the most frequent: $(journal "perfconv-$u@web" --since "@$since" --until "@$until" | sed 's/[0-9]\+/N/g' | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')"
	else
		echo "  perfconv-$u@web: $n lines in the quiet minute"
	fi
done
[ $quiet = 1 ] && ok "the journal of a quiet minute: each unit within one line a chunk ($bound)"
# a mistyped instance: refused at once, said, not started again every 10 s (systemctl
# start itself succeeds: Type=exec is started once its script runs)
webb_state=$(in_ct systemctl is-failed perfconv-record@webb)
webb_restarts=$(in_ct systemctl show -P NRestarts perfconv-record@webb)
webb_said=$(journal perfconv-record@webb | grep -m1 'webb.conf')
if [ "$webb_state" = failed ] && [ "$webb_restarts" = 0 ] && [ -n "$webb_said" ]; then
	ok "a mistyped instance (perfconv-record@webb): the unit failed (systemctl start exit $webb_rc), not restarted in 60 s; said: $webb_said"
else
	bad "a mistyped instance (perfconv-record@webb): systemctl start exit $webb_rc, $webb_state, $webb_restarts restarts in 60 s, said: '${webb_said:-nothing of webb.conf}' ($(journal perfconv-record@webb | tail -2 | tr '\n' '|'))"
fi
# a target not running: waited for, said at growing intervals, not an error every 10 s:
# at most 6 lines in the minute (systemd's two of the start, the script's first and its
# repeats after 2 and 4 looks of 10 s; one every 10 s would be 8); once it runs, perf
# records it
n=$(journal perfconv-record@gone --since "@$since" --until "@$until" | wc -l)
if [ "$n" -le 6 ] && [ "$(in_ct systemctl is-active perfconv-record@gone)" = active ]; then
	in_ct systemd-run --quiet --unit=gone.service sleep infinity
	gone_perf() { ct_pids | while read -r p; do tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline"; echo; done | grep -q '^perf record.*gone\.service'; }
	if wait_until 30 gone_perf; then
		ok "a target not running (perfconv-record@gone, unit:gone.service): waited for, $n journal lines in $((until - since)) s; perf on it within 30 s of its start"
	else
		bad "a target not running (perfconv-record@gone): no perf record on gone.service within 30 s of its start: $(journal perfconv-record@gone -n 3 | tr '\n' '|')"
	fi
	in_ct systemctl stop gone.service
else
	bad "a target not running (perfconv-record@gone, unit:gone.service): $n journal lines in $((until - since)) s (at most 6), the unit $(in_ct systemctl is-active perfconv-record@gone); the most frequent: $(journal perfconv-record@gone --since "@$since" --until "@$until" | sed 's/[0-9]\+/N/g' | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')"
fi
in_ct systemctl stop perfconv-record@gone perfconv-upload@gone
in_ct systemctl reset-failed 'perfconv-*@webb.service' 'perfconv-*@gone.service' 2>/dev/null
rm -f "$ROOT/etc/perfconv/gone.conf" "$ROOT/etc/perfconv/gone.key"

# --- the receiver down and back: nothing lost -----------------------------------------
t=$SECONDS
SPOOL=$ROOT/var/spool/perfconv/web
pending() { find "$SPOOL" -maxdepth 1 -name 'perf.data.[0-9]*' 2>/dev/null | wc -l; }
declare -A CHUNK_SAMPLES
# sent_samples: the samples of every chunk the sender marked sent, each counted by perf
# (one line a sample with -F comm), in $sent_total over $sent_n chunks
sent_samples() {
	local f b
	sent_total=0 sent_n=0
	for f in "$SPOOL"/sent/perf.data.*; do
		[ -f "$f" ] || continue
		b=${f##*/}
		[ -n "${CHUNK_SAMPLES[$b]:-}" ] ||
			CHUNK_SAMPLES[$b]=$(in_ct perf script -i "/var/spool/perfconv/web/sent/$b" -F comm 2>/dev/null | wc -l)
		sent_total=$((sent_total + CHUNK_SAMPLES[$b]))
		sent_n=$((sent_n + 1))
	done
}
# accounted: every chunk sent has its samples at the receiver, with nothing pending and
# nothing in flight (the chunks sent read before and after the receiver's log)
accounted() {
	[ "$(pending)" = 0 ] || return 1
	sent_samples
	local before=$sent_n
	profiles || return 1
	sent_samples
	[ "$sent_n" = "$before" ] && [ "$samples" = "$sent_total" ]
}
if [ $flowing = 0 ]; then
	bad "the receiver down and back: not checked, no profile reached the receiver before"
else
	down_epoch=$(date +%s)
	in_ct systemctl stop booted-receiver
	down_at=$SECONDS
	two_waiting() { [ "$(pending)" -ge 2 ]; }
	if ! wait_until 30 two_waiting; then
		bad "the receiver down: no 2 chunks waiting in the spool within 30 s ($(pending)): $(ls "$SPOOL" 2>&1 | tr '\n' ' ')"
	fi
	waiting=$(pending)
	# what the sender said of it: nothing answered, not an answer
	said_down() { journal perfconv-upload@web --since "@$down_epoch" | grep -Eqi 'answer|connect'; }
	wait_until 20 said_down
	down_said=$(journal perfconv-upload@web --since "@$down_epoch" | grep -Ei -m1 'answer|connect')
	if [ -n "$down_said" ] && ! journal perfconv-upload@web --since "@$down_epoch" | grep -qi 'answered[^.]*couldn.t connect'; then
		ok "the receiver down, said as nothing answering: $down_said"
	else
		bad "the receiver down, said: '${down_said:-nothing within 20 s}' (a connection refused is not the backend answering)"
	fi
	receiver || bad "the receiver did not start again on 127.0.0.1:4040"
	down_s=$((SECONDS - down_at))
	if wait_until 120 accounted; then
		ok "the receiver down ${down_s} s ($waiting chunks waiting) and back: all $sent_n chunks sent, their $sent_total samples (perf script) all at the receiver ($accepted profiles, none twice: $twice), $((SECONDS - t)) s"
	else
		bad "the receiver down and back: pending $(pending); chunks sent $sent_n with $sent_total samples; at the receiver $samples in $accepted profiles (twice: $twice); refused: $(ls "$SPOOL/refused" "$SPOOL/dropped" 2>/dev/null | tr '\n' ' ')"
		say_journal
	fi
fi

# --- the key, as the man page says: through LoadCredential= -------------------------------
key=booted-key-$$-$RANDOM
printf '%s\n' "$key" >"$ROOT/etc/perfconv/web.key"
in_ct systemctl restart perfconv-upload@web
upid=$(in_ct systemctl show -P MainPID perfconv-upload@web)
# its pid in the container; here, the one of the container's whose pid there is that
hpid=$(for p in $(ct_pids); do [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)" = "$upid" ] && echo "$p"; done | head -1)
cmd=$(tr '\0' ' ' <"/proc/${hpid:-0}/cmdline" 2>/dev/null)
if [[ $cmd == *"--api-key-file /run/credentials/perfconv-upload@web.service/"* ]] &&
	! grep -qa "$key" "/proc/$hpid/cmdline" "/proc/$hpid/environ"; then
	ok "the key through LoadCredential=: --api-key-file /run/credentials/perfconv-upload@web.service/..., not on its command line nor in its environment"
else
	bad "the key through LoadCredential= (man perfconv-upload): the sender runs '${cmd:-no process (pid $upid)}'"
fi
: >"$ROOT/etc/perfconv/web.key"
in_ct systemctl restart perfconv-upload@web

# --- apt-get purge with the services running ---------------------------------------------
t=$SECONDS
before=$(units_state)
if run_ct -E DEBIAN_FRONTEND=noninteractive apt-get purge -y -q perfconv </dev/null >"$WORK/purge.log" 2>&1; then
	echo "  apt-get purge perfconv (the units were: $before): done in $((SECONDS - t)) s"
else
	bad "apt-get purge perfconv: $(tail -5 "$WORK/purge.log")"
fi
procs=$(for p in $(ct_pids); do
	c=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")
	case $c in *perfconv* | perf\ *) echo "$p: $c" ;; esac
done)
units=$(in_ct systemctl list-units --all --plain --no-legend 'perfconv*' | tr -s ' ' | tr '\n' '|')
links=$(find "$ROOT/etc/systemd/system" -name 'perfconv*' 2>/dev/null | sed "s|^$ROOT||" | tr '\n' ' ')
left=$(ls -d "$ROOT/var/spool/perfconv" "$ROOT/etc/perfconv" 2>/dev/null | sed "s|^$ROOT||" | tr '\n' ' ')
if [ -z "$procs$units$links$left" ]; then
	ok "apt-get purge with the units $before: no process, no unit, no enable link, no spool or /etc/perfconv left"
else
	bad "apt-get purge with the units $before: processes: ${procs:-none}; units: ${units:-none}; links: ${links:-none}; left: ${left:-none}"
fi
