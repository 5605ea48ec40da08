#!/bin/bash
# e2e_merge: several -i merged into one profile (issue 22, item 8): each input's stacks
# under a root frame that names it ("FILE (HOST)", the host from its header), in every
# output format, the counts those of the inputs converted alone.
source "$(dirname "$0")/e2e_lib.sh"
A=$TD/mt-g.data
B=$TD/kheavy.data
host=$("$PERFCONV" info -i $A --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["host"])')
LA="$A ($host)"
LB="$B ($("$PERFCONV" info -i $B --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["host"])'))"

# folded: exactly the inputs' own lines, the label after the thread name
"$PERFCONV" -q "${KS[@]}" -i $A -o "$TMP/a.folded"
"$PERFCONV" -q "${KS[@]}" -i $B -o "$TMP/b.folded"
"$PERFCONV" "${KS[@]}" -i $A -i $B -o "$TMP/ab.folded" 2>"$TMP/ab.err"
{ sed "s|^\([^;]*\);|\1;$LA;|" "$TMP/a.folded"; sed "s|^\([^;]*\);|\1;$LB;|" "$TMP/b.folded"; } |
	sort >"$TMP/want.folded"
sort "$TMP/ab.folded" >"$TMP/got.folded"
na=$(awk '{ s += $NF } END { print s }' "$TMP/a.folded")
nb=$(awk '{ s += $NF } END { print s }' "$TMP/b.folded")
if [ -n "$host" ] && cmp -s "$TMP/want.folded" "$TMP/got.folded" &&
	grep -q "^perfconv: $A:" "$TMP/ab.err" && grep -q "^perfconv: $B:" "$TMP/ab.err"; then
	ok "folded: $na + $nb samples under '$LA' and '$LB', each input's summary named"
else
	bad "folded: $(diff "$TMP/want.folded" "$TMP/got.folded" | head -4)"
fi

# pprof: the labels are the roots, the total the sum
"$PERFCONV" -q "${KS[@]}" -i $A -i $B -o "$TMP/ab.pb.gz"
if command -v go >/dev/null; then
	export HOME=$TMP/home GOCACHE=$TMP/gocache GOTOOLCHAIN=local GOFLAGS= PPROF_TMPDIR=$TMP
	mkdir -p "$HOME"
	go tool pprof -symbolize=none -top -cum -nodecount=100000 -nodefraction=0 -sample_index=cpu-samples \
		"$TMP/ab.pb.gz" >"$TMP/ab.top" 2>/dev/null
	ca=$(awk -v f="$LA" 'index($0, f) { print $4; exit }' "$TMP/ab.top")
	cb=$(awk -v f="$LB" 'index($0, f) { print $4; exit }' "$TMP/ab.top")
	if [ "$ca" = "$na" ] && [ "$cb" = "$nb" ]; then
		ok "pprof: '$LA' holds $ca samples, '$LB' $cb (cumulative)"
	else
		bad "pprof: '$LA' $ca (want $na), '$LB' $cb (want $nb): $(head -8 "$TMP/ab.top")"
	fi
else
	bad "pprof: 'go' not found (scripts/install-deps.sh installs golang-go)"
fi

# the timelines and the flame graph: each input's frame, and their structure holds
"$PERFCONV" -q "${KS[@]}" -i $A -i $B -f samples -o "$TMP/ab.samples"
"$PERFCONV" -q "${KS[@]}" -i $A -i $B -o "$TMP/ab.trace.json" -f chrome
"$PERFCONV" -q "${KS[@]}" -i $A -i $B -o "$TMP/ab.speedscope.json"
"$PERFCONV" -q "${KS[@]}" -i $A -i $B -o "$TMP/ab.svg"
if [ "$(wc -l <"$TMP/ab.samples")" = $((na + nb)) ] &&
	[ "$(grep -c "	$LA;" "$TMP/ab.samples")" = "$na" ] &&
	[ "$(grep -c "	$LB;" "$TMP/ab.samples")" = "$nb" ]; then
	ok "samples: $((na + nb)) lines, each under its input's frame"
else
	bad "samples: $(wc -l <"$TMP/ab.samples") lines: $(head -1 "$TMP/ab.samples")"
fi
for f in trace.json speedscope.json svg; do
	if grep -qF "$LA" "$TMP/ab.$f" && grep -qF "$LB" "$TMP/ab.$f"; then
		ok "$f: both inputs' frames"
	else
		bad "$f: lacks an input's frame"
	fi
done
if python3 tests/chrome_check.py "$TMP/ab.trace.json" "$TMP/ab.samples" >"$TMP/chrome.out" 2>&1; then
	ok "chrome: $(tail -1 "$TMP/chrome.out")"
else
	bad "chrome: $(tail -3 "$TMP/chrome.out")"
fi
if python3 tests/svg_check.py "$TMP/ab.svg" "$TMP/ab.folded" >"$TMP/svg.out" 2>&1; then
	ok "svg: $(tail -1 "$TMP/svg.out")"
else
	bad "svg: $(tail -3 "$TMP/svg.out")"
fi

finish e2e-merge
