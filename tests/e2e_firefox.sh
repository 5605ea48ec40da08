#!/bin/bash
# e2e_firefox: -f firefox loaded by the Firefox Profiler's own code. Every committed
# recording's output is loaded by @firefox-devtools/profiler-cli (tests/browser's npm
# packages: the profiler's unserializing and upgrading code, and its call tree, under
# node; pinned by version and digest in tests/browser/package-lock.json), and each of
# its threads' call trees must be perfconv's folded stacks and counts for that thread
# (tests/firefox_check.py): JIT, inlined and kernel frames, off-CPU intervals, several
# events, merged recordings, --weight and --time.
source "$(dirname "$0")/e2e_lib.sh"

CLI=tests/browser/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js
SESS=$TMP/sessions
at_exit() { # a daemon a checker could not stop
	for s in "$SESS"/*.json; do
		[ -f "$s" ] || continue
		PROFILER_CLI_SESSION_DIR=$SESS timeout 20 node $CLI stop --all >/dev/null 2>&1
		break
	done
}

if ! npm_ready || [ ! -f $CLI ]; then
	bad "firefox: needs node and tests/browser/node_modules with @firefox-devtools/profiler-cli (npm ci there)"
	finish e2e_firefox
	exit
fi
want=$(node -p 'require("./tests/browser/package-lock.json").packages["node_modules/@firefox-devtools/profiler-cli"].version')
have=$(node -p 'require("./'${CLI%/dist/*}'/package.json").version')
[ "$want" = "$have" ] && ok "profiler-cli $have, as package-lock.json pins it" ||
	bad "profiler-cli $have installed, package-lock.json pins $want (npm ci in tests/browser)"

# check LABEL [MARKS] -- PERFCONV-ARGS...: the checker's lines, counted
check() {
	local label=$1 w marks=()
	shift
	[ "$1" != -- ] && { marks=("$1"); shift; }
	shift
	w=$(mktemp -d "$TMP/w.XXXXXX")
	python3 tests/firefox_check.py $CLI "$SESS" "$label" "$w" "${marks[@]}" -- "$PERFCONV" "$@" >"$w/out" 2>&1
	cut -c1-400 "$w/out" | head -20
	pass=$((pass + $(grep -c '^ok' "$w/out")))
	fail=$((fail + $(grep -c '^FAIL' "$w/out")))
	grep -q '^\(ok\|FAIL\)' "$w/out" || bad "$label: the checker said nothing: $(tail -c 300 "$w/out")"
	rm -rf "$w"
}

# Every committed recording, counted in samples (folded's unit), with the kernel
# symbols of its own directory where it has them.
n=0
while read -r in; do
	ks=$TD/kallsyms.gz
	[ -f "$(dirname "$in")/kallsyms.gz" ] && ks=$(dirname "$in")/kallsyms.gz
	check "${in#$TD/}" -- -i "$in" --kallsyms "$ks" --weight samples
	n=$((n + 1))
done < <(find $TD -name '*.data' -o -name 'perf.data.zstd' | sort)
[ $n -ge 50 ] && ok "$n committed recordings checked" || bad "only $n recordings found in $TD"

# Periods: a clock event's in milliseconds (tracing-ms), a count event's, and
# off-CPU and wall time in nanoseconds.
check "mt-k1 --weight period" -- -i $TD/mt-k1.data "${KS[@]}" --weight period
check "two-event --weight period" -- -i $TD/two-event.data "${KS[@]}" --weight period
check "sched --weight period" -- -i $TD/sched/sched.data "${KS[@]}" --weight period
for t in oncpu offcpu wall; do
	check "offcpu --time $t" -- -i $TD/offcpu/offcpu.data --kallsyms $TD/offcpu/kallsyms.gz --time $t --weight period
done
check "two-event --event page-faults" -- -i $TD/two-event.data "${KS[@]}" --event page-faults --weight samples
check "node --no-inline" -- -i $TD/jit/node.data --no-inline --weight samples
# Two recordings merged: each stack under its input's frame.
check "mt-g + kheavy merged" -- -i $TD/mt-g.data -i $TD/kheavy.data "${KS[@]}" --weight samples

# Markers. Forks, execs and exits: those perf itself reads from the recording.
perf script -i $TD/execer.data --show-task-events -F pid,tid 2>/dev/null | sed -n -E \
	-e 's|.*PERF_RECORD_COMM exec: .*:([0-9]+/[0-9]+)$|\1 Exec 1|p' \
	-e 's|.*PERF_RECORD_FORK\(([0-9]+):([0-9]+)\).*|\1/\2 Thread start 1|p' \
	-e 's|.*PERF_RECORD_EXIT\(([0-9]+):([0-9]+)\).*|\1/\2 Exit 1|p' >"$TMP/execer.marks"
[ "$(wc -l <"$TMP/execer.marks")" -ge 10 ] && ok "perf script: $(wc -l <"$TMP/execer.marks") forks, execs and exits in execer.data" ||
	bad "perf script --show-task-events gave $(wc -l <"$TMP/execer.marks") task events of execer.data"
check "execer: forks, execs, exits" "$TMP/execer.marks" -- -i $TD/execer.data "${KS[@]}" --weight samples
# Off-CPU intervals: one marker each, as many as the samples output's intervals.
"$PERFCONV" -q -i $TD/offcpu/offcpu.data --kallsyms $TD/offcpu/kallsyms.gz --time offcpu -f samples -o - |
	awk -F'\t' '{ n[$2]++ } END { for (t in n) print t, "Off-CPU", n[t] }' >"$TMP/offcpu.marks"
check "offcpu: off-CPU markers" "$TMP/offcpu.marks" -- -i $TD/offcpu/offcpu.data --kallsyms $TD/offcpu/kallsyms.gz --time offcpu
# perf's lost records (191 in this simpleperf recording), on the threads of their CPUs.
echo "* Lost records 1" >"$TMP/lost.marks"
check "lost records" "$TMP/lost.marks" -- -i $TD/simpleperf/perf_with_trace_offcpu.data --weight samples
# A merge's inputs: each one's window on every track.
echo "* Input 2" >"$TMP/merge.marks"
check "merged inputs' windows" "$TMP/merge.marks" -- -i $TD/mt-g.data -i $TD/kheavy.data "${KS[@]}" --weight samples

# The format from -o's suffix.
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/x.firefox.json" &&
	python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["meta"]["preprocessedProfileVersion"] < 1)' \
		"$TMP/x.firefox.json" 2>/dev/null && ok "cli: .firefox.json selects firefox" || bad "cli: .firefox.json"

# .firefox.json.gz: the same JSON, gzipped (the profiler opens either)
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/x.firefox.json.gz" 2>/dev/null &&
	gzip -t "$TMP/x.firefox.json.gz" 2>/dev/null && gzip -dc "$TMP/x.firefox.json.gz" | cmp -s - "$TMP/x.firefox.json" &&
	ok "cli: .firefox.json.gz: the same profile, gzipped" || bad "cli: .firefox.json.gz"

finish e2e_firefox
