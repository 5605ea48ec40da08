#!/bin/sh
# record.sh: rebuilds cxxscope and re-records testdata/cxxscope/: C++ functions whose
# DWARF has no linkage name (templates instantiated with lambdas, lambdas' operator(),
# anonymous namespaces, nested classes; issue 34, item 1), and perf script's answers.
#
# Run as root (or with perf_event_paranoid <= 1), from any directory:
# testdata/cxxscope/record.sh. Versions go to testdata/cxxscope/VERSIONS.
#
# 1. Builds src/cxxscope.cpp into testdata/cxxscope/cxxscope (-O2 -g
#    -fno-omit-frame-pointer: frame pointers in its own code, inlined calls in DWARF).
# 2. Records it in /tmp/perfconv-rec-cxxscope (user space only: no kernel symbols):
#      cxxscope-fp.data  perf record -e cpu-clock:u -F 999 -g --sample-cpu ./cxxscope
#      cxxscope-dw.data  perf record -z -e cpu-clock:u -F 999 --call-graph dwarf --sample-cpu ./cxxscope
# 3. The goldens, expected/NAME.script.gz:
#      perf script --no-inline --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso
#    libstdc++, libgcc_s and libc are the system's (their versions are in VERSIONS): the
#    whole-stack comparisons need them installed as recorded. tests/e2e_cxxscope.sh
#    compares every frame's name, inlined ones too, with llvm-symbolizer's at test time.
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec-cxxscope
FLAGS="-std=c++17 -Wall -Wextra -O2 -g -fno-omit-frame-pointer -pthread"
FIELDS=comm,pid,tid,cpu,time,event,period,ip,sym,dso
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC/.debug" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
g++ $FLAGS -o "$TD/cxxscope" "$TD/src/cxxscope.cpp"
cp "$TD/cxxscope" "$REC/cxxscope"
cd "$REC"
perf_() {
	perf --buildid-dir "$REC/.debug" "$@"
}
perf_ record -q -e cpu-clock:u -F 999 -g --sample-cpu -o cxxscope-fp.data ./cxxscope
perf_ record -q -z -e cpu-clock:u -F 999 --call-graph dwarf --sample-cpu -o cxxscope-dw.data ./cxxscope
for n in cxxscope-fp cxxscope-dw; do
	perf_ script -i $n.data --no-inline --ns -F $FIELDS > $n.script
	gzip -9n -c $n.script > "$TD/expected/$n.script.gz"
	cp $n.data "$TD/$n.data"
done
bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
{
	echo "perf: $(perf --version)"
	echo "g++: $(g++ --version | head -1)"
	echo "libstdc++6: $(dpkg-query -W -f '${Version}' libstdc++6) $(bid /lib/x86_64-linux-gnu/libstdc++.so.6)"
	echo "libgcc-s1: $(dpkg-query -W -f '${Version}' libgcc-s1) $(bid /lib/x86_64-linux-gnu/libgcc_s.so.1)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6) $(bid /lib/x86_64-linux-gnu/libc.so.6)"
	echo "llvm-symbolizer: $(llvm-symbolizer --version | sed -n 's/.*LLVM version //p' | head -1)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "flags: $FLAGS"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$TD/VERSIONS"
