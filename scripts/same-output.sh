#!/bin/bash
# same-output: does a change of the code leave every output as it was?
#
#   scripts/same-output.sh [--outputs-only] OLD_BINARY NEW_BINARY
#
# Converts every committed recording (testdata/*.data, testdata/jit/*.data,
# testdata/dwarf/*.data, testdata/offcpu/*.data) with both binaries, in every format and with the option sets
# the tests use, and compares the outputs byte for byte (pprof decompressed: gzip's
# header holds no content) and the closing summaries. Prints one line per difference
# and a closing count; exits 1 when anything differs. Besides conversions: perfconv info,
# perfconv diff, perfconv upload --dry-run's bodies (for every backend), every command's
# --help and the messages of command lines that are wrong. A refactoring commit states this
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
	for fmt in folded samples pprof speedscope firefox chrome svg otlp; do
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
	for fmt in folded samples pprof speedscope firefox chrome svg otlp; do
		run "$name" "$in" $fmt "${KS[@]}"
	done
	run "$name" "$in" folded "${KS[@]}" --no-inline --annotate
	run "$name" "$in" folded "${KS[@]}" --no-symbols --with-tid
done
# off-CPU recordings (sched_switch, PERF_RECORD_SWITCH): states at the leaves, --time
for in in testdata/offcpu/*.data; do
	name=offcpu-$(basename "$in" .data)
	for t in oncpu offcpu wall; do
		for fmt in folded pprof speedscope firefox chrome svg otlp; do
			run "$name" "$in" $fmt --kallsyms testdata/offcpu/kallsyms.gz --time $t
		done
	done
done
run two-event testdata/two-event.data samples "${KS[@]}" --event page-faults
run two-event testdata/two-event.data chrome "${KS[@]}" --event page-faults
run two-event testdata/two-event.data firefox "${KS[@]}" --weight samples
run two-event testdata/two-event.data pprof "${KS[@]}" --event page-faults
run mt-g testdata/mt-g.data folded "${KS[@]}" --comm mt-alpha
run mt-g testdata/mt-g.data samples "${KS[@]}" --no-symbols
run lli testdata/jit/lli.data folded --jit-dir testdata/jit --annotate
# cmd NAME ARGS...: a command line of both binaries, its standard output and error and
# its status compared, and every file it wrote to @OUT@* (gzip decompressed)
cmd() {
	local name=$1
	shift
	local tag
	tag=cmd.$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')
	for b in old new; do
		local bin=$OLD args=()
		[ $b = new ] && bin=$NEW
		mkdir -p "$TMP/$b.$tag.d"
		for a in "$@"; do args+=("${a//@OUT@/$TMP/$b.$tag.d/out}"); done
		"$bin" "${args[@]}" </dev/null >"$TMP/$b.$tag.d/stdout" 2>"$TMP/$b.$tag.d/stderr"
		echo "rc=$?" >>"$TMP/$b.$tag.d/stderr"
		sed -i "s|$TMP/$b.$tag.d/|OUT/|g" "$TMP/$b.$tag.d/stdout" "$TMP/$b.$tag.d/stderr"
		for f in "$TMP/$b.$tag.d"/*; do
			if gzip -t "$f" 2>/dev/null; then
				gzip -dc <"$f" >"$f.raw" && mv "$f.raw" "$f"
			fi
		done
		# Datadog's runtime-id is new in every run
		find "$TMP/$b.$tag.d" -type f -exec sed -i -E \
			's/runtime-id:[0-9a-f-]+/runtime-id:X/g' {} +
	done
	n=$((n + 1))
	if ! diff -r "$TMP/old.$tag.d" "$TMP/new.$tag.d" >/dev/null; then
		echo "DIFF command: $name"
		diff -r "$TMP/old.$tag.d" "$TMP/new.$tag.d" | head -5
		diffs=$((diffs + 1))
	fi
	rm -rf "$TMP/old.$tag.d" "$TMP/new.$tag.d"
}

for in in testdata/mt-g.data testdata/two-event.data; do
	name=$(basename "$in" .data)
	cmd "info $name" info "$in" --kallsyms testdata/kallsyms.gz
	cmd "info --json $name" info -i "$in" --json --top 3 --kallsyms testdata/kallsyms.gz
	for be in datadog pyroscope parca otlp; do
		cmd "upload $be $name" upload --to $be --dry-run -o @OUT@ -i "$in" "${KS[@]}" \
			--service svc --label team=perf
	done
done
for fmt in folded top pprof svg; do
	cmd "diff -f $fmt" diff testdata/mt-g.data testdata/mt-g.data "${KS[@]}" -f $fmt -o @OUT@
done
cmd "diff --absolute" diff testdata/mt-g.data testdata/two-event.data "${KS[@]}" --absolute \
	--top 5 -f top
# command lines: help, version, and each kind of mistake
cmd help --help
cmd version --version
cmd "info help" info --help
cmd "diff help" diff --help
cmd "upload help" upload --help
for args in "-x" "--nope" "-o" "--format nope" "--weight x" "--time x" "--pid a" \
	"--width 5" "--minwidth -1" "--for x" "--label nokv" "--start-time x" \
	"--cache-size x" "-f pprof" "--for datadog -f folded" "--service s -f svg" \
	"info --top 0" "info a b" "info --nope" "info -q" "info --version" \
	"diff" "diff a" "diff - - " "diff -i a a b" "diff --version a b" "diff --top x a b" \
	"diff --for go a b" "diff -f otlp a b" "diff --nope" \
	"upload" "upload --to x" "upload --to parca --header a=b" "upload -f pprof" \
	"upload --for go" "upload --to parca --watch d -i x" "upload --to parca --delete-sent" \
	"upload --to parca --watch d --start-time 1" "upload --to parca -o x" \
	"upload --to parca --timeout 0" "upload --to parca --keep-sent x" \
	"upload --to parca --max-backlog x" "upload --to datadog --api-key k" \
	"upload --to parca extra" "upload --version" "upload --to"; do
	# shellcheck disable=SC2086
	cmd "args $args" $args
done
echo "same-output: $((n - diffs)) passed, $diffs failed"
[ $diffs -eq 0 ]
