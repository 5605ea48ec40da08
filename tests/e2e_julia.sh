#!/bin/bash
# e2e_julia: Julia's JIT code named as Julia names it (issue 34), on a recording made now:
# LLVM's own PerfJITEventListener (lli-14, the listener Julia uses) writes the jitdump of
# tests/fixtures/julia_names.ll, whose functions carry the names Julia's codegen gives
# (julia_fib_11, "japi1_top-level scope_8", jfptr_fib_12, "julia_#1_23", UTF-8, and
# j_foo, not Julia's shape), recorded with perf record -k 1 -g. Folded, pprof, speedscope
# and SVG show Julia's names (fib, top-level scope, #1, fib [jfptr wrapper]), pprof keeps
# the LLVM name as the system name, and --no-demangle shows the LLVM names.
source "$(dirname "$0")/e2e_lib.sh"
export HOME=$TMP/home PERFCONV_CACHE_DIR=$TMP/cache
mkdir -p "$HOME"
LL=tests/fixtures/julia_names.ll
NABLA=$(printf '\342\210\207sum!')   # ∇sum!
LLVM_NAMES="julia_fib_11|jfptr_fib_12|japi1_top-level|julia_#1_23|julia_${NABLA}_5"

if ! command -v lli-14 >/dev/null || ! command -v perf >/dev/null; then
	bad "lli-14 or perf: not here (scripts/install-deps.sh installs llvm-14 and linux-perf)"
	finish e2e-julia
	exit 1
fi
mkdir -p "$TMP/rec"
JITDUMPDIR=$TMP/rec timeout 120 perf record -q -k 1 -g -F 999 -o "$TMP/julia.data" \
	lli-14 -jit-kind=mcjit $LL 31 60 >"$TMP/rec.log" 2>&1
dump=$(ls "$TMP"/rec/.debug/jit/llvm-IR-jit-*/jit-*.dump 2>/dev/null | head -1)
if [ ! -s "$TMP/julia.data" ] || [ -z "$dump" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		skip "perf could not record lli-14 here as $(id -un) ($(tail -1 "$TMP/rec.log"))"
		finish e2e-julia
		exit 0
	fi
	bad "perf record of lli-14 failed: $(tail -3 "$TMP/rec.log")"
	finish e2e-julia
	exit 1
fi

conv() { # OUT OPTIONS...
	local out=$1
	shift
	"$PERFCONV" -q -i "$TMP/julia.data" --jit-dir "$TMP/rec" "$@" -o "$TMP/$out" 2>>"$TMP/conv.err"
}
conv julia.folded
conv raw.folded --no-demangle
conv julia.pb.gz
conv raw.pb.gz --no-demangle
conv julia.speedscope.json
conv julia.svg

total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
fib=$(our_count "$TMP/julia.folded" fib)
fib_raw=$(our_count "$TMP/raw.folded" julia_fib_11)
nabla=$(our_count "$TMP/julia.folded" "$NABLA")
nabla_raw=$(our_count "$TMP/raw.folded" "julia_${NABLA}_5")

# Folded: Julia's names on Julia's stacks, every sample where --no-demangle has it.
if [ "$fib" -gt 100 ] && [ "$fib" = "$fib_raw" ] && [ "$nabla" -gt 0 ] && [ "$nabla" = "$nabla_raw" ] &&
	[ "$(total "$TMP/julia.folded")" = "$(total "$TMP/raw.folded")" ] &&
	grep -q ';main;top-level scope;#1;fib \[jfptr wrapper\];fib;fib' "$TMP/julia.folded" &&
	grep -q ";top-level scope;j_foo;$NABLA " "$TMP/julia.folded" &&
	! grep -qE "$LLVM_NAMES" "$TMP/julia.folded"; then
	ok "folded: main;top-level scope;#1;fib [jfptr wrapper];fib, $NABLA, j_foo kept; fib $fib, $NABLA $nabla samples, as julia_fib_11 and julia_${NABLA}_5 under --no-demangle"
else
	bad "folded: fib $fib (raw $fib_raw), $NABLA $nabla (raw $nabla_raw): $(sort -k2 -t' ' -rn "$TMP/julia.folded" | head -2 | cut -c1-300) $(head -3 "$TMP/conv.err")"
fi
if grep -q ';main;japi1_top-level scope_8;julia_#1_23;jfptr_fib_12;julia_fib_11;julia_fib_11' "$TMP/raw.folded" &&
	grep -q ';j_foo;' "$TMP/raw.folded" && ! grep -q 'wrapper\]' "$TMP/raw.folded" &&
	! grep -qE '(^|;)(fib|top-level scope|#1)(;| [0-9]+$)' "$TMP/raw.folded"; then
	ok "folded --no-demangle: the LLVM names (japi1_top-level scope_8;julia_#1_23;jfptr_fib_12;julia_fib_11)"
else
	bad "folded --no-demangle: $(sort -k2 -t' ' -rn "$TMP/raw.folded" | head -2 | cut -c1-300)"
fi

# The wrappers fold away with the pattern docs/SYMBOLS.md gives: fib called from #1 directly.
sed -E 's/;[^;]* \[j[a-z]+ wrapper\]//g' "$TMP/julia.folded" >"$TMP/nowrap.folded"
if [ "$(total "$TMP/nowrap.folded")" = "$(total "$TMP/julia.folded")" ] && ! grep -q 'wrapper\]' "$TMP/nowrap.folded" &&
	grep -q ';top-level scope;#1;fib;fib' "$TMP/nowrap.folded"; then
	ok "folded: sed -E 's/;[^;]* \[j[a-z]+ wrapper\]//g' folds the wrappers away: #1;fib, every sample kept"
else
	bad "folded without wrappers: $(grep -m1 'wrapper' "$TMP/nowrap.folded" | cut -c1-200)"
fi

# pprof: Julia's name as the function's name, the LLVM name as its system name (go tool
# pprof -raw: NAME FILE:LINE s=START(SYSTEM NAME); under --no-demangle no other name).
if command -v go >/dev/null; then
	export GOCACHE=$TMP/gocache GOTOOLCHAIN=local GOFLAGS= PPROF_TMPDIR=$TMP
	go tool pprof -symbolize=none -raw "$TMP/julia.pb.gz" >"$TMP/julia.raw" 2>"$TMP/pprof.err"
	go tool pprof -symbolize=none -raw "$TMP/raw.pb.gz" >"$TMP/raw.raw" 2>>"$TMP/pprof.err"
	go tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -sample_index=0 \
		"$TMP/julia.pb.gz" >"$TMP/julia.top" 2>>"$TMP/pprof.err"
	go tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -sample_index=0 \
		"$TMP/raw.pb.gz" >"$TMP/raw.top" 2>>"$TMP/pprof.err"
	flat() { # TOP NAME: the flat value of NAME
		awk -v f="$2" '{ n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n); if (n == f) print $1 }' "$1"
	}
	if grep -q ' fib :0 s=0(julia_fib_11)$' "$TMP/julia.raw" &&
		grep -q ' fib \[jfptr wrapper\] :0 s=0(jfptr_fib_12)$' "$TMP/julia.raw" &&
		grep -q ' top-level scope :0 s=0(japi1_top-level scope_8)$' "$TMP/julia.raw" &&
		grep -q ' #1 :0 s=0(julia_#1_23)$' "$TMP/julia.raw" &&
		grep -q " $NABLA :0 s=0(julia_${NABLA}_5)\$" "$TMP/julia.raw" &&
		[ -n "$(flat "$TMP/julia.top" fib)" ] &&
		[ "$(flat "$TMP/julia.top" fib)" = "$(flat "$TMP/raw.top" julia_fib_11)" ]; then
		ok "pprof: fib (system name julia_fib_11), fib [jfptr wrapper] (jfptr_fib_12), top-level scope, #1, $NABLA; fib's flat $(flat "$TMP/julia.top" fib) as julia_fib_11's under --no-demangle"
	else
		bad "pprof: $(grep -m3 -E 'fib|scope' "$TMP/julia.raw") flat $(flat "$TMP/julia.top" fib) / $(flat "$TMP/raw.top" julia_fib_11) $(head -2 "$TMP/pprof.err")"
	fi
	if grep -q ' julia_fib_11 :0 s=0()$' "$TMP/raw.raw" && grep -q ' japi1_top-level scope_8 :0 s=0()$' "$TMP/raw.raw" &&
		! grep -q ' fib :0 ' "$TMP/raw.raw"; then
		ok "pprof --no-demangle: the LLVM names"
	else
		bad "pprof --no-demangle: $(grep -m3 -E 'fib|scope' "$TMP/raw.raw")"
	fi
else
	bad "pprof: no go here to run go tool pprof (scripts/install-deps.sh installs golang-go)"
fi

# speedscope: the frames' names.
if python3 - "$TMP/julia.speedscope.json" "$NABLA" <<'EOF'
import json, re, sys
names = {f["name"] for f in json.load(open(sys.argv[1]))["shared"]["frames"]}
want = {"fib", "fib [jfptr wrapper]", "top-level scope", "#1", sys.argv[2], "j_foo"}
raw = [n for n in names if re.match(r"(julia|japi1|jfptr)_", n)]
sys.exit(0 if want <= names and not raw else print(sorted(want - names), raw) or 1)
EOF
then
	ok "speedscope: fib, fib [jfptr wrapper], top-level scope, #1, $NABLA, j_foo; no LLVM name"
else
	bad "speedscope: names"
fi

# SVG: each frame's title names it (its first line; the counts follow on the next).
if grep -q '<title>fib$' "$TMP/julia.svg" && grep -q '<title>fib \[jfptr wrapper\]$' "$TMP/julia.svg" &&
	grep -q '<title>top-level scope$' "$TMP/julia.svg" && grep -q '<title>#1$' "$TMP/julia.svg" &&
	grep -q "<title>$NABLA\$" "$TMP/julia.svg" && grep -q '<title>j_foo$' "$TMP/julia.svg" &&
	! grep -qE "$LLVM_NAMES" "$TMP/julia.svg"; then
	ok "svg: frames titled fib, fib [jfptr wrapper], top-level scope, #1, $NABLA, j_foo; no LLVM name"
else
	bad "svg: $(grep -o '<title>[^<]*' "$TMP/julia.svg" | head -6 | tr '\n' ' ')"
fi

# perf inject --jit's output: the code in the jitted-PID-N.so files it writes beside the
# dump, each mapped by an MMAP2 whose prot perf sets to the file's st_mode (0x81a4, not
# a PROT_* value). With the dump out of reach, the same stacks as with it.
if perf inject --jit -i "$TMP/julia.data" -o "$TMP/injected.data" 2>"$TMP/inject.err"; then
	mv "$dump" "$TMP/dump.aside"
	"$PERFCONV" -i "$TMP/injected.data" -o "$TMP/injected.folded" 2>"$TMP/injected.err"
	mv "$TMP/dump.aside" "$dump"
	n=$(ls "$(dirname "$dump")" | grep -c '^jitted-.*\.so$')
	if [ "$n" -gt 0 ] && cmp -s "$TMP/julia.folded" "$TMP/injected.folded" &&
		! grep -q "damaged" "$TMP/injected.err"; then
		ok "perf inject --jit's output ($n jitted .so files, the dump moved away): the same $(wc -l <"$TMP/julia.folded") stacks as the recording with its dump"
	else
		bad "perf inject --jit's output: $(grep -m1 -E 'damaged|warning' "$TMP/injected.err")"
		diff "$TMP/julia.folded" "$TMP/injected.folded" | sed -E "s/(\[unknown\];)+/[unknown]...;/" | head -6 | cut -c1-300
	fi
else
	bad "perf inject --jit failed: $(tail -1 "$TMP/inject.err")"
fi

finish e2e-julia
