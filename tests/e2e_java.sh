#!/bin/bash
# e2e_java: Java with perfconv's JVMTI agent (jvmti/) end to end. The committed
# recordings (frame pointers, --call-graph dwarf; testdata/record-java.sh) name HotSpot's
# methods as Java does, with perf inject --jit's sample counts, perf's lines where perf
# has them, and perf script's whole stacks (names normalized); then the agent built here
# records a Java run at test time, and that dump and recording are checked the same way.
source "$(dirname "$0")/e2e_lib.sh"
J=$TD/java
KSJ=(--kallsyms $J/kallsyms.gz)
AGENT=${PERFCONV_JVMTI:-$PWD/build/libperfconv-jvmti.so}
export PERFCONV_CACHE_DIR=$TMP/cache
FIB='Hot.fib(int)'
SUM='Hot.sumLengths(java.lang.String[])'
# perf 6.1 writes no [] after a class type (tests/perfscript_compare.py, java_quirk)
SUM_PERF='Hot.sumLengths(java.lang.String)'

# perf inject --jit + perf report's self count of a function: the sum of its rows (one a
# compilation of it) in a `perf report --sort sym` file.
perf_count() { # SYM-FILE FUNCTION
	awk -v f="$2" '/^ +[0-9.]+%/ { line = $0; sub(/^ +[0-9.]+% +[0-9]+ +\[[.k]\] /, "", line);
		sub(/ +$/, "", line); if (line == f) s += $2 } END { print s + 0 }' "$1"
}
# perf's lines of a function in a `--sort sym,srcline` file: "LINE COUNT", ?? for ??:0.
perf_lines() { # SRCLINE-FILE FUNCTION FILE
	awk -v f="$2" -v file="$3" '/^ +[0-9.]+%/ { n = $2; line = $0;
		sub(/^ +[0-9.]+% +[0-9]+ +\[[.k]\] /, "", line);
		if (substr(line, 1, length(f)) != f) next; rest = substr(line, length(f) + 1);
		sub(/^ +/, "", rest); sub(/ +$/, "", rest);
		if (rest == "??:0") c["??"] += n; else if (index(rest, file ":") == 1) c[substr(rest, length(file) + 2)] += n }
		END { for (l in c) print l, c[l] }' "$1" | sort -n
}
installed_libjvm_buildid() {
	local j
	j=$(command -v java) || return
	readelf -n "$(dirname "$(readlink -f "$j")")/../lib/server/libjvm.so" 2>/dev/null |
		sed -n 's/.*Build ID: //p'
}
# Whole stacks against a perf script golden, at least MIN percent equal.
stacks() { # WHAT GOLDEN SAMPLES MIN [compare options]
	local what=$1 golden=$2 samples=$3 min=$4
	shift 4
	if python3 tests/perfscript_compare.py --java "$@" --min-equal "$min" "$golden" "$samples" \
		>"$TMP/cmp" 2>&1; then
		ok "$what: $(tail -1 "$TMP/cmp" | sed 's/^perfscript_compare: //')"
	else
		bad "$what: $(tail -1 "$TMP/cmp")"
		head -40 "$TMP/cmp"
	fi
}
# A function's self count equals perf's (perf's name may differ: PERF-NAME).
count_is_perfs() { # WHAT FOLDED SYM-FILE FUNCTION [PERF-NAME]
	local got want
	got=$(our_count "$2" "$4")
	want=$(perf_count "$3" "${5:-$4}")
	if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
		ok "$1: '$4' has $got samples, as perf inject --jit + perf report${5:+ ('$5')}"
	else
		bad "$1: '$4' has $got samples, perf inject --jit + perf report $want"
	fi
}
# Each of a function's leaf lines is in [LO, HI], and where perf names lines (not ??:0)
# we give the same lines the same counts; perf's ??:0 samples are on lines of ours.
lines_are_perfs() { # WHAT SAMPLES SRCLINE-FILE FUNCTION PERF-NAME LO HI
	local what=$1 samples=$2 srcline=$3 fn=$4 pfn=$5 lo=$6 hi=$7 ours perfs outside
	ours=$(leaf_lines "$samples" "$fn" Hot.java | tr ' \n' ': ')
	perfs=$(perf_lines "$srcline" "$pfn" Hot.java | tr ' \n' ': ')
	outside=$(leaf_lines "$samples" "$fn" Hot.java | awk -v lo="$lo" -v hi="$hi" '$1 < lo || $1 > hi')
	if [ -n "$ours" ] && [ -z "$outside" ] && python3 - "$ours" "$perfs" <<'PY'
import sys
def pairs(text):
    return {line: int(n) for line, n in (p.split(":") for p in text.split())}
ours, perf = pairs(sys.argv[1]), pairs(sys.argv[2])
unknown = perf.pop("??", 0)
# perf's named lines are ours; what perf left ??:0 is on our other lines
ok = all(ours.get(l, 0) == n for l, n in perf.items())
ok = ok and sum(ours.values()) == sum(perf.values()) + unknown
sys.exit(0 if ok else 1)
PY
	then
		ok "$what: '$fn' on lines (line:samples) ${ours}in $lo-$hi, its body; perf: $perfs(?? is ??:0)"
	else
		bad "$what: '$fn' lines $ours(want in $lo-$hi), perf: $perfs"
	fi
}

# 1. The frame-pointer recording, its dump beside it.
"$PERFCONV" -q "${KSJ[@]}" -i $J/java.data -o "$TMP/java.folded" 2>"$TMP/java.err"
"$PERFCONV" -q "${KSJ[@]}" -i $J/java.data --srcline -f samples -o "$TMP/java.lines" 2>>"$TMP/java.err"
count_is_perfs java "$TMP/java.folded" $J/expected/java.sym "$FIB"
count_is_perfs java "$TMP/java.folded" $J/expected/java.sym "$SUM" "$SUM_PERF"
if ! grep -q 'LHot[;:]' "$TMP/java.folded" && grep -q ';Interpreter;Hot.fib(int);Hot.fib(int)' "$TMP/java.folded"; then
	ok "java: no JVM signatures in folded stacks; Hot.fib(int) recursion under the interpreter"
else
	bad "java: folded names: $(grep -o '[^;]*LHot[^;]*' "$TMP/java.folded" | head -2)"
fi
lines_are_perfs java "$TMP/java.lines" $J/expected/java.srcline "$FIB" "$FIB" 4 8
lines_are_perfs java "$TMP/java.lines" $J/expected/java.srcline "$SUM" "$SUM_PERF" 10 16

# pprof: Java names, the JVM's as system names, and the counts of perf report.
"$PERFCONV" -q "${KSJ[@]}" -i $J/java.data -o "$TMP/java.pb.gz"
if command -v go >/dev/null; then
	export HOME=$TMP/home GOCACHE=$TMP/gocache GOTOOLCHAIN=local GOFLAGS= PPROF_TMPDIR=$TMP
	mkdir -p "$HOME"
	go tool pprof -symbolize=none -raw "$TMP/java.pb.gz" >"$TMP/java.raw" 2>/dev/null
	go tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -sample_index=cpu-samples \
		"$TMP/java.pb.gz" >"$TMP/java.top" 2>/dev/null
	fib_flat=$(awk '$NF == "Hot.fib(int)" { print $1 }' "$TMP/java.top")
	if grep -q ' Hot\.fib(int) Hot\.java:[4-8] s=0(LHot;fib(I)I)$' "$TMP/java.raw" &&
		grep -q ' Hot\.sumLengths(java\.lang\.String\[\]) Hot\.java:1[0-6] s=0(LHot;sumLengths(\[Ljava/lang/String;)J)$' "$TMP/java.raw" &&
		[ "$fib_flat" = "$(perf_count $J/expected/java.sym "$FIB")" ]; then
		ok "pprof: Hot.fib(int) (system name LHot;fib(I)I) on Hot.java lines, $fib_flat flat as perf's"
	else
		bad "pprof: $(grep -m2 'Hot' "$TMP/java.raw"), flat $fib_flat"
	fi
else
	bad "pprof: 'go' not found (scripts/install-deps.sh installs golang-go)"
fi

# Whole stacks: native frames need the libjvm.so recorded (its build id), not bundled.
libjvm_ok=
[ "$(installed_libjvm_buildid)" = "$(cat $J/libjvm.buildid)" ] && libjvm_ok=1
if [ -n "$libjvm_ok" ]; then
	"$PERFCONV" -q "${KSJ[@]}" --no-inline -i $J/java.data -f samples -o "$TMP/java.samples"
	stacks "java: whole stacks" $J/expected/java.script.gz "$TMP/java.samples" 99
else
	# not a skip: the same comparison runs on the recording made here (part 3)
	echo "note java: whole stacks are compared on the run recorded below: the installed libjvm.so is not the one recorded ($(cat $J/libjvm.buildid))"
fi

# 2. The --call-graph dwarf recording: HotSpot writes no CFI for its code; perfconv
#    steps through it with the frame pointer (-XX:+PreserveFramePointer), perf stops.
mkdir -p "$TMP/dw"
zcat $J/java-dwarf.data.gz >"$TMP/dw/java-dwarf.data"
# the agent the recording ran (its CFI, to unwind through its write to the dump),
# where perfconv looks when the recorded path (a build directory) has no such file
cp $J/jit-*.dump.gz $J/libperfconv-jvmti.so "$TMP/dw/"
"$PERFCONV" "${KSJ[@]}" -i "$TMP/dw/java-dwarf.data" -o "$TMP/dw.folded" 2>"$TMP/dw.err"
count_is_perfs java-dwarf "$TMP/dw.folded" $J/expected/java-dwarf.sym "$FIB"
# Issue 22, item 11: samples in compiled code whose load HotSpot wrote a little later
# (its service thread posts it after the code began to run) are said to be that, not
# "no jit-PID.dump" of a dump that was read.
pid=$(awk '$1 == "java-dwarf" { print $2 }' $J/RECORDINGS)
if grep -q "  2 in anonymous (JIT) code of pid $pid (java): jit-$pid.dump.gz names no code there at their time: 2 in code loaded there later (its load written after the code began to run" "$TMP/dw.err" &&
	! grep -q "no jit-$pid.dump" "$TMP/dw.err"; then
	ok "java-dwarf: samples before their code's load was written are said to be that"
else
	bad "java-dwarf: anonymous code: $(grep 'anonymous' "$TMP/dw.err")"
fi
jit_leaf=$(awk '$0 ~ /;Hot\.[a-zA-Z]*\([^;]*\) [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMP/dw.folded")
through=$(awk '$0 ~ /;call_stub;Interpreter;Hot\.[^;]*(;Hot\.[^;]*)* [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMP/dw.folded")
perf_one=$(zcat $J/expected/java-dwarf.script.gz | awk 'BEGIN { RS = "" } { n = split($0, l, "\n");
	if (n == 2 && l[2] ~ /jitted-/ && l[2] ~ / Hot\./) c++ } END { print c + 0 }')
if [ "$jit_leaf" -gt 0 ] && [ $((through * 100)) -ge $((jit_leaf * 95)) ]; then
	ok "java-dwarf: $through of $jit_leaf samples in Java methods unwound through them, the interpreter and call_stub (perf: $perf_one stop at the Java leaf)"
else
	bad "java-dwarf: $through of $jit_leaf Java samples reach call_stub: $(sort -k2 -nr "$TMP/dw.folded" | head -2)"
fi
if [ -n "$libjvm_ok" ]; then
	"$PERFCONV" -q "${KSJ[@]}" --no-inline -i "$TMP/dw/java-dwarf.data" -f samples -o "$TMP/dw.samples"
	stacks "java-dwarf: whole stacks (where perf stops at JIT code, ours goes on)" \
		$J/expected/java-dwarf.script.gz "$TMP/dw.samples" 99 --jit-stops --end-marker
else
	echo "note java-dwarf: whole stacks are compared on the run recorded below: the installed libjvm.so is not the one recorded"
fi
# The comparison's rules for perf's Java names and stack ends accept no other change.
if python3 tests/perfscript_compare.py --selftest $J/expected/java-dwarf.script.gz >"$TMP/self" 2>&1; then
	ok "perfscript_compare: $(tail -1 "$TMP/self" | sed 's/^selftest: //') (with --java --jit-stops --end-marker too)"
else
	bad "perfscript_compare --selftest: $(grep FAILED "$TMP/self" | head -3)"
fi

# 3. The agent built here, on a run recorded now (as root: perf record -k 1).
L=$TMP/live
mkdir -p "$L"
cp $J/src/Hot.java "$L/"
if [ ! -f "$AGENT" ]; then
	bad "live: $AGENT not built (make jvmti)"
elif ! command -v javac >/dev/null || ! (cd "$L" && javac -g Hot.java) 2>"$TMP/javac.err"; then
	bad "live: javac: $(head -2 "$TMP/javac.err")"
elif ! (cd "$L" && perf record -q -k 1 -g -F 999 -o java.data \
	java -XX:+PreserveFramePointer -agentpath:"$AGENT" Hot 1 >/dev/null 2>"$TMP/rec.err"); then
	bad "live: perf record of java with the agent failed: $(head -3 "$TMP/rec.err")"
else
	dump=$(ls "$L"/jit-*.dump 2>/dev/null | head -1)
	pid=$(basename "$dump" .dump | sed 's/^jit-//')
	# The dump as a reader other than perfconv sees it: every size within the file, the
	# header's pid and machine, each DEBUG_INFO right before its load with entries inside
	# the code, and CODE_CLOSE last.
	if python3 - "$dump" "$pid" >"$TMP/dump.check" 2>&1 <<'PY'
import struct, sys
path, pid = sys.argv[1], int(sys.argv[2])
b = open(path, "rb").read()
magic, ver, size, mach, _, hpid, ts, flags = struct.unpack_from("<IIIIIIQQ", b)
assert (magic, ver, size, mach, hpid, flags) == (0x4A695444, 1, 40, 62, pid, 0), "header"
off, loads, lined, last, pend, t0 = 40, 0, 0, None, None, ts
while off < len(b):
    rid, rsize, t = struct.unpack_from("<IIQ", b, off)
    assert rsize >= 16 and off + rsize <= len(b), "record at %#x: size %d" % (off, rsize)
    assert t >= t0, "record at %#x: time goes back" % off
    t0 = t
    if rid == 0:
        rpid, tid, vma, addr, csize, idx = struct.unpack_from("<IIQQQQ", b, off + 16)
        end = b.index(b"\0", off + 56)
        assert rpid == pid and vma == addr and end + 1 + csize == off + rsize, "load at %#x" % off
        if pend is not None:
            assert pend[0] == addr and all(addr <= e < addr + csize for e in pend[1]), \
                "DEBUG_INFO before %s at %#x" % (b[off + 56:end], off)
            lined += 1
        loads, pend = loads + 1, None
    elif rid == 2:
        addr, nr = struct.unpack_from("<QQ", b, off + 16)
        p, ents = off + 32, []
        for _ in range(nr):
            ents.append(struct.unpack_from("<Q", b, p)[0])
            p = b.index(b"\0", p + 16) + 1
        assert p <= off + rsize and ents and ents[0] == addr and ents == sorted(ents), "entries at %#x" % off
        pend = (addr, ents)
    last = rid
    off += rsize
assert last == 3, "no CODE_CLOSE at the end"
print("%d code loads, %d with DEBUG_INFO, CODE_CLOSE last" % (loads, lined))
PY
	then
		ok "live: $(basename "$dump"): $(cat "$TMP/dump.check")"
	else
		bad "live: $(basename "$dump"): $(tail -1 "$TMP/dump.check")"
	fi
	(cd "$L" && perf inject --jit -i java.data -o java.injected 2>/dev/null &&
		perf report -i java.injected --stdio --no-children -n -g none --sort sym >java.sym 2>/dev/null &&
		perf report -i java.injected --stdio --no-children -n -g none --sort sym,srcline \
			>java.srcline 2>/dev/null &&
		perf script -i java.injected --ns -F comm,pid,tid,time,event,period,ip,sym,dso 2>/dev/null |
		gzip >java.script.gz) || bad "live: perf inject --jit / report / script failed"
	mkdir -p "$L/moved"
	cp "$L/java.data" "$L/moved/"
	"$PERFCONV" -i "$L/java.data" -o "$TMP/live.folded" 2>"$TMP/live.err"
	"$PERFCONV" -q -i "$L/java.data" --srcline -f samples -o "$TMP/live.lines"
	"$PERFCONV" -q -i "$L/java.data" --no-inline -f samples -o "$TMP/live.samples"
	count_is_perfs live "$TMP/live.folded" "$L/java.sym" "$FIB"
	if grep -q "JIT code of pid $pid: $dump ([0-9]* code loads, [1-9][0-9]* with lines)" "$TMP/live.err"; then
		ok "live: the summary: $(grep -o "JIT code of pid $pid.*" "$TMP/live.err")"
	else
		bad "live: summary: $(head -3 "$TMP/live.err")"
	fi
	lines_are_perfs live "$TMP/live.lines" "$L/java.srcline" "$FIB" "$FIB" 4 8
	lines_are_perfs live "$TMP/live.lines" "$L/java.srcline" "$SUM" "$SUM_PERF" 10 16
	stacks "live: whole stacks" "$L/java.script.gz" "$TMP/live.samples" 99
	# The dump found beside a copy of the recording, as the committed one is, when it is
	# no longer where the recording says.
	mv "$dump" "$L/moved/"
	"$PERFCONV" -q -i "$L/moved/java.data" -o "$TMP/moved.folded"
	cmp -s "$TMP/moved.folded" "$TMP/live.folded" && ok "live: the dump found beside a copy of the recording" ||
		bad "live: a copy of the recording with its dump converts differently"
fi

# The agent's options: a folder for the dump; anything else stops the VM, said why.
if [ -f "$AGENT" ] && [ -f "$L/Hot.class" ]; then
	mkdir -p "$TMP/dumps"
	(cd "$L" && java -agentpath:"$AGENT"=dir="$TMP/dumps" Hot 0.05 >/dev/null 2>"$TMP/dir.err")
	d=$(ls "$TMP"/dumps/jit-*.dump 2>/dev/null | head -1)
	if [ -n "$d" ] && grep -q "perfconv-jvmti: writing $d" "$TMP/dir.err"; then
		ok "agent: dir=DIR writes $(basename "$d") there and says so"
	else
		bad "agent: dir=: $(cat "$TMP/dir.err")"
	fi
	(cd "$L" && java -agentpath:"$AGENT"=bogus Hot 0.05 >/dev/null 2>"$TMP/opt.err")
	rc=$?
	if [ $rc != 0 ] && grep -q "perfconv-jvmti: unknown option 'bogus'" "$TMP/opt.err"; then
		ok "agent: an unknown option stops java (exit $rc), named"
	else
		bad "agent: unknown option: exit $rc: $(cat "$TMP/opt.err")"
	fi
fi

# Issue 42, item 12: the dump is made new and never through a link. In a folder any
# user can write that is not sticky (where fs.protected_symlinks does not help), a link
# another user put at the path of the dump of the JVM to come, to a file of the JVM
# user's: the file keeps its bytes, the agent says why, and the JVM runs on without a
# dump; the same for a regular file another user put there; a dump the same user left
# there (a pid used again) is written afresh; a new dump is its user's alone (0600).
if [ -f "$AGENT" ] && [ -f "$L/Hot.class" ] && [ "$(id -u)" = 0 ]; then
	chmod 755 "$TMP" "$L" # the JVM run as nobody reaches the class
	# and the agent: a copy in $TMP, for the checkout may be where nobody cannot read
	# (/root in CI's fresh root)
	cp "$AGENT" "$TMP/agent.so" && chmod 755 "$TMP/agent.so"
	SH=$TMP/shared
	mkdir -m 777 "$SH"
	# java_planted PLANT [RUNAS...]: PLANT (a shell command; $D the dump's path to come)
	# run as root by the shell whose pid java is given, then java with the agent (as
	# RUNAS: a setpriv prefix, none for root); its status in $jrc, stderr in plant.err
	java_planted() {
		local plant=$1
		shift
		AGENT_=$TMP/agent.so L_=$L sh -c 'D=$1/jit-$$.dump; eval "$2" || exit 99; shift 2
			exec "$@" java -XX:-UsePerfData -agentpath:"$AGENT_"=dir="${D%/*}" -cp "$L_" Hot 0.05' \
			_ "$SH" "$plant" "$@" >"$TMP/plant.out" 2>"$TMP/plant.err"
		jrc=$?
	}
	NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
	OTHER="setpriv --reuid=65533 --regid=65533 --clear-groups"
	printf 'root only\n' >"$TMP/root-only"
	chmod 600 "$TMP/root-only"
	java_planted "$NOBODY ln -s $TMP/root-only \"\$D\""
	if [ $jrc = 0 ] && printf 'root only\n' | cmp -s - "$TMP/root-only" && [ -s "$TMP/plant.out" ] &&
		grep -q "perfconv-jvmti: $SH/jit-[0-9]*\.dump: a symbolic link is there, not followed (another user's trap?): no jitdump written; the JVM runs on without it" "$TMP/plant.err" &&
		grep -q "perfconv-jvmti: $SH: any user can write this folder and it is not sticky" "$TMP/plant.err"; then
		ok "agent as root: nobody's link at its dump's path to a root-only file not followed, the file unchanged, said; java ran: $(grep -c . "$TMP/plant.err") lines said"
	else
		bad "agent as root, a planted link: java exit $jrc, the file now $(head -c 8 "$TMP/root-only" | od -An -c | tr -s ' '); said: $(cat "$TMP/plant.err")"
	fi
	printf 'nobody owns\n' >"$TMP/nobodys"
	chown 65534:65534 "$TMP/nobodys"
	java_planted "$OTHER ln -s $TMP/nobodys \"\$D\"" $NOBODY
	if [ $jrc = 0 ] && printf 'nobody owns\n' | cmp -s - "$TMP/nobodys" &&
		grep -q "a symbolic link is there, not followed" "$TMP/plant.err"; then
		ok "agent as nobody: another user's link to nobody's file not followed, the file unchanged, java ran"
	else
		bad "agent as nobody, a planted link: java exit $jrc, the file now $(head -c 8 "$TMP/nobodys" | od -An -c | tr -s ' '); said: $(cat "$TMP/plant.err")"
	fi
	java_planted "$OTHER sh -c 'echo planted >\"\$0\"' \"\$D\"" $NOBODY
	d=$(ls "$SH"/jit-*.dump 2>/dev/null | xargs -r grep -l '^planted$' | head -1)
	if [ $jrc = 0 ] && [ -n "$d" ] &&
		grep -q "perfconv-jvmti: $d: already there and not a dump of this user's (a file of uid 65533, 1 names): left alone" "$TMP/plant.err"; then
		ok "agent as nobody: another user's file at its dump's path left alone, said; java ran"
	else
		bad "agent as nobody, a planted file: java exit $jrc; said: $(cat "$TMP/plant.err")"
	fi
	rm -f "$SH"/jit-*.dump
	java_planted 'echo an old dump >"$D"'
	d=$(ls "$SH"/jit-*.dump 2>/dev/null | head -1)
	if [ $jrc = 0 ] && [ -n "$d" ] && [ "$(head -c 4 "$d")" = DTiJ ] && [ "$(stat -c '%U %a' "$d")" = "root 600" ] &&
		grep -q "perfconv-jvmti: writing $d" "$TMP/plant.err"; then
		ok "agent: a dump of its own user's at the path (a pid used again) written afresh, $(stat -c '%s bytes, mode %a' "$d")"
	else
		bad "agent: its own old dump: java exit $jrc, $(ls -l "$SH"); said: $(cat "$TMP/plant.err")"
	fi
fi

finish e2e_java
