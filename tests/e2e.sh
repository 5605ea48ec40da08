#!/bin/bash
# e2e: run the built perfconv on the committed real recordings and bad inputs, and
# compare with what perf itself printed for the same recordings (testdata/expected/).
source "$(dirname "$0")/e2e_lib.sh"
EXP=$TD/expected
# perf script and perf report show no frames for inlined calls unless asked to.
NOINL=(--no-inline)

# 1. Every sample's stack equals perf script's; per-symbol self counts equal perf report's.
compare() { # NAME EVENT...: samples of all events, then per event the folded self counts
	local name=$1 in=$TD/$1.data ev
	shift
	[ -e "$in" ] || { bad "$name: recording missing"; return; }
	if ! "$PERFCONV" -q -i "$in" "${KS[@]}" "${NOINL[@]}" -f samples -o "$TMP/$name.samples" 2>"$TMP/$name.err"; then
		bad "$name: perfconv failed: $(head -3 "$TMP/$name.err")"
		return
	fi
	# perf's frame-pointer mode names a noreturn call's caller by the next function
	# (ld.so's _start by _dl_start_user): checked on the binaries' symbols in $TD
	if python3 tests/perfscript_compare.py --noreturn-callers $TD "$EXP/$name.script.gz" \
		"$TMP/$name.samples" >"$TMP/$name.cmp" 2>&1; then
		ok "$name: $(tail -1 "$TMP/$name.cmp")"
	else
		bad "$name: differs from perf script:"
		head -40 "$TMP/$name.cmp"
	fi
	for ev in "$@"; do
		local evopt=() rep=()
		[ "$ev" = - ] || { evopt=(--event "$ev"); rep=(--event "$ev"); }
		if ! "$PERFCONV" -q -i "$in" "${KS[@]}" "${NOINL[@]}" "${evopt[@]}" -f folded -o "$TMP/$name.folded" 2>"$TMP/$name.err"; then
			bad "$name: perfconv -f folded ${evopt[*]} failed: $(head -3 "$TMP/$name.err")"
			continue
		fi
		if python3 tests/perfscript_compare.py --noreturn-callers $TD "$EXP/$name.script.gz" "$TMP/$name.samples" \
			--report "$EXP/$name.report" "$TMP/$name.folded" "${rep[@]}" >"$TMP/$name.cmp" 2>&1; then
			ok "$name ${evopt[*]}: $(tail -1 "$TMP/$name.cmp")"
		else
			bad "$name ${evopt[*]}: self counts differ from perf report:"
			head -40 "$TMP/$name.cmp"
		fi
	done
}
for name in mt-g mt-z mt-pipe mt-threads mt-k1 kheavy execer shapes; do
	compare $name -
done
compare two-event cpu-clock page-faults

# 2. Pipe mode from a real pipe equals the same bytes read as a file.
# (a pipe has no directory to find binaries in: both sides get --symfs)
SYMFS=(--symfs $TD)
"$PERFCONV" -q -i $TD/mt-pipe.data "${KS[@]}" "${SYMFS[@]}" -o "$TMP/file.folded" 2>/dev/null
if cat $TD/mt-pipe.data | "$PERFCONV" -q -i - "${KS[@]}" "${SYMFS[@]}" -o "$TMP/pipe.folded" &&
	cmp -s "$TMP/file.folded" "$TMP/pipe.folded" && [ -s "$TMP/pipe.folded" ]; then
	ok "pipe: cat mt-pipe.data | perfconv -i - equals perfconv -i mt-pipe.data"
else
	bad "pipe: reading mt-pipe.data from a pipe differs from reading the file"
fi
# perf itself turns the file-mode recording into a pipe stream: the output must not change.
if command -v perf >/dev/null; then
	"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" "${SYMFS[@]}" -o "$TMP/g-file.folded" 2>/dev/null
	if perf inject -i $TD/mt-g.data -o - 2>/dev/null | "$PERFCONV" -q -i - "${KS[@]}" "${SYMFS[@]}" -o "$TMP/g-pipe.folded" &&
		cmp -s "$TMP/g-file.folded" "$TMP/g-pipe.folded" && [ -s "$TMP/g-pipe.folded" ]; then
		ok "pipe: perf inject -o - of mt-g.data through a pipe equals the file"
	else
		bad "pipe: perf inject -o - | perfconv -i - differs from the file"
		diff "$TMP/g-file.folded" "$TMP/g-pipe.folded" | head -10
	fi
fi

# 3. Bad input: one error line naming the file and offset, exit 1, no output file.
for b in tests/bad/*.data; do
	[ -e "$b" ] || continue
	n=$(basename "$b" .data)
	expect=$(cat "tests/bad/$n.expect")
	out="$TMP/bad-$n.folded"
	"$PERFCONV" -q -i "$b" -o "$out" 2>"$TMP/bad-$n.err"
	rc=$?
	if [[ "$expect" == *": warning: "* ]]; then
		# damage that can be skipped: converts what came before, warns, exit 0
		if [ $rc -eq 0 ] && [ -s "$out" ] && grep -qF -- "$expect" "$TMP/bad-$n.err"; then
			ok "bad input $n: converted with a warning"
		else
			bad "bad input $n: rc=$rc, stderr: $(head -2 "$TMP/bad-$n.err")"
		fi
		continue
	fi
	if [ $rc -eq 1 ] && [ ! -e "$out" ] && grep -qF -- "$expect" "$TMP/bad-$n.err" &&
		[ "$(grep -c . "$TMP/bad-$n.err")" -eq 1 ] && grep -q "offset 0x" "$TMP/bad-$n.err"; then
		ok "bad input $n: $(cat "$TMP/bad-$n.err")"
	else
		bad "bad input $n: rc=$rc, left output: $([ -e "$out" ] && echo yes || echo no), stderr: $(cat "$TMP/bad-$n.err")"
	fi
	ls "$TMP"/bad-"$n".folded.tmp.* >/dev/null 2>&1 && bad "bad input $n: temporary file left behind"
done

# 4. The command line.
"$PERFCONV" --help >"$TMP/help" 2>&1 && grep -q -- "--symfs" "$TMP/help" && ok "cli: --help" || bad "cli: --help"
"$PERFCONV" --no-such-option >/dev/null 2>&1; [ $? -eq 2 ] && ok "cli: unknown option exits 2" || bad "cli: unknown option exit code"
"$PERFCONV" -f nosuch -i $TD/mt-g.data >/dev/null 2>&1; [ $? -eq 2 ] && ok "cli: unknown format exits 2" || bad "cli: unknown format exit code"
"$PERFCONV" -i "$TMP/does-not-exist.data" -o "$TMP/x.folded" >/dev/null 2>&1; [ $? -eq 1 ] && ok "cli: missing input exits 1" || bad "cli: missing input exit code"
# the format follows the output's suffix
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/x.samples" && head -1 "$TMP/x.samples" | grep -q $'\t' &&
	ok "cli: format from the suffix" || bad "cli: format from the suffix"
# filters
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --comm mt-alpha -o "$TMP/alpha.folded"
if [ -s "$TMP/alpha.folded" ] && ! grep -qv '^mt-alpha;' "$TMP/alpha.folded"; then
	ok "cli: --comm keeps only that thread name"
else
	bad "cli: --comm mt-alpha"
fi
tid=$(cut -f2 "$TMP/mt-g.samples" | sort | uniq -c | sort -rn | head -1 | awk '{print $2}' | cut -d/ -f2)
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --tid "$tid" -f samples -o "$TMP/tid.samples"
if [ -s "$TMP/tid.samples" ] && ! cut -f2 "$TMP/tid.samples" | grep -qv "/$tid\$"; then
	ok "cli: --tid $tid keeps only that thread"
else
	bad "cli: --tid"
fi
# issue 22 item 12: a filter that matches nothing is an error that names the processes
"$PERFCONV" -i $TD/mt-g.data "${KS[@]}" --pid 1 -o "$TMP/none.folded" 2>"$TMP/none.err"
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$TMP/none.folded" ] &&
	grep -q 'no sample matches --pid, --tid or --comm (3985 samples left out)' "$TMP/none.err" &&
	grep -q '^perfconv: *3985  mt (pid [0-9]*)$' "$TMP/none.err"; then
	ok "cli: --pid matching nothing: exit 1, no output, the processes named"
else
	bad "cli: --pid 1: exit $rc: $(cat "$TMP/none.err")"
fi
# --weight period sums the period: cpu-clock periods are nanoseconds
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --weight period -o "$TMP/period.folded"
want=$(awk -F'\t' '{s += $6} END {print s}' "$TMP/mt-g.samples")
got=$(awk '{s += $NF} END {print s}' "$TMP/period.folded")
[ "$want" = "$got" ] && [ "$got" -gt 0 ] && ok "cli: --weight period sums $got ns" || bad "cli: --weight period: $got != $want"
# --with-tid prefixes comm-PID/TID
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --with-tid -o "$TMP/tid.folded"
grep -qE '^[^;]+-[0-9]+/[0-9]+;' "$TMP/tid.folded" && ok "cli: --with-tid" || bad "cli: --with-tid"
# --annotate marks kernel frames
"$PERFCONV" -q -i $TD/kheavy.data "${KS[@]}" --annotate -o "$TMP/ann.folded"
grep -q '_\[k\]' "$TMP/ann.folded" && ok "cli: --annotate marks kernel frames" || bad "cli: --annotate"
# --no-symbols: raw module+0xoffset frames, same sample count
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --no-symbols -o "$TMP/raw.folded"
if grep -q 'mt+0x' "$TMP/raw.folded" && [ "$(awk '{s+=$NF} END{print s}' "$TMP/raw.folded")" = "$(wc -l <"$TMP/mt-g.samples")" ]; then
	ok "cli: --no-symbols keeps every sample with raw frames"
else
	bad "cli: --no-symbols"
fi
# -o - writes to standard output
n=$("$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o - | wc -l)
[ "$n" -gt 0 ] && ok "cli: -o - writes to stdout ($n lines)" || bad "cli: -o -"

# Output to something that is not a regular file is written in place: a temporary file
# renamed over it would replace the device (a private null device, so that a
# regression cannot break the machine's /dev/null).
if mknod "$TMP/null" c 1 3 2>/dev/null; then
	"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/null"
	[ -c "$TMP/null" ] && ! ls "$TMP"/null.tmp.* >/dev/null 2>&1 &&
		ok "cli: -o to a character device writes into it, the device stays" ||
		bad "cli: -o to a character device replaced it: $(ls -la "$TMP/null")"
else
	skip "cli: -o to a device (mknod needs root)"
fi
mkfifo "$TMP/fifo"
(cat "$TMP/fifo" >"$TMP/fifo.out" &)
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/fifo"
# (cat writes what it read in its own time: waited for)
wait_for 60 test -s "$TMP/fifo.out"
[ -p "$TMP/fifo" ] && [ "$(wc -l <"$TMP/fifo.out")" -gt 0 ] &&
	ok "cli: -o to a FIFO streams into it" || bad "cli: -o to a FIFO"

# 5. Honest output: without the binary, frames show as module+0xoffset and the summary says so.
# (an empty build-id cache: the user's ~/.debug may well hold this very binary)
mkdir -p "$TMP/alone" "$TMP/empty-cache"
cp $TD/mt-g.data "$TMP/alone/"
"$PERFCONV" -i "$TMP/alone/mt-g.data" "${KS[@]}" --buildid-dir "$TMP/empty-cache" -o "$TMP/alone.folded" 2>"$TMP/alone.err"
if grep -q ';mt+0x' "$TMP/alone.folded" && grep -q 'samples have frames with no symbol' "$TMP/alone.err" &&
	grep -q 'mt (file not found)' "$TMP/alone.err"; then
	ok "honest: a missing binary gives mt+0x... frames and a summary naming it"
else
	bad "honest: missing binary: $(cat "$TMP/alone.err")"
fi

# 6. Memory follows distinct stacks, not samples: a recording grown to many times its
# samples (bench/grow.py repeats each sample record in place) gives every folded count
# multiplied, with about the peak RSS of the original (samples aggregated as they
# come, the read part of the mapped file let go). The grown copy is in another folder:
# --symfs names where mt is, so that nothing depends on what ~/.debug holds.
python3 bench/grow.py $TD/mt-g.data "$TMP/grown.data" 96 >"$TMP/grown.txt"
copies=$(awk '{ print $3 }' "$TMP/grown.txt")
/usr/bin/time -f %M -o "$TMP/rss0" "$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/once.folded"
/usr/bin/time -f %M -o "$TMP/rss1" "$PERFCONV" -q -i "$TMP/grown.data" "${KS[@]}" --symfs $TD -o "$TMP/grown.folded"
awk -v k="$copies" '{ $NF = $NF * k; print }' "$TMP/once.folded" >"$TMP/once.times.folded"
rss0=$(tail -1 "$TMP/rss0")
rss1=$(tail -1 "$TMP/rss1")
if [ "$copies" -gt 100 ] && cmp -s "$TMP/once.times.folded" "$TMP/grown.folded" &&
	[ "$rss1" -lt $((rss0 + 24 * 1024)) ]; then
	ok "streaming: $copies times the samples, counts $copies times, peak RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MB"
else
	bad "streaming: $copies copies, peak RSS $rss0 -> $rss1 KB; $(diff "$TMP/once.times.folded" "$TMP/grown.folded" | head -5)"
fi
rm -f "$TMP/grown.data"

# 7. The summary counts stacks, not call-tree nodes: with --no-symbols every frame is
# its address, so the distinct stack texts of the samples output are the stacks. In
# execer several processes run the same binary, each mapped at its own address: the
# same code's stacks are one, as they are one text (88 counted before frames were
# kept by object, 87 texts).
for name in mt-g kheavy execer; do
	"$PERFCONV" -i $TD/$name.data "${KS[@]}" --no-symbols -f samples -o "$TMP/ns.samples" 2>"$TMP/ns.err"
	said=$(sed -n 's/.* samples in \([0-9]*\) distinct stacks.*/\1/p' "$TMP/ns.err")
	have=$(cut -f7 "$TMP/ns.samples" | sort -u | wc -l)
	[ -n "$said" ] && [ "$said" -eq "$have" ] &&
		ok "summary: $name: $said distinct stacks, as the samples show" ||
		bad "summary: $name: said '$said' distinct stacks, the samples have $have: $(head -1 "$TMP/ns.err")"
done

# 8. Diagnostics never cost the output: with stderr a pipe nobody reads (2>&1 | head -1
# once head has gone), the conversion still ends 0 with its output in place.
rm -f "$TMP/pipe.folded"
rc=$(python3 - "$PERFCONV" -i $TD/mt-g.data "${KS[@]}" --buildid-dir "$TMP/empty-cache" -o "$TMP/pipe.folded" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)  # the reader is gone before the first line
print(subprocess.run(sys.argv[1:], stderr=w).returncode)
PY
)
[ "$rc" = 0 ] && [ -s "$TMP/pipe.folded" ] && ok "stderr closed: exit 0, output written" ||
	bad "stderr closed: exit $rc, output $(ls "$TMP/pipe.folded" 2>&1)"

# issue 22 item 2: perf record --user-callchains: a sample taken in the kernel has a
# user-space callchain only, and its ip (the kernel address) was dropped. Recorded here
# (live kernel symbols: the running kernel is the recorded one): as many samples with a
# kernel frame as perf script shows kernel ips, and the summary says why.
if perf record -q --user-callchains -g -o "$TMP/uc.data" -- \
	dd if=/dev/zero of=/dev/null bs=512 count=300000 >/dev/null 2>&1; then
	kperf=$(perf script -i "$TMP/uc.data" -G -F ip 2>/dev/null | awk '$1 ~ /^ffff/ {k++} END {print k + 0}')
	"$PERFCONV" -i "$TMP/uc.data" --annotate -o "$TMP/uc.folded" 2>"$TMP/uc.err"
	kconv=$(awk '/_\[k\]/ {k += $NF} END {print k + 0}' "$TMP/uc.folded")
	if [ "$kperf" -gt 0 ] && [ "$kconv" = "$kperf" ] &&
		grep -q "^perfconv: $kperf samples were taken in the kernel with user-space callchains only" "$TMP/uc.err"; then
		ok "--user-callchains: $kconv samples keep their kernel leaf, as perf's ips say, and the summary says so"
	else
		bad "--user-callchains: $kconv samples with a kernel frame, perf has $kperf kernel ips: $(tail -2 "$TMP/uc.err")"
	fi
else
	bad "--user-callchains: perf record failed here (needs root)"
fi

finish e2e
