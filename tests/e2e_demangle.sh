#!/bin/bash
# e2e_demangle: hostile mangled names (issue 42 item 1). Back-references make a name of
# 350 bytes demangle to terabytes, or make libiberty search 2^40 paths printing nothing;
# such names in a perf map, in many lines of one, and in a binary's .symtab end the
# conversion within LIMIT seconds and MEM_KB of peak RSS, kept mangled and said, and
# the rest of the output is what it is with ordinary names.
source "$(dirname "$0")/e2e_lib.sh"
J=$TD/jit
LIMIT=5
# Peak RSS: a conversion of node-map.data takes about 30 MB. The plain build also runs
# under an address-space limit, so that a demangler without a bound fails there
# instead of taking the machine's memory; the sanitizers' build reserves terabytes of
# address space for its shadow, and keeps freed memory a while: RSS only, and more.
MEM_KB=150000
ASLIM=(prlimit --as=2147483648)
if grep -q __asan_init "$PERFCONV"; then
	MEM_KB=400000
	ASLIM=()
fi

# The names, made by one generator (see tests/check_demangle.c for what each is):
# cpp LEVELS: f<B<B<..., A>>> doubling at each level; walk LEVELS: a pack expansion
# whose search for a pack walks every path; rust LEVELS: Rust v0 tuples doubling;
# map LEVELS MAP: the perf map MAP with each line named by cpp, its innermost name made
# distinct by the line's number.
bomb() {
	python3 - "$@" <<'EOF'
import sys
D36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
D62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
def num(n, digits):
    s = ""
    while True:
        s = digits[n % len(digits)] + s
        n //= len(digits)
        if n == 0:
            return s
def sub(i):
    return "S_" if i == 0 else "S" + num(i - 1, D36) + "_"
def cpp(levels, base=0, ident="1A", pack=False):
    s = ("_Z1fIDp1CI1BI" if pack else "_Z1fI1BI") + (sub(base + 1) + "I") * levels
    s += ident + sub(base + 2) + "E"
    s += "".join(sub(base + 3 + i) + "E" for i in range(levels))
    return s + ("T_EEEv" if pack else "Evv")
def rust(levels):
    s = "INvC1a1f"
    prev = len(s)
    s += "TllE"
    for _ in range(levels):
        at = len(s)
        ref = "B" + (num(prev - 1, D62) if prev else "") + "_"
        s += "T" + ref + ref + "E"
        prev = at
    return "_R" + s + "E"
kind, levels = sys.argv[1], int(sys.argv[2])
if kind == "cpp":
    print(cpp(levels))
elif kind == "walk":
    print(cpp(levels, base=1, pack=True))
elif kind == "rust":
    print(rust(levels))
elif kind == "map":
    for i, line in enumerate(open(sys.argv[3])):
        start, size = line.split()[:2]
        ident = "A%d" % i
        print(start, size, cpp(levels, ident=str(len(ident)) + ident))
EOF
}

# bounded NAME PATTERN -- ARGS...: perfconv ARGS ends within LIMIT seconds with exit
# 0, its peak RSS under MEM_KB and stderr matching PATTERN (grep -E).
bounded() {
	local name=$1 pat=$2 rc t0 t1 rss
	shift 3
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$TMP/$name.rss" timeout -k 1 $LIMIT "${ASLIM[@]}" "$PERFCONV" "$@" \
		2>"$TMP/$name.err" >/dev/null </dev/null
	rc=$?
	t1=$(date +%s%N)
	rss=$(tail -1 "$TMP/$name.rss")
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$name: still running after $LIMIT s"
	elif [ $rc -ne 0 ]; then
		bad "$name: exit $rc: $(grep -v '^Command' "$TMP/$name.err" | head -3)"
	elif [ "${rss:-999999999}" -ge $MEM_KB ]; then
		bad "$name: peak RSS ${rss} KB, over $MEM_KB"
	elif ! grep -qE -- "$pat" "$TMP/$name.err"; then
		bad "$name: stderr lacks /$pat/: $(head -3 "$TMP/$name.err")"
	else
		ok "$name: $(((t1 - t0) / 1000000)) ms, peak RSS $((rss / 1024)) MB: $(grep -E -m1 -- "$pat" "$TMP/$name.err")"
	fi
}

# same_as NAME OUT REF BOMB PLAIN: OUT with BOMB (as it stands, kept mangled) read as
# PLAIN is REF, the lines sorted (names decide the order)
same_as() {
	local name=$1 out=$2 ref=$3 bomb=$4 plain=$5
	if [ ! -s "$out" ]; then
		bad "$name: no output"
	elif ! grep -qF -- "$bomb" "$out"; then
		bad "$name: the name is not in the output as it is mangled"
	elif cmp -s <(sed "s|$bomb|$plain|g" "$out" | sort) <(sort "$ref"); then
		ok "$name: $(grep -cF -- "$bomb" "$out") lines hold the name kept mangled; the output is otherwise the reference's"
	else
		bad "$name: differs from the reference: $(diff <(sed "s|$bomb|$plain|g" "$out" | sort) <(sort "$ref") | head -4 | cut -c1-200)"
	fi
}

# 1. A perf map (a JIT runtime's, written by the process's user): the hot function's
# line named each way; the map in --jit-dir wins over the one beside the recording.
FIB='JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19'
"$PERFCONV" -q -i $J/node-map.data -o "$TMP/ref.folded"
grep -qF "$FIB" "$TMP/ref.folded" || bad "reference: no $FIB frame"
for kind in cpp:40 walk:40 rust:40; do
	name=map-${kind%:*}
	B=$(bomb ${kind%:*} ${kind#*:})
	mkdir -p "$TMP/$name"
	awk -v b="$B" '{ if (index($0, " JS:*fibonacci ")) print $1, $2, b; else print }' \
		$J/perf-30787.map >"$TMP/$name/perf-30787.map"
	bounded "$name (${#B} bytes), folded" "perf-30787.map: warning: JIT code of pid 30787: 1 name kept mangled" -- \
		-i $J/node-map.data --jit-dir "$TMP/$name" -o "$TMP/$name.folded"
	same_as "$name, folded" "$TMP/$name.folded" "$TMP/ref.folded" "$B" "$FIB"
	bounded "$name (${#B} bytes), pprof" "1 name kept mangled" -- \
		-i $J/node-map.data --jit-dir "$TMP/$name" -f pprof -o "$TMP/$name.pb.gz"
	if [ "$(gzip -dc "$TMP/$name.pb.gz" 2>/dev/null | grep -caF -- "$B")" -ge 1 ]; then
		ok "$name, pprof: the name in the string table as it is mangled"
	else
		bad "$name, pprof: the name is not in the profile"
	fi
done

# 2. Every line of the map a distinct such name (2,453): one object's budget, 8
# bounded runs, not one per name.
mkdir -p "$TMP/many"
bomb map 40 $J/perf-30787.map >"$TMP/many/perf-30787.map"
n=$(sort -u -k3 "$TMP/many/perf-30787.map" | wc -l)
bounded "map, $n distinct names" "JIT code of pid 30787: $n names kept mangled" -- \
	-i $J/node-map.data --jit-dir "$TMP/many" -o "$TMP/many.folded"

# 3. A binary's .symtab: shapes with two functions renamed (objcopy keeps its build id),
# alone with its recording; the symbol table read afresh (no cache).
mkdir -p "$TMP/ref-bin" "$TMP/bomb-bin"
for d in ref-bin bomb-bin; do cp $TD/shapes.data $TD/libc.so.6 $TD/ld-linux-x86-64.so.2 "$TMP/$d/"; done
cp $TD/shapes "$TMP/ref-bin/"
ACC=$(bomb cpp 40)
SHADE=$(bomb walk 40)
objcopy --redefine-sym "_ZN8geometry10accumulateIdEET_PKS1_i=$ACC" \
	--redefine-sym "_ZN8geometry5Scene9shade_allEj=$SHADE" $TD/shapes "$TMP/bomb-bin/shapes"
conv() { "$PERFCONV" -q "${KS[@]}" --buildid-dir "$TMP/empty" --no-cache "$@"; }
conv -i "$TMP/ref-bin/shapes.data" -o "$TMP/ref-bin.folded"
for fmt in folded pprof; do
	bounded "shapes' .symtab, $fmt" "shapes: warning: names kept mangled: demangling passed the bound" -- \
		"${KS[@]}" --buildid-dir "$TMP/empty" --no-cache -i "$TMP/bomb-bin/shapes.data" -f $fmt \
		-o "$TMP/bomb-bin.$fmt"
done
if grep -q 'geometry::accumulate<double> 592$' "$TMP/ref-bin.folded"; then
	sed "s|$SHADE|geometry::Scene::shade_all|g" "$TMP/bomb-bin.folded" >"$TMP/bomb-bin.1"
	same_as "shapes' .symtab, folded" "$TMP/bomb-bin.1" "$TMP/ref-bin.folded" "$ACC" \
		"geometry::accumulate<double>"
else
	bad "shapes: reference lacks accumulate's 592 samples: $(grep accumulate "$TMP/ref-bin.folded")"
fi
[ "$(grep -c 'warning: names kept mangled' "$TMP/shapes' .symtab, folded.err")" = 1 ] &&
	ok "shapes: said once for the object (two names kept)" ||
	bad "shapes: said $(grep -c 'kept mangled' "$TMP/shapes' .symtab, folded.err") times"

finish e2e_demangle
