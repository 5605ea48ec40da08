#!/bin/bash
# e2e_pprof: convert the committed recordings to pprof and read them back with
# `go tool pprof` (Debian's golang-go), comparing with what perf itself printed for
# the same recordings (testdata/expected/*.report).
source "$(dirname "$0")/e2e_lib.sh"
EXP=$TD/expected

# go tool pprof runs offline; its caches go to the temporary directory.
export HOME=$TMP/home GOCACHE=$TMP/gocache GOTOOLCHAIN=local GOFLAGS= PPROF_TMPDIR=$TMP
mkdir -p "$HOME"
if ! command -v go >/dev/null; then
	bad "go tool pprof: 'go' not found (scripts/install-deps.sh installs golang-go)"
	finish e2e-pprof
	exit 1
fi
# pprof without binaries to symbolize with, every row shown (no node is dropped)
PPROF=(go tool pprof -symbolize=none)
TOP=(-top -nodecount=100000 -nodefraction=0 -edgefraction=0)

# 1. -top self counts per symbol equal perf report's (no inlined frames: perf shows none).
top_compare() { # NAME SAMPLE_TYPE [EVENT]
	local name=$1 st=$2 ev=${3:-} evopt=()
	[ -n "$ev" ] && evopt=(--event "$ev")
	if ! "$PERFCONV" -q -i $TD/$name.data "${KS[@]}" --no-inline -o "$TMP/$name.pb.gz" 2>"$TMP/err"; then
		bad "$name: perfconv -f pprof failed: $(head -3 "$TMP/err")"
		return
	fi
	if ! "${PPROF[@]}" "${TOP[@]}" -sample_index="$st" "$TMP/$name.pb.gz" >"$TMP/$name.top" 2>"$TMP/err"; then
		bad "$name: go tool pprof -top failed: $(head -3 "$TMP/err")"
		return
	fi
	if python3 tests/pprof_top_compare.py "$EXP/$name.report" "$TMP/$name.top" "${evopt[@]}" >"$TMP/cmp" 2>&1; then
		ok "$name pprof -top -sample_index=$st: $(tail -1 "$TMP/cmp")"
	else
		bad "$name pprof -top -sample_index=$st: differs from perf report:"
		head -30 "$TMP/cmp"
	fi
}
for name in mt-g mt-z mt-pipe mt-threads mt-k1 kheavy execer; do
	top_compare $name cpu-samples
done
# several events, no --event: each is a pair of sample types
top_compare two-event cpu-samples cpu-clock
top_compare two-event page-faults-samples page-faults

# 2. -raw shows the mappings with the binaries' own build ids.
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/mt.pb.gz"
"${PPROF[@]}" -raw "$TMP/mt.pb.gz" >"$TMP/raw" 2>/dev/null
want=$(eu-readelf -n $TD/mt 2>/dev/null | awk '/Build ID:/ {print $3; exit}')
kbid=$(cat $TD/kernel.buildid 2>/dev/null)
if [ -n "$want" ] && grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* /tmp/perfconv-rec/mt $want \[FN\]\[FL\]\[LN\]\[IN\]" "$TMP/raw" &&
	grep -q " \[kernel.kallsyms\] $kbid \[FN\]" "$TMP/raw"; then
	ok "pprof -raw: mapping 1 is mt with its build id $want and every symbol flag; the kernel's has its own"
else
	bad "pprof -raw: mappings (want mt build id '$want', kernel '$kbid'):"
	sed -n '/^Mappings/,$p' "$TMP/raw" | head -10
fi
# issue 22, item 10: mapping 1 is the program even where a library has more samples
# (kheavy: libc.so.6 has most leaves; node-wasm: anonymous JIT memory)
main_maps=
for f in kheavy.data:/tmp/perfconv-rec/kheavy jit/node-wasm.data:/usr/bin/node; do
	"$PERFCONV" -q -i $TD/${f%%:*} "${KS[@]}" -o "$TMP/m.pb.gz"
	"${PPROF[@]}" -raw "$TMP/m.pb.gz" 2>/dev/null | sed -n '/^Mappings/{n;p}' >"$TMP/m1"
	grep -q "^1: 0x[0-9a-f/x]* ${f#*:} " "$TMP/m1" || main_maps="$main_maps ${f%%:*}: $(cat "$TMP/m1")"
done
if [ -z "$main_maps" ]; then
	ok "pprof -raw: mapping 1 is the program (kheavy, not libc.so.6; node, not its JIT memory)"
else
	bad "pprof -raw: mapping 1:$main_maps"
fi
if grep -q "^Comment: command: /usr/bin/perf record" "$TMP/raw" && grep -q "^Comment: perf version" "$TMP/raw" &&
	grep -q "^Comment: host: " "$TMP/raw"; then
	ok "pprof -raw: comments carry the perf version, command line and host"
else
	bad "pprof -raw: comments: $(grep Comment "$TMP/raw")"
fi

# time_nanos: the wall clock of CLOCK_DATA (mt-k1, recorded with -k 1); none without it
"$PERFCONV" -q -i $TD/mt-k1.data "${KS[@]}" -o "$TMP/k1.pb.gz"
if "${PPROF[@]}" -raw "$TMP/k1.pb.gz" 2>/dev/null | grep -qE '^Time: 20[0-9][0-9]-' &&
	! grep -q '^Time:' "$TMP/raw"; then
	ok "pprof -raw: mt-k1 has its wall-clock start time ($("${PPROF[@]}" -raw "$TMP/k1.pb.gz" 2>/dev/null | grep '^Time:')), mt-g none"
else
	bad "pprof -raw: time_nanos"
fi

# 3. Thread labels: -tags lists them, -tagfocus keeps one thread's samples.
"${PPROF[@]}" -tags "$TMP/mt.pb.gz" >"$TMP/tags" 2>/dev/null
if grep -q "^ *thread_name:" "$TMP/tags" && grep -q "mt-alpha$" "$TMP/tags" &&
	grep -q "^ *thread id:" "$TMP/tags" && grep -q "^ *process_id:" "$TMP/tags"; then
	ok "pprof -tags: process_id, thread id and thread_name labels"
else
	bad "pprof -tags: $(head -20 "$TMP/tags")"
fi
for comm in mt-alpha mt-beta; do
	want=$(awk -v c=$comm '$3 == c {s += $2} END {print s + 0}' $EXP/mt-g.report)
	got=$("${PPROF[@]}" "${TOP[@]}" -sample_index=cpu-samples -tagfocus="thread_name=^$comm\$" "$TMP/mt.pb.gz" 2>/dev/null |
		awk '/flat%/ {t = 1; next} t {s += $1} END {print s + 0}')
	if [ "$got" = "$want" ] && [ "$got" -gt 0 ]; then
		ok "pprof -tagfocus=thread_name=^$comm\$: $got samples, as perf report counts for $comm"
	else
		bad "pprof -tagfocus=thread_name=^$comm\$: $got samples, perf report: $want"
	fi
done
"$PERFCONV" -q -i $TD/two-event.data "${KS[@]}" --cpu-label -o "$TMP/cpu.pb.gz"
if "${PPROF[@]}" -tags "$TMP/cpu.pb.gz" 2>/dev/null | grep -q "^ *cpu:"; then
	ok "pprof --cpu-label: a cpu label"
else
	bad "pprof --cpu-label: no cpu label"
fi

# 4. Inlined frames: -lines shows mix32 inlined into mix_rounds, with its source lines.
"${PPROF[@]}" "${TOP[@]}" -lines -sample_index=cpu-samples "$TMP/mt.pb.gz" >"$TMP/lines" 2>/dev/null
if grep -qE ' mix32 [^ ]*mt\.c:[0-9]+ \(inline\)$' "$TMP/lines" && grep -qE ' mix_rounds [^ ]*mt\.c:[0-9]+$' "$TMP/lines"; then
	ok "pprof -lines: $(grep -cE ' mix32 [^ ]*mt\.c:[0-9]+ \(inline\)$' "$TMP/lines") source lines of mix32 (inline) in mix_rounds"
else
	bad "pprof -lines: no inlined mix32 with lines: $(head -20 "$TMP/lines")"
fi
"${PPROF[@]}" -traces "$TMP/mt.pb.gz" 2>/dev/null | grep -A1 -m1 ' mix32 (inline)$' >"$TMP/trace"
if sed -n 2p "$TMP/trace" | grep -qE '^ +mix_rounds$'; then
	ok "pprof -traces: mix32 (inline) is called from mix_rounds"
else
	bad "pprof -traces: mix32's caller: $(cat "$TMP/trace")"
fi

# 5. The same input gives the same bytes; the format follows .pb.gz.
"$PERFCONV" -q -i $TD/kheavy.data "${KS[@]}" -o "$TMP/a.pb.gz"
"$PERFCONV" -q -i $TD/kheavy.data "${KS[@]}" -f pprof -o "$TMP/b.pprof"
if cmp -s "$TMP/a.pb.gz" "$TMP/b.pprof" && [ "$(head -c2 "$TMP/a.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
	ok "pprof: two runs give identical gzipped bytes ($(wc -c <"$TMP/a.pb.gz") bytes)"
else
	bad "pprof: two runs differ, or the output is not gzip"
fi

# 6. Without the binary: addresses and mappings only, named per mapping by pprof.
mkdir -p "$TMP/alone"
cp $TD/mt-g.data "$TMP/alone/"
"$PERFCONV" -q -i "$TMP/alone/mt-g.data" "${KS[@]}" --buildid-dir "$TMP/alone" -o "$TMP/alone.pb.gz"
if "${PPROF[@]}" "${TOP[@]}" -sample_index=cpu-samples "$TMP/alone.pb.gz" 2>/dev/null | grep -qE ' \[mt\]$' &&
	"${PPROF[@]}" -raw "$TMP/alone.pb.gz" 2>/dev/null | grep -q "/tmp/perfconv-rec/mt 22802ae2"; then
	ok "pprof: without the binary, mt's frames are addresses in mapping mt with its build id"
else
	bad "pprof: without the binary"
fi

# 7. JIT names as the runtime wrote them, with go tool pprof's default options (which
# strip what looks like C++ parameters from a name equal to its system name): a perf
# map with Java names over node-map's code.
mkdir -p "$TMP/java"
cp $TD/jit/node-map.data "$TMP/java/"
awk '{ if ($3 == "JS:*fibonacci") { $3 = "byte[] java.util.Arrays.copyOfRange(byte[], int, int)"; NF = 3 }
	else if ($3 == "JS:^fibonacci") { $3 = "Main.fib(int)"; NF = 3 } print }' \
	$TD/jit/perf-30787.map >"$TMP/java/perf-30787.map"
"$PERFCONV" -q -i "$TMP/java/node-map.data" -o "$TMP/java.pb.gz"
go tool pprof -top -nodecount=100000 "$TMP/java.pb.gz" >"$TMP/java.top" 2>/dev/null
if grep -qF ' byte[] java.util.Arrays.copyOfRange(byte[], int, int)' "$TMP/java.top" &&
	grep -qF ' Main.fib(int)' "$TMP/java.top"; then
	ok "pprof: Java JIT names whole in go tool pprof -top (default options)"
else
	bad "pprof: Java JIT names: $(grep -E 'java|Main' "$TMP/java.top" | head -3)"
fi

finish e2e-pprof
