#!/bin/bash
# e2e_exec: a sample taken inside execve keeps its user frame (issue 22, item 10). The
# kernel tells the exec before execve returns: samples taken after it (loading the new
# binary) still have the old image's user context, their user frame the old libc's
# execve, as perf names it. Recorded here at test time (as root): sh running /bin/true
# 100 times, sampled every 50 us, with kernel callchains (the running kernel's symbols).
source "$(dirname "$0")/e2e_lib.sh"
export PERFCONV_CACHE_DIR=$TMP/cache

if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null; then
	bad "exec: needs root and perf (scripts/install-deps.sh)"
	finish e2e-exec
	exit
fi
F=comm,pid,tid,cpu,time,event,period,ip,sym,dso
late=0
for try in 1 2 3; do
	perf record -q -e cpu-clock -c 50000 -g --sample-cpu -o "$TMP/ex.data" -- \
		sh -c 'for i in $(seq 100); do /bin/true; done' 2>/dev/null
	perf script -i "$TMP/ex.data" --no-inline --ns -F $F 2>/dev/null >"$TMP/ex.script"
	# samples of the new comm whose user frame is execve: taken after the exec was told
	late=$(awk 'BEGIN { RS = "" } $1 == "true" && /do_execveat/ && /__GI___execve/ { c++ } END { print c + 0 }' \
		"$TMP/ex.script")
	[ "$late" -gt 0 ] && break
done
"$PERFCONV" -q --kallsyms /proc/kallsyms --no-inline -f samples -i "$TMP/ex.data" -o "$TMP/ex.samples"
ours=$(awk -F'\t' '$1 == "true" && $7 ~ /^__GI___execve;entry_SYSCALL_64/ && $7 ~ /do_execveat/' "$TMP/ex.samples" | wc -l)
if [ "$late" -gt 0 ] && [ "$ours" = "$late" ]; then
	ok "exec: $ours samples inside execve after the exec was told keep __GI___execve, as perf's"
else
	bad "exec: $ours samples inside execve with their user frame, perf $late"
fi
# ld.so's _start: perf's frame-pointer mode names the function after its call
if python3 tests/perfscript_compare.py --noreturn-callers $TD "$TMP/ex.script" "$TMP/ex.samples" \
	>"$TMP/ex.cmp" 2>&1; then
	ok "exec: $(tail -1 "$TMP/ex.cmp" | sed 's/^perfscript_compare: //')"
else
	bad "exec: $(tail -1 "$TMP/ex.cmp")"
	head -30 "$TMP/ex.cmp"
fi

finish e2e-exec
