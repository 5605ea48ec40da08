#!/bin/bash
# e2e_fused: a compressed recording is decoded once (pass 1 and pass 2 in one,
# convert/session.h session_fused), and gives what two passes give, byte for byte.
# PERFCONV_FUSED=0 forces two passes, =only one pass or an error (no second try), =1
# one pass tried on any recording and two when it cannot be exact.
source "$(dirname "$0")/e2e_lib.sh"

# same NAME FILE FORMAT OPTIONS...: one pass (PERFCONV_FUSED=only) against two
same() {
	local name=$1 in=$2 fmt=$3 m
	shift 3
	for m in 0 only; do
		PERFCONV_FUSED=$m "$PERFCONV" -i "$in" -f "$fmt" "$@" -o "$TMP/$m.out" 2>"$TMP/$m.err"
		echo "rc=$?" >>"$TMP/$m.err"
		if [ "$fmt" = pprof ] && [ -s "$TMP/$m.out" ]; then
			gzip -dc <"$TMP/$m.out" >"$TMP/$m.raw" && mv "$TMP/$m.raw" "$TMP/$m.out"
		fi
	done
	if [ -s "$TMP/0.out" ] && cmp -s "$TMP/0.out" "$TMP/only.out" &&
		cmp -s "$TMP/0.err" "$TMP/only.err"; then
		ok "$name -f $fmt $*: one pass, the same output and summary as two"
	else
		bad "$name -f $fmt $*: $(diff "$TMP/0.err" "$TMP/only.err" | head -4)"
	fi
}

# the --call-graph dwarf recordings (each 8 KB of stack a sample) and the
# multi-threaded ones (three threads, forks and names after samples began)
for in in $TD/dwarf/*.data $TD/mt-g.data $TD/mt-k1.data $TD/mt-z.data $TD/mt-pipe.data; do
	name=$(basename "$in" .data)
	for fmt in folded pprof samples chrome; do
		same "$name" "$in" $fmt "${KS[@]}"
	done
	same "$name" "$in" folded "${KS[@]}" --with-tid --no-inline
done

# the same dwarf recording without its rounds: every record is held to the end, so the
# reader writes over the stacks held in its buffer lap after lap, and each is copied
# when the range it is in is said (convert/session.c unborrow): the same stacks
python3 - $TD/dwarf/dw.data "$TMP/noround.data" <<'PY'
import sys
sys.path.insert(0, "scripts")
from perfdata_rewrite import PerfData
d = PerfData(sys.argv[1])
rounds = [r for _, t, _, r in d.records() if t == 68]
assert len(rounds) > 10, len(rounds)
d.write(sys.argv[2], (r for _, t, _, r in d.records() if t != 68))
PY
cp $TD/dwarf/dw "$TMP/dw" # the program's CFI, found beside the recording
for fmt in pprof folded; do
	same "dw without rounds" "$TMP/noround.data" $fmt "${KS[@]}"
done
# (and the stacks are unwound through libc's qsort to the thread's start: the copies
# are read)
if ! grep -q '^dw-sort;clone3;start_thread;thread_main;level1;level2;work_sort;__GI___qsort_r;msort_with_tmp;msort_with_tmp.part.0;cmp_ints ' "$TMP/0.out"; then
	bad "dw without rounds: its stacks not unwound to the thread's start"
fi

# the off-CPU recordings: sched_switch tracepoints, PERF_RECORD_SWITCH (which the one
# pass foretells from the attrs: the off-CPU kind asks at its start)
for in in $TD/offcpu/*.data; do
	name=$(basename "$in" .data)
	for t in offcpu wall; do
		same "$name" "$in" folded --kallsyms $TD/offcpu/kallsyms.gz --time $t
		same "$name" "$in" pprof --kallsyms $TD/offcpu/kallsyms.gz --time $t
	done
done

# a JIT recording: its dumps are read after the records, so one pass cannot be exact;
# =only says so, =1 converts it again with two passes, to the same output
in=$TD/jit/node.data
PERFCONV_FUSED=only "$PERFCONV" -q -f folded -i $in -o "$TMP/j.only" 2>"$TMP/j.only.err"
rc=$?
PERFCONV_FUSED=1 "$PERFCONV" -q -f folded -i $in -o "$TMP/j.1" 2>"$TMP/j.1.err"
PERFCONV_FUSED=0 "$PERFCONV" -q -f folded -i $in -o "$TMP/j.0" 2>"$TMP/j.0.err"
if [ $rc -ne 0 ] && grep -q "PERFCONV_FUSED=only: one pass could not be made exact" "$TMP/j.only.err" &&
	[ -s "$TMP/j.0" ] && cmp -s "$TMP/j.0" "$TMP/j.1" && cmp -s "$TMP/j.0.err" "$TMP/j.1.err"; then
	ok "node JIT recording: one pass refused (rc $rc), done again with two, the same folded output"
else
	bad "node JIT recording: rc $rc: $(head -2 "$TMP/j.only.err"); $(diff "$TMP/j.0" "$TMP/j.1" | head -3)"
fi

finish e2e-fused
