# e2e_lib: what the end-to-end scripts share. Sourced first by each of them: runs in
# the source tree, takes the binary from $PERFCONV (the Makefile sets it), gives a
# temporary directory that goes away at exit, counts results, and reads kernel
# symbols from the kallsyms saved at recording time (so the tests hold on a machine
# running another kernel).
set -u
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
TD=testdata
TMP=$(mktemp -d)
# extra clean-up a script needs before the directory goes (a server to stop)
at_exit() { :; }
trap 'at_exit; rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
KS=(--kallsyms $TD/kallsyms.gz)
# A check that cannot run here says why in one line. Under CI (PERFCONV_CI=1, which
# .ci/run sets: it runs as root on a machine where every check can run) it fails.
skip() { # WHY
	if [ -n "${PERFCONV_CI:-}" ]; then
		bad "skipped, which CI does not allow: $*"
	else
		echo "skip $*"
	fi
}

# tests/browser's npm packages, installed (npm ci) when one its package.json names is
# missing: a checkout whose node_modules predates a package added later gets it.
# 0 when every one is there, else 1.
npm_ready() {
	local br=tests/browser
	if ! command -v node >/dev/null; then
		return 1
	fi
	# one npm ci at a time: scripts run side by side (scripts/run-e2e.sh); the lock is
	# package.json's, held while the one that found a package missing installs them
	exec 8<"$br/package.json"
	flock 8
	if ! node -e 'const p = require("./'$br'/package.json"); const fs = require("fs");
		process.exit(Object.keys(p.dependencies).every(d => fs.existsSync("'$br'/node_modules/" + d + "/package.json")) ? 0 : 1)' 2>/dev/null; then
		(cd $br && npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1 || cat "$TMP/npm.log"
	fi
	flock -u 8
	exec 8<&-
	node -e 'const p = require("./'$br'/package.json"); const fs = require("fs");
		process.exit(Object.keys(p.dependencies).every(d => fs.existsSync("'$br'/node_modules/" + d + "/package.json")) ? 0 : 1)'
}

# Run a script of tests/browser/ in Debian's chromium (node, playwright-core and the
# speedscope app from npm, installed by npm ci when missing) and count its ok/FAIL
# lines; screenshots go to build/screenshots. Returns 1 when it could not run.
run_browser() { # SCRIPT.mjs ARGS...
	local br=tests/browser script=$1 rc
	shift
	if ! npm_ready || [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
		bad "browser: needs node, $br/node_modules (npm ci) and ${CHROMIUM:-/usr/bin/chromium}"
		return 1
	fi
	mkdir -p build/screenshots
	timeout 300 node $br/$script build/screenshots "$@" >"$TMP/browser.out" 2>&1
	rc=$?
	cat "$TMP/browser.out"
	pass=$((pass + $(grep -c '^ok' "$TMP/browser.out")))
	fail=$((fail + $(grep -c '^FAIL' "$TMP/browser.out")))
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$TMP/browser.out"; then bad "browser: exited $rc"; fi
	return 0
}

# The closing line, and the script's status: NAME: N passed, M failed.
finish() { # NAME
	echo "$1: $pass passed, $fail failed"
	[ $fail -eq 0 ]
}

# Our self count for a function: leaves of the folded output.
our_count() { # FOLDED FUNCTION
	awk -v f="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";");
		if (a[k] == f) s += n } END { print s + 0 }' "$1"
}
# Our leaf lines of a function: "LINE COUNT" pairs from samples output with --srcline.
leaf_lines() { # SAMPLES FUNCTION FILE
	awk -F'\t' -v f="$2" -v file="$3" '{ k = split($7, a, ";"); leaf = a[k];
		p = index(leaf, " (" file ":"); if (p == 0 || substr(leaf, 1, p - 1) != f) next;
		l = substr(leaf, p + length(file) + 3); sub(/\)$/, "", l); c[l]++ }
		END { for (l in c) print l, c[l] }' "$1" | sort -n
}

# Background processes a script starts (receivers, watchers): `kill_pids` in its at_exit.
PIDS=()
kill_pids() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }

# The upload receivers (tests/receivers/) need node and tests/browser's npm packages
# (npm ci there when missing): 0 when they can run, else 1 after a FAIL line.
receivers_ready() { # NAME (the script's, for its closing line)
	if ! npm_ready; then
		bad "receivers: need node and tests/browser/node_modules (npm ci there)"
		return 1
	fi
}

# start_receiver NAME BACKEND [receiver options]: $URL_NAME, $LOG_NAME, $PID_NAME
start_receiver() {
	local name=$1 backend=$2 pid i
	shift 2
	rm -f "$TMP/$name.port" "$TMP/$name.log"
	node tests/receivers/receiver.mjs --backend "$backend" --log "$TMP/$name.log" \
		--port-file "$TMP/$name.port" "$@" 2>"$TMP/$name.err" &
	pid=$!
	PIDS+=("$pid")
	wait_for 120 test -s "$TMP/$name.port"
	printf -v "PID_$name" %s "$pid"
	printf -v "LOG_$name" %s "$TMP/$name.log"
	if [[ "$(cat "$TMP/$name.port" 2>/dev/null)" = /* ]]; then
		printf -v "URL_$name" %s "unix://$(cat "$TMP/$name.port")"
	else
		printf -v "URL_$name" %s "http://127.0.0.1:$(cat "$TMP/$name.port" 2>/dev/null)"
	fi
}
stop_receiver() { local v="PID_$1"; kill "${!v}" 2>/dev/null; wait "${!v}" 2>/dev/null; }

# What the --watch tests share (e2e_watch.sh, e2e_watchattack.sh).
chunk() { # SRC DIR NAME: copied in whole, then renamed, as perf renames a finished chunk
	cp "$1" "$2/.part" && mv "$2/.part" "$2/$3"
}
# wait_for SECONDS COMMAND...: until the command succeeds; 1 when it never did. What a
# test waits for is a condition (a file, a log line, a count, a process's state), never a
# time: give it a deadline generous enough for a loaded machine (tens of seconds), as
# it costs nothing when the condition comes at once. A command that counts must count at
# each try: a function, or sh -c, not test "$(...)" (expanded once, before the wait).
wait_for() {
	local s=$1 i
	shift
	for i in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
# bounded SECONDS COMMAND...: COMMAND held to what SECONDS of an idle two-CPU machine
# give it, so that a bound on a hostile input's cost holds on a loaded machine too: 2 x
# SECONDS of CPU time (prlimit: SIGXCPU, SIGKILL a second later) and, for what blocks
# without running (a FIFO), 12 x SECONDS of the wall clock (timeout). Its status, or
# 124 when either ran out.
bounded() {
	local s=$1 rc
	shift
	timeout -k 1 $((12 * s)) prlimit --cpu=$((2 * s)):$((2 * s + 1)) "$@"
	rc=$?
	case $rc in 124 | 137 | 152) return 124 ;; esac # 152: SIGXCPU
	return $rc
}
# first_chunk DIR: perf record --switch-output has named a chunk in DIR (or DIR/sent).
# perf (6.1: builtin-record.c) sets its timer before its setup and arms the switch only
# after it, re-arming the timer at each switch: when the setup takes longer than a
# chunk's time (1 s, on a loaded machine) the first alarm is lost and perf never
# switches. A test that needs chunks waits for the first with this and, where perf lost
# its alarm, says so (lost_alarm) and records again.
first_chunk() { [ "$(ls "$1" "$1/sent" 2>/dev/null | grep -c '^perf\.data\.[0-9]\{16\}$')" -gt 0 ]; }
lost_alarm() { # TRY
	echo "note try $1: perf named no chunk in a minute: it lost its first alarm (perf sets it before its setup, which took longer than a chunk here, and arms the switch after); recorded again"
}
# catches_usr2 PID: PID has its SIGUSR2 handler in place (perf record
# --switch-output=signal: before it, the signal ends perf)
catches_usr2() {
	local m
	m=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$m" ] && [ $((0x$m & 0x800)) != 0 ]
}
# pace_chunks PID: perf record --switch-output=signal PID asked for a chunk each second,
# as its alarm of --switch-output=1s would, from when it catches SIGUSR2 until it ends.
# A signal that comes before perf armed its switch is ignored and the next comes a
# second later, where perf's own first alarm is lost for good (first_chunk). Run it in
# the background.
pace_chunks() {
	wait_for 120 catches_usr2 "$1" || return
	# a chunk a second, as --switch-output=1s would make them: the recording's pace,
	# not a wait for something (a signal perf is not ready for is sent again next time)
	while kill -USR2 "$1" 2>/dev/null; do sleep 1; done
}
# record_chunks N DIR ARGS...: perf record ARGS (in the foreground, writing DIR/perf.data
# with --switch-output; its stderr in DIR.perf.err) until it left at least N chunks in
# DIR (or DIR/sent), recorded again where perf lost its first alarm (first_chunk), 3
# times at most: 0 when it did
record_chunks() {
	local n=$1 dir=$2 try
	shift 2
	for try in 1 2 3; do
		perf record "$@" 2>"$dir.perf.err"
		# (a watcher may have moved some to sent/)
		[ "$(ls "$dir" "$dir/sent" 2>/dev/null | grep -c '^perf\.data\.[0-9]\{16\}$')" -ge "$n" ] && return 0
		[ $try = 3 ] && return 1
		lost_alarm $try
		rm -f "$dir"/perf.data*
	done
}
# watching DIR PID: PID holds DIR's lock (a watcher past its start: its signals are
# handled, its first look is under way), as /proc/locks says
watching() {
	awk -v ino="$(stat -c %i "$1" 2>/dev/null)" -v pid="$2" '$2 == "FLOCK" && $5 == pid {
		n = split($6, a, ":"); if (a[n] == ino) f = 1 } END { exit !f }' /proc/locks
}
count_in() { ls "$1" 2>/dev/null | grep -c '^perf\.data\.'; }
holds() { [ "$(count_in "$1")" = "$2" ]; } # DIR N: DIR holds N chunks
closed_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# watch DIR ARGS...: a watcher in the background, its stderr in DIR.err; $WPID
watch() {
	local dir=$1
	shift
	"$PERFCONV" upload --watch "$dir" "${KS[@]}" "$@" 2>"$dir.err" &
	WPID=$!
	PIDS+=("$WPID")
}
stop_watch() { kill -TERM "$WPID"; wait "$WPID"; }
