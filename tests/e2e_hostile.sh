#!/bin/bash
# e2e_hostile: hostile input (issue 12 B) ends within 5 seconds, with exit 0 and a
# warning or exit 1 and an error, never a hang, a crash or silent loss. The inputs are
# crafted here (tests/make-hostile.py) or are FIFOs and devices made on the spot.
source "$(dirname "$0")/e2e_lib.sh"
J=$TD/jit
LIMIT=5

# hostile NAME RCS PATTERN -- ARGS...: perfconv ARGS ends within LIMIT seconds with an
# exit code among RCS (e.g. "0 1") and stderr matching PATTERN (grep -E).
hostile() {
	local name=$1 rcs=$2 pat=$3 rc t0 t1
	shift 4
	t0=$(date +%s%N)
	timeout -k 1 $LIMIT "$PERFCONV" "$@" 2>"$TMP/$name.err" </dev/null
	rc=$?
	t1=$(date +%s%N)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$name: still running after $LIMIT s"
	elif [[ " $rcs " != *" $rc "* ]]; then
		bad "$name: exit $rc, not one of $rcs: $(head -3 "$TMP/$name.err")"
	elif ! grep -qE -- "$pat" "$TMP/$name.err"; then
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
yes | timeout -k 1 $LIMIT "$PERFCONV" -i - -o "$TMP/yes.folded" 2>"$TMP/yes.err"
rc=${PIPESTATUS[1]}
[ $rc -eq 1 ] && grep -q "bad magic" "$TMP/yes.err" && ok "endless stdin: exit 1 at once: $(cat "$TMP/yes.err")" ||
	bad "endless stdin: exit $rc after $(($(date +%s) - t0)) s: $(head -2 "$TMP/yes.err")"
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
# B4: a stack of 3,002 frames keeps them all (1,024 were kept, the outermost cut silently)
hostile deep-stack "0" "samples in" -- -i "$TMP/h/deep.data" "${KS[@]}" --symfs $TD -o "$TMP/deep.folded"
depth=$(awk -F';' '{ if (NF > m) m = NF } END { print m - 1 }' "$TMP/deep.folded" 2>/dev/null)
[ "${depth:-0}" -ge 3002 ] && ok "deep-stack: $depth frames kept" || bad "deep-stack: ${depth:-no} frames, not 3002"
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
