#!/bin/bash
# e2e_oldperf: recordings as other perf versions and kernels wrote them, the way other
# projects' test suites and bug reports bring them (google/perf_data_converter's quipper
# files of perf 3.2 to 6.12, KDAB's perfparser and hotspot test files, ...): made here
# from real recordings of today's perf by tests/old-perf.py, each a layout a real perf
# or kernel wrote, so the old file's truth is the new file's conversion.
#   - the idle task (tid 0) is "swapper", as perf names it: no recording has its COMM
#   - version 1 files ("PERFFILE"): read, as perf reads them
#   - MMAP2 of kernels 3.12 to 3.15 (no prot, flags): the names whole (perf 6.1 reads
#     them 8 bytes off and drops some: said, not held against us)
#   - the kernel's map from 0 (perf 3.x): the same kernel frames; a stray user-mode
#     address in the kernel half that no kernel map holds is [unknown], not the kernel
#   - pipes without event names (perf 4.x): named from the attrs as perf 6.1 names them
#     (a precise event's H) and tracepoints from the tracing data
#   - `perfconv info FILE` as `perfconv info -i FILE`
source "$(dirname "$0")/e2e_lib.sh"
export PERFCONV_CACHE_DIR=$TMP/cache
EMPTY=$TMP/empty
mkdir -p "$EMPTY"
OLD=tests/old-perf.py
CONV=("$PERFCONV" -q "${KS[@]}" --symfs $TD --buildid-dir "$EMPTY")

# 1. The idle task. A system-wide recording on this machine has samples of tid 0 when a
# CPU idled while it recorded; on a machine busy throughout (two busy loops beside the
# tests) it has none, and the samples of its busiest thread are made tid 0's
# (tests/old-perf.py idle), perf script naming them as it names the idle task.
if [ "$(id -u)" -ne 0 ]; then
	skip "idle task: perf record -a needs root"
elif perf record -q -a -o "$TMP/sys.data" -- sleep 0.5 2>"$TMP/sys.err"; then
	how="on this machine"
	if ! perf script -i "$TMP/sys.data" -F tid 2>/dev/null | awk '$1 == 0 { f = 1; exit } END { exit !f }'; then
		made=$(python3 $OLD idle "$TMP/sys.data" "$TMP/sys-idle.data") &&
			mv "$TMP/sys-idle.data" "$TMP/sys.data" &&
			how="no CPU idled while it recorded: the samples of ${made% *} (${made##* }) made tid 0's"
	fi
	perf script -i "$TMP/sys.data" -F comm,tid 2>/dev/null |
		awk '{ print $1 "\t" $2 }' | sort | uniq -c | sort -k2 >"$TMP/sys.perf"
	"$PERFCONV" -q -f samples --no-symbols -i "$TMP/sys.data" -o "$TMP/sys.samples"
	awk -F'\t' '{ split($2, t, "/"); print $1 "\t" t[2] }' "$TMP/sys.samples" |
		sort | uniq -c | sort -k2 >"$TMP/sys.ours"
	# (tid 0 alone: the machine's other threads, started and renamed while it records,
	# are e2e_exec's and e2e.sh's business)
	idle=$(awk '$3 == 0 { s += $1 } END { print s + 0 }' "$TMP/sys.perf")
	if [ "$idle" -gt 0 ] && cmp -s <(grep -P '\t0$' "$TMP/sys.perf") <(grep -P '\t0$' "$TMP/sys.ours") &&
		grep -qP '^ *[0-9]+ swapper\t0$' "$TMP/sys.ours" &&
		[ "$(wc -l <"$TMP/sys.samples")" -eq "$(awk '{ s += $1 } END { print s }' "$TMP/sys.perf")" ]; then
		ok "idle task: $idle samples of tid 0 named swapper, as perf script; as many samples in all ($how)"
	else
		bad "idle task: differs from perf script's ($idle samples of tid 0; $how)"
		diff "$TMP/sys.perf" "$TMP/sys.ours" | head -8
	fi
else
	bad "perf record -a failed: $(head -2 "$TMP/sys.err")"
fi

# 2-4. Old file layouts: the same conversion as the recording they were made from.
# named, and unnamed (each frame's module+offset, where a map's start shows)
same() { # NAME ORIGINAL REWRITTEN
	"${CONV[@]}" -i "$2" -o "$TMP/a.folded" 2>"$TMP/a.err"
	"${CONV[@]}" -i "$3" -o "$TMP/b.folded" 2>"$TMP/b.err"
	"$PERFCONV" -q --no-symbols -f samples -i "$2" -o "$TMP/a.samples" 2>>"$TMP/a.err"
	"$PERFCONV" -q --no-symbols -f samples -i "$3" -o "$TMP/b.samples" 2>>"$TMP/b.err"
	if [ -s "$TMP/a.folded" ] && cmp -s "$TMP/a.folded" "$TMP/b.folded" &&
		[ -s "$TMP/a.samples" ] && cmp -s "$TMP/a.samples" "$TMP/b.samples"; then
		ok "$1: the same $(wc -l <"$TMP/a.folded") stacks, named and by module+offset, as the recording it was made from"
	else
		bad "$1: differs from the recording it was made from: $(head -1 "$TMP/b.err")"
		diff "$TMP/a.folded" "$TMP/b.folded" | head -4
		diff "$TMP/a.samples" "$TMP/b.samples" | head -4 | cut -c1-200
	fi
}
for n in mt-g kheavy; do
	python3 $OLD v1 $TD/$n.data "$TMP/$n-v1.data"
	same "version 1 (PERFFILE) $n" $TD/$n.data "$TMP/$n-v1.data"
	python3 $OLD mmap2-early $TD/$n.data "$TMP/$n-m2.data"
	same "MMAP2 of kernels 3.12-3.15, $n" $TD/$n.data "$TMP/$n-m2.data"
	python3 $OLD kmap-zero $TD/$n.data "$TMP/$n-kz.data"
	same "perf 3.x's kernel map from 0, $n" $TD/$n.data "$TMP/$n-kz.data"
done
# perf 6.1 reads an early MMAP2's name from 8 bytes further: said, not tested
perf script -i "$TMP/mt-g-m2.data" --show-mmap-events 2>/dev/null | grep -a PERF_RECORD_MMAP2 |
	head -1 | sed 's/^.*: /note perf 6.1 on the same early MMAP2: /'
# a version 1 file's byte order comes from attr_size: one that fits no attr is refused
# (tests/bad/version1: tests/e2e.sh)

# the kernel half: a stray address in a user stack is no kernel frame when no kernel
# map holds it (perf script says [unknown] too)
at=$(python3 $OLD kmap-zero $TD/kheavy.data "$TMP/stray.data" --stray-user)
"$PERFCONV" -q -f samples --no-symbols -i "$TMP/stray.data" -o "$TMP/stray.samples"
ours=$(awk -F'\t' -v at="$at" '$2 " " $4 == at { print $7 }' "$TMP/stray.samples")
theirs=$(perf script -i "$TMP/stray.data" --ns -F pid,tid,time,ip,dso 2>/dev/null |
	awk -v at="$at" 'NF == 2 && $1 " " $2 == at ":" { on = 1; next } on && NF == 0 { exit }
		on { print $2 }' | grep -ac unknown)
if [ -n "$ours" ] && [[ "$ours" == "[unknown];"* ]] && [[ "$ours" != *kernel* ]] && [ "$theirs" -ge 1 ]; then
	ok "stray user address 0xffffff0100000001 ($at): [unknown], not the kernel (perf: [unknown])"
else
	bad "stray user address ($at): ours '$ours', perf's unknown frames: $theirs"
fi

# 5. A pipe without names: perf script's names for the same file, sample for sample.
perf record -q -e sched:sched_switch -e cpu-clock:pp -o - -- \
	sh -c 'sleep 0.05; i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done' \
	>"$TMP/pipe.data" 2>"$TMP/pipe.err"
python3 $OLD pipe-unnamed "$TMP/pipe.data" "$TMP/unnamed.data"
perf script -i "$TMP/unnamed.data" -F event 2>/dev/null | sed 's/: *$//; s/^ *//' |
	sort | uniq -c >"$TMP/ev.perf"
"$PERFCONV" -q -f samples --no-symbols -i "$TMP/unnamed.data" -o "$TMP/unnamed.samples"
# (less the off-CPU and wall time perfconv makes of the sched_switch events)
cut -f5 "$TMP/unnamed.samples" | grep -vxE 'wall|off-cpu' | sort | uniq -c >"$TMP/ev.ours"
if grep -q 'sched:sched_switch' "$TMP/ev.ours" && grep -q 'cpu-clock:ppH' "$TMP/ev.ours" &&
	cmp -s "$TMP/ev.perf" "$TMP/ev.ours"; then
	ok "pipe without names: $(tr -s ' \n' ' ' <"$TMP/ev.ours")= perf script's"
else
	bad "pipe without names: ours $(tr -s ' \n' ' ' <"$TMP/ev.ours"), perf $(tr -s ' \n' ' ' <"$TMP/ev.perf")"
fi

# 6. info takes the recording as an argument too
"$PERFCONV" info -i $TD/mt-g.data >"$TMP/i1" 2>&1
"$PERFCONV" info $TD/mt-g.data >"$TMP/i2" 2>&1
"$PERFCONV" info $TD/mt-g.data $TD/kheavy.data >/dev/null 2>"$TMP/i3"
rc=$?
if [ -s "$TMP/i1" ] && cmp -s "$TMP/i1" "$TMP/i2" && [ $rc -eq 2 ] && grep -q "one recording" "$TMP/i3"; then
	ok "info FILE = info -i FILE; two files: exit 2, said"
else
	bad "info FILE: $(head -1 "$TMP/i2"); two files: rc=$rc $(cat "$TMP/i3")"
fi

finish e2e_oldperf
