#!/bin/bash
# e2e_arm64: aarch64 --call-graph dwarf recordings converted on this host (issue 48):
# testdata/arm64/'s recordings, made under qemu-aarch64 with gdb's backtrace at each
# sample as the truth (testdata/arm64/README.md): every sample's whole user stack equal
# to the truth by name (inlined frames too) and by address (tests/arm64_compare.py),
# through libc's CFI from --symfs, PLT stubs and leaves whose caller is still in x30,
# and JIT code whose CFI is only in its jitdump's UNWINDING_INFO; the summary's lines;
# 32-bit processes and other architectures said, not unwound.
source "$(dirname "$0")/e2e_lib.sh"
A=$TD/arm64
export PERFCONV_CACHE_DIR=$TMP/cache

compare() { # NAME TRUTH SAMPLES [compare options]
	local name=$1
	shift
	if python3 tests/arm64_compare.py "$@" --min-equal 99 >"$TMP/cmp" 2>&1; then
		ok "$name: $(tail -1 "$TMP/cmp" | sed 's/^arm64_compare: //')"
	else
		bad "$name: $(tail -1 "$TMP/cmp")"
		head -12 "$TMP/cmp"
	fi
}

# 1. The three recordings: whole stacks by name (with inlined frames) and, but for the
#    JIT's (--no-symbols reads no jitdump), by address.
for r in c cxx jit; do
	"$PERFCONV" --symfs $A/symfs -f samples -i $A/$r.data -o "$TMP/$r.samples" 2>"$TMP/$r.err"
	"$PERFCONV" -q --symfs $A/symfs --no-symbols -f samples -i $A/$r.data -o "$TMP/$r.nosym"
	addrs=(--addrs "$TMP/$r.nosym")
	[ $r = jit ] && addrs=()
	compare "$r.data" $A/$r.truth "$TMP/$r.samples" "${addrs[@]}"
done
n=$(wc -l <$A/c.truth)
if grep -q "unwound $n user stacks (--call-graph dwarf); 0 stopped before the thread's start" "$TMP/c.err" &&
	! grep -q 'not unwound' "$TMP/c.err"; then
	ok "c.data: the summary says every stack reached its thread's start"
else
	bad "c.data: summary: $(grep -A3 unwound "$TMP/c.err")"
fi
# the PLT stubs' samples (no CFI: ld writes none for .plt on aarch64)
if grep -q "  [1-9][0-9]* samples: code without CFI stepped through by its frame pointer (x29's frame records; at the leaf, its caller from x30)" "$TMP/c.err"; then
	ok "c.data: the summary says which stacks were stepped without CFI"
else
	bad "c.data: summary: $(grep -A3 unwound "$TMP/c.err")"
fi
# what the recordings exercise, seen in the output: a leaf whose caller is in x30 (with
# CFI: leaf_mix; without: a PLT stub), libc's frames between qsort's caller and the
# callback, recursion, inlined frames of an unwound return address, a JIT frame between C
# frames
if grep -q ';rec_walk;snprintf@plt$' "$TMP/c.samples" &&
	grep -q ';stage_b;qsort_r;libc.so.6+0x[0-9a-f]*;[^\t]*;cmp_u64;leaf_mix$' "$TMP/c.samples" &&
	grep -q ';rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk' "$TMP/c.samples"; then
	ok "c.data: leaves and PLT stubs under their callers, qsort's callback under libc's frames, recursion"
else
	bad "c.data: $(cut -f7 "$TMP/c.samples" | sort | uniq -c | sort -rn | head -3)"
fi
if grep -q ';run_all;sort_pass;std::sort<[^;]*;std::__sort<[^;]*;std::__introsort_loop<' "$TMP/cxx.samples" &&
	grep -q '::operator();scramble$' "$TMP/cxx.samples"; then
	ok "cxx.data: inlined frames under unwound return addresses and at the leaf"
else
	bad "cxx.data: no inlined chains: $(cut -f7 "$TMP/cxx.samples" | sort | uniq -c | sort -rn | head -2)"
fi
if grep -q $'\t_start;__libc_start_main;libc.so.6+0x[0-9a-f]*;main;drive;jit_loop;callback;inner_work$' "$TMP/jit.samples" &&
	grep -q "through JIT code with the CFI of 1 functions' UNWINDING_INFO" "$TMP/jit.err"; then
	ok "jit.data: JIT frames stepped with the dump's UNWINDING_INFO, between C frames"
else
	bad "jit.data: $(grep -A3 unwound "$TMP/jit.err")"
fi

# 2. The JIT code's CFI is what unwinds it: the same recording with a dump that lacks
#    its UNWINDING_INFO (jit_loop saves x30 with no frame record) loses the stacks that
#    pass through it.
mkdir "$TMP/nocfi"
cp $A/jit.data $A/jitprog "$TMP/nocfi/"
python3 - $A/jit-4242.dump "$TMP/nocfi/jit-4242.dump" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
out, q = bytearray(d[:40]), 40
while q < len(d):
    rid, size = struct.unpack_from("<II", d, q)
    if rid != 4:
        out += d[q:q + size]
    q += size
open(sys.argv[2], "wb").write(out)
PY
"$PERFCONV" -q --symfs $A/symfs -f samples -i "$TMP/nocfi/jit.data" -o "$TMP/nocfi.samples" 2>/dev/null
if ! python3 tests/arm64_compare.py $A/jit.truth "$TMP/nocfi.samples" --min-equal 99 >"$TMP/cmp" 2>&1; then
	ok "jit.data without UNWINDING_INFO: $(tail -1 "$TMP/cmp" | sed 's/^arm64_compare: //')"
else
	bad "jit.data without UNWINDING_INFO unwinds as well: the dump's CFI is not what steps it"
fi

# 3. What is not unwound is said: a 32-bit process (the samples' ABI rewritten to
#    PERF_SAMPLE_REGS_ABI_32: an arm process on an arm64 kernel), another architecture.
python3 - $A/c.data "$TMP/abi32.data" "$TMP/ppc.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
data_off, data_size = struct.unpack_from("<QQ", d, 40)
q = data_off
while q < data_off + data_size:
    typ, misc, size = struct.unpack_from("<IHH", d, q)
    if typ == 9:  # IP, TID, TIME, PERIOD, an empty callchain, then the registers' ABI
        assert struct.unpack_from("<Q", d, q + 48)[0] == 2
        struct.pack_into("<Q", d, q + 48, 1)
    q += size
open(sys.argv[2], "wb").write(d)
d = bytes(open(sys.argv[1], "rb").read())
arch = b"\x40\x00\x00\x00aarch64\x00"
assert d.count(arch) == 1
open(sys.argv[3], "wb").write(d.replace(arch, b"\x40\x00\x00\x00ppc64\x00\x00\x00"))
PY
"$PERFCONV" --symfs $A/symfs -f folded -i "$TMP/abi32.data" -o "$TMP/abi32.folded" 2>"$TMP/abi32.err"
if grep -q 'user stacks not unwound: samples of 32-bit processes (i386, or 32-bit arm, whose code carries ARM EHABI tables' "$TMP/abi32.err" &&
	! grep -q ';main;' "$TMP/abi32.folded" && [ "$(awk '{n += $NF} END {print n}' "$TMP/abi32.folded")" = "$n" ]; then
	ok "32-bit process: said, each sample its leaf"
else
	bad "32-bit process: $(head -3 "$TMP/abi32.err")"
fi
"$PERFCONV" --symfs $A/symfs -f folded -i "$TMP/ppc.data" -o "$TMP/ppc.folded" 2>"$TMP/ppc.err"
if grep -q 'user stacks not unwound: the recording.s architecture is ppc64, and only x86-64 and aarch64 are unwound' "$TMP/ppc.err" &&
	! grep -q ';main;' "$TMP/ppc.folded"; then
	ok "another architecture: said, not unwound"
else
	bad "another architecture: $(head -3 "$TMP/ppc.err")"
fi

finish e2e_arm64
