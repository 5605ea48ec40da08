#!/bin/bash
# instr: instructions each build of perfconv executes on the bench's cases, counted by
# valgrind's callgrind (every thread's, summed). On a machine shared with other work,
# where wall times move by tens of percent, this is the figure that does not: compare
# two builds with it in a commit message, beside bench/ab.sh's times.
#
#   bench/instr.sh BINARY...      one column per binary; with two, the second's count over the first's
#   CASES=REGEX bench/instr.sh ... only the cases whose label matches (CASES=dwarf)
#
# The cases: the committed frame-pointer recording (testdata/mt-g.data) and the Erlang
# JIT one, to folded, cold (HOME and --cache-dir new and empty) and warm; the node JIT
# recording to folded, cold (node's large symbol table loaded afresh); the committed
# --call-graph dwarf recordings to pprof; and, when bench/run.sh has recorded them,
# bench/work/dwarf.data to pprof and bench/work/native.data to folded and speedscope.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/instr.sh BINARY..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instr: needs valgrind" >&2; exit 2; }
BINS=()
for b in "$@"; do BINS+=("$(realpath "$b")"); done
W=$PWD/bench/work
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
KS=(--kallsyms testdata/kallsyms.gz)

# ir BINARY COLD(0|1) ARGS...: the instructions of one run, the median of RUNS (3):
# the symbolizer's second thread takes a varying share of the work, and waits by
# yielding, so that counts of one build differ by a few percent from run to run.
# A warm run has a cache of its own (filled by a run of the same build first), not
# ~/.cache/perfconv, which other builds on the machine rewrite.
ir() {
	local bin=$1 cold=$2 pre=() i counts=()
	shift 2
	if [ "$cold" = 0 ]; then
		rm -rf "$TMP/warm"
		mkdir -p "$TMP/warm"
		set -- --cache-dir "$TMP/warm" "$@"
		"$bin" -q "$@" -o /dev/null
	fi
	for ((i = 0; i < ${RUNS:-3}; i++)); do
		if [ "$cold" = 1 ]; then
			rm -rf "$TMP/home" "$TMP/cache"
			mkdir -p "$TMP/home" "$TMP/cache"
			pre=(env -u XDG_CACHE_HOME -u PERFCONV_CACHE_DIR HOME="$TMP/home")
		fi
		"${pre[@]}" valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file=/dev/null \
			"$bin" -q $([ "$cold" = 1 ] && echo --cache-dir "$TMP/cache") "$@" -o /dev/null \
			2>"$TMP/vg" >/dev/null || { cat "$TMP/vg" >&2; exit 1; }
		counts+=("$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$TMP/vg")")
	done
	printf '%s\n' "${counts[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
case_() { # LABEL COLD ARGS...
	local label=$1 cold=$2 b n line first=
	shift 2
	[[ "$label" =~ ${CASES:-.} ]] || return 0
	line=$(printf '%-36s' "$label")
	for b in "${BINS[@]}"; do
		n=$(ir "$b" "$cold" "$@")
		line+=$(printf ' %14s' "$n")
		[ -n "$first" ] || first=$n
	done
	[ ${#BINS[@]} -eq 2 ] && line+=$(awk -v a="$n" -v b="$first" 'BEGIN { printf " %8.3f", a / b }')
	echo "$line"
}
hdr=$(printf '%-36s' case)
for ((i = 0; i < ${#BINS[@]}; i++)); do
	echo "# build $((i + 1)): ${BINS[i]}"
	hdr+=$(printf ' %14s' "build $((i + 1))")
done
[ ${#BINS[@]} -eq 2 ] && hdr+=$(printf ' %8s' 2/1)
echo "$hdr"
case_ "mt-g folded, cold" 1 -i testdata/mt-g.data "${KS[@]}" -f folded
case_ "mt-g folded, warm" 0 -i testdata/mt-g.data "${KS[@]}" -f folded
case_ "erlang folded, cold" 1 -i testdata/jit/erlang.data "${KS[@]}" -f folded
case_ "erlang folded, warm" 0 -i testdata/jit/erlang.data "${KS[@]}" -f folded
# node's own symbol table (/usr/bin/node: 181,000 symbols, 79,000 of them C++ names),
# when the installed node is the recorded one
case_ "node folded, cold" 1 -i testdata/jit/node.data -f folded
case_ "dwarf/dw pprof, warm" 0 -i testdata/dwarf/dw.data "${KS[@]}" -f pprof
case_ "dwarf/dwpp pprof, warm" 0 -i testdata/dwarf/dwpp.data "${KS[@]}" -f pprof
if [ -e "$W/dwarf.data" ]; then
	case_ "bench dwarf pprof, warm" 0 -i "$W/dwarf.data" -f pprof
fi
if [ -e "$W/native.data" ]; then
	case_ "native folded, warm" 0 -i "$W/native.data" -f folded
	case_ "native speedscope, warm" 0 -i "$W/native.data" -f speedscope
fi
