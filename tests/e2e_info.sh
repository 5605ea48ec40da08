#!/bin/bash
# e2e_info: `perfconv info` on every committed recording against what perf itself
# says (perf report --header-only, perf report -n: samples per event and thread,
# lost samples), --json against the text, and the places looked at for a binary and a
# jitdump that are not there.
source "$(dirname "$0")/e2e_lib.sh"
export PERFCONV_CACHE_DIR=$TMP/cache

for in in $TD/*.data $TD/jit/*.data; do
	name=$(basename "$in" .data)
	if ! "$PERFCONV" info -i "$in" "${KS[@]}" --top 1000 --json >"$TMP/$name.json" ||
		! "$PERFCONV" info -i "$in" "${KS[@]}" --top 1000 >"$TMP/$name.txt"; then
		bad "$name: perfconv info failed"
		continue
	fi
	# perf reads a pipe-mode file only from a pipe
	if grep -q '"mode":.*"pipe"' "$TMP/$name.json"; then
		perf report --header-only -i - <"$in" >"$TMP/$name.hdr" 2>/dev/null
		perf report -n --stdio -g none --sort pid -i - "${KS[@]}" <"$in" >"$TMP/$name.rep" 2>/dev/null
	else
		perf report --header-only -i "$in" >"$TMP/$name.hdr" 2>/dev/null
		perf report -n --stdio -g none --sort pid -i "$in" "${KS[@]}" >"$TMP/$name.rep" 2>/dev/null
	fi
	if out=$(python3 tests/info_compare.py "$TMP/$name.json" "$TMP/$name.txt" "$TMP/$name.hdr" "$TMP/$name.rep" 2>&1); then
		ok "$name: $out"
	else
		bad "$name: $out"
	fi
	# info and a conversion share the session that reads the recording: the same
	# samples, per event too (the pprof sample types count each event's samples)
	conv=$("$PERFCONV" -i "$in" "${KS[@]}" -o "$TMP/$name.pb.gz" 2>&1 | sed -n 's/^perfconv: \([0-9]*\) samples in .*/\1/p')
	info=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$TMP/$name.json")
	per_info=$(python3 -c 'import json,sys; print(" ".join(str(e["samples"]) for e in json.load(open(sys.argv[1]))["events"] if e["samples"]))' "$TMP/$name.json")
	per_conv=$(go tool pprof -raw "$TMP/$name.pb.gz" 2>/dev/null | python3 -c '
import sys
lines = sys.stdin.read().split("\n")
types = lines[lines.index("Samples:") + 1].split() if "Samples:" in lines else []
cols = [i for i, t in enumerate(types) if t.endswith("-samples/count")]
sums = [0] * len(types)
for l in lines[lines.index("Samples:") + 2:] if "Samples:" in lines else []:
    f = l.split(":")[0].split()
    if len(f) >= len(types) and all(x.isdigit() for x in f[:len(types)]):
        for i in range(len(types)):
            sums[i] += int(f[i])
print(" ".join(str(sums[i]) for i in cols))')
	if [ -n "$conv" ] && [ "$conv" = "$info" ] && [ "$per_conv" = "$per_info" ]; then
		ok "$name: info and the conversion read the same samples ($info; per event $per_info)"
	else
		bad "$name: info says $info samples (per event $per_info), the conversion $conv ($per_conv)"
	fi
done

# call-graph modes: frame pointer, and none
python3 -c 'import json,sys; assert [e["call_graph"] for e in json.load(open(sys.argv[1]))["events"]] == ["fp"]' "$TMP/mt-g.json" &&
	ok "mt-g: call graph fp" || bad "mt-g: call graph"
grep -q 'call graph: frame pointer' "$TMP/mt-g.txt" && ok "mt-g text: call graph: frame pointer" || bad "mt-g text: call graph"
# dwarf call graphs: recorded here (no committed recording has them), the stack size said
if perf record -q --call-graph dwarf,4096 -o "$TMP/dwarf.data" -- $TD/mt 20 >/dev/null 2>&1; then
	"$PERFCONV" info -i "$TMP/dwarf.data" >"$TMP/dwarf.txt"
	"$PERFCONV" info -i "$TMP/dwarf.data" --json >"$TMP/dwarf.json"
	grep -q 'call graph: dwarf, 4096 bytes of stack' "$TMP/dwarf.txt" &&
		python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["events"][0]; assert (e["call_graph"], e["dwarf_stack_size"]) == ("dwarf", 4096), e' "$TMP/dwarf.json" &&
		ok "perf record --call-graph dwarf,4096: dwarf, 4096 bytes of stack (text and JSON)" ||
		bad "dwarf: $(grep 'call graph' "$TMP/dwarf.txt")"
else
	bad "perf record --call-graph dwarf failed here"
fi
# the binary found beside the recording, kernel symbols from --kallsyms
grep -A1 '/tmp/perfconv-rec/mt \[user\]' "$TMP/mt-g.txt" | grep -q "found: $TD/mt; symbols: full symbol table$" &&
	ok "mt-g: the binary found beside the recording" || bad "mt-g: binary beside the recording"
grep -q "^kernel symbols: $TD/kallsyms.gz" "$TMP/kheavy.txt" && ok "kheavy: kernel symbols from --kallsyms" || bad "kheavy: kernel symbols"
# JIT: the dump beside the recording serves node
grep -Eq "^  pid [0-9]+ \(node\), [0-9]+ samples in anonymous memory: $TD/jit/jit-[0-9]+.dump" "$TMP/node.txt" &&
	ok "node: served by the jitdump beside the recording" || bad "node: $(grep -A3 '^JIT' "$TMP/node.txt")"

# a recording alone: its binary and its dump are missing, and the places looked at named
mkdir -p "$TMP/alone"
cp $TD/mt-g.data $TD/jit/node.data "$TMP/alone/"
mkdir -p "$TMP/empty"
"$PERFCONV" info -i "$TMP/alone/mt-g.data" "${KS[@]}" --buildid-dir "$TMP/empty" >"$TMP/alone-mt.txt"
if grep -A6 '/tmp/perfconv-rec/mt \[user\]' "$TMP/alone-mt.txt" | grep -q 'not usable: file not found' &&
	grep -A6 '/tmp/perfconv-rec/mt \[user\]' "$TMP/alone-mt.txt" | grep -q "$TMP/alone/mt: " &&
	grep -A6 '/tmp/perfconv-rec/mt \[user\]' "$TMP/alone-mt.txt" | grep -q "^ *looked at:"; then
	ok "missing binary: named, with the places looked at"
else
	bad "missing binary: $(grep -A6 '/tmp/perfconv-rec/mt' "$TMP/alone-mt.txt")"
fi
"$PERFCONV" info -i "$TMP/alone/node.data" "${KS[@]}" >"$TMP/alone-node.txt"
"$PERFCONV" info -i "$TMP/alone/node.data" "${KS[@]}" --json >"$TMP/alone-node.json"
if grep -Eq "^  pid [0-9]+ \(node\), [0-9]+ samples in anonymous memory: no jitdump or perf map found; it wrote .*jit-[0-9]+.dump" "$TMP/alone-node.txt" &&
	grep -Eq "^        $TMP/alone/jit-[0-9]+.dump\[.gz\]$" "$TMP/alone-node.txt" &&
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jit"]; n=[p for p in j if p["name"]=="node"][0]; assert n["served_by"] is None and n["expected_dump"] and len(n["looked"])>=2' "$TMP/alone-node.json"; then
	ok "missing jitdump: named, with the places looked at (text and JSON)"
else
	bad "missing jitdump: $(grep -A6 '^JIT' "$TMP/alone-node.txt")"
fi
# with --jit-dir the dump is found again, and the search names the tree
"$PERFCONV" info -i "$TMP/alone/node.data" "${KS[@]}" --jit-dir $TD/jit >"$TMP/jd.txt"
grep -Eq "samples in anonymous memory: $TD/jit/jit-[0-9]+.dump" "$TMP/jd.txt" && ok "--jit-dir: dump found" || bad "--jit-dir: $(grep -A3 '^JIT' "$TMP/jd.txt")"

# bad input: one line, exit 1; bad usage: exit 2
"$PERFCONV" info -i tests/bad/$(ls tests/bad | grep -m1 '\.data$') >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -ge 1 ] && ok "bad input: exit 1: $(head -1 "$TMP/err")" || bad "bad input: exit $rc"
"$PERFCONV" info --top 0 >/dev/null 2>&1
[ $? -eq 2 ] && ok "--top 0: usage error" || bad "--top 0"
finish e2e_info
