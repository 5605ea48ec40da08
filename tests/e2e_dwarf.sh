#!/bin/bash
# e2e_dwarf: --call-graph dwarf recordings end to end: each sample's user stack unwound
# from its registers and stack copy equals the one perf script prints (paired by thread
# and time, whole stacks); through JIT code for node; the summary's unwinding lines;
# frame-pointer recordings untouched.
source "$(dirname "$0")/e2e_lib.sh"
D=$TD/dwarf
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

# 1. C (-O2 -fomit-frame-pointer, threads, recursion, qsort's callback) and C++
#    (std::sort with a lambda, std::function), libc's CFI from testdata/libc.so.6.
for n in dw dwpp; do
	"$PERFCONV" "${KS[@]}" --symfs $TD --no-inline -f samples -i $D/$n.data \
		-o "$TMP/$n.samples" 2>"$TMP/$n.err"
	compare $n $D/expected/$n.script.gz "$TMP/$n.samples" 99
done
if grep -q $'\tclone3;start_thread;thread_main;level1;level2;work_sort;__GI___qsort_r;msort_with_tmp' "$TMP/dw.samples" &&
	grep -q ';rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_walk;rec_leaf$' "$TMP/dw.samples"; then
	ok "dw: qsort's callback under its callers, 12 recursive frames"
else
	bad "dw: stacks lack the qsort or recursion chains: $(cut -f7 "$TMP/dw.samples" | sort | uniq -c | sort -rn | head -3)"
fi
if grep -q 'unwound 1966 user stacks (--call-graph dwarf); 0 stopped before' "$TMP/dw.err"; then
	ok "dw: the summary says every stack reached its thread's start"
else
	bad "dw: summary: $(grep unwound "$TMP/dw.err")"
fi
# issue 22 item 7: --no-symbols unwinds too (the CFI needs the files, not their names):
# every sample as deep as with symbols, in module+0xoffset frames
"$PERFCONV" -q "${KS[@]}" --symfs $TD --no-symbols -f samples -i $D/dw.data -o "$TMP/dw-nosym.samples"
if [ -s "$TMP/dw-nosym.samples" ] && cmp -s <(awk -F'\t' '{print gsub(/;/, ";", $NF)}' "$TMP/dw.samples") \
	<(awk -F'\t' '{print gsub(/;/, ";", $NF)}' "$TMP/dw-nosym.samples") &&
	grep -q $'\tdw+0x[0-9a-f]*;libc.so.6+0x' "$TMP/dw-nosym.samples"; then
	ok "dw --no-symbols: every stack unwound as deep as with symbols"
else
	bad "dw --no-symbols: $(head -1 "$TMP/dw-nosym.samples" | cut -f7)"
fi
# With inlined frames (the default), a return address in sort_pass shows the calls
# inlined there (std::sort, std::__sort), read at address - 1.
"$PERFCONV" -q "${KS[@]}" --symfs $TD -i $D/dwpp.data -o "$TMP/dwpp.folded"
if grep -q ';run_all;sort_pass;std::sort<__gnu_cxx::__normal_iterator<Item\*, std::vector<Item> >, sort_pass(std::vector<Item>&, uint32_t)::<lambda(const Item&, const Item&)> >;std::__sort<' "$TMP/dwpp.folded"; then
	ok "dwpp: folded stacks carry the inlined frames of unwound return addresses"
else
	bad "dwpp: folded: $(sort -k2 -n -r "$TMP/dwpp.folded" | head -2)"
fi

# 1b. One pc, two objects: remap runs spin_a from liba.so, closes it, and runs spin_b
#    from libb.so, which the loader maps where liba.so was: the same code at the same
#    addresses, and CFI that says 4 KB of stack (liba.so) or none (libb.so, wrong on
#    purpose). The unwinder keeps each pc's module per process epoch: after the
#    remapping, libb.so's rules apply, so its stacks stop at spin_b's caller instead
#    of reaching main through liba.so's.
"$PERFCONV" -q --symfs $TD -i $D/remap.data -o "$TMP/remap.folded" 2>"$TMP/remap.err"
a=$(awk '/;main;run;spin_a( |;)/ {n += $NF} END {print n + 0}' "$TMP/remap.folded")
b=$(awk '/;spin_b( |;)/ {n += $NF} END {print n + 0}' "$TMP/remap.folded")
bmain=$(awk '/;main;run;spin_b( |;)/ {n += $NF} END {print n + 0}' "$TMP/remap.folded")
if [ "$a" -ge 100 ] && [ "$b" -ge 100 ] && [ "$bmain" = 0 ]; then
	ok "remap: liba.so's $a samples unwound to main, libb.so's $b by its own rules (none reach main)"
else
	bad "remap: spin_a reaching main $a, spin_b $b of which $bmain reach main (liba.so's rules used for libb.so)"
fi

# 2. node: JIT frames (the dump node writes) between node's own, on a recording made now
#    with this machine's node (the one scripts/install-deps.sh installs: Debian's
#    nodejs, unless node came from elsewhere), compared with perf script after perf
#    inject --jit on the same file. node itself is not committed (100 MB): a committed
#    recording held only where its very build was installed.
if ! command -v node >/dev/null; then
	bad "node: no node here (scripts/install-deps.sh installs Debian's nodejs)"
else
	N=$TMP/node
	mkdir -p "$N"
	cp $D/src/rec.js "$N/"
	(cd "$N" && perf --buildid-dir "$N/.debug" record -q -k 1 -F 999 --call-graph dwarf -o node.data \
		node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack rec.js 1500 &&
		perf --buildid-dir "$N/.debug" inject --jit -i node.data -o node.injected &&
		perf --buildid-dir "$N/.debug" script -i node.injected --no-inline --ns \
			-F comm,pid,tid,time,event,period,ip,sym,dso 2>/dev/null | gzip >node.script.gz) >"$N/rec.log" 2>&1
	if [ ! -s "$N/node.script.gz" ] && [ "$(id -u)" -ne 0 ]; then
		skip "node: perf could not record node here as $(id -un) ($(tail -1 "$N/rec.log"))"
	elif [ ! -s "$N/node.script.gz" ]; then
		bad "node: perf record, inject --jit or script failed: $(tail -3 "$N/rec.log")"
	else
		"$PERFCONV" --buildid-dir "$N/.debug" --no-inline -f samples -i "$N/node.data" \
			-o "$TMP/node.samples" 2>"$TMP/node.err"
		compare "node ($(node --version))" "$N/node.script.gz" "$TMP/node.samples" 90
		# V8 10 (node 18) names functions LazyCompile:*walk, V8 11 JS:*walk
		if grep -Eq '(JS|LazyCompile):\*outer [^;]*;(JS|LazyCompile):\*walk [^;]*;(JS|LazyCompile):\*walk' "$TMP/node.samples" &&
			grep -Eq 'v8::internal::Execution::Call;([^;]*;)?Builtin:JSEntry;Builtin:JSEntryTrampoline;' "$TMP/node.samples"; then
			ok "node: recursion in JIT code, entered from node's C++"
		else
			bad "node: no JIT recursion under node's frames"
		fi
		if grep -q 'through JIT code with the CFI of [1-9][0-9]* functions. UNWINDING_INFO' "$TMP/node.err"; then
			ok "node: JIT frames stepped with the dump's UNWINDING_INFO"
		else
			bad "node: the dump's UNWINDING_INFO unused: $(grep -A2 unwound "$TMP/node.err")"
		fi
		if grep -q 'samples: the stack copy was too small (8192 bytes): record with --call-graph dwarf,32768' "$TMP/node.err"; then
			ok "node: the summary says which stacks were cut and the size to record with"
		else
			bad "node: summary: $(grep -A4 unwound "$TMP/node.err")"
		fi
	fi
fi

# 3. Another architecture (the header's ARCH feature rewritten): said, not unwound.
python3 - $D/dwpp.data "$TMP/ppc.data" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
arch = b"\x40\x00\x00\x00x86_64\x00"
assert d.count(arch) == 1
open(sys.argv[2], "wb").write(d.replace(arch, b"\x40\x00\x00\x00ppc64\x00\x00"))
PY
"$PERFCONV" "${KS[@]}" --symfs $TD -f folded -i "$TMP/ppc.data" -o "$TMP/ppc.folded" 2>"$TMP/ppc.err"
if grep -q 'user stacks not unwound: the recording.s architecture is ppc64, and only x86-64 and aarch64 are unwound' "$TMP/ppc.err" &&
	! grep -q ';main;run_all' "$TMP/ppc.folded"; then
	ok "another architecture: said once, no unwound stacks"
else
	bad "another architecture: $(head -3 "$TMP/ppc.err")"
fi

# 4. A frame-pointer recording: no unwinding, no summary line about it.
"$PERFCONV" "${KS[@]}" -f folded -i $TD/mt-g.data -o "$TMP/mt.folded" 2>"$TMP/mt.err"
if grep -q unwound "$TMP/mt.err"; then
	bad "mt-g (frame pointers): an unwinding line: $(grep unwound "$TMP/mt.err")"
else
	ok "mt-g (frame pointers): nothing unwound"
fi

finish e2e_dwarf
