#!/bin/bash
# e2e_offcpu: off-CPU and wall-clock time (issue 19) on testdata/offcpu, whose program's
# threads sleep 3 x 200 ms, wait 300 ms for a mutex, 400 ms for a pipe and spin 500 ms:
# per thread against perf's own switch times, the known waits on their stacks with
# their durations, wall time against each thread's elapsed time, and every output
# (go tool pprof, the SVG, speedscope and Chrome traces in the speedscope app).
source "$(dirname "$0")/e2e_lib.sh"
O=$TD/offcpu
KO=(--kallsyms $O/kallsyms.gz)

conv() { # NAME INPUT ARGS...: perfconv's samples output into $TMP/NAME.samples
	local name=$1 in=$2
	shift 2
	"$PERFCONV" -q -i "$in" "${KO[@]}" -f samples "$@" -o "$TMP/$name.samples"
}

# 1. Per thread, against perf script's PERF_RECORD_SWITCH times (the program's threads,
#    --switch-events): off-CPU within 1%, and wall (on-CPU samples plus off-CPU) within
#    1% of the time from the thread's first switch-in to its exit. With tracepoints
#    (offcpu.data: blocking stacks) and without (offcpu-sw.data: the switch records only).
for n in offcpu offcpu-sw; do
	perf script -i $O/$n.data --show-switch-events --show-task-events -F comm,tid,time,event \
		>"$TMP/$n.switches" 2>/dev/null
	conv $n-off $O/$n.data --time offcpu && conv $n-wall $O/$n.data --time wall
	if out=$(python3 tests/offcpu_check.py switches "$TMP/$n.switches" "$TMP/$n-off.samples" \
		"$TMP/$n-wall.samples" 2>&1); then
		ok "$n: $(echo "$out" | tail -1), off-CPU and wall against perf's switch records"
	else
		bad "$n: $(echo "$out" | grep FAIL | head -3)"
	fi
done
# 2. System-wide (-a, zstd): every thread off the CPU 1 ms or more against perf script's
#    sched_switch times, on any CPU.
perf script -i $O/offcpu-a.data -F tid,time,event,trace >"$TMP/a.trace" 2>/dev/null
conv a-off $O/offcpu-a.data --time offcpu
if out=$(python3 tests/offcpu_check.py tracepoints "$TMP/a.trace" "$TMP/a-off.samples" 2>&1); then
	ok "offcpu-a (system-wide): $(echo "$out" | tail -1), against perf script's sched_switch times"
else
	bad "offcpu-a: $(echo "$out" | grep FAIL | head -3)"
fi

# 3. The known waits, on their blocking stacks, with their durations (+-2%).
"$PERFCONV" -q -i $O/offcpu.data "${KO[@]}" --time offcpu -o "$TMP/off.folded"
wait_ms() { # PATTERN: the off-CPU ms of the stacks matching it
	awk -v pat="$1" '$0 ~ pat { s += $NF } END { printf "%.1f", s / 1e6 }' "$TMP/off.folded"
}
within() { # GOT WANT: within 2%
	awk -v g="$1" -v w="$2" 'BEGIN { exit !(g >= w * 0.98 && g <= w * 1.02) }'
}
check_wait() { # WHAT PATTERN MS
	local got
	got=$(wait_ms "$2")
	within "$got" "$3" && ok "offcpu: $1: $got ms off the CPU on its stack (it waits $3 ms)" ||
		bad "offcpu: $1: $got ms, not $3 +- 2%: $(grep -E "$2" "$TMP/off.folded" | head -2)"
}
check_wait "3 x nanosleep(200 ms) in sleeper" '^sleeper;start_thread;sleeper;clock_nanosleep;.*do_nanosleep' 600
check_wait "the mutex main holds 300 ms" '^locker;start_thread;locker;__GI___lll_lock_wait;futex_wait' 300
check_wait "the pipe main writes at 400 ms" '^reader;start_thread;reader;read;.*anon_pipe_read' 400
check_wait "main's nanosleeps, 300 + 100 ms" '^offcpu;__libc_start_call_main;clock_nanosleep;' 400
# the state each waited in: pprof's thread_state label
"$PERFCONV" -q -i $O/offcpu.data "${KO[@]}" -o "$TMP/off.pb.gz"
if command -v go >/dev/null; then
	go tool pprof -raw "$TMP/off.pb.gz" >"$TMP/off.raw" 2>&1
	types=$(sed -n '/^Samples:/{n;p;q}' "$TMP/off.raw")
	if echo "$types" | grep -q 'off-cpu/nanoseconds' && echo "$types" | grep -q 'wall/nanoseconds' &&
		echo "$types" | grep -q 'cpu-time/nanoseconds'; then
		ok "pprof: on-CPU, off-cpu and wall sample types in one file ($types)"
	else
		bad "pprof sample types: $types"
	fi
	state=$(go tool pprof -sample_index=off-cpu -tagfocus='thread_state=^sleeping$' -top "$TMP/off.pb.gz" 2>/dev/null |
		awk '/Showing nodes/ { print $NF }')
	wall=$(go tool pprof -sample_index=wall -unit=ms -top "$TMP/off.pb.gz" 2>/dev/null | grep -m1 -o 'of [0-9.]*ms total' | grep -o '[0-9.]*')
	mine=$(awk -F'\t' '{ s += $6 } END { printf "%.2f", s / 1e6 }' "$TMP/offcpu-wall.samples")
	if [ -n "$wall" ] && within "$wall" "$mine"; then
		ok "go tool pprof -sample_index=wall: $wall ms in all, as the wall samples sum ($mine ms)"
	else
		bad "go tool pprof -sample_index=wall: '$wall' ms, the samples $mine ms"
	fi
	if go tool pprof -sample_index=off-cpu -tagfocus='thread_state=^sleeping$' -traces "$TMP/off.pb.gz" 2>/dev/null |
		grep -q 'clock_nanosleep'; then
		ok "go tool pprof -tagfocus thread_state=sleeping: the sleeps"
	else
		bad "go tool pprof -tagfocus thread_state=sleeping: $state"
	fi
else
	bad "pprof: 'go' not found (scripts/install-deps.sh installs golang-go)"
fi

# 4. The summary, and what is not counted.
"$PERFCONV" -i $O/offcpu.data "${KO[@]}" --time offcpu -o /dev/null 2>"$TMP/off.err"
grep -Eq '^perfconv: off-CPU: [0-9]+ intervals, 2\.1[0-9]+ s \(preempted [0-9.]+ s, sleeping 1\.9[0-9]+ s\), from sched:sched_switch$' "$TMP/off.err" &&
	ok "summary: $(grep 'off-CPU:' "$TMP/off.err")" || bad "summary: $(cat "$TMP/off.err")"
"$PERFCONV" -i $O/offcpu-sw.data "${KO[@]}" --time offcpu -o /dev/null 2>"$TMP/sw.err"
grep -q 'preempted [0-9.]* s, blocked [0-9.]* s), from PERF_RECORD_SWITCH (--switch-events)' "$TMP/sw.err" &&
	ok "summary without tracepoints: $(grep 'off-CPU:' "$TMP/sw.err")" || bad "summary: $(cat "$TMP/sw.err")"
"$PERFCONV" -i $TD/mt-g.data --time offcpu -o "$TMP/none.folded" 2>"$TMP/none.err"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$TMP/none.folded" ] && grep -q -- '--time offcpu: the recording has no scheduler switches' "$TMP/none.err" &&
	ok "--time offcpu without switches: exit 1, said" || bad "--time offcpu on mt-g: exit $rc: $(cat "$TMP/none.err")"
# an interval across lost events has no trustworthy end: counted, not invented (a
# LOST record 100 ms into the sleeper's first sleep: that sleep and those of the threads
# off the CPU then go; its two others stay)
python3 tests/make-hostile.py "$TMP/h" >/dev/null
# its binary beside it, as beside the recording it was cut from (without it, only a
# HOME whose ~/.debug perf filled when recording would name its frames)
cp $O/offcpu "$TMP/h/"
"$PERFCONV" -i "$TMP/h/offcpu-lost.data" "${KO[@]}" --time offcpu -o "$TMP/lost.folded" 2>"$TMP/lost.err"
lost_ms=$(awk '/^sleeper;start_thread;sleeper;clock_nanosleep;/ { s += $NF } END { printf "%.1f", s / 1e6 }' "$TMP/lost.folded")
if grep -q 'not counted: 5 intervals spanning lost events' "$TMP/lost.err" && within "$lost_ms" 405; then
	ok "lost events: the intervals across them not counted, said; the sleeper keeps $lost_ms ms of its two other sleeps"
else
	bad "lost events: sleeper $lost_ms ms: $(grep -i lost "$TMP/lost.err")"
fi
# perf record -F applies to tracepoints too: a sampled sched_switch is said to be one
if perf record -q -F 999 -e sched:sched_switch -e cpu-clock -g -o "$TMP/freq.data" -- $O/offcpu >/dev/null 2>&1; then
	"$PERFCONV" -i "$TMP/freq.data" --time offcpu -o /dev/null 2>"$TMP/freq.err"
	grep -q 'sched:sched_switch was sampled by frequency' "$TMP/freq.err" &&
		ok "-F on the tracepoint: said its switches are a sample" || bad "-F: $(head -3 "$TMP/freq.err")"
else
	bad "perf record -e sched:sched_switch failed here (needs root)"
fi

# 5. Every output: the SVG in blues, titled; speedscope and Chrome traces with the
#    state at the leaf of each wait, opened in the speedscope app.
"$PERFCONV" -q -i $O/offcpu.data "${KO[@]}" --time offcpu -o "$TMP/off.svg"
if python3 - "$TMP/off.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
r = ET.parse(sys.argv[1]).getroot()
title = r.find(NS + "text[@id='title']").text
assert title.startswith("Off-CPU Time Flame Graph: "), title
assert " ns of off-cpu" in r.find(NS + "text[@id='sub']").text
fills = [g.find(NS + "rect").get("fill") for g in r.find(NS + "g[@id='frames']")]
blue = [f for f in fills if int(f[5:7], 16) > int(f[1:3], 16) + 60]
assert len(blue) * 2 > len(fills), (len(blue), len(fills))
PY
then ok "svg --time offcpu: titled Off-CPU Time, weighed in ns, drawn in blues"; else bad "svg --time offcpu"; fi
for f in speedscope.json trace.json; do
	"$PERFCONV" -q -i $O/offcpu.data "${KO[@]}" --time wall -o "$TMP/wall.$f"
done
if python3 - "$TMP/wall.speedscope.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
s = names.index("[off-CPU: sleeping]")
p = next(p for p in d["profiles"] if p["name"].startswith("sleeper "))
waits = [w for st, w in zip(p["samples"], p["weights"]) if st and st[-1] == s]
assert p["unit"] == "nanoseconds" and sum(waits) > 0.59e9, (p["unit"], sum(waits))
PY
then ok "speedscope --time wall: the sleeper's waits end in [off-CPU: sleeping], 600 ms of its timeline"
else bad "speedscope --time wall: no [off-CPU: sleeping] waits of 600 ms"; fi
cases=("$TMP/wall.speedscope.json" "[off-CPU: sleeping]" "$TMP/wall.trace.json" "[off-CPU: sleeping]")
run_browser open_in_speedscope.mjs "${cases[@]}"

finish e2e_offcpu
