#!/bin/bash
# e2e_diff: perfconv diff (issue 36) on two versions of one program recorded now.
# tests/fixtures/diffprog.c, built twice (-O1 -fno-inline -fno-omit-frame-pointer), has
# known costs per round: work_same 1 unit in both, work_double 1 then 2, work_removed 1
# in the base only, work_added 1 in the new only. So each function's share of NEW over
# its share of BASE is known: work_same (1/4)/(1/3) = 0.75, work_double (2/4)/(1/3) =
# 1.5. Recorded with perf record -e cpu-clock -g: BASE and NEW at 4999 Hz for 600 rounds,
# NEW2 at 1999 Hz for 1200 rounds (twice as long, at another rate). The folded diff gives
# each ratio within 5%, by share (the default) for NEW and NEW2 alike, and by count
# (--absolute) as the costs say; removed and added functions on one side only; the top
# table; the pprof diff's go tool pprof -top equal to -diff_base's of perfconv's own
# two profiles.
source "$(dirname "$0")/e2e_lib.sh"
export HOME=$TMP/home PERFCONV_CACHE_DIR=$TMP/cache
mkdir -p "$HOME"

if ! command -v perf >/dev/null || ! command -v gcc >/dev/null; then
	bad "perf or gcc: not here (scripts/install-deps.sh installs them)"
	finish e2e-diff
	exit 1
fi
# two builds of one program, under one name (a stack's first frame is its thread's)
for v in 1 2; do
	mkdir -p "$TMP/v$v"
	gcc -g -O1 -fno-inline -fno-omit-frame-pointer -falign-loops=64 -DVERSION=$v \
		-o "$TMP/v$v/diffprog" tests/fixtures/diffprog.c
done
# (at the default priority: at nice 19 beside two busy loops the program got so little of
# the CPUs that the timeout cut NEW2's 1200 rounds short, and its time across runs was
# then 1.2 times BASE's, not 2; a cut recording is said, not judged)
rec() { # OUT FREQ PROGRAM ROUNDS
	timeout 600 perf record -q -e cpu-clock -g -F "$2" -o "$TMP/$1" \
		"$TMP/$3" "$4" >>"$TMP/rec.log" 2>&1
	[ $? -ne 124 ] || echo "$1: not finished within 600 s" >>"$TMP/cut"
}
rec base.data 4999 v1/diffprog 600
rec new.data 4999 v2/diffprog 600
rec new2.data 1999 v2/diffprog 1200
if [ -e "$TMP/cut" ]; then
	bad "the recordings were cut by their timeout: $(tr '\n' ' ' <"$TMP/cut")"
	finish e2e-diff
	exit 1
fi
if [ ! -s "$TMP/base.data" ] || [ ! -s "$TMP/new.data" ] || [ ! -s "$TMP/new2.data" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		skip "perf could not record here as $(id -un) ($(tail -1 "$TMP/rec.log"))"
		finish e2e-diff
		exit 0
	fi
	bad "perf record failed: $(tail -3 "$TMP/rec.log")"
	finish e2e-diff
	exit 1
fi
B=$TMP/base.data N=$TMP/new.data N2=$TMP/new2.data

# each function's weight on each side of a folded diff: the lines whose stack holds it
cat >"$TMP/fold.py" <<'EOF'
import sys
tot = {}
for line in open(sys.argv[1]):
    stack, b, n = line.rstrip("\n").rsplit(" ", 2)
    for f in set(stack.split(";")):
        t = tot.setdefault(f, [0, 0])
        t[0] += int(b)
        t[1] += int(n)
for f in sys.argv[2:]:
    b, n = tot.get(f, [0, 0])
    print(f, b, n)
EOF
FUNCS="work_same work_double work_removed work_added"
weights() { python3 "$TMP/fold.py" "$1" $FUNCS; } # FOLDED: "FUNC BASE NEW" lines
# ratio_ok FOLDED FUNC WANT [TOLERANCE]: NEW's weight over BASE's within 5% of WANT
ratio_ok() {
	weights "$1" | awk -v f="$2" -v w="$3" -v t="${4:-0.05}" '$1 == f && $2 > 0 { r = $3 / $2;
		if (r > w * (1 - t) && r < w * (1 + t)) ok = 1 } END { exit !ok }'
}
ratio_of() { weights "$1" | awk -v f="$2" '$1 == f { printf "%.3f", $2 ? $3 / $2 : -1 }'; }

# --- 1. by share: BASE scaled to NEW's total ------------------------------------------
"$PERFCONV" diff "$B" "$N" -o "$TMP/d.folded" 2>"$TMP/d.err"
bad_lines=$(grep -cvE '^[^ ].* [0-9]+ [0-9]+$' "$TMP/d.folded")
[ -s "$TMP/d.folded" ] && [ "$bad_lines" = 0 ] &&
	ok "folded diff: $(wc -l <"$TMP/d.folded") lines of 'stack BASE NEW'" ||
	bad "folded diff: $bad_lines lines not 'stack BASE NEW': $(grep -vE ' [0-9]+ [0-9]+$' "$TMP/d.folded" | head -2)"
sums=$(awk '{ b += $(NF-1); n += $NF; k++ } END { print b, n, k }' "$TMP/d.folded")
read -r sb sn nl <<<"$sums"
[ $((sb > sn ? sb - sn : sn - sb)) -le "$nl" ] && [ "$sn" -gt 1000 ] &&
	ok "by share: BASE's column sums to NEW's total ($sb and $sn, rounded per line)" ||
	bad "by share: BASE's column sums to $sb, NEW's to $sn"
for fw in work_same:0.75 work_double:1.5; do
	f=${fw%:*} w=${fw#*:}
	ratio_ok "$TMP/d.folded" "$f" "$w" &&
		ok "by share: $f's share in NEW over BASE $(ratio_of "$TMP/d.folded" "$f"), the costs' $w within 5%" ||
		bad "by share: $f's ratio $(ratio_of "$TMP/d.folded" "$f"), want $w within 5%"
done
# the two builds' addresses differ: their stacks are one line by name
line=$(grep -E '^diffprog;(.*;)?work_double [1-9][0-9]* [1-9][0-9]*$' "$TMP/d.folded")
[ -n "$line" ] && ok "two builds, one line by name: '$line'" ||
	bad "no line of work_double with both sides: $(grep 'work_double [0-9]* [0-9]*$' "$TMP/d.folded" | head -3)"
read -r _ rb rn < <(weights "$TMP/d.folded" | grep '^work_removed ')
read -r _ ab an < <(weights "$TMP/d.folded" | grep '^work_added ')
[ "$rb" -gt 0 ] && [ "$rn" = 0 ] && [ "$ab" = 0 ] && [ "$an" -gt 0 ] &&
	ok "work_removed in BASE only ($rb 0), work_added in NEW only (0 $an)" ||
	bad "work_removed: $rb $rn, work_added: $ab $an"
# the check can fail: the sides swapped give work_double 1/1.5
"$PERFCONV" diff -q "$N" "$B" -o "$TMP/swapped.folded"
! ratio_ok "$TMP/swapped.folded" work_double 1.5 && ratio_ok "$TMP/swapped.folded" work_double 0.667 &&
	ok "the ratio check fails on the sides swapped (work_double $(ratio_of "$TMP/swapped.folded" work_double))" ||
	bad "the sides swapped: work_double $(ratio_of "$TMP/swapped.folded" work_double)"
grep -q "^perfconv: base: $B: [0-9]* samples of cpu-clock, scaled by [0-9.]* to NEW's total" "$TMP/d.err" &&
	grep -q "^perfconv: new: $N: [0-9]* samples of cpu-clock, as recorded" "$TMP/d.err" &&
	ok "the summary says how each side was scaled" ||
	bad "summary: $(grep -E 'base:|new:' "$TMP/d.err")"

# --srcline: lines, not only names, compared: work_same's loop is on one line in both
# builds, work_double's on another line in each (spin(1) and spin(2) of the source)
"$PERFCONV" diff -q --srcline "$B" "$N" -o "$TMP/s.folded"
l_same=$(grep -n 'spin(1);' tests/fixtures/diffprog.c | sed -n 1p | cut -d: -f1)
l_d1=$(grep -n 'spin(1);' tests/fixtures/diffprog.c | sed -n 2p | cut -d: -f1)
l_d2=$(grep -n 'spin(2);' tests/fixtures/diffprog.c | cut -d: -f1)
same=$(grep -cE ";work_same \(diffprog\.c:$l_same\) [1-9][0-9]* [1-9][0-9]*$" "$TMP/s.folded")
d1=$(grep -cE ";work_double \(diffprog\.c:$l_d1\) [1-9][0-9]* 0$" "$TMP/s.folded")
d2=$(grep -cE ";work_double \(diffprog\.c:$l_d2\) 0 [1-9][0-9]*$" "$TMP/s.folded")
wrong=$(grep -cE ";work_double \(diffprog\.c:$l_d1\) [0-9]+ [1-9][0-9]*$|;work_double \(diffprog\.c:$l_d2\) [1-9][0-9]* [0-9]+$" "$TMP/s.folded")
[ "$same" -ge 1 ] && [ "$d1" -ge 1 ] && [ "$d2" -ge 1 ] && [ "$wrong" = 0 ] &&
	ok "--srcline: work_same at diffprog.c:$l_same on both sides, work_double at :$l_d1 in BASE only and :$l_d2 in NEW only" ||
	bad "--srcline: work_same:$l_same lines $same, work_double:$l_d1 $d1, :$l_d2 $d2, on the wrong side $wrong: $(grep -E ';work_(same|double) \(' "$TMP/s.folded" | head -4)"

# --- 2. another length and rate: compared by period, by share ------------------------
"$PERFCONV" diff "$B" "$N2" -o "$TMP/d2.folded" 2>"$TMP/d2.err"
grep -q 'cpu-clock at 4999 Hz in BASE and 1999 Hz in NEW: compared by period' "$TMP/d2.err" &&
	grep -q "^perfconv: base: $B: [0-9]* ns of cpu-clock, scaled by" "$TMP/d2.err" &&
	ok "4999 Hz against 1999 Hz: compared by period, said" ||
	bad "another rate: $(grep -E 'period|base:' "$TMP/d2.err")"
for fw in work_same:0.75 work_double:1.5; do
	f=${fw%:*} w=${fw#*:}
	ratio_ok "$TMP/d2.folded" "$f" "$w" &&
		ok "NEW twice as long at 1999 Hz, by share: $f $(ratio_of "$TMP/d2.folded" "$f"), the costs' $w within 5%" ||
		bad "NEW2 by share: $f's ratio $(ratio_of "$TMP/d2.folded" "$f"), want $w within 5%"
done

# --- 3. --absolute: raw weights ------------------------------------------------------
"$PERFCONV" diff -q --absolute "$B" "$N" -o "$TMP/a.folded"
"$PERFCONV" -q -i "$B" -o "$TMP/b.folded"
"$PERFCONV" -q -i "$N" -o "$TMP/n.folded"
# each line of the absolute diff is the two plain folded outputs side by side
cat >"$TMP/join.py" <<'EOF'
import sys
def load(p):
    d = {}
    for l in open(p):
        s, n = l.rstrip("\n").rsplit(" ", 1)
        d[s] = int(n)
    return d
b, n = load(sys.argv[1]), load(sys.argv[2])
a = {}
for l in open(sys.argv[3]):
    s, x, y = l.rstrip("\n").rsplit(" ", 2)
    a[s] = (int(x), int(y))
want = {s: (b.get(s, 0), n.get(s, 0)) for s in set(b) | set(n)}
print("same" if a == want else "differ %d %d" % (len(a), len(want)))
EOF
python3 "$TMP/join.py" "$TMP/b.folded" "$TMP/n.folded" "$TMP/a.folded" >"$TMP/join.out"
[ "$(cat "$TMP/join.out")" = same ] &&
	ok "--absolute: every line is BASE's and NEW's own folded counts ($(wc -l <"$TMP/a.folded") stacks)" ||
	bad "--absolute: not the two folded outputs joined: $(cat "$TMP/join.out")"
# by share, each line is what FlameGraph's difffolded.pl -n makes of the two folded
# outputs: BASE's count times NEW's total over BASE's (cut there, rounded here)
python3 - "$TMP/b.folded" "$TMP/n.folded" "$TMP/d.folded" >"$TMP/dfn.out" <<'EOF'
import sys
def load(p):
    d = {}
    for l in open(p):
        st, n = l.rstrip("\n").rsplit(" ", 1)
        d[st] = d.get(st, 0) + int(n)
    return d
b, n = load(sys.argv[1]), load(sys.argv[2])
t1, t2 = sum(b.values()), sum(n.values())
ours = {}
for l in open(sys.argv[3]):
    st, x, y = l.rstrip("\n").rsplit(" ", 2)
    ours[st] = (int(x), int(y))
bad = [st for st in set(b) | set(n) if st not in ours or ours[st][1] != n.get(st, 0) or
       abs(ours[st][0] - int(b.get(st, 0) * t2 / t1)) > 1]
print("same %d" % len(ours) if not bad and len(ours) == len(set(b) | set(n)) else "differ: %s" % bad[:3])
EOF
grep -q '^same' "$TMP/dfn.out" &&
	ok "by share: every line difffolded.pl -n's of the two folded outputs, BASE within 1 (rounded where it cuts; $(cat "$TMP/dfn.out") lines)" ||
	bad "by share: not difffolded.pl -n's lines: $(cat "$TMP/dfn.out")"
# run against run the machine's speed varies (see below): across the two runs time holds
# roughly (work_same's NEW/BASE about 1), within them exactly (work_double's over
# work_same's 2, as the costs say); a 15% bound across runs failed beside two busy loops
# under the sanitizer build (0.849)
rr=$(weights "$TMP/a.folded" | awk '$1 == "work_same" && $2 > 0 { s = $3 / $2 } $1 == "work_double" && $2 > 0 { d = $3 / $2 } END { printf "%.3f %.3f", s ? d / s : -1, s }')
read -r rdd rs <<<"$rr"
awk -v r="$rdd" -v s="$rs" 'BEGIN { exit !(r > 2 * 0.95 && r < 2 * 1.05 && s > 0.7 && s < 1.3) }' &&
	ok "--absolute, same rounds and rate: work_same's samples NEW/BASE $rs (1 by the costs, within 30% run against run), work_double's over it $rdd (2 within 5%)" ||
	bad "--absolute: work_same's ratio $rs (want about 1), work_double's over it $rdd (want 2 within 5%)"
# another rate: by period, each line BASE's and NEW2's own folded periods
"$PERFCONV" diff -q --absolute "$B" "$N2" -o "$TMP/a2.folded"
"$PERFCONV" -q -i "$B" --weight period -o "$TMP/bp.folded"
"$PERFCONV" -q -i "$N2" --weight period -o "$TMP/n2p.folded"
python3 "$TMP/join.py" "$TMP/bp.folded" "$TMP/n2p.folded" "$TMP/a2.folded" >"$TMP/join2.out"
[ "$(cat "$TMP/join2.out")" = same ] &&
	ok "--absolute, 4999 Hz against 1999 Hz: every line is BASE's and NEW2's own folded periods (ns)" ||
	bad "--absolute NEW2: not the two folded outputs by period joined: $(cat "$TMP/join2.out")"
# run against run the machine's speed varies (other work on its cores, a VM's steal
# time), so time across runs holds only roughly; within a run it holds: work_double's
# time over work_same's is 2 in NEW2 as in the costs. Twice the rounds by period is
# about twice the time; by count at 1999 Hz against 4999 Hz it would be 0.8
rr=$(weights "$TMP/a2.folded" | awk '$1 == "work_same" { s = $3 / $2 } $1 == "work_double" { d = $3 / $2 } END { printf "%.3f %.3f", d / s, s }')
read -r rdd rs <<<"$rr"
awk -v r="$rdd" -v s="$rs" 'BEGIN { exit !(r > 2 * 0.95 && r < 2 * 1.05 && s > 1.4 && s < 2.6) }' &&
	ok "--absolute, twice the rounds at 1999 Hz: work_same's time NEW/BASE $rs (2 by the costs, not 0.8 as counts would be), work_double's over it $rdd (2 within 5%)" ||
	bad "--absolute NEW2: work_same's time ratio $rs (want about 2), work_double's over it $rdd (want 2 within 5%)"

# --- 4. top --------------------------------------------------------------------------
"$PERFCONV" diff -q "$B" "$N" -f top --top 4 >"$TMP/top.txt"
# self: base new change | total: base new change | function
python3 - "$TMP/top.txt" >"$TMP/top.out" <<'EOF'
import sys
rows = {}
for l in open(sys.argv[1]):
    parts = l.rstrip("\n").split(" | ")
    if len(parts) != 3 or "%" not in parts[0]:
        continue
    s = [float(x.rstrip("%")) for x in parts[0].split()]
    t = [float(x.rstrip("%")) for x in parts[1].split()]
    rows[parts[2]] = (s, t)
want = {"work_same": (100 / 3, 25), "work_double": (100 / 3, 50),
        "work_removed (only in BASE)": (100 / 3, 0), "work_added (only in NEW)": (0, 25)}
bad = []
for name, (b, n) in want.items():
    if name not in rows:
        bad.append("%s missing" % name)
        continue
    s, t = rows[name]
    for got, w in ((t[0], b), (t[1], n)):
        if abs(got - w) > max(1.5, w * 0.05):
            bad.append("%s %.2f want %.2f" % (name, got, w))
    if abs(t[2] - (t[1] - t[0])) > 0.02 or abs(s[2] - (s[1] - s[0])) > 0.02:
        bad.append("%s: change is not new - base" % name)
print(" ".join(bad) if bad else "ok %d" % len(rows))
EOF
[ "$(cat "$TMP/top.out")" = "ok 4" ] &&
	ok "top --top 4: the four work functions, their total shares the costs' (1/3 and 1/4, 1/2) within 5%, removed and added marked" ||
	bad "top: $(cat "$TMP/top.out"): $(head -8 "$TMP/top.txt")"
head -4 "$TMP/top.txt" | grep -q "^$B -> $N: the 4 of" && tail -1 "$TMP/top.txt" | grep -q '^base: [0-9]* samples, new: [0-9]* samples' &&
	ok "top names both inputs and each side's total" || bad "top's header or footer: $(head -1 "$TMP/top.txt"), $(tail -1 "$TMP/top.txt")"

# --- 5. pprof: NEW's samples and BASE's negated --------------------------------------
if command -v go >/dev/null; then
	"$PERFCONV" -q -i "$B" -o "$TMP/base.pb.gz"
	"$PERFCONV" -q -i "$N" -o "$TMP/new.pb.gz"
	"$PERFCONV" diff -q --absolute "$B" "$N" -o "$TMP/abs.pb.gz"
	"$PERFCONV" diff -q "$B" "$N" -o "$TMP/norm.pb.gz"
	top() { go tool pprof -top "$@" 2>/dev/null | sed -n '/^Showing nodes/,$p'; }
	for idx in 0 1; do
		top -sample_index=$idx "$TMP/abs.pb.gz" >"$TMP/ours.top"
		top -sample_index=$idx -diff_base "$TMP/base.pb.gz" "$TMP/new.pb.gz" >"$TMP/pprofs.top"
		[ -s "$TMP/ours.top" ] && grep -q work_removed "$TMP/ours.top" && cmp -s "$TMP/ours.top" "$TMP/pprofs.top" &&
			ok "pprof --absolute, sample index $idx: go tool pprof -top equals -diff_base of perfconv's two profiles ($(wc -l <"$TMP/ours.top") lines)" ||
			bad "pprof --absolute, sample index $idx: -top differs from -diff_base's: $(diff "$TMP/ours.top" "$TMP/pprofs.top" | head -4 | tr '\n' ' ')"
		# by share: go tool pprof -normalize scales NEW to BASE's total where perfconv
		# scales BASE to NEW's: the values differ by that factor, the shares do not
		top -sample_index=$idx "$TMP/norm.pb.gz" >"$TMP/ours.top"
		top -sample_index=$idx -normalize -diff_base "$TMP/base.pb.gz" "$TMP/new.pb.gz" >"$TMP/pprofs.top"
		python3 - "$TMP/ours.top" "$TMP/pprofs.top" >"$TMP/norm.out" <<'EOF'
import re, sys
def rows(p):
    d = {}
    for l in open(p):
        m = re.match(r"\s*-?[\d.]+\w*\s+([\d.]+)%\s+[\d.]+%\s+-?[\d.]+\w*\s+([\d.]+)%\s+(\S.*)$", l)
        if m:
            d[m.group(3)] = (float(m.group(1)), float(m.group(2)))
    return d
a, b = rows(sys.argv[1]), rows(sys.argv[2])
f = ["work_same", "work_double", "work_removed", "work_added"]
bad = [n for n in f if n not in a or n not in b or
       any(abs(x - y) > 0.1 for x, y in zip(a[n], b[n]))]
print("ok" if not bad else "differ " + " ".join("%s %s %s" % (n, a.get(n), b.get(n)) for n in bad))
EOF
		[ "$(cat "$TMP/norm.out")" = ok ] &&
			ok "pprof by share, sample index $idx: -top's flat% and cum% of the four work functions those of -normalize -diff_base, within 0.1 points" ||
			bad "pprof by share, sample index $idx: $(cat "$TMP/norm.out")"
	done
	new_only=$(go tool pprof -top -sample_index=0 -tagfocus side=new "$TMP/abs.pb.gz" 2>/dev/null | awk '$NF == "work_double" { print $1 }')
	base_only=$(go tool pprof -top -sample_index=0 -tagfocus side=base "$TMP/abs.pb.gz" 2>/dev/null | awk '$NF == "work_double" { print $1 }')
	want_new=$(weights "$TMP/a.folded" | awk '$1 == "work_double" { print $3 }')
	want_base=$(weights "$TMP/a.folded" | awk '$1 == "work_double" { print -$2 }')
	# flat is self: work_double's leaf samples (its loop), not those in interrupts
	self_new=$(awk '{ n = $NF; sub(/ [0-9]+ [0-9]+$/, ""); k = split($0, a, ";"); if (a[k] == "work_double") s += n } END { print s + 0 }' "$TMP/a.folded")
	self_base=$(awk '{ n = $(NF-1); sub(/ [0-9]+ [0-9]+$/, ""); k = split($0, a, ";"); if (a[k] == "work_double") s += n } END { print -s }' "$TMP/a.folded")
	[ -n "$new_only" ] && [ "$new_only" = "$self_new" ] && [ "$base_only" = "$self_base" ] &&
		ok "-tagfocus side=new and side=base: work_double's self samples of each side ($new_only, $base_only)" ||
		bad "-tagfocus side: work_double new '$new_only' (want $self_new), base '$base_only' (want $self_base; totals $want_new $want_base)"
else
	skip "go: not here, the pprof diff not read"
fi

# --- 6. SVG: NEW's shape, coloured by change of share ---------------------------------
"$PERFCONV" diff -q "$B" "$N" -o "$TMP/diff.svg"
cat >"$TMP/svgdiff.py" <<'EOF'
import json, re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
svg, base_name, new_name, case = sys.argv[1:5]
r = ET.parse(svg).getroot()
frames = []
for g in r.find(NS + "g[@id='frames']"):
    t = g.find(NS + "title").text.split("\n")
    rect = g.find(NS + "rect")
    m = re.match(r"base: ([\d.]+)%, new: ([\d.]+)%, change: ([-+][\d.]+) points", t[2])
    frames.append({"name": t[0], "n": int(t[1].split()[0]), "line2": t[1], "base": float(m.group(1)),
                   "new": float(m.group(2)), "change": float(m.group(3)), "only_base": t[2].endswith("(only in BASE)"),
                   "fill": rect.get("fill"), "dashed": rect.get("stroke-dasharray") is not None,
                   "w": float(rect.get("width"))})
bad = []
title = r.find(NS + "text[@id='title']").text
if title != "Differential Flame Graph: %s -> %s" % (base_name, new_name):
    bad.append("title %r" % title)
root = frames[0]
def one(name):
    fs = [f for f in frames if f["name"] == name]
    return max(fs, key=lambda f: f["w"]) if fs else None
red = lambda c: c[1:3] == "ff" and c[3:5] == c[5:7] and c[3:5] != "ff"
blue = lambda c: c[5:7] == "ff" and c[1:3] == c[3:5] and c[1:3] != "ff"
want = {"work_double": (100 / 3, 50, red), "work_added": (0, 25, red),
        "work_same": (100 / 3, 25, blue), "work_removed": (100 / 3, 0, blue)}
for name, (b, n, colour) in want.items():
    f = one(name)
    if not f:
        bad.append(name + " not drawn")
        continue
    if abs(f["base"] - b) > max(1.5, b * 0.05) or abs(f["new"] - n) > max(1.5, n * 0.05):
        bad.append("%s: base %.2f%% new %.2f%%, want %.2f%% %.2f%%" % (name, f["base"], f["new"], b, n))
    if not colour(f["fill"]):
        bad.append("%s: fill %s" % (name, f["fill"]))
    if (name == "work_removed") != (f["only_base"] and f["dashed"]):
        bad.append("%s: only in BASE %s, dashed %s" % (name, f["only_base"], f["dashed"]))
# NEW's shape: each frame as wide as its NEW share, BASE's (scaled) where NEW has
# none; the root holds both, so widths compare against work_same's
same = one("work_same")
for name, (b, n, colour) in want.items():
    f = one(name)
    if f and same:
        got, exp = f["w"] / same["w"], (f["new"] if n else f["base"]) / same["new"]
        if abs(got - exp) > exp * 0.03:
            bad.append("%s: %.3f times work_same's width, its share %.3f times" % (name, got, exp))
d = one("work_double")
print("; ".join(bad) if bad else "ok %d frames" % len(frames))
if d:
    json.dump({"svg": svg, "name": "work_double", "share": d["line2"].split("(")[1].rstrip(")"),
               "matched": "%.2f%%" % (100.0 * sum(f["n"] for f in frames if f["name"] == "work_double") / root["n"])},
              open(case, "w"))
EOF
out=$(python3 "$TMP/svgdiff.py" "$TMP/diff.svg" "$B" "$N" "$TMP/case.json" 2>&1)
[ "${out%% *}" = ok ] &&
	ok "svg: titled with both inputs; work_double and work_added red, work_same and work_removed blue, work_removed dashed (only in BASE); tooltips' shares the costs' within 5%; widths NEW's shares, BASE's for work_removed ($out)" ||
	bad "svg: $out"
if [ -s "$TMP/case.json" ]; then
	cp "$TMP/diff.svg" "$TMP/diff-flamegraph.svg"
	sed -i "s|$TMP/diff.svg|$TMP/diff-flamegraph.svg|" "$TMP/case.json"
	run_browser open_svg.mjs "$TMP/case.json"
fi

# --- 6. usage ------------------------------------------------------------------------
"$PERFCONV" diff "$B" >/dev/null 2>"$TMP/u1.err"; r1=$?
"$PERFCONV" diff "$B" "$N" -f speedscope -o "$TMP/x.json" 2>"$TMP/u2.err"; r2=$?
"$PERFCONV" diff -i "$B" "$N" >/dev/null 2>"$TMP/u3.err"; r3=$?
[ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ] && grep -q 'two recordings' "$TMP/u1.err" &&
	grep -q 'diff writes folded, top, pprof or svg' "$TMP/u2.err" && [ ! -e "$TMP/x.json" ] &&
	ok "usage: one recording, -f speedscope and -i each exit 2, saying why" ||
	bad "usage: exits $r1 $r2 $r3: $(cat "$TMP"/u?.err | tr '\n' ' ')"
"$PERFCONV" diff "$B" "$TMP/missing.data" -o "$TMP/m.folded" 2>"$TMP/m.err"; rm_=$?
[ $rm_ = 1 ] && [ "$(cat "$TMP/m.err")" = "perfconv: $TMP/missing.data: cannot open: No such file or directory" ] && [ ! -e "$TMP/m.folded" ] &&
	ok "a missing NEW: exit 1 at once, said in one line, BASE not converted for nothing" ||
	bad "a missing NEW: exit $rm_: $(cat "$TMP/m.err")"
"$PERFCONV" diff "$B" "$N" >"$TMP/pipe.out" 2>/dev/null
cmp -s "$TMP/pipe.out" "$TMP/d.folded" && ok "to a pipe: folded by default" || bad "to a pipe: not the folded diff"
finish e2e-diff
