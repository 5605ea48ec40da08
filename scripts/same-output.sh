#!/bin/bash
# same-output: does a change of the code leave every output as it was?
#
#   scripts/same-output.sh [--outputs-only] OLD_BINARY NEW_BINARY
#
# Converts every committed recording (testdata/*.data, testdata/jit/*.data,
# testdata/dwarf/*.data, testdata/offcpu/*.data) with both binaries, in every format and with the option sets
# the tests use, and compares the outputs byte for byte (pprof decompressed: gzip's
# header holds no content) and the closing summaries. Prints one line per difference
# and a closing count; exits 1 when anything differs. A refactoring commit states this
# script's result. With --outputs-only the summaries are not compared (for a change
# that meant to change what the summary says).
set -u
cd "$(dirname "$0")/.."
SUMMARIES=1
[ "${1:-}" = --outputs-only ] && { SUMMARIES=0; shift; }
OLD=$(realpath "$1")
NEW=$(realpath "$2")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
KS=(--kallsyms testdata/kallsyms.gz)
n=0
diffs=0

# run NAME INPUT FORMAT OPTIONS...: both binaries, outputs and summaries compared
run() {
	local name=$1 in=$2 fmt=$3
	shift 3
	local tag
	tag=$(printf '%s' "$name.$fmt.$*" | tr -c 'A-Za-z0-9._-' '_')
	for b in old new; do
		local bin=$OLD
		[ $b = new ] && bin=$NEW
		"$bin" -i "$in" -f "$fmt" "$@" -o "$TMP/$b.$tag" 2>"$TMP/$b.$tag.err"
		echo "rc=$?" >>"$TMP/$b.$tag.err"
		if [ "$fmt" = pprof ] && [ -s "$TMP/$b.$tag" ]; then
			gzip -dc <"$TMP/$b.$tag" >"$TMP/$b.$tag.raw" && mv "$TMP/$b.$tag.raw" "$TMP/$b.$tag"
		fi
	done
	n=$((n + 1))
	if ! cmp -s "$TMP/old.$tag" "$TMP/new.$tag"; then
		echo "DIFF output: $name -f $fmt $*"
		diffs=$((diffs + 1))
	elif [ $SUMMARIES = 1 ] && ! cmp -s "$TMP/old.$tag.err" "$TMP/new.$tag.err"; then
		echo "DIFF summary: $name -f $fmt $*"
		diff "$TMP/old.$tag.err" "$TMP/new.$tag.err" | head -5
		diffs=$((diffs + 1))
	fi
	rm -f "$TMP"/*."$tag" "$TMP"/*."$tag".err
}

for in in testdata/*.data testdata/jit/*.data; do
	name=$(basename "$in" .data)
	for fmt in folded samples pprof speedscope chrome svg otlp; do
		run "$name" "$in" $fmt "${KS[@]}"
	done
	run "$name" "$in" folded "${KS[@]}" --no-inline --annotate
	run "$name" "$in" folded "${KS[@]}" --with-tid --weight period --srcline
	run "$name" "$in" samples "${KS[@]}" --srcline --no-demangle
	run "$name" "$in" folded "${KS[@]}" --no-symbols --with-pid
	run "$name" "$in" pprof "${KS[@]}" --no-inline --cpu-label
	run "$name" "$in" otlp "${KS[@]}" --no-inline --cpu-label
	run "$name" "$in" speedscope "${KS[@]}" --weight samples
done
# --call-graph dwarf recordings: the unwinder's stacks, and where they stopped
for in in testdata/dwarf/*.data; do
	name=dwarf-$(basename "$in" .data)
	for fmt in folded samples pprof speedscope chrome svg otlp; do
		run "$name" "$in" $fmt "${KS[@]}"
	done
	run "$name" "$in" folded "${KS[@]}" --no-inline --annotate
	run "$name" "$in" folded "${KS[@]}" --no-symbols --with-tid
done
# off-CPU recordings (sched_switch, PERF_RECORD_SWITCH): states at the leaves, --time
for in in testdata/offcpu/*.data; do
	name=offcpu-$(basename "$in" .data)
	for t in oncpu offcpu wall; do
		for fmt in folded pprof speedscope chrome svg otlp; do
			run "$name" "$in" $fmt --kallsyms testdata/offcpu/kallsyms.gz --time $t
		done
	done
done
run two-event testdata/two-event.data samples "${KS[@]}" --event page-faults
run two-event testdata/two-event.data chrome "${KS[@]}" --event page-faults
run two-event testdata/two-event.data pprof "${KS[@]}" --event page-faults
run mt-g testdata/mt-g.data folded "${KS[@]}" --comm mt-alpha
run mt-g testdata/mt-g.data samples "${KS[@]}" --no-symbols
run lli testdata/jit/lli.data folded --jit-dir testdata/jit --annotate
echo "same-output: $((n - diffs)) passed, $diffs failed"
[ $diffs -eq 0 ]
