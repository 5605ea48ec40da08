#!/bin/sh
# record.sh: rebuilds cxx and re-records testdata/cxx/, C++ through its PLT entries and
# through an epilogue whose CFI gives CFA=rsp+0 with the return address in a register
# (issue 22, item 10), and perf script's answers.
#
# Run as root (or with perf_event_paranoid <= 1), from any directory:
# testdata/cxx/record.sh. Versions go to testdata/cxx/VERSIONS.
#
# 1. Builds src/cxx.cpp into testdata/cxx/cxx (-O2 -g -fno-omit-frame-pointer).
# 2. Records it in /tmp/perfconv-rec-cxx (user space only: no kernel symbols):
#      cxx-fp.data  perf record -e cpu-clock:u -F 999 -g --sample-cpu ./cxx
#      cxx-dw.data  perf record -z -e cpu-clock:u -F 999 --call-graph dwarf --sample-cpu ./cxx
# 3. The goldens, expected/NAME.script.gz:
#      perf script --no-inline --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso
#    libstdc++ and libgcc_s are the system's (their build ids are in VERSIONS): the
#    whole-stack tests need them installed as recorded.
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec-cxx
FLAGS="-std=c++17 -Wall -Wextra -O2 -g -fno-omit-frame-pointer"
FIELDS=comm,pid,tid,cpu,time,event,period,ip,sym,dso
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC/.debug" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
g++ $FLAGS -o "$TD/cxx" "$TD/src/cxx.cpp"
cp "$TD/cxx" "$REC/cxx"
cd "$REC"
perf_() {
	perf --buildid-dir "$REC/.debug" "$@"
}
perf_ record -q -e cpu-clock:u -F 999 -g --sample-cpu -o cxx-fp.data ./cxx
perf_ record -q -z -e cpu-clock:u -F 999 --call-graph dwarf --sample-cpu -o cxx-dw.data ./cxx
for n in cxx-fp cxx-dw; do
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
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "flags: $FLAGS"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$TD/VERSIONS"
