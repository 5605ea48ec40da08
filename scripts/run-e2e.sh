#!/bin/bash
# run-e2e: the end-to-end scripts, JOBS at a time, then the ones that run alone.
#
#   scripts/run-e2e.sh JOBS LOGDIR SCRIPT... [-- ALONE-SCRIPT...]
#
# Most of an e2e script's time is other programs' (perf record, the browser, node, the
# JVM) and waiting on them, so two of them share this machine's two cores well; each
# one's output goes to LOGDIR/NAME.log and is printed whole when it ends, with its
# time. The scripts after -- race clocks or other programs on purpose (the watcher's
# chunks, a live JIT) or rebuild the tree (make install): they run one at a time
# after the others, on an idle machine. Every script runs; the exit status is 1 when
# one failed, and the failed ones are named at the end. PERFCONV is passed through.
set -u
jobs=$1 logs=$2
shift 2
mkdir -p "$logs"
shared=() alone=()
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && { shift; alone=("$@"); break; }
	shared+=("$1")
	shift
done
failed=()
done_pid=

# run one script into its log; its status in LOGDIR/NAME.rc
one() { # SCRIPT
	local n s rc
	n=$(basename "$1" .sh)
	s=$(date +%s)
	bash "$1" >"$logs/$n.log" 2>&1 </dev/null
	rc=$?
	echo "e2e: $1 took $(($(date +%s) - s)) s$([ $rc -ne 0 ] && echo ", FAILED (exit $rc)")" >>"$logs/$n.log"
	echo $rc >"$logs/$n.rc"
}
said() { # SCRIPT: print its log once, note a failure
	local n
	n=$(basename "$1" .sh)
	cat "$logs/$n.log"
	[ "$(cat "$logs/$n.rc" 2>/dev/null)" = 0 ] || failed+=("$1")
}

declare -A pid_of=()
for t in "${shared[@]}"; do
	while [ ${#pid_of[@]} -ge "$jobs" ]; do
		wait -n -p done_pid
		if [ -z "${done_pid-}" ] || [ -z "${pid_of[$done_pid]+set}" ]; then
			# no job named (bash may have reaped it already): wait for any one listed
			for done_pid in "${!pid_of[@]}"; do break; done
			wait "$done_pid"
		fi
		said "${pid_of[$done_pid]}"
		unset "pid_of[$done_pid]"
	done
	rm -f "$logs/$(basename "$t" .sh).rc"
	one "$t" &
	pid_of[$!]=$t
done
for p in "${!pid_of[@]}"; do
	wait "$p"
	said "${pid_of[$p]}"
done
for t in "${alone[@]}"; do
	one "$t"
	said "$t"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "e2e: FAILED: ${failed[*]}"
	exit 1
fi
echo "e2e: all $((${#shared[@]} + ${#alone[@]})) scripts passed"
