#!/bin/bash
# e2e_containers: node in a pid namespace (issue 22, item 6), recorded here at test time
# (as root: perf, node and unshare). In its namespace node is pid 1: it writes
# jit-1.dump and /tmp/perf-1.map while the recording knows its host pid. perfconv takes
# the dump the process mapped (its MMAP2 names it), and for a perf map the pid the
# process had in its namespace (perf record --namespaces: PERF_RECORD_NAMESPACES); the
# hot function's count is perf inject --jit's (perf report's for the map) once the
# files are named by the host pid, which perf 6.1 needs (tests/unnamespace.py).
source "$(dirname "$0")/e2e_lib.sh"
JS=$TD/jit/src/fibonacci-bench.js
HOT='JS:*fibonacci'
export PERFCONV_CACHE_DIR=$TMP/cache

if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null || ! command -v node >/dev/null ||
	! command -v unshare >/dev/null; then
	bad "containers: needs root, perf, node and unshare (scripts/install-deps.sh)"
	finish e2e-containers
	exit
fi
# perf report's self count of the function whose name starts with $2
perf_count() { # SYM-FILE PREFIX
	awk -v f="$2" '/^ +[0-9.]+%/ { line = $0; sub(/^ +[0-9.]+% +[0-9]+ +\[[.k]\] /, "", line);
		if (index(line, f) == 1) s += $2 } END { print s + 0 }' "$1"
}
our_count() { # FOLDED PREFIX: leaves
	awk -v f="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";");
		if (index(a[k], f) == 1) s += n } END { print s + 0 }' "$1"
}
R=$TMP/rec
mkdir -p "$R/moved"
cp $JS "$R/"
record() { # OUT NODE-OPTIONS...: node in a pid namespace of its own
	local out=$1
	shift
	(cd "$R" && perf record -q -k 1 -g -F 999 --namespaces -o "$out" -- \
		unshare --pid --fork --mount-proc node "$@" fibonacci-bench.js 1 >/dev/null 2>&1)
}
host_pid() { # RECORDING: the pid of node's samples, as perf script says it
	perf script -i "$1" -F comm,pid 2>/dev/null | awk '$1 == "node" { print $2; exit }'
}

# 1. --perf-prof: the dump node mapped, /tmp/.../jit-1.dump (no perf map: none is left
#    from before, which another pid 1 wrote)
rm -f /tmp/perf-1.map
record ns.data --perf-prof
pid=$(host_pid "$R/ns.data")
"$PERFCONV" "${KS[@]}" -i "$R/ns.data" -o "$TMP/ns.folded" 2>"$TMP/ns.err"
# V8 10 (node 18, Debian's) names a function LazyCompile:*f, V8 11 (node 20) JS:*f
grep -q 'LazyCompile:\*fibonacci' "$TMP/ns.folded" && HOT='LazyCompile:*fibonacci'
python3 tests/unnamespace.py "$R/ns.data" "$R/ns-host.data" 1 "$pid" >/dev/null &&
	perf inject --jit -i "$R/ns-host.data" -o "$R/ns.injected" 2>/dev/null &&
	perf report -i "$R/ns.injected" --stdio --no-children -n -g none --sort sym \
		>"$TMP/ns.sym" 2>/dev/null
ours=$(our_count "$TMP/ns.folded" "$HOT")
perfs=$(perf_count "$TMP/ns.sym" "$HOT")
if [ -n "$pid" ] && [ "$pid" != 1 ] && grep -q "JIT code of pid $pid: $R/jit-1.dump" "$TMP/ns.err" &&
	[ "$ours" -gt 100 ] && [ "$ours" = "$perfs" ]; then
	ok "pid namespace: pid $pid's jit-1.dump, $HOT $ours samples as perf inject --jit's"
else
	bad "pid namespace: pid ${pid:-?}, $HOT $ours, perf $perfs: $(grep -i 'jit\|anonymous' "$TMP/ns.err" | head -3)"
fi
# the recording and its dump moved elsewhere: the dump beside it, by the name it had
mv "$R/jit-1.dump" "$R/moved/"
cp "$R/ns.data" "$R/moved/"
"$PERFCONV" "${KS[@]}" -i "$R/moved/ns.data" -o "$TMP/moved.folded" 2>"$TMP/moved.err"
if grep -q "JIT code of pid $pid: $R/moved/jit-1.dump" "$TMP/moved.err" &&
	[ "$(our_count "$TMP/moved.folded" "$HOT")" = "$ours" ]; then
	ok "pid namespace, moved: jit-1.dump beside the recording, the same $ours samples"
else
	bad "pid namespace, moved: $(grep -i 'jit' "$TMP/moved.err" | head -3)"
fi

# 2. --perf-basic-prof: /tmp/perf-1.map, which no record names: the pid in the namespace
#    from PERF_RECORD_NAMESPACES (the namespace's first task is 1)
rm -f /tmp/perf-1.map
record map.data --perf-basic-prof
pid=$(host_pid "$R/map.data")
"$PERFCONV" "${KS[@]}" -i "$R/map.data" -o "$TMP/map.folded" 2>"$TMP/map.err"
ours=$(our_count "$TMP/map.folded" "$HOT")
# perf looks for /tmp/perf-HOSTPID.map once the process is gone
if [ -n "$pid" ] && [ ! -e "/tmp/perf-$pid.map" ] && cp /tmp/perf-1.map "/tmp/perf-$pid.map"; then
	perf report -i "$R/map.data" --stdio --no-children -n -g none --sort sym >"$TMP/map.sym" 2>/dev/null
	rm -f "/tmp/perf-$pid.map"
fi
perfs=$(perf_count "$TMP/map.sym" "$HOT" 2>/dev/null)
if grep -q "JIT code of pid $pid: /tmp/perf-1.map" "$TMP/map.err" && [ "$ours" -gt 100 ] &&
	[ "$ours" = "$perfs" ]; then
	ok "pid namespace: pid $pid's /tmp/perf-1.map, $HOT $ours samples as perf's"
else
	bad "pid namespace, perf map: pid ${pid:-?}, $HOT $ours, perf ${perfs:-?}: $(grep -i 'jit\|anonymous' "$TMP/map.err" | head -3)"
fi
rm -f /tmp/perf-1.map

finish e2e-containers
