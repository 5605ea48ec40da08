#!/bin/bash
# e2e_json: speedscope and Chrome trace outputs of the committed recordings: the
# structure of every Chrome trace (tests/chrome_check.py), then speedscope's schema and
# the speedscope app itself in headless Chromium (tests/browser/). Screenshots of the
# flame graphs are kept in build/screenshots/.
source "$(dirname "$0")/e2e_lib.sh"
cases=()

# every committed recording, native and JIT
for in in $TD/{mt-g,mt-z,mt-pipe,mt-threads,mt-k1,kheavy,two-event,execer,shapes}.data \
	$TD/jit/{node,node-wasm,lli,erlang,node-map}.data; do
	name=$(basename "$in" .data)
	ev=() evname=()
	[ "$name" = two-event ] && { ev=(--event cpu-clock); evname=(--event cpu-clock); }
	"$PERFCONV" -q -i "$in" "${KS[@]}" "${ev[@]}" -f samples -o "$TMP/$name.samples" || { bad "$name: samples"; continue; }
	if "$PERFCONV" -q -i "$in" "${KS[@]}" "${ev[@]}" -o "$TMP/$name.speedscope.json" &&
		"$PERFCONV" -q -i "$in" "${KS[@]}" "${ev[@]}" -o "$TMP/$name.trace.json"; then
		ok "$name: wrote $(wc -c <"$TMP/$name.speedscope.json") bytes of speedscope, $(wc -c <"$TMP/$name.trace.json") of Chrome trace"
	else
		bad "$name: perfconv failed"
		continue
	fi
	if out=$(python3 tests/chrome_check.py "$TMP/$name.trace.json" "$TMP/$name.samples" "${evname[@]}" 2>&1); then
		ok "$name: chrome trace: $(echo "$out" | tail -1)"
	else
		bad "$name: chrome trace: $out"
	fi
	cases+=("$TMP/$name.speedscope.json" "$(python3 tests/hottest.py "$TMP/$name.samples" busiest)")
	cases+=("$TMP/$name.trace.json" "$(python3 tests/hottest.py "$TMP/$name.samples" first)")
done
# a count event: its slices nest too, and open in the app
"$PERFCONV" -q -i $TD/two-event.data "${KS[@]}" --event page-faults -f samples -o "$TMP/pf.samples" &&
	"$PERFCONV" -q -i $TD/two-event.data "${KS[@]}" --event page-faults -o "$TMP/pf.trace.json" &&
	out=$(python3 tests/chrome_check.py "$TMP/pf.trace.json" "$TMP/pf.samples" --event page-faults --nesting-only) &&
	ok "two-event --event page-faults: chrome trace: $out" || bad "two-event page-faults chrome trace: $out"
cases+=("$TMP/pf.trace.json" "$(python3 tests/hottest.py "$TMP/pf.samples" first)")
# --weight samples: unit none, one per sample
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --weight samples -o "$TMP/w.speedscope.json"
if python3 - "$TMP/w.speedscope.json" "$TMP/mt-g.samples" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(1 for _ in open(sys.argv[2]))
assert all(p["unit"] == "none" for p in d["profiles"])
assert sum(sum(p["weights"]) for p in d["profiles"]) == n, "weights != samples"
PY
then ok "speedscope --weight samples: unit none, weights sum to the sample count"; else bad "speedscope --weight samples"; fi
# the format from the suffix; .json alone is ambiguous and stays folded
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/x.speedscope.json" && head -c 20 "$TMP/x.speedscope.json" | grep -q '"\$schema"' &&
	ok "cli: .speedscope.json selects speedscope" || bad "cli: .speedscope.json"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/x.trace.json" && head -c 60 "$TMP/x.trace.json" | grep -q '"name":"perfconv"' &&
	ok "cli: .trace.json selects chrome" || bad "cli: .trace.json"

# The browser part: speedscope's schema and app, from npm, in Debian's chromium.
run_browser open_in_speedscope.mjs "${cases[@]}"

finish e2e-json
