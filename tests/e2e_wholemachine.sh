#!/bin/bash
# e2e_wholemachine: a whole-machine recording (perf record -a -g, as a fleet's recorder
# makes it) converts to every format, each holding perf's count of samples. Such a
# recording has thousands of short-lived threads beside the idle task (pid 0) and, late
# in a task's exit, samples perf writes with pid and tid -1; keys made of (pid, tid) + 1
# wrapped to 0, the hash maps' empty key, and -f samples/speedscope/chrome crashed
# (SIGSEGV). The recording is made here, a few seconds of a loop of short processes and
# a compile beside a busy loop; -1/-1 samples do not come on demand, so a copy of it
# with some samples' pid/tid set to -1, 0 and large values (tests/set-sample-pids.py) is
# converted too.
source "$(dirname "$0")/e2e_lib.sh"
FORMATS=$("$PERFCONV" --help | awk '/^Formats:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
W=$TMP/wm.data
if [ "$(id -u)" != 0 ] || ! perf record -q -o "$TMP/probe.data" -a -e cpu-clock -- true >/dev/null 2>&1; then
	skip "e2e_wholemachine: perf record -a cannot run here (needs root and perf)"
	finish e2e_wholemachine
	exit
fi
# the busy loop, bounded so that nothing outlives a killed test
timeout 60 sh -c 'while :; do :; done' &
BUSY=$!
at_exit() { kill $BUSY 2>/dev/null; }
printf 'int f(int x) { return x * 3 + 1; }\nint main(void) { return f(2) - 7; }\n' >"$TMP/t.c"
perf record -q -a -g -e cpu-clock -F 997 -o "$W" -- sh -c '
	for i in $(seq 400); do sh -c "i=0; while [ \$i -lt 40 ]; do i=\$((i + 1)); done"; done &
	for i in $(seq 6); do cc -O2 -c -o "$1/t$i.o" "$1/t.c" 2>/dev/null || true; done
	for i in $(seq 300); do sh -c true; done
	wait' sh "$TMP" >"$TMP/record.out" 2>&1
kill $BUSY 2>/dev/null
wait $BUSY 2>/dev/null
perf script -i "$W" -F pid,tid,period >"$TMP/wm.script" 2>/dev/null
N=$(wc -l <"$TMP/wm.script")
P=$(awk '{ print $NF }' "$TMP/wm.script" | sort -u)
THREADS=$(awk '{ print $1 }' "$TMP/wm.script" | sort -u | wc -l)
if [ "$N" -lt 500 ] || [ "$(wc -w <<<"$P")" != 1 ] || [ "$THREADS" -lt 50 ]; then
	bad "recording: $N samples of $THREADS threads, periods '$(head -c 80 <<<"$P")'; $(head -3 "$TMP/record.out")"
	finish e2e_wholemachine
	exit
fi
echo "#    recording: $N samples, $THREADS threads, period $P ns"

# every format of one recording: exit 0 and perf's count of samples
each_format() { # DATA WANT WHAT
	local f got rc
	for f in $FORMATS; do
		"$PERFCONV" -q -i "$1" -f $f -o "$TMP/out.$f" 2>"$TMP/err.$f"
		rc=$?
		got=$([ $rc = 0 ] && python3 tests/format_samples.py $f "$TMP/out.$f" "$P")
		if [ $rc = 0 ] && [ "$got" = "$2" ]; then
			ok "$3 -f $f: $got samples, as perf script"
		else
			bad "$3 -f $f: exit $rc, ${got:-no} samples of $2; $(head -2 "$TMP/err.$f")"
		fi
	done
}
each_format "$W" "$N" "whole machine"

# the pids and tids perf can write: -1 (a task already reaped), 0 (idle), one past any
# pid_max, and a tid -1 under a real pid; the first sample takes -1/-1, before the
# recording's own threads fill the maps
N1=$TMP/neg.data
python3 tests/set-sample-pids.py -n 7 "$W" "$N1" -1/-1 0/0 4294967294/4294967294 1/-1
perf script -i "$N1" -F pid,tid >"$TMP/neg.script" 2>/dev/null
each_format "$N1" "$N" "pid/tid -1, 0, large:"
want=$(awk '$1 == "-1/-1"' "$TMP/neg.script" | wc -l)
got=$(awk -F'\t' '$2 == "-1/-1"' "$TMP/out.samples" | wc -l)
if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
	ok "-f samples: $got samples of pid/tid -1/-1, as perf script"
else
	bad "-f samples: $got samples of pid/tid -1/-1, perf script $want"
fi
finish e2e_wholemachine
