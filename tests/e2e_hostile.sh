#!/bin/bash
# e2e_hostile: hostile input (issue 12 B) ends within 5 seconds (of an idle machine:
# bounded in e2e_lib.sh: 10 s of CPU time, 60 s of wall clock), with exit 0 and a
# warning or exit 1 and an error, never a hang, a crash or silent loss. The inputs are
# crafted here (tests/make-hostile.py) or are FIFOs and devices made on the spot.
source "$(dirname "$0")/e2e_lib.sh"
J=$TD/jit
LIMIT=5

# hostile NAME RCS PATTERN -- ARGS...: perfconv ARGS ends within LIMIT seconds with an
# exit code among RCS (e.g. "0 1") and stderr matching PATTERN (grep -E; "" for any).
# Its standard output is kept in $TMP/NAME.out.
hostile() {
	local name=$1 rcs=$2 pat=$3 rc t0 t1
	shift 4
	t0=$(date +%s%N)
	bounded $LIMIT "$PERFCONV" "$@" 2>"$TMP/$name.err" >"$TMP/$name.out" </dev/null
	rc=$?
	t1=$(date +%s%N)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$name: still running after $LIMIT s (of an idle machine: bounded)"
	elif [[ " $rcs " != *" $rc "* ]]; then
		bad "$name: exit $rc, not one of $rcs: $(head -3 "$TMP/$name.err")"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" "$TMP/$name.err"; then
		bad "$name: stderr lacks /$pat/: $(head -3 "$TMP/$name.err")"
	else
		ok "$name: exit $rc in $(((t1 - t0) / 1000000)) ms: $(grep -E -m1 -- "$pat" "$TMP/$name.err")"
	fi
}

# B6: a recording without samples (tests/hostile/no-samples.data: perf record -e
# cpu-clock -c 1000000000 -- true): no sanitizer abort, an empty output.
hostile no-samples "0" "0 samples" -- -i tests/hostile/no-samples.data -o "$TMP/none.folded"
[ -e "$TMP/none.folded" ] && [ ! -s "$TMP/none.folded" ] && ok "no-samples: empty output" ||
	bad "no-samples: output $(ls -la "$TMP/none.folded" 2>&1)"

# B2: FIFOs named like JIT files under --jit-dir: not opened, said.
mkdir -p "$TMP/fifos"
for f in jit-30720.dump jit-30720.dump.gz perf-30720.map; do mkfifo "$TMP/fifos/$f"; done
hostile fifo-jit-dir "0" "jit-30720.dump: warning: not a regular file" -- \
	-q -i $J/node.data --jit-dir "$TMP/fifos" -o "$TMP/fifo.folded"
# ... and beside the recording
mkdir -p "$TMP/beside"
cp $J/node.data "$TMP/beside/"
mkfifo "$TMP/beside/jit-30720.dump" "$TMP/beside/perf-30720.map"
hostile fifo-beside "0" "samples" -- -i "$TMP/beside/node.data" -o "$TMP/beside.folded"
# -i /dev/zero and an endless stream on -i -: the magic is checked first
hostile dev-zero "1" "offset 0x0: bad magic" -- -i /dev/zero -o "$TMP/z.folded"
t0=$(date +%s)
yes | bounded $LIMIT "$PERFCONV" -i - -o "$TMP/yes.folded" 2>"$TMP/yes.err"
rc=${PIPESTATUS[1]}
[ $rc -eq 1 ] && grep -q "bad magic" "$TMP/yes.err" && ok "endless stdin: exit 1 at once: $(cat "$TMP/yes.err")" ||
	bad "endless stdin: exit $rc after $(($(date +%s) - t0)) s: $(head -2 "$TMP/yes.err")"
# issue 21 B5: a pipe header, or a whole pipe recording, followed by endless bytes: the
# records are framed while they are spooled, and the spool ends at the first stretch
# that holds no record (it was spooled to $TMPDIR without bound)
endless() { # NAME RC SAMPLES PATTERN -- PRODUCER...: PRODUCER | perfconv -i -
	local name=$1 rc=$2 want=$3 pat=$4 t0 got
	shift 5
	t0=$(date +%s%N)
	"$@" 2>/dev/null | bounded $LIMIT "$PERFCONV" -i - -f samples --no-symbols \
		-o "$TMP/$name.samples" 2>"$TMP/$name.err"
	got=${PIPESTATUS[1]}
	if [ "$got" != "$rc" ]; then
		bad "$name: exit $got, not $rc, after $((($(date +%s%N) - t0) / 1000000)) ms: $(head -2 "$TMP/$name.err")"
	elif ! grep -qE -- "$pat" "$TMP/$name.err"; then
		bad "$name: stderr lacks /$pat/: $(head -2 "$TMP/$name.err")"
	else
		ok "$name: exit $rc in $((($(date +%s%N) - t0) / 1000000)) ms: $(grep -E -m1 -- "$pat" "$TMP/$name.err")"
		if [ "$want" != - ]; then
			got=$(wc -l <"$TMP/$name.samples")
			[ "$got" = "$want" ] && ok "$name: $got samples" || bad "$name: $got samples, not $want"
		fi
	fi
}
endless pipe-header-zeros 1 - "offset 0x10: warning: not a perf.data record here nor in the 262144 bytes after it: the input is read no further" -- \
	sh -c "head -c 16 $TD/mt-pipe.data; cat /dev/zero"
endless pipe-header-yes 1 - "offset 0x10: warning: not a perf.data record here" -- sh -c "head -c 16 $TD/mt-pipe.data; yes"
endless pipe-then-urandom 0 3157 "offset 0x54174: warning: not a perf.data record here" -- \
	sh -c "cat $TD/mt-pipe.data; cat /dev/urandom"
endless file-then-zeros 0 3985 "offset 0x5ad58: warning: the input goes on after the recording's last feature section" -- \
	sh -c "cat $TD/mt-g.data; cat /dev/zero"
# issue 21 B9: a --threads directory is read as DIR_FORMAT names its files (data.N,
# N below the recorded CPUs), each once: data.01 beside data.1 and 1,990 symlinks to
# data.0 gave 3.7 M samples instead of 3,328
cp -r $TD/mt-threads.data "$TMP/thr-extra.data"
cp "$TMP/thr-extra.data/data.1" "$TMP/thr-extra.data/data.01"
for i in $(seq 2 1991); do ln -s data.0 "$TMP/thr-extra.data/data.$i"; done
hostile threads-extra "0" "warning: 1990 files not read: beyond the 2 CPUs of the recording \(data.0 to data.1\), such as data\.[0-9]+" -- \
	-i "$TMP/thr-extra.data" -f samples --no-symbols -o "$TMP/thr-extra.samples"
grep -q "warning: 1 file named like data files not read: not a name perf writes (data.N), such as data.01" "$TMP/threads-extra.err" &&
	ok "threads-extra: data.01 named" || bad "threads-extra: data.01 not named: $(cat "$TMP/threads-extra.err")"
n=$(wc -l <"$TMP/thr-extra.samples")
[ "$n" = 3328 ] && ok "threads-extra: $n samples, as the directory perf wrote" || bad "threads-extra: $n samples, not 3328"
# ... and a data.1 that is a link to data.0 is not read twice: data.0's samples alone
cp -r $TD/mt-threads.data "$TMP/thr-link.data" && rm "$TMP/thr-link.data/data.1"
want=$("$PERFCONV" -q -i "$TMP/thr-link.data" -f samples --no-symbols -o - | wc -l)
ln -s data.0 "$TMP/thr-link.data/data.1"
hostile threads-link "0" "warning: 1 file not read: the same file as one read already \(a link\), such as data.1" -- \
	-i "$TMP/thr-link.data" -f samples --no-symbols -o "$TMP/thr-link.samples"
n=$(wc -l <"$TMP/thr-link.samples")
[ "$n" = "$want" ] && [ "$n" -gt 0 ] && ok "threads-link: $n samples, data.0's" || bad "threads-link: $n samples, not $want"
# a --threads directory whose data.1 is /dev/zero, or a FIFO
cp -r $TD/mt-threads.data "$TMP/thr.data"
ln -sf /dev/zero "$TMP/thr.data/data.1"
hostile threads-dev-zero "1" "data.1: not a regular file" -- -i "$TMP/thr.data" -o "$TMP/thr.folded"
rm "$TMP/thr.data/data.1" && mkfifo "$TMP/thr.data/data.1"
hostile threads-fifo "1" "data.1: not a regular file" -- -i "$TMP/thr.data" -o "$TMP/thr.folded"
# --kallsyms /dev/zero: a line has a length limit
hostile kallsyms-zero "0" "kallsyms|line longer" -- -q -i $TD/kheavy.data --kallsyms /dev/zero -o "$TMP/kz.folded"

# B4: damage in a real recording is skipped to the next plausible record and said,
# and the records behind it are kept (shapes.data has 2,006 samples).
python3 tests/make-hostile.py "$TMP/h" >/dev/null
damaged() { # NAME SAMPLES PATTERN
	hostile "$1" "0" "$3" -- -i "$TMP/h/$1.data" --symfs $TD -f samples -o "$TMP/$1.samples"
	local n
	n=$(cat "$TMP/$1.samples" 2>/dev/null | wc -l)
	[ "$n" = "$2" ] && ok "$1: $n samples kept" || bad "$1: $n samples, not $2"
}
damaged mmap2-129 2006 "offset 0x[0-9a-f]+: warning: PERF_RECORD_MMAP2: damaged record \(size 129\)"
damaged thread-map 2006 "PERF_RECORD_THREAD_MAP: damaged record \(size 65528\)"
damaged unknown-100 1906 "warning: 100 records of unknown type skipped"
# issue 21 B1, B2: one size field wrong (8 too large, 0: the reader lands inside the
# next record; up to 65,528 bytes that end on a record, against the record's own count
# or filename) is damage: skipped to the next plausible record with a warning naming
# its offset, and every other sample kept (NAME.expect: the samples, the warning)
for n in sample-plus8 sample-zero pipe-plus8 id-index-claims kernel-mmap-claims thread-map-claims; do
	want=$(sed -n 1p "$TMP/h/$n.expect")
	warn=$(sed -n 2p "$TMP/h/$n.expect")
	hostile "$n" "0" "warning: " -- -i "$TMP/h/$n.data" -f samples --no-symbols -o "$TMP/$n.samples"
	grep -qF -- "$warn" "$TMP/$n.err" && ok "$n: warned: $warn" || bad "$n: no '$warn' in: $(head -2 "$TMP/$n.err")"
	got=$(wc -l <"$TMP/$n.samples" 2>/dev/null)
	[ "$got" = "$want" ] && ok "$n: $got samples kept" || bad "$n: ${got:-no} samples, not $want"
done
# issue 21 B10: the fuzzing seeds are the recordings cut small (fuzz/cut.py), still
# converting as perf.data; the pipeline's keeps the JIT code its samples are in
python3 fuzz/cut.py $TD/mt-g.data "$TMP/cut.data"
n=$("$PERFCONV" -q -i "$TMP/cut.data" -f samples --no-symbols -o - | wc -l)
sz=$(stat -c %s "$TMP/cut.data")
[ "$n" = 200 ] && [ "$sz" -lt 65536 ] && ok "fuzz seed: mt-g.data cut to $n samples, $sz bytes" ||
	bad "fuzz seed: mt-g.data cut to $n samples, $sz bytes (want 200, under 64 KB)"
python3 fuzz/pair.py --samples 200 --dump-max 32768 $J/node.data $J/jit-30720.dump "$TMP/pair"
mkdir -p "$TMP/pair.d"
python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", b)[0]
open(sys.argv[2] + "/node.data", "wb").write(b[4:4 + n])
open(sys.argv[2] + "/jit-30720.dump", "wb").write(b[4 + n:])' "$TMP/pair" "$TMP/pair.d"
sz=$(stat -c %s "$TMP/pair")
"$PERFCONV" -q -i "$TMP/pair.d/node.data" --jit-dir "$TMP/pair.d" -o "$TMP/pair.folded"
n=$(grep -c 'JS:\*fibonacci' "$TMP/pair.folded")
[ "$sz" -lt 131072 ] && [ "$n" -gt 0 ] && ok "fuzz seed: node.data and its dump in $sz bytes, $n stacks in JS:*fibonacci" ||
	bad "fuzz seed: node.data and its dump in $sz bytes, $n stacks in JS:*fibonacci"
# B4: a stack of 3,002 frames keeps them all (1,024 were kept, the outermost cut silently)
hostile deep-stack "0" "samples in" -- -i "$TMP/h/deep.data" "${KS[@]}" --symfs $TD -o "$TMP/deep.folded"
depth=$(awk -F';' '{ if (NF > m) m = NF } END { print m - 1 }' "$TMP/deep.folded" 2>/dev/null)
[ "${depth:-0}" -ge 3002 ] && ok "deep-stack: $depth frames kept" || bad "deep-stack: ${depth:-no} frames, not 3002"
# issue 21 B8: a process that mapped its code 50,000 times more at one address; info
# took 4.7 s on it (every lookup walked all the mappings there), the conversion 0.06 s.
# Both now end in about as long as on the intact recording, with the same samples.
LIMIT=3 hostile many-maps-info "0" "" -- info -i "$TMP/h/many-maps.data" "${KS[@]}" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["samples"] == 3985, d["samples"]' \
	"$TMP/many-maps-info.out" 2>/dev/null && ok "many-maps: info counts 3985 samples" ||
	bad "many-maps: info: $(head -c 300 "$TMP/many-maps-info.out")"
LIMIT=3 hostile many-maps "0" "3985 samples" -- -i "$TMP/h/many-maps.data" "${KS[@]}" --symfs $TD \
	-o "$TMP/many-maps.folded"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --symfs $TD -o "$TMP/mt-g.folded"
cmp -s "$TMP/many-maps.folded" "$TMP/mt-g.folded" && ok "many-maps: the same profile as the intact recording" ||
	bad "many-maps: the profile differs from mt-g.data's"
# issue 21 B6: info --json is strict UTF-8 whatever the COMM names hold, and writes
# a u64 as its digits (a time past 2^53 came out as 1.31176846746379e+18)
hostile odd-info "0" "" -- info -i "$TMP/h/odd-info.data" --json --top 1000
python3 - "$TMP/odd-info.out" <<'PY' 2>"$TMP/odd-info.py" && ok "odd-info: strict UTF-8 (U+FFFD in the name) and the time's exact digits" || bad "odd-info: $(tail -1 "$TMP/odd-info.py")"
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8", "strict"))
assert d["time"]["first_ns"] <= 1311768467463790320 <= d["time"]["last_ns"], d["time"]
assert b'"last_ns":\t1311768467463790320' in raw or b'"first_ns":\t1311768467463790320' in raw, d["time"]
assert any("\ufffd" in t["name"] for t in d["threads"]), [t["name"] for t in d["threads"]]
PY
# issue 21 B7: damaged UNWINDING_INFO (one table cut, one not CFI) in the dwarf node
# recording's dump is counted and named, not dropped without a word
hostile unwind-bad "0" "samples met JIT code whose UNWINDING_INFO is not valid CFI \(1 functions, the first JS:\*walk" -- \
	-i "$TMP/h/unwind-bad/node.data" "${KS[@]}" -o "$TMP/unwind-bad.folded"
grep -q "jit-1412.dump: 1 UNWINDING_INFO records damaged" "$TMP/unwind-bad.err" &&
	ok "unwind-bad: the cut record counted, with its dump" || bad "unwind-bad: $(grep -A8 unwound "$TMP/unwind-bad.err")"
mkdir -p "$TMP/unwind-ok" && cp "$TMP/h/unwind-bad/node.data" "$TMP/unwind-ok/" &&
	zcat $TD/dwarf/jit-1412.dump.gz >"$TMP/unwind-ok/jit-1412.dump"
"$PERFCONV" -i "$TMP/unwind-ok/node.data" "${KS[@]}" -o "$TMP/unwind-ok.folded" 2>"$TMP/unwind-ok.err"
! grep -q "UNWINDING_INFO is not valid\|UNWINDING_INFO records damaged" "$TMP/unwind-ok.err" &&
	grep -q "with the CFI of 3 functions' UNWINDING_INFO" "$TMP/unwind-ok.err" &&
	ok "unwind-bad: the intact dump: 3 functions' CFI used, nothing said damaged" ||
	bad "unwind-ok: $(grep -A3 unwound "$TMP/unwind-ok.err")"
# issue 21 B11: a stack pointer of 0 in a dwarf sample was reported as "the stack copy
# was too small: record with --call-graph dwarf,16384" (recorded here: the committed
# dwarf recordings are zstd-compressed)
if perf record -q --call-graph dwarf,4096 -o "$TMP/dwl.data" -- $TD/mt 200 >/dev/null 2>&1; then
	python3 tests/make-hostile.py --sp-zero "$TMP/dwl.data" "$TMP/sp-zero.data" 5 >/dev/null
	hostile sp-zero "0" " 5 samples: the recorded stack pointer is 0" -- -i "$TMP/sp-zero.data" \
		-o "$TMP/sp-zero.folded"
	# a real sample of the recording may have filled its 4096-byte copy: the 5 zeroed
	# ones must add none to that count (the intact recording's count is the bound)
	"$PERFCONV" -i "$TMP/dwl.data" -o "$TMP/dwl.folded" 2>"$TMP/dwl.err"
	small() { sed -n 's/^perfconv: *\([0-9]*\) samples: the stack copy was too small.*/\1/p' "$1" | head -1; }
	n0=$(small "$TMP/dwl.err"); n1=$(small "$TMP/sp-zero.err")
	[ "${n1:-0}" -le "${n0:-0}" ] &&
		ok "sp-zero: no advice to record a bigger copy for them (${n1:-0} too small, intact ${n0:-0})" ||
		bad "sp-zero: ${n1:-0} too small against ${n0:-0} intact: $(grep -A4 unwound "$TMP/sp-zero.err")"
else
	bad "sp-zero: perf record --call-graph dwarf failed here (needs root)"
fi
# B4: a jitdump that is found but gives no code is named (it was dropped silently)
mkdir -p "$TMP/nocode"
head -c 40 $J/jit-30720.dump >"$TMP/nocode/jit-30720.dump"
hostile jitdump-no-code "0" "nocode/jit-30720.dump: warning: no code loads" -- \
	-q -i $J/node.data --jit-dir "$TMP/nocode" -o "$TMP/nocode.folded"

# C10: perf inject --jit copies the running kernel's kallsyms into the build-id cache
# under the recorded kernel's build id. Such a copy of another kernel is refused, said,
# and --kallsyms suggested; kheavy.data's build ids say another kernel here.
if [ -r /sys/kernel/notes ] && [ -r /proc/kallsyms ]; then
	fake=$(printf '11%.0s' $(seq 20))
	mkdir -p "$TMP/bd/[kernel.kallsyms]/$fake"
	cat /proc/kallsyms >"$TMP/bd/[kernel.kallsyms]/$fake/kallsyms"
	PERFCONV_CACHE_DIR=$TMP/cache hostile poisoned-kallsyms "0" \
		"kallsyms is the running kernel's /proc/kallsyms .*another kernel: not used; give .* --kallsyms" -- \
		-i "$TMP/h/other-kernel.data" --buildid-dir "$TMP/bd" -o "$TMP/poisoned.folded"
	! grep -q 'entry_SYSCALL\|do_syscall' "$TMP/poisoned.folded" &&
		ok "poisoned-kallsyms: no kernel frame named from it" ||
		bad "poisoned-kallsyms: kernel frames named from the running kernel's symbols"
else
	skip "poisoned-kallsyms: /sys/kernel/notes or /proc/kallsyms unreadable"
fi

finish e2e_hostile
