#!/bin/sh
# record-dwarf.sh: rebuilds the frame-pointer-less test programs and re-records the
# `--call-graph dwarf` recordings in testdata/dwarf/ and perf's goldens for them.
#
# Made with (also written to testdata/dwarf/VERSIONS by this script):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1)
#   gcc/g++ (Debian 12.2.0-14+deb12u1) 12.2.0, libstdc++6 12.2.0-14+deb12u1
#   libc6 2.36-9+deb12u14 (testdata/libc.so.6 and ld-linux-x86-64.so.2 are these)
#   node v20.20.2 (Debian/nodesource package nodejs)
#
# Run as root from any directory. Everything it writes is in testdata/dwarf/.
#
# Programs (sources in dwarf/src/), built -O2 -g -fomit-frame-pointer:
#   dw    C, threads: thread_main -> level1 -> level2 -> work_sort -> qsort -> cmp_ints,
#         recursion rec_walk x12 -> rec_leaf, main -> main_spin -> main_mix
#   dwpp  C++: std::sort with a lambda, a std::function calling Hasher::step
#   rec.js  node: walk() recursing 10 deep into leaf()
#   remap   C: spin_a from liba.so, dlclose, then spin_b from libb.so at the same
#           addresses (liba.S and libb.S: the same code, CFI that differs)
#
# Recordings (cwd $REC = /tmp/perfconv-rec-dwarf, perf --buildid-dir $REC/.debug), all
# with the default dwarf stack size (8192 bytes):
#   perf record -z -F 999 --call-graph dwarf -o dw.data ./dw 1000
#   perf record -z -F 999 --call-graph dwarf -o dwpp.data ./dwpp 1500
#   perf record -z -F 999 --call-graph dwarf -o remap.data ./remap 300
#   perf record -k 1 -F 999 --call-graph dwarf -o node.data \
#       node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack rec.js 1500
# -z (zstd) keeps the C and C++ recordings small (stack copies compress ~90x). perf 6.1's
# inject --jit does not find the dump in a -z recording, so node.data is recorded
# plain and committed gzipped (node.data.gz), with its dump (jit-PID.dump.gz): input
# for the unwinder's unit and hostile-input tests. There is no golden for it: node is
# not bundled (100 MB), so tests/e2e_dwarf.sh records node at test time with the
# node installed and compares with perf there.
#
# Goldens (perf with the binaries at their recorded paths):
#   expected/NAME.script.gz:
#     perf script -i NAME.data --no-inline --ns -F comm,pid,tid,time,event,period,ip,sym,dso
set -eu

cd "$(dirname "$0")"
TD=$(pwd)/dwarf
REC=/tmp/perfconv-rec-dwarf
BID=$REC/.debug
CFLAGS_DW="-std=c11 -Wall -Wextra -O2 -g -fomit-frame-pointer -pthread"
CXXFLAGS_DW="-std=c++17 -Wall -Wextra -O2 -g -fomit-frame-pointer"
FIELDS=comm,pid,tid,time,event,period,ip,sym,dso
LC_ALL=C
export LC_ALL

perf_() {
	perf --buildid-dir "$BID" "$@"
}

versions() {
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "gcc: $(gcc --version | head -1)"
	echo "libstdc++6: $(dpkg-query -W -f '${Version}' libstdc++6)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "node: $(node --version) ($(dpkg-query -W -f '${Version}' nodejs 2>/dev/null || echo '?'))"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "c flags: $CFLAGS_DW"
	echo "c++ flags: $CXXFLAGS_DW"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

rm -rf "$REC"
mkdir -p "$REC" "$BID" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT

gcc $CFLAGS_DW -o "$TD/dw" "$TD/src/dw.c"
g++ $CXXFLAGS_DW -o "$TD/dwpp" "$TD/src/dwpp.cpp"
gcc $CFLAGS_DW -o "$TD/remap" "$TD/src/remap.c" -ldl
for x in a b; do gcc -shared -fPIC -o "$TD/lib$x.so" "$TD/src/lib$x.S"; done
cp "$TD/dw" "$TD/dwpp" "$TD/remap" "$TD/liba.so" "$TD/libb.so" "$TD/src/rec.js" "$REC/"
cd "$REC"

perf_ record -q -z -F 999 --call-graph dwarf -o dw.data ./dw 1000
perf_ record -q -z -F 999 --call-graph dwarf -o dwpp.data ./dwpp 1500
perf_ record -q -z -F 999 --call-graph dwarf -o remap.data ./remap 300
perf_ record -q -k 1 -F 999 --call-graph dwarf -o node.data \
	node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack rec.js 1500
dump=$(ls jit-*.dump)

for n in dw dwpp; do
	perf_ script -i $n.data --no-inline --ns -F $FIELDS 2>/dev/null | gzip -9n > "$TD/expected/$n.script.gz"
done

rm -f "$TD"/*.data "$TD"/*.data.gz "$TD"/jit-*.dump.gz
cp dw.data dwpp.data remap.data "$TD/"
gzip -9n -c node.data > "$TD/node.data.gz"
gzip -9n -c "$dump" > "$TD/$dump.gz"
chmod -R u+rwX,go+rX "$TD"
versions > "$TD/VERSIONS"
cd "$TD"
for n in dw dwpp; do
	printf '%s: %s samples\n' $n "$(zcat expected/$n.script.gz | grep -c '^[^[:space:]]')"
done
du -sh "$TD"/*
