#!/bin/sh
# record.sh: rebuilds del and re-records testdata/deleted/del.data, a process whose
# binary was deleted while it ran (issue 22, item 3), and perf script's answer for it.
#
# Run as root (or with perf_event_paranoid <= 1), from any directory:
# testdata/deleted/record.sh. Versions go to testdata/deleted/VERSIONS.
#
# 1. Builds src/del.c into testdata/deleted/del (-O2 -g -fno-omit-frame-pointer).
# 2. Copies it to the scratch directory /tmp/perfconv-rec-deleted and runs it there:
#    it deletes its own binary, says "ready PID", and works for about a second.
# 3. Attaches perf to it then, so that perf takes its mappings from /proc/PID/maps,
#    where the kernel names the binary "/tmp/perfconv-rec-deleted/del (deleted)":
#      perf record -e cpu-clock:u -F 999 -g --sample-cpu -p PID -o del.data -- sleep 0.8
#    (user space only: no kernel symbols needed). perf finds no build id for a
#    deleted file, so the recording has none for it: a converter must take the file
#    it finds unchecked, and say so.
# 4. The golden, expected/del.script.gz: perf script, with a copy of the binary put at
#    the recorded path under its literal name "del (deleted)" (perf 6.1 looks only
#    there, as the mapping is named; the path without " (deleted)" it does not try):
#      perf script --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec-deleted
FLAGS="-std=c11 -Wall -Wextra -O2 -g -fno-omit-frame-pointer"
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC/.debug" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
gcc $FLAGS -o "$TD/del" "$TD/src/del.c"
cp "$TD/del" "$REC/del"
cd "$REC"
./del 5000 > ready.txt &
DPID=$!
for _ in $(seq 50); do
	grep -q ready ready.txt 2>/dev/null && break
	sleep 0.1
done
grep -q "ready $DPID" ready.txt
grep -q ' (deleted)$' "/proc/$DPID/maps"
perf --buildid-dir "$REC/.debug" record -e cpu-clock:u -F 999 -g --sample-cpu -p "$DPID" \
	-o del.data -- sleep 0.8
wait "$DPID"
cp "$TD/del" "$REC/del (deleted)"
perf --buildid-dir "$REC/.debug" script -i del.data --ns \
	-F comm,pid,tid,cpu,time,event,period,ip,sym,dso > del.script
gzip -9n -c del.script > "$TD/expected/del.script.gz"
cp del.data "$TD/del.data"
{
	echo "perf: $(perf --version)"
	echo "gcc: $(gcc --version | head -1)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "build flags: $FLAGS"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$TD/VERSIONS"
echo "record.sh: $(grep -c 'del (deleted)' del.script) frames in the deleted binary, $(grep -c '^del ' del.script) samples"
