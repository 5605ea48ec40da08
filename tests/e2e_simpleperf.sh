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
	 perf_with_tracepoint_event:45 perf_test_max_stack_and_percent_limit:121 \
	 perf_with_add_counter:12; do
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

# 1b. its tracing data, a record (not a feature): TRACING_DATA as SPLIT pieces joined
#     (perf_with_big_trace_data: its 200 tracepoints named from it), or type 66 with
#     the data inside (perf_with_tracepoint_event: sched_switch's fields read from it)
"$PERFCONV" info -i $S/perf_with_big_trace_data.data >"$TMP/big.info" 2>&1
"$PERFCONV" -i $S/perf_with_tracepoint_event.data --time offcpu -o /dev/null 2>"$TMP/tpoff.err"
if grep -q '^  asoc:snd_soc_bias_level_done ' "$TMP/big.info" &&
   [ "$(grep -c '^  [a-z0-9_]*:[a-z0-9_]* ' "$TMP/big.info")" -ge 200 ] &&
   ! grep -q 'without the recording.s tracing data' "$TMP/tpoff.err"; then
	ok "perf_with_big_trace_data: 200 tracepoints named from its SPLIT tracing data; perf_with_tracepoint_event's read"
else
	bad "tracing data: $(grep -A1 '^events' "$TMP/big.info" | tail -1) $(grep -m1 tracing "$TMP/tpoff.err")"
fi

# 2. attr entries padded to attr_size (ids at attr_size - 16): read as perf reads them
if convert perf_with_arm_regs && [ "$(samples perf_with_arm_regs)" = 1 ]; then
	ok "perf_with_arm_regs: attr_size 144 after attr.size 120 accepted, 1 sample"
else
	bad "perf_with_arm_regs: $(head -2 "$TMP/perf_with_arm_regs.err")"
fi

# 3. Names from the recording's own symbol tables (its FILE/FILE2 features): binaries,
#    dex files (an interpreted frame's address is its dex pc, looked up as it is), JIT
#    regions, the kernel; none of the phone's files is here.
#    a. report_sample.py's golden (simpleperf's report_sample_test): every sample, and
#       the golden's named frames among ours in order (simpleperf hides ART's
#       interpreter frames; names it left mangled are not counted)
"$PERFCONV" -i $S/perf_display_bitmaps.data -f samples -o "$TMP/db.samples" 2>"$TMP/db.err"
if python3 tests/simpleperf_compare.py --script $S/perf_display_bitmaps.perf-script.xz \
	"$TMP/db.samples" --min-percent 99.9 >"$TMP/db.cmp" 2>&1; then
	ok "perf_display_bitmaps: $(tail -1 "$TMP/db.cmp" | sed 's/^simpleperf_compare: //')"
else
	bad "perf_display_bitmaps: $(tail -1 "$TMP/db.cmp")"
	head -5 "$TMP/db.cmp"
fi
#    b. stackcollapse.py's golden (simpleperf's stackcollapse_test, --jit): each name's
#       weight, JIT code (MainActivity$1.run, Thread.sleep) and ART's libraries among
#       them, with ART's frames as simpleperf's report shows them: the runtime's frames
#       between Java frames hidden (art::Monitor::Wait, the JNI method a trampoline
#       calls, kept), an OSR'd method's JIT frame merged into its interpreted one
#       (stackcollapse.py leaves each sample's own frame out: --no-leaf)
"$PERFCONV" -i $S/perf_with_jit_symbol.data --weight period -o "$TMP/jit.folded" 2>"$TMP/jit.err"
if python3 tests/simpleperf_compare.py $S/perf_with_jit_symbol.foldedstack "$TMP/jit.folded" \
	--min 8 --no-leaf >"$TMP/jit.cmp" 2>&1 &&
   grep -q 'MainActivity\$1.run' "$TMP/jit.folded" &&
   ! grep -q 'art_quick_osr_stub\|MterpInvokeInterface\|art_jni_trampoline' "$TMP/jit.folded"; then
	ok "perf_with_jit_symbol: $(tail -1 "$TMP/jit.cmp" | sed 's/^simpleperf_compare: //'), ART's frames hidden"
else
	bad "perf_with_jit_symbol: $(tail -3 "$TMP/jit.cmp")"
fi
#       --show-art-frames keeps them (simpleperf's report --show-art-frames)
"$PERFCONV" -i $S/perf_with_jit_symbol.data --show-art-frames -o "$TMP/jitart.folded" 2>"$TMP/jitart.err"
if grep -q 'MterpInvokeInterface;com.android.simpleperf.debuggable.MainActivity\$1.run;.*art_quick_osr_stub;com.android.simpleperf.debuggable.MainActivity\$1.run' "$TMP/jitart.folded" &&
   grep -q 'art_jni_trampoline;art::Monitor::Wait' "$TMP/jitart.folded"; then
	ok "perf_with_jit_symbol --show-art-frames: the interpreter's and the OSR's frames kept"
else
	bad "perf_with_jit_symbol --show-art-frames: $(head -2 "$TMP/jitart.err")"
fi
#    c. the same names in every output format (upload sends the pprof)
for fmt in pprof speedscope otlp chrome svg; do
	"$PERFCONV" -i $S/perf_with_jit_symbol.data -f $fmt -o "$TMP/jit.$fmt" 2>/dev/null
	if { zcat "$TMP/jit.$fmt" 2>/dev/null || cat "$TMP/jit.$fmt"; } |
	   grep -a -q 'com.android.simpleperf.debuggable.MainActivity\$1.run'; then
		ok "perf_with_jit_symbol -f $fmt: the JIT method named"
	else
		bad "perf_with_jit_symbol -f $fmt: no MainActivity\$1.run"
	fi
done
#    d. the recording's table before a binary found beside it by name: /data/t2 with
#       its build id taken out of the recording (a copy), and another program as ./t2
mkdir -p "$TMP/t2"
python3 - $S/perf_with_symbols.data "$TMP/t2/perf.data" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', b, 40)
o, n = struct.unpack_from('<QQ', b, off + size)  # BUILD_ID: the first feature
i = b.find(b'/data/t2', o, o + n)
b[i:i + 8] = b'/data/xx'
open(sys.argv[2], 'wb').write(b)
PY
cp $TD/mt "$TMP/t2/t2"
"$PERFCONV" -i "$TMP/t2/perf.data" -o "$TMP/t2.folded" 2>"$TMP/t2.err"
if [ "$(awk '$1 == "t2;main" { print $2 }' "$TMP/t2.folded")" = 572 ] &&
   [ "$(awk '$1 == "t2;func2" { print $2 }' "$TMP/t2.folded")" = 360 ] &&
   ! grep -q 'not verified' "$TMP/t2.err"; then
	ok "perf_with_symbols: main 572, func2 360 from the recording, not from ./t2"
else
	bad "perf_with_symbols: $(sort -k2 -n "$TMP/t2.folded" | tail -2 | tr '\n' ' ') $(grep -m1 verified "$TMP/t2.err")"
fi
#    e. perfconv info says where the names come from: the recording, not a file
"$PERFCONV" info -i $S/perf_display_bitmaps.data >"$TMP/db.info" 2>&1
if grep -q "^kernel symbols: the recording's symbol table" "$TMP/db.info" &&
   grep -A1 'bionic/libc.so \[user\]' "$TMP/db.info" | grep -q "found: the recording's symbol table"; then
	ok "perf_display_bitmaps: info names the recording's tables for libc.so and the kernel"
else
	bad "perf_display_bitmaps: info: $(grep -A1 'bionic/libc.so \[user\]' "$TMP/db.info" | tail -1)"
fi

#    f. the kernel's names from simpleperf's KERNEL_SYMBOL record (its copy of
#       /proc/kallsyms) when FILE has no kernel entry: perf_with_tracepoint_event with
#       its kernel entry moved into such a record (tests/simpleperf_craft.py) converts
#       as the original does; the record is 131076 bytes, its size's high half in misc
#       and its low half 4: framed by its whole size, not taken for damage
python3 tests/simpleperf_craft.py kallsyms $S/perf_with_tracepoint_event.data "$TMP/ks.data"
"$PERFCONV" -i $S/perf_with_tracepoint_event.data --event cpu-cycles -o "$TMP/tp.folded" 2>/dev/null
"$PERFCONV" -i "$TMP/ks.data" --event cpu-cycles -o "$TMP/ks.folded" 2>"$TMP/ks.err"
if [ -s "$TMP/tp.folded" ] && cmp -s "$TMP/tp.folded" "$TMP/ks.folded" &&
   grep -q ';__clean_dcache_area_pou ' "$TMP/ks.folded" && ! grep -q damaged "$TMP/ks.err"; then
	ok "KERNEL_SYMBOL: the kernel's names from the record of 131076 bytes, as from FILE ($(grep -c . "$TMP/ks.folded") stacks alike)"
else
	bad "KERNEL_SYMBOL: $(grep -c 'kallsyms\]+' "$TMP/ks.folded") kernel frames unnamed; $(grep -m1 damaged "$TMP/ks.err" || head -1 "$TMP/ks.err")"
fi
#    g. a kernel module's frame from FILE's entry of it (type 1, DSO_KERNEL_MODULE):
#       vaddr = address - mapping start - memory offset + min_vaddr; the sample's ip moved
#       into the first module's mapping, which the entry names crafted_module_fn
mod=$(python3 tests/simpleperf_craft.py module $S/perf_with_tracepoint_event.data "$TMP/mod.data")
"$PERFCONV" -i "$TMP/mod.data" --event cpu-cycles -f pprof -o "$TMP/mod.pb.gz" 2>/dev/null
"$PERFCONV" -i "$TMP/mod.data" --event cpu-cycles -o "$TMP/mod.folded" 2>"$TMP/mod.err"
if [ "$mod" = /vendor/lib/modules/htc_battery.ko ] &&
   grep -q '^simpleperf;crafted_module_fn 1$' "$TMP/mod.folded" &&
   zcat "$TMP/mod.pb.gz" | grep -a -q 'htc_battery'; then
	ok "kernel module: htc_battery.ko+0x100 named crafted_module_fn from FILE's module entry"
else
	bad "kernel module: $(grep -m1 'htc_battery\|crafted' "$TMP/mod.folded" || head -1 "$TMP/mod.err")"
fi

# 4. Event names from META_INFO's event_type_info (report_lib_test's
#    test_event_name_from_meta_info), and --trace-offcpu recordings read as simpleperf
#    reads them (report_lib_test's test_set_trace_offcpu_mode): no tracing data, so a
#    sched:sched_switch sample is its thread's switch-out and the thread's next sample
#    (or switch-in) ends it
"$PERFCONV" info -i $S/perf_with_tracepoint_event.data >"$TMP/tp.info" 2>&1
if grep -q '^  sched:sched_switch ' "$TMP/tp.info" && grep -q '^  cpu-cycles' "$TMP/tp.info"; then
	ok "perf_with_tracepoint_event: events sched:sched_switch and cpu-cycles"
else
	bad "perf_with_tracepoint_event: events $(grep -A2 '^events' "$TMP/tp.info" | tail -2 | tr -s ' ' | tr '\n' ' ')"
fi
V2=$S/perf_with_trace_offcpu_v2.data
"$PERFCONV" -i $V2 --weight period -o "$TMP/on.folded" 2>"$TMP/on.err"
"$PERFCONV" -i $V2 --time offcpu --weight period -o "$TMP/off.folded" 2>"$TMP/off.err"
"$PERFCONV" -i $V2 --time wall --weight period -o "$TMP/wall.folded" 2>"$TMP/wall.err"
on=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/on.folded")
off=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/off.folded")
wall=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/wall.folded")
if grep -q 'counting cpu-clock:u' "$TMP/on.err" && [ "$on" = 52000000 ]; then
	ok "perf_with_trace_offcpu_v2: on-CPU cpu-clock:u 52000000 ns, as simpleperf"
else
	bad "perf_with_trace_offcpu_v2: on-CPU $on ns ($(tail -1 "$TMP/on.err"))"
fi
if grep -q 'off-CPU: 91 intervals' "$TMP/off.err" && [ "$off" = 344124304 ]; then
	ok "perf_with_trace_offcpu_v2: off-CPU 91 intervals, 344124304 ns, as simpleperf"
else
	bad "perf_with_trace_offcpu_v2: off-CPU $off ns: $(grep -m1 'off-CPU\|switch' "$TMP/off.err")"
fi
# report_lib_test's test_offcpu: over 30% of the time in __epoll_pwait (names from FILE2)
if [ "$wall" = 396124304 ] &&
   awk '/__epoll_pwait/ { s += $NF } { t += $NF } END { exit !(t && s / t > 0.30) }' "$TMP/wall.folded"; then
	ok "perf_with_trace_offcpu_v2: wall 396124304 ns, over 30% in __epoll_pwait"
else
	bad "perf_with_trace_offcpu_v2: wall $wall ns"
fi
# the first --trace-offcpu format (cpu-cycles beside the tracepoint; cmd_report_test's
# report_offcpu_time): simpleperf's report weighs every sample, the tracepoint's and
# cpu-cycles', by the time to its thread's next sample in the file's order (1 ns when
# that is not later): "Time in ns", which --time wall gives; SleepFunction (the
# program's sleeping loop) is 38.76% of it (report --children); its 99 sched_switch
# samples are off-CPU time, not "no scheduler switches"
V1=$S/perf_with_trace_offcpu.data
"$PERFCONV" -i $V1 --time offcpu --weight period -o "$TMP/off1.folded" 2>"$TMP/off1.err"
"$PERFCONV" -i $V1 --time wall --weight period -o "$TMP/wall1.folded" 2>"$TMP/wall1.err"
pct=$(awk '/SleepFunction/ { s += $NF } { t += $NF } END { if (t) printf "%.2f%% of %d ns", 100 * s / t, t }' "$TMP/wall1.folded")
if grep -q 'off-CPU: 97 intervals' "$TMP/off1.err" &&
   awk '/SleepFunction/ { s += $NF } { t += $NF } END { exit !(t && s / t > 0.9) }' "$TMP/off1.folded" &&
   [ "$pct" = "38.76% of 1850302402 ns" ]; then
	ok "perf_with_trace_offcpu: $(grep -o 'off-CPU: [0-9]* intervals, [0-9.]* s' "$TMP/off1.err"); wall: SleepFunction $pct, as simpleperf"
else
	bad "perf_with_trace_offcpu: wall: SleepFunction ${pct:-nothing}, simpleperf 38.76% of 1850302402 ns; $(grep -m1 'off-CPU\|switches' "$TMP/off1.err")"
fi

# 5. ETM (CoreSight) trace: said not decoded, in one line, not an empty profile in silence
"$PERFCONV" -i $S/perf_etm.data -o "$TMP/etm.folded" 2>"$TMP/etm.err"
if [ "$(grep -c 'not decoded' "$TMP/etm.err")" = 1 ] &&
   grep -q 'hardware trace (AUX area: ETM, Intel PT; 384 bytes) not decoded' "$TMP/etm.err"; then
	ok "perf_etm: $(grep -o 'hardware trace.*' "$TMP/etm.err")"
else
	bad "perf_etm: the ETM trace not said: $(head -2 "$TMP/etm.err")"
fi

finish e2e_simpleperf
