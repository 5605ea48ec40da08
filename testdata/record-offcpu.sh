#!/bin/sh
# record-offcpu.sh: rebuilds testdata/offcpu/offcpu and re-records the off-CPU
# recordings in testdata/offcpu/ (issue 19). Run as root, from testdata/ or anywhere:
# testdata/record-offcpu.sh. The versions used go to testdata/offcpu/VERSIONS.
#
# The program (src/offcpu.c) has four threads that wait in known ways for known
# times: sleeper 3 x nanosleep(200 ms), locker a mutex main holds 300 ms, reader a
# pipe main writes at 400 ms, spinner 500 ms on the CPU. Recorded (cwd $REC, perf's
# build-id cache in $REC/.debug):
#   offcpu.data     perf record -e sched:sched_switch -e cpu-clock -g -k 1 --switch-events ./offcpu
#                   the program's threads only: each switch-out is a sched_switch sample
#                   with the blocking stack, each switch-in a PERF_RECORD_SWITCH
#   offcpu-a.data   perf record -a -z -e sched:sched_switch -e sched:sched_wakeup
#                   -e cpu-clock -g -k 1 ./offcpu
#                   system-wide: every switch of every CPU, compressed
#   offcpu-sw.data  perf record -e cpu-clock -g -k 1 --switch-events ./offcpu
#                   no tracepoints: PERF_RECORD_SWITCH alone gives the times
# and kallsyms.gz, the running kernel's /proc/kallsyms (sibling calls are kept as
# calls, -fno-optimize-sibling-calls, so that each wait keeps its own frame).
set -eu
cd "$(dirname "$0")"
TD=$(pwd)/offcpu
REC=/tmp/perfconv-rec-offcpu
BID=$REC/.debug
CFLAGS_OFF="-std=c11 -Wall -Wextra -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread"

perf_() {
	perf --buildid-dir "$BID" "$@"
}

versions() {
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "gcc: $(gcc --version | head -1)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "kernel: $(uname -r) $(uname -m), $(nproc) CPUs"
	echo "kernel build id: $(perf buildid-list -k 2>/dev/null || echo '?')"
	echo "c flags: $CFLAGS_OFF"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

rm -rf "$REC"
mkdir -p "$REC" "$BID"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT

gcc $CFLAGS_OFF -o "$TD/offcpu" "$TD/src/offcpu.c"
cp "$TD/offcpu" "$REC/"
cd "$REC"
perf_ record -q -e sched:sched_switch -e cpu-clock -g -k 1 --switch-events -o offcpu.data ./offcpu
perf_ record -q -a -z -e sched:sched_switch -e sched:sched_wakeup -e cpu-clock -g -k 1 \
	-o offcpu-a.data ./offcpu
perf_ record -q -e cpu-clock -g -k 1 --switch-events -o offcpu-sw.data ./offcpu
rm -f "$TD"/*.data
cp offcpu.data offcpu-a.data offcpu-sw.data "$TD/"
# the running kernel's symbols, for converting on another kernel (root reads addresses)
gzip -9n -c /proc/kallsyms > "$TD/kallsyms.gz.tmp" 2>/dev/null || [ -s "$TD/kallsyms.gz.tmp" ]
mv "$TD/kallsyms.gz.tmp" "$TD/kallsyms.gz"
chmod -R u+rwX,go+rX "$TD"
versions > "$TD/VERSIONS"
du -sh "$TD"/*
