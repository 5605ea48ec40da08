#!/bin/bash
# e2e_simpleperf: recordings made by Android's simpleperf (testdata/simpleperf/, from AOSP
# platform/system/extras; see its README): its own record types (>= 32768: CALLCHAIN,
# SPLIT, KERNEL_SYMBOL ...) read or passed over by their size, never "damaged", with no
# sample lost beside them; its attr entries padded to attr_size; the sample counts its
# own tests see.
source "$(dirname "$0")/e2e_lib.sh"
S=$TD/simpleperf
export PERFCONV_CACHE_DIR=$TMP/cache

convert() { # NAME [options]: $TMP/NAME.folded, .err
	local n=$1
	shift
	"$PERFCONV" --no-symbols -i $S/$n.data -o "$TMP/$n.folded" "$@" 2>"$TMP/$n.err"
}

samples() { # NAME: the samples of its folded output
	awk '{ n += $NF } END { print n + 0 }' "$TMP/$1.folded"
}

# 1. simpleperf's record types: no "damaged record", no sample lost, no unknown type
for t in perf_with_callchain_record:21 perf_with_big_trace_data:0 \
	 perf_with_tracepoint_event:45 perf_test_max_stack_and_percent_limit:121; do
	n=${t%:*}
	want=${t#*:}
	if ! convert $n; then
		bad "$n: conversion failed: $(head -3 "$TMP/$n.err")"
		continue
	fi
	if grep -q 'damaged\|unknown type\|cut short' "$TMP/$n.err"; then
		bad "$n: $(grep -m1 'damaged\|unknown type\|cut short' "$TMP/$n.err")"
	elif ! grep -q "^perfconv: $want samples" "$TMP/$n.err"; then
		bad "$n: $(grep -m1 '^perfconv: [0-9]* samples' "$TMP/$n.err"), simpleperf reads $want"
	else
		ok "$n: $want samples, no record taken for damage"
	fi
done

# 1a. CALLCHAIN records precede the sample of the same pid, tid and time, the joined user
#     stack last; the sample holds that stack already: stacks are unchanged by them and
#     every sample keeps its user frames (the deepest sample: 3 kernel, 25 user frames)
if [ -s "$TMP/perf_with_callchain_record.folded" ] &&
   awk '{ n = split($1, f, ";"); if (n > m) m = n } END { exit !(m >= 20) }' \
	"$TMP/perf_with_callchain_record.folded"; then
	ok "perf_with_callchain_record: whole user stacks"
else
	bad "perf_with_callchain_record: the user stacks are cut"
fi

# 2. attr entries padded to attr_size (ids at attr_size - 16): read as perf reads them
if convert perf_with_arm_regs && [ "$(samples perf_with_arm_regs)" = 1 ]; then
	ok "perf_with_arm_regs: attr_size 144 after attr.size 120 accepted, 1 sample"
else
	bad "perf_with_arm_regs: $(head -2 "$TMP/perf_with_arm_regs.err")"
fi

finish e2e_simpleperf
