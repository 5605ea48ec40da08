#!/bin/bash
# output-digests: every output of the self-contained committed recordings, as digests
# kept in tests/outputs.sha256, so that CI holds a change of the code to the outputs
# it had (issue 17: a refactoring changes no output) and a change meant to change them
# says which in its commit.
#
#   scripts/output-digests.sh BINARY            compare: one DIFF line per output that
#                                               differs, exit 1 when one does
#   scripts/output-digests.sh BINARY --update   write tests/outputs.sha256 anew
#                                               (`make outputs-update`)
#
# Self-contained: the recordings whose every file is in testdata/ (the programs, libc
# and ld.so, the vdso, kallsyms), converted with --symfs testdata, an empty build-id
# cache and no perfconv cache, so that the machine's own libraries, ~/.debug and
# ~/.cache change nothing (a fresh Debian root gives the same digests). Recordings
# that need a runtime's binary (node, Java), libstdc++ or, system-wide, the machine's
# own programs (offcpu-a) are not here: their tests
# compare them with perf on the machine. pprof is compared decompressed.
set -u
cd "$(dirname "$0")/.."
BIN=$(realpath "$1")
MODE=${2:-check}
LIST=tests/outputs.sha256
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/home" "$TMP/buildids"
WHERE=(--symfs testdata --buildid-dir "$TMP/buildids" --no-cache)
: >"$TMP/digests"

run() { # NAME INPUT FORMAT OPTIONS...
	local name=$1 in=$2 fmt=$3 tag out
	shift 3
	tag="$name -f $fmt $*"
	out="$TMP/out"
	rm -f "$out"
	HOME=$TMP/home "$BIN" -q -i "$in" -f "$fmt" "${WHERE[@]}" "$@" -o "$out" 2>"$TMP/err" ||
		{ echo "FAIL $tag: $(head -2 "$TMP/err")"; echo "FAILED  $tag" >>"$TMP/digests"; return; }
	if [ "$fmt" = pprof ]; then
		gzip -dc <"$out" >"$out.raw" && mv "$out.raw" "$out"
	fi
	echo "$(sha256sum <"$out" | cut -c1-64)  $tag" >>"$TMP/digests"
}

KS=(--kallsyms testdata/kallsyms.gz)
for name in mt-g mt-k1 mt-z mt-pipe mt-threads kheavy execer two-event; do
	in=testdata/$name.data
	for fmt in folded samples pprof speedscope chrome svg; do
		run "$name" "$in" $fmt "${KS[@]}"
	done
	run "$name" "$in" folded "${KS[@]}" --no-inline --annotate
	run "$name" "$in" folded "${KS[@]}" --with-tid --weight period --srcline
	run "$name" "$in" pprof "${KS[@]}" --no-inline --cpu-label
	run "$name" "$in" folded "${KS[@]}" --no-symbols --with-pid
done
run two-event testdata/two-event.data pprof "${KS[@]}" --event page-faults
# firefox: of recordings with CLOCK_DATA only (meta.startTime is otherwise the file's
# modification time, which a checkout sets)
run mt-k1 testdata/mt-k1.data firefox "${KS[@]}"
for fmt in folded samples pprof speedscope chrome svg; do
	run dwarf-dw testdata/dwarf/dw.data $fmt "${KS[@]}"
done
run dwarf-dw testdata/dwarf/dw.data folded "${KS[@]}" --no-symbols --with-tid
for name in offcpu offcpu-sw; do
	for t in oncpu offcpu wall; do
		for fmt in folded pprof speedscope chrome svg; do
			run "offcpu-$name" testdata/offcpu/$name.data $fmt --kallsyms testdata/offcpu/kallsyms.gz --time $t
		done
	done
done

if [ "$MODE" = --update ]; then
	cp "$TMP/digests" "$LIST"
	echo "output-digests: $(wc -l <"$LIST") outputs written to $LIST"
	exit 0
fi
n=$(wc -l <"$TMP/digests")
diffs=$(diff <(sort -k2 "$LIST") <(sort -k2 "$TMP/digests") | grep -c '^>')
diff <(sort -k2 "$LIST") <(sort -k2 "$TMP/digests") | sed -n 's/^> [0-9a-fA-F]*  /DIFF /p'
echo "output-digests: $((n - diffs)) of $n outputs as in $LIST"
[ "$diffs" -eq 0 ]
