#!/bin/bash
# e2e_lbr: --call-graph lbr recordings (testdata/lbr/, made by testdata/record-lbr.sh from
# the dwarf recording of dw, whose true stacks perf knows): each sample's user stack is
# its LBR call stack (the sampled address, then each call's site), not the callchain's
# frame-pointer walk; whole stacks equal the true ones and perf script's but for the
# leaf perf takes from the LBR; call sites looked up as they are (not at address - 1);
# the summary and `perfconv info` name LBR.
source "$(dirname "$0")/e2e_lib.sh"
L=$TD/lbr
export PERFCONV_CACHE_DIR=$TMP/cache

compare() { # NAME GOLDEN SAMPLES MIN-PERCENT [compare options]
	local name=$1 golden=$2 samples=$3 min=$4
	shift 4
	if python3 tests/perfscript_compare.py "$@" --min-equal "$min" \
		"$golden" "$samples" >"$TMP/cmp" 2>&1; then
		ok "$name: $(tail -1 "$TMP/cmp" | sed 's/^perfscript_compare: //')"
	else
		bad "$name: $(tail -1 "$TMP/cmp")"
		head -30 "$TMP/cmp"
	fi
}

for n in dw-lbr dw-lbr16; do
	"$PERFCONV" "${KS[@]}" --symfs $TD --no-inline -f samples -i $L/$n.data \
		-o "$TMP/$n.samples" 2>"$TMP/$n.err"
	# 1. The truth: the stacks perf unwound from the dwarf recording the file was made
	#    from (the 16-deep one cut after 16 calls, as the hardware cuts them).
	compare "$n: true stacks" $L/expected/$n.truth.script.gz "$TMP/$n.samples" 99
	# 2. perf script on the same file: the same but for the user leaf where perf's
	#    (the first LBR entry's target) is a function's first byte: a PLT stub, or the
	#    function that tail-called the sampled one (see LBR_LEAF in the compare script).
	compare "$n: perf script's stacks" $L/expected/$n.script.gz "$TMP/$n.samples" 99 \
		--lbr-leaf $L --lbr-leaf $TD
done

# 2a. --lbr-leaf accepts no other difference (the compare script's own mutations)
if python3 tests/perfscript_compare.py --selftest $L/expected/dw-lbr.script.gz >"$TMP/self" 2>&1; then
	ok "perfscript_compare --selftest on dw-lbr: $(tail -1 "$TMP/self" | sed 's/^selftest: //')"
else
	bad "perfscript_compare --selftest on dw-lbr: $(grep FAILED "$TMP/self" | head -3)"
fi

# 2b. In one pass (as a compressed recording is read): the samples held until their
#    round is complete keep their branch stacks.
PERFCONV_FUSED=only "$PERFCONV" -q "${KS[@]}" --symfs $TD --no-inline -f samples -i $L/dw-lbr16.data \
	-o "$TMP/fused.samples"
if cmp -s "$TMP/fused.samples" "$TMP/dw-lbr16.samples" &&
	python3 tests/perfscript_compare.py --min-equal 99 $L/expected/dw-lbr16.truth.script.gz \
		"$TMP/fused.samples" >/dev/null 2>&1; then
	ok "dw-lbr16 in one pass (PERFCONV_FUSED=only): the true stacks, as in two"
else
	bad "dw-lbr16 in one pass: $(diff "$TMP/fused.samples" "$TMP/dw-lbr16.samples" | head -3)"
fi

# 3. Where perf is wrong: rec_walk ends its recursion with a tail call to rec_leaf, so
#    the last call the LBR holds is into rec_walk; perf names rec_walk twice, the thread
#    runs rec_leaf. Ours says rec_leaf under its true callers, in as many samples as
#    the truth has.
truth=$(zcat $L/expected/dw-lbr.truth.script.gz | awk '/^[^ \t]/ {h = 1; next} h && NF {h = 0; if ($2 == "rec_leaf") n++} END {print n + 0}')
perf_dup=$(zcat $L/expected/dw-lbr.script.gz | awk '/^[^ \t]/ {h = 1; next} h && NF {h = 0; if ($2 == "rec_walk") n++} END {print n + 0}')
ours=$(grep -c $'\tclone3;start_thread;thread_main;rec_walk;[rec_walk;]*rec_walk;rec_leaf$' "$TMP/dw-lbr.samples")
if [ "$truth" -gt 100 ] && [ "$ours" = "$truth" ] && [ "$perf_dup" -ge "$truth" ]; then
	ok "dw-lbr: rec_leaf (reached by a tail call) in $ours samples as in the truth; perf's leaf is rec_walk in $perf_dup"
else
	bad "dw-lbr: rec_leaf samples: ours $ours, truth $truth, perf's rec_walk leaves $perf_dup"
fi

# 4. A call site is the call instruction itself, looked up as it is: with inlined
#    frames and lines, every stack equals the dwarf recording's, where callers are
#    return addresses looked up at address - 1 (inside the same call instruction).
#    Looked up at address - 1, a call site would fall in the instruction before it
#    (main at dw.c:119 instead of the call at dw.c:120).
"$PERFCONV" -q "${KS[@]}" --symfs $TD --srcline -f samples -i $L/dw-lbr.data -o "$TMP/lbr-src.samples"
"$PERFCONV" -q "${KS[@]}" --symfs $TD --srcline -f samples -i $TD/dwarf/dw.data -o "$TMP/dw-src.samples"
same=$(paste <(cut -f7 "$TMP/lbr-src.samples") <(cut -f7 "$TMP/dw-src.samples") | awk -F'\t' '$1 == $2 {n++} END {print n + 0}')
if [ "$same" = 1966 ] && grep -q $'\t_start;__libc_start_main;__libc_start_call_main;main (dw.c:120);main_spin (dw.c:108);main_mix' "$TMP/lbr-src.samples"; then
	ok "dw-lbr: call sites at their lines, with inlined frames: all 1966 stacks as the dwarf recording's"
else
	bad "dw-lbr: $same of 1966 stacks with lines as the dwarf recording's"
fi

# 5. The summary names LBR: how deep, and the stacks the hardware cut; never the
#    advice for a recording without call graphs or without frame pointers.
if grep -q '1966 user stacks from the LBR call stack (--call-graph lbr), the deepest 19 calls' "$TMP/dw-lbr.err" &&
	! grep -q 'filled the LBR' "$TMP/dw-lbr.err" &&
	grep -q '1966 user stacks from the LBR call stack (--call-graph lbr), the deepest 16 calls' "$TMP/dw-lbr16.err" &&
	grep -Eq '  192 samples filled the LBR \(16 calls, what the hardware keeps\): their callers deeper than that are cut; perf script --stitch-lbr joins them from earlier samples of the thread, --call-graph dwarf has no such limit' "$TMP/dw-lbr16.err"; then
	ok "summary: LBR stacks, their depth, and the 192 that filled the 16-deep LBR (129 of them cut)"
else
	bad "summary: $(grep -i lbr "$TMP/dw-lbr.err" "$TMP/dw-lbr16.err")"
fi
if grep -Eq 'record with --call-graph dwarf|without frame pointers|no call graphs' "$TMP/dw-lbr.err" "$TMP/dw-lbr16.err"; then
	bad "summary: advice for another recording: $(grep -E 'dwarf|frame pointers|call graphs' "$TMP/dw-lbr.err" "$TMP/dw-lbr16.err" | head -2)"
else
	ok "summary: no advice to record a call graph or use dwarf for missing frame pointers"
fi

# 6. perfconv info: the event's call-graph mode, and the objects in the stacks (from
#    the LBR: dw and libc in every one)
"$PERFCONV" info "${KS[@]}" --symfs $TD -i $L/dw-lbr.data >"$TMP/info.txt" 2>&1
"$PERFCONV" info "${KS[@]}" --symfs $TD -i $L/dw-lbr.data --json >"$TMP/info.json" 2>/dev/null
if grep -Eq '^  cycles:P .* 1966 samples +call graph: LBR$' "$TMP/info.txt" &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if [e["call_graph"] for e in d["events"]] == ["lbr"] else 1)' "$TMP/info.json" &&
	grep -Eq '^ +[0-9]+ +1966  /tmp/perfconv-rec-dwarf/dw ' "$TMP/info.txt" &&
	grep -Eq '^ +[0-9]+ +1966  /usr/lib/x86_64-linux-gnu/libc.so.6 ' "$TMP/info.txt"; then
	ok "info: call graph LBR; dw and libc.so.6 in all 1966 stacks"
else
	bad "info: $(grep -E 'call graph|perfconv-rec-dwarf/dw |libc.so.6 ' "$TMP/info.txt")"
fi

finish e2e_lbr
