#!/bin/bash
# e2e_units: the services as Debian 12's systemd 252 runs them, what can be checked of it
# without a booted systemd (issue 44; tests/booted/CHECKS.md says what the booted stage
# checks): the units rendered as make install renders them score at most 2.5 (upload)
# and 4.5 (record) in systemd-analyze security, each setting not taken explained in the
# unit; they start on a fresh install (the spool shipped, ReadWritePaths=- ), fail
# loudly for a mistyped instance, read the key with LoadCredential=; the package's prerm
# stops and disables every instance; and the scripts, run by hand as the units run them:
# a mistyped instance said, a target not running said at growing intervals, a control
# group made again followed (later chunks have samples), perf's chatter filtered, the
# kallsyms saved for the sender and its zeros explained; the sender names kernel frames
# from it without CAP_SYSLOG or /proc/kallsyms; the watcher says a chunk without
# samples and kernel frames it cannot name; `perfconv info` says the real cause.
source "$(dirname "$0")/e2e_lib.sh"
at_exit() {
	touch "$TMP/stop" 2>/dev/null
	kill_pids
	# the busy loop gone from the cgroup before the cgroup is
	[ -z "${bpid:-}" ] || wait "$bpid" 2>/dev/null
	[ -z "${CGD:-}" ] || rmdir "$CGD" 2>/dev/null
}
PIDS=()

# --- 1. the units as installed --------------------------------------------------------
U=$TMP/units
mkdir -p "$U"
# as the Makefile's install renders them (its SUBST), PREFIX=/usr
subst=$(sed -n 's/^SUBST = //p' Makefile | sed 's/\$(BINDIR)/\/usr\/bin/g; s/\$(LIBEXECDIR)/\/usr\/libexec\/perfconv/g')
for u in record upload; do
	eval "$subst" <"dist/perfconv-$u@.service.in" >"$U/perfconv-$u@web.service"
done
# score UNIT: systemd-analyze security's overall exposure
score() { systemd-analyze security --offline=yes "$U/$1" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'; }
# unexplained UNIT: each setting systemd-analyze counts against UNIT that its comments
# do not name (the key of "SystemCallFilter=~@debug" is @debug, of
# "CapabilityBoundingSet=~CAP_(DAC_*|FOWNER)" CAP_DAC_, of "PrivateTmp=" PrivateTmp)
unexplained() {
	local comments key line
	comments=$(grep '^#' "$U/$1")
	systemd-analyze security --offline=yes "$U/$1" 2>/dev/null | grep '^✗' | while read -r _ line; do
		line=${line%% *}
		case $line in
		*=~*) key=${line#*=~} ;;
		*) key=${line%%=*} ;;
		esac
		key=${key%%/*}
		key=${key/\(/}
		key=${key%%|*}
		key=${key%%\**}
		key=${key%)}
		grep -qF -- "$key" <<<"$comments" || echo "$line"
	done
}
if command -v systemd-analyze >/dev/null && systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	su=$(score perfconv-upload@web.service)
	sr=$(score perfconv-record@web.service)
	if [ -n "$su" ] && [ -n "$sr" ] && awk -v u="$su" -v r="$sr" 'BEGIN { exit !(u <= 2.5 && r <= 4.5) }'; then
		ok "systemd-analyze security --offline: perfconv-upload@ $su (<= 2.5), perfconv-record@ $sr (<= 4.5)"
	else
		bad "systemd-analyze security: perfconv-upload@ ${su:-?} (want <= 2.5), perfconv-record@ ${sr:-?} (want <= 4.5)"
	fi
	nu=$(unexplained perfconv-upload@web.service)
	nr=$(unexplained perfconv-record@web.service)
	[ -z "$nu$nr" ] && ok "each setting systemd-analyze counts against a unit is explained in the unit's comments" ||
		bad "settings not taken and not explained: upload: $(echo $nu); record: $(echo $nr)"
	for u in record upload; do
		# (its scripts and man page are not installed here: e2e_install verifies them so)
		out=$(systemd-analyze verify "$U/perfconv-$u@web.service" 2>&1 | grep -v '/usr/libexec/perfconv\|man perfconv-upload(1)')
		[ -z "$out" ] && ok "systemd-analyze verify perfconv-$u@ (rendered): no complaint but its scripts and page not installed here" ||
			bad "systemd-analyze verify perfconv-$u@: $out"
	done
else
	skip "systemd-analyze security --offline (systemd 252 or later) is not installed"
fi

# started on a fresh install: the spool is not made by an ExecStartPre=+ (systemd 252
# sets up ReadWritePaths= for it too: 226/NAMESPACE), it is shipped, root's alone, and
# ReadWritePaths= does not fail where it is not there
spool_ok=1
for u in record upload; do
	f=$U/perfconv-$u@web.service
	grep -q '^ReadWritePaths=-/var/spool/perfconv$' "$f" && ! grep -q '^ExecStartPre=' "$f" || spool_ok=
done
grep -qx 'var/spool/perfconv' debian/perfconv.dirs && grep -q 'chmod 0700 .*debian/perfconv/var/spool/perfconv' debian/rules || spool_ok=
[ -n "$spool_ok" ] && ok "the spool: shipped by the package (0700), ReadWritePaths=-/var/spool/perfconv, no ExecStartPre=+ to make it" ||
	bad "the spool: $(grep -h 'ReadWritePaths\|ExecStartPre' "$U"/*.service | tr '\n' ' '); dirs: $(tr '\n' ' ' <debian/perfconv.dirs)"
# a mistyped instance: no ConditionPathExists= (a silent skip), the configuration read
# with EnvironmentFile=- and its absence said by the script, exit 2 not restarted
loud=1
for u in record upload; do
	f=$U/perfconv-$u@web.service
	! grep -q '^ConditionPathExists=' "$f" && grep -q '^EnvironmentFile=-/etc/perfconv/%i.conf$' "$f" &&
		grep -q '^RestartPreventExitStatus=2$' "$f" || loud=
done
[ -n "$loud" ] && ok "no ConditionPathExists= (a mistyped instance skipped silently); EnvironmentFile=-, RestartPreventExitStatus=2" ||
	bad "the units: $(grep -h 'ConditionPathExists\|EnvironmentFile\|RestartPrevent' "$U"/*.service | tr '\n' ' ')"
# the key as the man page says: LoadCredential=, read from $CREDENTIALS_DIRECTORY
grep -q '^LoadCredential=api-key:/etc/perfconv/%i.key$' "$U/perfconv-upload@web.service" &&
	grep -q 'CREDENTIALS_DIRECTORY/api-key' dist/perfconv-upload &&
	ok "the key: LoadCredential=api-key:/etc/perfconv/%i.key, read from \$CREDENTIALS_DIRECTORY" ||
	bad "the key: $(grep -h 'LoadCredential' "$U"/*.service)"

# --- 2. prerm: every instance stopped and disabled ------------------------------------
# In a mount namespace of its own: /etc/systemd/system a tmpfs with an instance of each
# enabled and another package's unit; no systemd runs here (the stop is the booted
# stage's to see), so the links are what is checked.
if [ ! -f debian/perfconv.prerm ]; then
	bad "debian/perfconv.prerm: none (apt-get remove leaves the instances running and their links dangling)"
elif [ "$(id -u)" = 0 ]; then
	got=$(unshare -m bash -c '
		mount -t tmpfs tmpfs /etc/systemd/system || exit 9
		mkdir -p /etc/systemd/system/multi-user.target.wants
		for u in perfconv-record@web perfconv-upload@web perfconv-record@db other; do
			ln -s /lib/systemd/system/${u%@*}@.service /etc/systemd/system/multi-user.target.wants/$u.service
		done
		sh debian/perfconv.prerm remove >/dev/null 2>&1 || echo "prerm failed"
		ls /etc/systemd/system/multi-user.target.wants')
	[ "$got" = other.service ] && ok "prerm remove: the enable links of every instance gone (perfconv-record@web, @db, perfconv-upload@web), another unit's kept" ||
		bad "prerm remove: left '$(echo $got)'"
else
	skip "prerm: needs root (a mount namespace)"
fi

# --- 3. the scripts, as the units run them --------------------------------------------
S=$TMP/spool
C=$TMP/conf
mkdir -p "$S" "$C"
chmod 700 "$C"
rec=dist/perfconv-record
# as_unit CONF CMD...: CMD with the unit's environment file and nothing else of this
# shell's but PATH; SIGINT as systemd leaves it (a background job's is ignored)
as_unit() {
	local conf=$1
	shift
	exec env -i --default-signal=INT PATH="$PATH" bash -c 'set -a; source "$1"; set +a; shift; exec "$@"' _ "$conf" "$@"
}
conf() { # NAME TARGET [MORE...]: $C/NAME.conf
	local n=$1 t=$2
	shift 2
	printf '%s\n' "PERFCONV_TARGET=$t" PERFCONV_CHUNK=1s PERFCONV_FREQUENCY=499 "PERFCONV_SPOOL=$S" \
		"PERFCONV_CONFDIR=$C" PERFCONV_POLL=0.05 "$@" >"$C/$n.conf"
	chmod 600 "$C/$n.conf"
}
# a mistyped instance: its configuration is not there, said, exit 2
conf web pid:2147483600
out=$( (as_unit "$C/web.conf" sh $rec webb) 2>&1)
rc=$?
up=$( (as_unit "$C/web.conf" sh dist/perfconv-upload webb) 2>&1)
urc=$?
[ $rc = 2 ] && [[ $out == *"$C/webb.conf: no such file"*"mistyped"* ]] && [ $urc = 2 ] && [[ $up == *"$C/webb.conf: no such file"* ]] &&
	ok "a mistyped instance (webb): each script says its configuration is not there, exit 2: '$out'" ||
	bad "a mistyped instance: record $rc '$out'; upload $urc '$up'"

# a target not running: said once, then at growing intervals, not at every look
conf gone pid:2147483600
as_unit "$C/gone.conf" sh $rec gone 2>"$TMP/gone.err" &
gpid=$!
PIDS+=("$gpid")
wait_for 60 grep -q "looked for 64 times" "$TMP/gone.err"
kill -INT $gpid 2>/dev/null
wait $gpid
n=$(grep -c 'no such process' "$TMP/gone.err")
[ "$n" -ge 7 ] && [ "$n" -le 8 ] && grep -q "looked for 64 times" "$TMP/gone.err" &&
	ok "a target not running: said $n times over 64 looks (after 1, 2, 4 ... 64), not at each: '$(head -1 "$TMP/gone.err" | cut -c1-140)...'" ||
	bad "a target not running: said $n times: $(head -3 "$TMP/gone.err")"

# a stop that comes as perf starts, before perf has its SIGINT handler in place (a
# background job starts with SIGINT ignored) or before the script knows its pid: asked
# again until perf ends, not waited for forever (a make check beside two busy loops hung
# here: perf recorded on). perf here is one that ignores SIGINT for its first second:
# its sleep is the modelled perf's start-up, not a wait of the test's (the test waits on
# conditions: the script's line, then the script's end, each with wait_for).
mkdir -p "$TMP/slowperf"
cat >"$TMP/slowperf/perf" <<'EOF2'
#!/bin/sh
trap '' INT
sleep 1
trap 'echo "[ perf record: Captured and wrote 0.001 MB perf.data ]"; exit 130' INT
while :; do sleep 0.05; done
EOF2
chmod 755 "$TMP/slowperf/perf"
conf early all PERFCONV_POLL=0.05
PATH="$TMP/slowperf:$PATH" as_unit "$C/early.conf" sh $rec early 2>"$TMP/early.err" &
epid=$!
PIDS+=("$epid")
wait_for 60 grep -q "^perfconv-record: perf record -e" "$TMP/early.err"
kill -INT $epid 2>/dev/null
ended() { ! kill -0 "$1" 2>/dev/null; }
if wait_for 60 ended $epid; then
	wait $epid
	erc=$?
	[ $erc = 130 ] && ok "a stop as perf starts (its SIGINT ignored for a second): asked again until it ended, the script ended as SIGINT (130)" ||
		bad "a stop as perf starts: the script ended $erc, not 130: $(tail -3 "$TMP/early.err")"
else
	bad "a stop as perf starts (its SIGINT ignored for a second): the script still waits for perf after 60 s: $(tail -3 "$TMP/early.err")"
	pkill -INT -f "$TMP/slowperf/perf" 2>/dev/null
	kill -9 $epid 2>/dev/null
fi

if [ "$(id -u)" = 0 ] && perf record -q -e cpu-clock -o "$TMP/probe.data" true 2>/dev/null && receivers_ready; then
	# a cgroup target made again, as systemd makes a unit's at each start: perf record
	# -G stays on the deleted one; the script follows the new one
	for m in /sys/fs/cgroup/perf_event /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -e "$m/cgroup.procs" ] && break
	done
	CG=perfconv-e2e-units-$$
	CGD=$m/$CG
	[ -e "$m/cgroup.procs" ] ||
		bad "no control group hierarchy mounted at /sys/fs/cgroup (a chroot? mount -t cgroup2 cgroup2 /sys/fs/cgroup): the cgroup target's checks cannot run"
	mkdir "$CGD"
	busy() { # a loop in the cgroup until $TMP/stop exists
		rm -f "$TMP/stop"
		sh -c 'echo $$ >"$1/cgroup.procs" && while [ ! -e "$2" ]; do :; done' sh "$CGD" "$TMP/stop" &
		bpid=$!
	}
	nchunks() { ls "$S/cg" 2>/dev/null | grep -c '^perf\.data\.[0-9]\{16\}$'; }
	chunks_ge() { [ "$(nchunks)" -ge "$1" ]; }
	samples() { perf report -i "$1" --stats 2>/dev/null | sed -n 's/^ *SAMPLE events: *\([0-9]*\).*/\1/p' | head -1; }
	# a chunk named after STAMP with samples
	later_samples() {
		local c
		for c in $(ls "$S/cg" | grep '^perf\.data\.[0-9]\{16\}$' | sort); do
			[[ ${c#perf.data.} > $1 ]] && [ "$(samples "$S/cg/$c")" -gt 0 ] 2>/dev/null && return 0
		done
		return 1
	}
	conf cg "cgroup:$CG" PERFCONV_POLL=0.2
	busy
	as_unit "$C/cg.conf" sh $rec cg 2>"$TMP/cg.err" &
	rpid=$!
	PIDS+=("$rpid")
	wait_for 60 chunks_ge 2
	touch "$TMP/stop"
	wait $bpid
	rmdir "$CGD" && mkdir "$CGD"
	busy
	wait_for 60 grep -q "was made again" "$TMP/cg.err"
	t=$(date +%Y%m%d%H%M%S%2N)
	wait_for 60 later_samples "$t"
	# a chunk's worth more: perf's per-chunk lines would have come by now
	n0=$(nchunks)
	wait_for 60 chunks_ge $((n0 + 2))
	kill -INT $rpid
	wait $rpid
	rrc=$?
	touch "$TMP/stop"
	wait $bpid
	if later_samples "$t" && grep -q "its control group $CG was made again" "$TMP/cg.err" && [ $rrc = 130 ]; then
		ok "a cgroup target made again: said, perf record started on the new one, whose later chunks have samples; SIGINT ends it as perf (130)"
	else
		bad "a cgroup target made again: exit $rrc; $(for c in "$S"/cg/perf.data.*; do echo "${c##*.}:$(samples "$c")"; done | tr '\n' ' '); $(tail -4 "$TMP/cg.err")"
	fi
	# per start of perf, its command line and its last "Captured and wrote" line, not one
	# a chunk (counted so, not against the chunks: a loaded machine makes few of them)
	chatter=$(grep -c 'Woken up\|perf record: Dump' "$TMP/cg.err")
	starts=$(grep -c '^perfconv-record: perf record -e' "$TMP/cg.err")
	wrote=$(grep -c 'Captured and wrote' "$TMP/cg.err")
	[ "$chatter" = 0 ] && [ "$starts" -ge 2 ] && [ "$wrote" -le "$starts" ] &&
		ok "perf's per-chunk lines filtered: $(wc -l <"$TMP/cg.err") lines for $(nchunks) chunks and a restart ($starts starts of perf, $wrote last-chunk lines)" ||
		bad "perf's chatter: $chatter per-chunk lines, $wrote 'Captured and wrote' for $starts starts of perf, $(nchunks) chunks: $(head -5 "$TMP/cg.err")"
	# the kallsyms saved for the sender, with addresses
	K="$S/cg/kernel/[kernel.kallsyms]/release-$(uname -r)/kallsyms"
	[ -s "$K" ] && awk '$1 !~ /^0+$/ { f = 1; exit } END { exit !f }' "$K" &&
		ok "the running kernel's kallsyms saved beside the chunks: $(wc -l <"$K") symbols" ||
		bad "no kallsyms saved beside the chunks: $(ls -R "$S/cg/kernel" 2>&1 | head -3)"
	# without CAP_SYSLOG, addresses read as zeros: said once, with why
	conf nosys all PERFCONV_POLL=0.2
	setpriv --inh-caps=-syslog --bounding-set=-syslog env -i --default-signal=INT PATH="$PATH" \
		bash -c 'set -a; source "$1"; set +a; exec sh dist/perfconv-record nosys' _ "$C/nosys.conf" 2>"$TMP/nosys.err" &
	npid=$!
	PIDS+=("$npid")
	wait_for 60 grep -q "^perfconv-record: perf record -e" "$TMP/nosys.err"
	kill -INT $npid
	wait $npid
	pp=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$(cat /proc/sys/kernel/kptr_restrict)" = 0 ] && [ "$pp" -gt 1 ]; then
		grep -q "kernel frames will not be named: every address in /proc/kallsyms reads as zero: this process lacks CAP_SYSLOG" "$TMP/nosys.err" &&
			ok "the recorder without CAP_SYSLOG says why kernel frames will not be named: $(grep -m1 'kernel frames' "$TMP/nosys.err" | cut -c1-120)..." ||
			bad "the recorder without CAP_SYSLOG: $(head -3 "$TMP/nosys.err")"
	else
		skip "kernel.kptr_restrict is not 0 or perf_event_paranoid not above 1: CAP_SYSLOG does not decide"
	fi

	# the sender's command line: the saved kallsyms given (--buildid-dir)
	printf '%s\n' PERFCONV_BACKEND=pyroscope "PERFCONV_SPOOL=$S" "PERFCONV_CONFDIR=$C" >"$C/cg.conf"
	printf '#!/bin/sh\necho "$@"\n' >"$TMP/args.sh"
	chmod 755 "$TMP/args.sh"
	args=$( (as_unit "$C/cg.conf" env PERFCONV="$TMP/args.sh" sh dist/perfconv-upload cg) 2>&1)
	[[ $args == *"--buildid-dir $S/cg/kernel"* ]] && ok "perfconv-upload gives the watcher --buildid-dir SPOOL/INSTANCE/kernel" ||
		bad "perfconv-upload's command: $args"
	# and with it, as the upload unit runs (no CAP_SYSLOG, /proc/kallsyms an empty file),
	# kernel frames are named; without it they are not, and the watcher says why, once
	chunkc=$(ls "$S"/cg/perf.data.* | head -1)
	W=$TMP/watch
	mkdir -p "$W"
	for i in 1 2 3; do cp "$chunkc" "$W/perf.data.2026120712000${i}00"; done
	# an empty chunk: perf recording a sleeping process
	perf record -q -e cpu-clock -F 10 -o "$TMP/empty.data" sleep 0.3 2>/dev/null
	cp "$TMP/empty.data" "$W/perf.data.2026120712000400"
	# confined CMD...: CMD as the upload unit runs it (no CAP_SYSLOG, /proc/kallsyms an
	# empty file); it execs (run it in ( ) or with &: its pid is then the command's)
	confined() { exec unshare -m sh -c 'mount --bind /dev/null /proc/kallsyms && exec setpriv --inh-caps=-syslog --bounding-set=-syslog "$@"' sh "$@"; }
	(confined "$PERFCONV" -q -i "$chunkc" --buildid-dir "$S/cg/kernel" --no-cache -f folded -o "$TMP/with.folded" 2>/dev/null)
	(confined "$PERFCONV" -q -i "$chunkc" --buildid-dir "$TMP/none" --no-cache -f folded -o "$TMP/without.folded" 2>/dev/null)
	kw=$(grep -o '\[kernel\.kallsyms\]+0x' "$TMP/with.folded" | wc -l)
	kwo=$(grep -o '\[kernel\.kallsyms\]+0x' "$TMP/without.folded" | wc -l)
	[ "$kw" = 0 ] && [ "$kwo" -gt 0 ] &&
		ok "without CAP_SYSLOG and /proc/kallsyms, kernel frames named from the saved kallsyms (unnamed without it: $kwo)" ||
		bad "the saved kallsyms: $kw unnamed kernel frames with it, $kwo without"
	start_receiver ws pyroscope
	confined "$PERFCONV" upload --to pyroscope --url "$URL_ws" --watch "$W" --buildid-dir "$TMP/none" --no-cache --delete-sent 2>"$TMP/watch.err" &
	WPID=$!
	PIDS+=("$WPID")
	none_left() { [ "$(ls "$W" | grep -c '^perf\.data\.')" = 0 ]; }
	wait_for 120 none_left
	kill -TERM $WPID
	wait $WPID
	# (once; at the stop, its count since, as the watcher says every cause it held back)
	nk=$(grep 'kernel frames cannot be named' "$TMP/watch.err" | grep -vc '(also [0-9]* times since')
	[ "$nk" = 1 ] && grep -q 'kernel frames cannot be named: /proc/kallsyms: "/proc/kallsyms": empty: hidden from this process' "$TMP/watch.err" &&
		ok "the watcher says once why kernel frames cannot be named (3 chunks): $(grep -m1 'kernel frames' "$TMP/watch.err" | cut -c1-140)..." ||
		bad "the watcher on kernel frames: said $nk times: $(grep 'kernel frames' "$TMP/watch.err")"
	grep -q 'perf.data.2026120712000400: warning: no samples in it' "$TMP/watch.err" &&
		ok "the watcher says a chunk without samples" || bad "a chunk without samples not said: $(grep -v 'sent to\|kernel frames' "$TMP/watch.err" | tail -5)"
	# perfconv info: the real cause, not kptr_restrict when it is 0
	info1=$(unshare -m sh -c 'exec setpriv --inh-caps=-syslog --bounding-set=-syslog "$@"' sh "$PERFCONV" info -i "$chunkc" --no-cache 2>&1 | grep '^kernel symbols:')
	info2=$( (confined "$PERFCONV" info -i "$chunkc" --no-cache) 2>&1 | grep '^kernel symbols:')
	if [ "$(cat /proc/sys/kernel/kptr_restrict)" = 0 ] && [ "$pp" -gt 1 ]; then
		[[ $info1 == *"this process lacks CAP_SYSLOG"* ]] && [[ $info1 != *"kptr_restrict hides"* ]] &&
			[[ $info2 == *"empty: hidden from this process"*"ProtectKernelTunables"* ]] &&
			ok "perfconv info names the cause: without CAP_SYSLOG '${info1#kernel symbols: }'; hidden: '${info2#kernel symbols: }'" ||
			bad "perfconv info's cause: '$info1'; '$info2'"
	else
		skip "kernel.kptr_restrict is not 0 or perf_event_paranoid not above 1"
	fi
else
	skip "the scripts with perf: need root, perf record and the receivers"
fi
finish e2e-units
