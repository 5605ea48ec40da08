#!/bin/sh
# record.sh: rebuilds nr and re-records testdata/noreturn/, callers whose last
# instruction is a call that does not return (issue 22, item 1), and perf's answers.
#
# Run as root (or with perf_event_paranoid <= 1), from any directory:
# testdata/noreturn/record.sh. Versions go to testdata/noreturn/VERSIONS.
#
# 1. Builds src/nr.c into testdata/noreturn/nr (-O2 -g -fno-omit-frame-pointer
#    -falign-functions=1: each noreturn call is its function's last instruction, the
#    next function right after it).
# 2. Records it in /tmp/perfconv-rec-noreturn (user space only: no kernel symbols):
#      nr-fp.data     perf record -e cpu-clock:u -F 2999 -g --sample-cpu ./nr 20000000
#      nr-dw.data     perf record -z -e cpu-clock:u -F 2999 --call-graph dwarf --sample-cpu ./nr 20000000
#      start-fp.data  perf record -e cpu-clock:u -c 50000 -g --sample-cpu ./nr 0
#      start-dw.data  perf record -z -e cpu-clock:u -c 50000 --call-graph dwarf --sample-cpu ./nr 0
#    The start-* recordings sample every 50 us, so that ld.so's start (_start calling
#    _dl_start, which returns to _dl_start_user) has samples.
# 3. The goldens, expected/NAME.script.gz:
#      perf script --no-inline --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso
#    perf's dwarf mode looks every caller up at its return address - 1 (but where a
#    signal interrupted a frame): its answer is the right one. Its frame-pointer mode
#    looks the return address itself up, and names the function after a noreturn
#    call's caller (tests/perfscript_compare.py --noreturn-callers checks that).
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec-noreturn
FLAGS="-std=c11 -Wall -Wextra -O2 -g -fno-omit-frame-pointer -falign-functions=1"
FIELDS=comm,pid,tid,cpu,time,event,period,ip,sym,dso
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC/.debug" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
gcc $FLAGS -o "$TD/nr" "$TD/src/nr.c"
cp "$TD/nr" "$REC/nr"
cd "$REC"
perf_() {
	perf --buildid-dir "$REC/.debug" "$@"
}
perf_ record -q -e cpu-clock:u -F 2999 -g --sample-cpu -o nr-fp.data ./nr 20000000
perf_ record -q -z -e cpu-clock:u -F 2999 --call-graph dwarf --sample-cpu -o nr-dw.data ./nr 20000000
perf_ record -q -e cpu-clock:u -c 50000 -g --sample-cpu -o start-fp.data ./nr 0
perf_ record -q -z -e cpu-clock:u -c 50000 --call-graph dwarf --sample-cpu -o start-dw.data ./nr 0
for n in nr-fp nr-dw start-fp start-dw; do
	perf_ script -i $n.data --no-inline --ns -F $FIELDS > $n.script
	gzip -9n -c $n.script > "$TD/expected/$n.script.gz"
	cp $n.data "$TD/$n.data"
done
{
	echo "perf: $(perf --version)"
	echo "gcc: $(gcc --version | head -1)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "flags: $FLAGS"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$TD/VERSIONS"
