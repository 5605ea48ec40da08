#!/bin/bash
# e2e_svg: the SVG flame graph (-f svg) of native, kernel and JIT recordings: every
# frame's count and place checked against folded output of the same options
# (tests/svg_check.py), then each file used in headless Chromium as a person would
# (tests/browser/open_svg.mjs: tooltip share, click to zoom, search, scripts off).
# Screenshots are kept in build/screenshots/.
source "$(dirname "$0")/e2e_lib.sh"
cases=()

# check NAME SVG-OPTIONS...: the SVG against folded output with the same options
check() {
	local name=$1
	shift
	if ! "$PERFCONV" -q "$@" -f svg -o "$TMP/$name.svg" || ! "$PERFCONV" -q "$@" -f folded -o "$TMP/$name.folded"; then
		bad "$name: perfconv failed"
		return 1
	fi
	if out=$(python3 tests/svg_check.py "$TMP/$name.svg" "$TMP/$name.folded" --case "$TMP/$name.case.json" 2>&1); then
		ok "$name: $out"
	else
		bad "$name: $out"
		return 1
	fi
}

# native (C, C++ with inlined frames), kernel-heavy, JIT (node)
for in in $TD/mt-g.data $TD/shapes.data $TD/kheavy.data $TD/jit/node.data; do
	name=$(basename "$in" .data)
	check "$name" -i "$in" "${KS[@]}" && cases+=("$TMP/$name.case.json")
done
# the options folded output has reach the SVG alike
check mt-tid -i $TD/mt-g.data "${KS[@]}" --with-tid
check mt-pid-period -i $TD/mt-g.data "${KS[@]}" --with-pid --weight period
check two-event-pf -i $TD/two-event.data "${KS[@]}" --event page-faults
check mt-threads-filter -i $TD/mt-threads.data "${KS[@]}" --comm mt-alpha,mt-beta --tid 7937,7938 --srcline
check empty -i tests/hostile/no-samples.data
check mt-inverted -i $TD/mt-g.data "${KS[@]}" --inverted --width 600 --title 'a <title> & more'
check erlang -i $TD/jit/erlang.data "${KS[@]}"
# issue 22 item 14: a graph of 3,000-frame stacks (45,000 px tall) opens on its frames
python3 tests/make-hostile.py "$TMP/h" >/dev/null
check deep -i "$TMP/h/deep.data" "${KS[@]}" --symfs $TD && cases+=("$TMP/deep.case.json")

# every format, for a recording without samples: a file, no failure (UBSan found
# NULL passed to qsort and memset on this path); filters that leave no sample are an
# error instead (issue 22 item 12), with no file
for f in folded samples pprof speedscope firefox chrome svg; do
	"$PERFCONV" -q -i tests/hostile/no-samples.data -f $f -o "$TMP/none.$f" && [ -s "$TMP/none.$f" -o $f = folded -o $f = samples ] &&
		ok "no samples, -f $f: exit 0" || bad "no samples, -f $f"
	"$PERFCONV" -q -i $TD/mt-threads.data "${KS[@]}" --comm nobody -f $f -o "$TMP/nomatch.$f" 2>/dev/null
	[ $? -eq 1 ] && [ ! -e "$TMP/nomatch.$f" ] && ok "no sample matches, -f $f: exit 1, no file" ||
		bad "no sample matches, -f $f"
done
# --weight period of a clock event counts nanoseconds
grep -q '^[0-9]* ns (' <(grep -A1 '<title>all$' "$TMP/mt-pid-period.svg") &&
	ok "--weight period: the root's tooltip counts ns" || bad "--weight period: no ns in the root's tooltip"
# --inverted: the root at the top; --title and --width as given, escaped
if python3 - "$TMP/mt-inverted.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
r = ET.parse(sys.argv[1]).getroot()
assert r.get("width") == "600", r.get("width")
assert r.find(NS + "text[@id='title']").text == "a <title> & more"
ys = [float(g.find(NS + "rect").get("y")) for g in r.find(NS + "g[@id='frames']")]
assert ys[0] == min(ys), "root not at the top"
PY
then ok "--inverted --width 600 --title: root on top, 600 px, title escaped"; else bad "--inverted/--width/--title"; fi
# issue 21 B6: U+FFFF (well-formed UTF-8, no XML character) in --title: still XML
"$PERFCONV" -q -i $TD/mt-g.data --symfs $TD --title "$(printf 'x\xef\xbf\xbfy')" -o "$TMP/ffff.svg"
python3 -c 'import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot().find("{http://www.w3.org/2000/svg}text[@id=\"title\"]").text
assert t == "x\ufffdy", repr(t)' "$TMP/ffff.svg" 2>"$TMP/ffff.err" &&
	ok "--title with U+FFFF: well-formed XML, U+FFFD in its place" || bad "U+FFFF: $(tail -1 "$TMP/ffff.err")"
# the .svg suffix selects the format; a narrow --minwidth draws more, a wide one fewer
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/suffix.svg" && head -c 200 "$TMP/suffix.svg" | grep -q '<svg' &&
	ok ".svg suffix writes SVG" || bad ".svg suffix"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --minwidth 20 -o "$TMP/wide.svg" && "$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" -o "$TMP/mt-folded-again.folded" &&
	out=$(python3 tests/svg_check.py "$TMP/wide.svg" "$TMP/mt-folded-again.folded") && grep -q 'left-out-frames=[1-9]' "$TMP/wide.svg" &&
	ok "--minwidth 20: $out" || bad "--minwidth 20: $out"
"$PERFCONV" -q -i $TD/mt-g.data --minwidth x -f svg -o /dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q 'minwidth' "$TMP/err" && ok "--minwidth x: usage error" || bad "--minwidth x"
"$PERFCONV" -q -i $TD/mt-g.data --width 5 -f svg -o /dev/null 2>"$TMP/err"
[ $? -eq 2 ] && ok "--width 5: usage error" || bad "--width 5"

# The browser part: Debian's chromium through playwright-core (tests/browser/).
if run_browser open_svg.mjs "${cases[@]}"; then
	[ ${#cases[@]} -eq 5 ] || bad "browser: ${#cases[@]} of 5 recordings (4 and the deep one) reached the browser"
fi
finish e2e_svg
