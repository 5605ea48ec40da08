#!/bin/bash
# e2e_fullwrite: an output that cannot be written (a full disk) fails in every format,
# saying the disk's cause, not the errno some later call of the writer left behind
# (chrome said "No such file or directory" for /dev/full).
. "$(dirname "$0")/e2e_lib.sh"

IN=$TD/mt-g.data
for fmt in folded pprof speedscope chrome svg otlp; do
	"$PERFCONV" -i "$IN" -f "$fmt" -o /dev/full --kallsyms "$TD/kallsyms.gz" 2>"$TMP/$fmt.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "/dev/full: cannot write output: No space left on device" "$TMP/$fmt.err"; then
		ok "$fmt to a full disk: exit $rc, 'No space left on device'"
	else
		bad "$fmt to a full disk: exit $rc, $(tail -1 "$TMP/$fmt.err")"
	fi
done
finish e2e_fullwrite
