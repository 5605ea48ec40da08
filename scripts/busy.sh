#!/bin/bash
# busy: a command run with busy CPU loops beside it, as on a machine shared with other
# work (issue 45.1: the tests wait on conditions, never on a time or an idle CPU, and must
# hold so).
#
#   scripts/busy.sh COMMAND...      (BUSY_LOOPS: how many loops, default 2)
#
# Each loop is a shell spinning at the default priority, started before COMMAND and
# always stopped after it (its exit, an error, SIGINT or SIGTERM), by the pids kept
# here. Exits with COMMAND's status.
set -u
n=${BUSY_LOOPS:-2}
loops=()
stop() {
	[ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null
	wait "${loops[@]}" 2>/dev/null
	loops=()
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$n"); do
	sh -c 'while :; do :; done' &
	loops+=($!)
done
echo "busy: $n busy loops beside: $* (pids ${loops[*]})"
"$@"
rc=$?
stop
echo "busy: the loops stopped; $1 exited $rc"
exit $rc
