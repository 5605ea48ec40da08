#!/bin/sh
# record-sched.sh: rebuilds testdata/sched/sleeper and re-records testdata/sched/sched.data,
# a recording of the scheduler's sched:sched_switch tracepoint beside cpu-clock, and
# perf's golden for it.
#
# Made with (also written to testdata/sched/VERSIONS by this script):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1)
#   gcc (Debian 12.2.0-14+deb12u1) 12.2.0
#   kernel 6.18.44-fc-v1045 (x86_64, 2 CPUs; tracefs at /sys/kernel/tracing)
#
# Run as root (tracepoints need it, or perf_event_paranoid -1 and a readable tracefs),
# from any directory. Everything it writes is in testdata/sched/.
#
# The program (src/sleeper.c, built -O2 -g -fno-omit-frame-pointer -pthread): main
# reads a pipe that "writer" fills after 50 ms, then waits on a mutex "locker" holds for
# 40 ms, then spins 20 ms; "napper" sleeps 20 x 10 ms; "spinner" spins 20 x 5 ms and
# yields after each.
#
# The recordings (cwd $REC = /tmp/perfconv-rec-sched, perf --buildid-dir $REC/.debug):
#   perf record -e sched:sched_switch -e cpu-clock -g -k 1 -o sched.data -- ./sleeper
#   the same with -o - (pipe mode: the tracing data comes as a HEADER_TRACING_DATA
#   record) into sched-pipe.data
# The golden:
#   expected/sched.trace.gz: perf script -i sched.data --ns -F tid,time,event,trace | gzip -9n
#     (each sample's thread, time and event, and for sched_switch its fields as
#     perf prints them: prev_comm=... prev_pid=... prev_state=S ==> next_comm=...)
set -eu

cd "$(dirname "$0")"
TD=$(pwd)/sched
REC=/tmp/perfconv-rec-sched
BID=$REC/.debug
CFLAGS_S="-std=c11 -Wall -Wextra -O2 -g -fno-omit-frame-pointer -pthread"
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC" "$TD/expected"
gcc $CFLAGS_S -o "$TD/sleeper" "$TD/src/sleeper.c"
cp "$TD/sleeper" "$REC/"
(
	cd "$REC"
	perf --buildid-dir "$BID" record -q -e sched:sched_switch -e cpu-clock -g -k 1 \
		-o sched.data -- ./sleeper
	perf --buildid-dir "$BID" record -q -e sched:sched_switch -e cpu-clock -g -k 1 \
		-o - -- ./sleeper >sched-pipe.data
	# (perf says on stderr that cpu-clock samples have no trace fields)
	perf --buildid-dir "$BID" script -i sched.data --ns -F tid,time,event,trace 2>/dev/null |
		gzip -9n >"$TD/expected/sched.trace.gz"
)
cp "$REC/sched.data" "$REC/sched-pipe.data" "$TD/"
chmod 644 "$TD/sched.data" "$TD/sched-pipe.data"
{
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo unknown)"
	echo "gcc: $(gcc --version | head -1)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "cpus: $(nproc)"
	echo "build flags: $CFLAGS_S"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$TD/VERSIONS"
rm -rf "$REC"
echo "record-sched: $(ls -l "$TD/sched.data" | awk '{ print $5 }') bytes," \
	"$(gzip -dc "$TD/expected/sched.trace.gz" | grep -c 'sched:sched_switch') switches"
