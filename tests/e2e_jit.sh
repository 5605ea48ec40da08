#!/bin/bash
# e2e_jit: JIT recordings end to end: the hot JIT function of each real runtime named
# with perf inject --jit's sample count, its lines from the source, dumps found next to
# the recording, at their recorded path or under --jit-dir, and damaged or missing dumps.
source "$(dirname "$0")/e2e_lib.sh"
J=$TD/jit
export PERFCONV_CACHE_DIR=$TMP/cache

# perf inject --jit + perf report's self count for a function (expected/NAME.sym), with
# its BEAM prologue's, which perf names apart as FUNCTION-CodeInfoPrologue.
perf_count() { # NAME FUNCTION
	awk -v f="$2" '/^ +[0-9.]+%/ { line = $0; sub(/^ +[0-9.]+% +[0-9]+ +\[[.k]\] /, "", line);
		if (line == f || line == f "-CodeInfoPrologue") { s += $2; found = 1 } }
		END { if (found) print s }' "$J/expected/$1.sym"
}
# The same without the prologue: the samples perf gives a line.
perf_count_lined() { # NAME FUNCTION
	awk -v f="$2" '/^ +[0-9.]+%/ { line = $0; sub(/^ +[0-9.]+% +[0-9]+ +\[[.k]\] /, "", line);
		if (line == f) { print $2; exit } }' "$J/expected/$1.sym"
}

check_recording() { # NAME HOT-FUNCTION SOURCE FIRST-LINE LAST-LINE
	local name=$1 fn=$2 src=$3 lo=$4 hi=$5 want got bad_lines
	"$PERFCONV" -q -i $J/$name.data -o "$TMP/$name.folded" 2>"$TMP/$name.err"
	"$PERFCONV" -q -i $J/$name.data --srcline -f samples -o "$TMP/$name.samples" 2>>"$TMP/$name.err"
	want=$(perf_count "$name" "$fn")
	got=$(our_count "$TMP/$name.folded" "$fn")
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "$name: '$fn' has $got samples, as perf inject --jit + perf report"
	else
		bad "$name: '$fn' has $got samples, perf inject --jit + perf report $want ($(head -2 "$TMP/$name.err"))"
	fi
	[ "$src" = - ] && return
	leaf_lines "$TMP/$name.samples" "$fn" "$src" >"$TMP/$name.lines"
	bad_lines=$(awk -v lo="$lo" -v hi="$hi" '$1 < lo || $1 > hi' "$TMP/$name.lines")
	local with_lines
	with_lines=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/$name.lines")
	if [ -z "$bad_lines" ] && [ "$with_lines" -ge $(($(perf_count_lined "$name" "$fn") * 9 / 10)) ] &&
		[ "$with_lines" -gt 0 ]; then
		ok "$name: $with_lines of its samples on lines $(cut -d' ' -f1 "$TMP/$name.lines" | tr '\n' ' ')in $src ($lo-$hi is its body)"
	else
		bad "$name: lines outside $lo-$hi or missing: $(tr '\n' ' ' <"$TMP/$name.lines") ($with_lines of $got)"
	fi
}

FIB='JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19'
check_recording node "$FIB" fibonacci-bench.js 3 8
check_recording node-wasm 'JS:wasm_fib-0-turbofan' - 0 0
check_recording lli collatz_steps hotloop.c 5 17
check_recording erlang 'hotfib:fib/1' hotfib.erl 5 7
check_recording node-map "$FIB" - 0 0

# Erlang: a BEAM process's outermost frame, a return into the start of
# erts_beamasm:normal_exit/0 (just past its -CodeInfoPrologue), is that function, as
# perf names it; no frame is named after a prologue.
if grep -q '^[^;]*;erts_beamasm:normal_exit/0;' "$TMP/erlang.folded" &&
	! grep -q 'CodeInfoPrologue' "$TMP/erlang.folded"; then
	ok "erlang: outermost frames are erts_beamasm:normal_exit/0, no -CodeInfoPrologue"
else
	bad "erlang: prologue names: $(grep -o '[^;]*CodeInfoPrologue' "$TMP/erlang.folded" | sort | uniq -c | head -3)"
fi
# Erlang: each clause on its own line, as perf inject --jit's srcline gives them.
if grep -qx '5 156' "$TMP/erlang.lines" && grep -qx '7 676' "$TMP/erlang.lines"; then
	ok "erlang: fib(0)/fib(1) clause samples on line 5, fib(N) on line 7"
else
	bad "erlang: clause lines: $(tr '\n' ' ' <"$TMP/erlang.lines")"
fi
# Node.js 20 wrote freed memory over the first 16 bytes of every entry's file name:
# perf report shows ??:0 there; the file here comes out right.
if grep -q '(fibonacci-bench.js:7)' "$TMP/node.samples" && ! grep -q '??' "$TMP/node.samples"; then
	ok "node: damaged DEBUG_INFO file names resolved to fibonacci-bench.js"
else
	bad "node: file names of JS frames"
fi
grep -q '_\[j\]' <("$PERFCONV" -q -i $J/node.data --annotate -o -) &&
	ok "folded --annotate marks JIT frames _[j]" || bad "no _[j] JIT frames"

# The recordings name paths under /tmp/perfconv-rec-jit: the dumps must come from elsewhere.
grep -q 'jit-30720.dump' <(strings $J/node.data) && [ ! -e /tmp/perfconv-rec-jit/jit-30720.dump ] &&
	ok "node: the dump is not at the path the recording names" ||
	bad "node: /tmp/perfconv-rec-jit/jit-30720.dump exists: the test proves nothing"

# --jit-dir, searched recursively (LLVM's $JITDUMPDIR/.debug/jit/llvm-IR-jit-*/).
mkdir -p "$TMP/alone" "$TMP/jd/.debug/jit/llvm-IR-jit-20261129-a1b2c3"
cp $J/lli.data "$TMP/alone/"
cp $J/jit-30749.dump "$TMP/jd/.debug/jit/llvm-IR-jit-20261129-a1b2c3/"
"$PERFCONV" -q -i "$TMP/alone/lli.data" --jit-dir "$TMP/jd" -o "$TMP/jd.folded"
cmp -s "$TMP/jd.folded" "$TMP/lli.folded" && ok "lli: the dump found under --jit-dir, same output" ||
	bad "lli: --jit-dir"

# A dump that is not found: a warning naming it, frames kept as addresses.
"$PERFCONV" -i "$TMP/alone/lli.data" -o "$TMP/nodump.folded" 2>"$TMP/nodump.err"
if grep -q 'wrote this jitdump, but it is not there' "$TMP/nodump.err" &&
	[ "$(our_count "$TMP/nodump.folded" collatz_steps)" = 0 ] &&
	[ "$(awk '{ s += $NF } END { print s }' "$TMP/nodump.folded")" = \
	  "$(awk '{ s += $NF } END { print s }' "$TMP/lli.folded")" ]; then
	ok "lli without its dump: warned, every sample kept, JIT frames as addresses"
else
	bad "lli without its dump: $(head -2 "$TMP/nodump.err")"
fi

# A dump cut off mid-record: the runtime killed while writing its next record (here the
# first 40 bytes of a copy of its last one). Code loaded before the cut is still named.
mkdir -p "$TMP/cut"
cp $J/node.data "$TMP/cut/"
cp $J/jit-30720.dump "$TMP/cut/"
tail -c 427 $J/jit-30720.dump | head -c 40 >>"$TMP/cut/jit-30720.dump"
"$PERFCONV" -i "$TMP/cut/node.data" -o "$TMP/cut.folded" 2>"$TMP/cut.err"
cutn=$(our_count "$TMP/cut.folded" "$FIB")
if grep -q 'jit-30720.dump: offset 0x[0-9a-f]*: warning: .*cut short' "$TMP/cut.err" &&
	[ "$cutn" = "$(perf_count node "$FIB")" ]; then
	ok "node with a record cut off at the end of its dump: warned, '$FIB' keeps its $cutn samples"
else
	bad "cut dump: $(grep -i warn "$TMP/cut.err" | head -2) ($cutn samples)"
fi
# BEAM loads the hotfib module last: cut its dump after that (at 96%) and fib/1 keeps
# its samples, while the code of the modules after the cut is lost.
mkdir -p "$TMP/cut2"
cp $J/erlang.data "$TMP/cut2/"
zcat $J/jit-30756.dump.gz >"$TMP/cut2/full.dump"
head -c $(($(stat -c %s "$TMP/cut2/full.dump") * 96 / 100 + 13)) "$TMP/cut2/full.dump" >"$TMP/cut2/jit-30756.dump"
rm "$TMP/cut2/full.dump"
"$PERFCONV" -i "$TMP/cut2/erlang.data" -o "$TMP/cut2.folded" 2>"$TMP/cut2.err"
cutn=$(our_count "$TMP/cut2.folded" 'hotfib:fib/1')
if grep -q 'warning: .*cut short' "$TMP/cut2.err" && [ "$cutn" = "$(perf_count erlang 'hotfib:fib/1')" ]; then
	ok "erlang with its dump cut at 96%: warned, hotfib:fib/1 keeps its $cutn samples"
else
	bad "erlang cut dump: $(grep -i warn "$TMP/cut2.err" | head -2) ($cutn samples)"
fi

# A dump cut inside the code bytes of its last CODE_LOAD (.NET's, a runtime killed
# while writing): the record's fixed part and name are whole, and they name the
# function (issue 34 item 3 of C). lli's dump cut 20 bytes before the end of
# collatz_steps's load (the hot function; main's load after it is lost); node's cut
# 100 bytes before the end of its last record, the load of fibonacci whose DEBUG_INFO
# comes just before it.
cut_in_load() { # NAME DATA DUMP OFFSET-OF-THE-LOAD
	mkdir -p "$TMP/$1"
	cp $J/$2.data "$TMP/$1/"
	local size
	size=$(od -An -tu4 -j $(($4 + 4)) -N4 $J/$3 | tr -d ' ')
	head -c $(($4 + size - $5)) $J/$3 >"$TMP/$1/$3"
	"$PERFCONV" -i "$TMP/$1/$2.data" -o "$TMP/$1.folded" 2>"$TMP/$1.err"
	"$PERFCONV" -q -i "$TMP/$1/$2.data" --srcline -f samples -o "$TMP/$1.samples" 2>/dev/null
}
cut_in_load lli-cutload lli jit-30749.dump 622 20
cutn=$(our_count "$TMP/lli-cutload.folded" collatz_steps)
leaf_lines "$TMP/lli-cutload.samples" collatz_steps hotloop.c >"$TMP/lli-cutload.lines"
if grep -q 'jit-30749.dump: offset 0x26e: warning: JIT_CODE_LOAD: record of 115 bytes cut short at 95: its code bytes are missing.*its function kept: collatz_steps$' "$TMP/lli-cutload.err" &&
	[ "$cutn" = "$(perf_count lli collatz_steps)" ] && cmp -s "$TMP/lli-cutload.lines" "$TMP/lli.lines"; then
	ok "lli with its dump cut inside collatz_steps's code bytes: said, the function kept with its $cutn samples and lines, as with the whole dump"
else
	bad "lli, dump cut inside a load's code: $cutn samples (perf $(perf_count lli collatz_steps)); $(grep -i 'cut short' "$TMP/lli-cutload.err")"
fi
cut_in_load node-cutload node jit-30720.dump 1926640 100
if grep -q 'warning: JIT_CODE_LOAD: record of 483 bytes cut short at 383: .*its function kept: JS:\*fibonacci' "$TMP/node-cutload.err" &&
	cmp -s "$TMP/node-cutload.samples" "$TMP/node.samples" &&
	[ "$(our_count "$TMP/node-cutload.folded" "$FIB")" = "$(perf_count node "$FIB")" ]; then
	ok "node with its last load cut inside its code: every sample's frames and lines as with the whole dump"
else
	bad "node, dump cut inside its last load's code: $(diff "$TMP/node-cutload.samples" "$TMP/node.samples" | grep -c '^>') samples differ; $(grep -i 'cut short' "$TMP/node-cutload.err")"
fi

# pprof and speedscope carry the JIT frames with their lines.
"$PERFCONV" -q -i $J/node.data -o "$TMP/node.pb.gz"
if command -v go >/dev/null; then
	HOME=$TMP GOCACHE=$TMP/gocache GOTOOLCHAIN=local go tool pprof -lines -top -nodecount=5 \
		"$TMP/node.pb.gz" 2>/dev/null >"$TMP/node.top"
	grep -q 'fibonacci-bench.js:7' "$TMP/node.top" && ok "pprof: go tool pprof -lines shows the JS lines" ||
		bad "pprof -lines: $(head -12 "$TMP/node.top" | tail -5)"
fi

# Anonymous code whose map is nowhere: the summary names the process, the files looked
# for and where, and --jit-dir (issue 12 C4). A --jit-dir that is not there is an error.
mkdir -p "$TMP/nomap"
cp $J/node-map.data "$TMP/nomap/"
"$PERFCONV" -i "$TMP/nomap/node-map.data" -o "$TMP/nomap.folded" 2>"$TMP/nomap.err"
grep -q "in anonymous (JIT) code of pid 30787 (node): no jit-30787.dump or perf-30787.map beside the recording ($TMP/nomap).*--jit-dir" "$TMP/nomap.err" &&
	ok "node-map without its map: the summary names pid, comm, the files and where" ||
	bad "node-map without its map: $(cat "$TMP/nomap.err")"
"$PERFCONV" -i "$TMP/nomap/node-map.data" --jit-dir "$TMP/no-such-dir" -o "$TMP/nodir.folded" 2>"$TMP/nodir.err"
rc=$?
[ $rc = 1 ] && grep -q "no-such-dir: --jit-dir: No such file or directory" "$TMP/nodir.err" &&
	[ ! -e "$TMP/nodir.folded" ] && ok "--jit-dir that does not exist: exit 1, said why" ||
	bad "--jit-dir that does not exist: exit $rc: $(cat "$TMP/nodir.err")"

"$PERFCONV" info -i "$TMP/nomap/node-map.data" --jit-dir "$TMP/no-such-dir" >"$TMP/nodir.info" 2>"$TMP/nodir.err"
rc=$?
[ $rc = 1 ] && grep -q "no-such-dir: --jit-dir: No such file or directory" "$TMP/nodir.err" &&
	ok "info with a --jit-dir that does not exist: exit 1, said why" ||
	bad "info with a --jit-dir that does not exist: exit $rc: $(cat "$TMP/nodir.err")"

# A dump found but not used (issue 34 item 5): the summary says which file and why,
# not that there is none, and does not send the user looking for it. Damaged copies
# of lli's dump beside the recording: a header of version 7, a first record of size
# 0 (nothing after the header can be read), another process's pid in the header.
damage() { # NAME OFFSET FORMAT VALUE
	mkdir -p "$TMP/$1"
	cp $J/lli.data "$TMP/$1/"
	python3 -c 'import struct, sys
src, dst, off, fmt, v = sys.argv[1:4] + sys.argv[4:5] + [int(sys.argv[5])]
b = bytearray(open(src, "rb").read())
struct.pack_into(fmt, b, int(off), v)
open(dst, "wb").write(b)' $J/jit-30749.dump "$TMP/$1/jit-30749.dump" "$2" "$3" "$4"
}
unused_check() { # NAME WHY (a fixed string)
	local dir=$TMP/$1
	"$PERFCONV" -i "$dir/lli.data" -o "$dir.folded" 2>"$dir.err"
	"$PERFCONV" info -i "$dir/lli.data" >"$dir.info" 2>&1
	if grep -qF "in anonymous (JIT) code of pid 30749 (lli-14): jit-30749.dump found at $dir/jit-30749.dump but not used: $2; no perf-30749.map beside the recording ($dir), in /tmp; give a sound copy of the dump with --jit-dir" "$dir.err" &&
		! grep -q 'no jit-30749.dump' "$dir.err" && ! grep -q 'name where they are' "$dir.err"; then
		ok "lli with its dump damaged ($1): the summary says it was found and why it was not used"
	else
		bad "lli with its dump damaged ($1): $(grep 'anonymous (JIT) code' "$dir.err")"
	fi
}
damage badversion 4 '<I' 7
unused_check badversion 'offset 0x4: unsupported jitdump version 7, want 1'
grep -qF "jit-30749.dump found at $TMP/badversion/jit-30749.dump but not used: offset 0x4: unsupported jitdump version 7, want 1; no perf map found" "$TMP/badversion.info" &&
	ok "info: the dump found but not used, and why" ||
	bad "info, dump not used: $(grep -A1 '^JIT' "$TMP/badversion.info")"
damage size0 44 '<I' 0
unused_check size0 'no code load before the damage at offset 0x28 (the last 1897 bytes unreadable)'
damage otherpid 20 '<I' 4242
unused_check otherpid 'the dump was written by pid 4242, not 30749'

# An explicit --jit-dir wins over a map beside the recording, and a map written
# before the recording began is warned about (issue 12 C5): a stale map beside the
# recording whose names are another program's.
mkdir -p "$TMP/stale" "$TMP/right"
cp $J/node-map.data "$TMP/stale/"
sed 's/fibonacci/STALE_NAME/' $J/perf-30787.map >"$TMP/stale/perf-30787.map"
cp $J/perf-30787.map "$TMP/right/"
touch -d '2001-01-01' "$TMP/stale/perf-30787.map"
"$PERFCONV" -i "$TMP/stale/node-map.data" --jit-dir "$TMP/right" -o "$TMP/right.folded" 2>"$TMP/right.err"
[ "$(our_count "$TMP/right.folded" 'JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19')" -gt 0 ] &&
	! grep -q STALE_NAME "$TMP/right.folded" && ! grep -q 'before the recording began' "$TMP/right.err" &&
	ok "node-map: --jit-dir's map wins over the stale one beside the recording" ||
	bad "node-map: --jit-dir did not win: $(grep -c STALE_NAME "$TMP/right.folded") stale frames; $(cat "$TMP/right.err")"
"$PERFCONV" -i "$TMP/stale/node-map.data" -o "$TMP/stale.folded" 2>"$TMP/stale.err"
grep -q "stale/perf-30787.map: warning: perf map of pid 30787 last written [0-9]* s before the recording began" "$TMP/stale.err" &&
	ok "node-map: a map older than the recording is warned about" ||
	bad "node-map: stale map not warned about: $(cat "$TMP/stale.err")"
touch "$TMP/stale/perf-30787.map"
"$PERFCONV" -i "$TMP/stale/node-map.data" -o "$TMP/fresh.folded" 2>"$TMP/fresh.err"
! grep -q 'before the recording began' "$TMP/fresh.err" && ok "node-map: a map written during the recording: no warning" ||
	bad "node-map: fresh map warned about: $(cat "$TMP/fresh.err")"

# A dump whose times are the CPU's counter (JITDUMP_USE_ARCH_TIMESTAMP: header flag bit
# 0) in a recording made with -k 1 but without TIME_CONV (this VM's perf writes none):
# the warning names that, not -k 1, which was used.
mkdir -p "$TMP/tsc"
cp $J/node.data "$TMP/tsc/"
python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<Q", b, 32, struct.unpack_from("<Q", b, 32)[0] | 1)
open(sys.argv[2], "wb").write(b)' $J/jit-30720.dump "$TMP/tsc/jit-30720.dump"
"$PERFCONV" -i "$TMP/tsc/node.data" -o "$TMP/tsc.folded" 2>"$TMP/tsc.err"
if grep -q "jit-30720.dump: warning: the jitdump's times are the CPU's timestamp counter .*no TIME_CONV" "$TMP/tsc.err" &&
	! grep -q "record -k 1" "$TMP/tsc.err" && [ -s "$TMP/tsc.folded" ]; then
	ok "ARCH_TIMESTAMP dump without TIME_CONV: said as such, not as a missing -k 1"
else
	bad "ARCH_TIMESTAMP dump: $(grep -m1 -i "clock\|counter" "$TMP/tsc.err")"
fi

# A pre-fork server: the parent compiles a function and writes its perf map, its workers
# (no map of their own) run it. Recorded here; each worker's samples in it named as
# perf script names them (through the map the fork gave them), and the child that ran
# another program (/bin/true) inherits nothing: two workers said, not three.
if gcc -O1 -o "$TMP/forkjit" tests/fixtures/forkjit.c 2>"$TMP/forkjit.cc" &&
	(cd "$TMP" && perf record -q -g -o "$TMP/fork.data" -- sh -c './forkjit 2 0.5; true' \
		>"$TMP/forkjit.out" 2>&1); then
	"$PERFCONV" -i "$TMP/fork.data" -f samples -o "$TMP/fork.samples" 2>"$TMP/fork.err"
	awk -F'\t' '{ split($2, t, "/"); n = split($7, f, ";"); print t[1], f[n] }' "$TMP/fork.samples" |
		grep ' jit_spin_compiled_by_parent$' | sort | uniq -c >"$TMP/fork.ours"
	perf script -i "$TMP/fork.data" -F pid,ip,sym 2>/dev/null |
		awk 'NF == 1 && $1 ~ /^[0-9]+$/ { pid = $1; first = 1; next } NF == 0 { next }
			first { print pid, $2; first = 0 }' |
		grep ' jit_spin_compiled_by_parent$' | sort | uniq -c >"$TMP/fork.perf"
	workers=$(grep -c "its parent's" "$TMP/fork.err")
	if [ "$(wc -l <"$TMP/fork.ours")" -eq 2 ] && [ "$workers" -eq 2 ] &&
		cmp -s "$TMP/fork.ours" "$TMP/fork.perf"; then
		ok "forked workers: $(awk '{ printf "%s samples in pid %s, ", $1, $2 }' "$TMP/fork.ours")named by the parent's perf map, as perf script; the exec'd child not"
	else
		bad "forked workers: ours $(tr -s ' \n' ' ' <"$TMP/fork.ours"), perf $(tr -s ' \n' ' ' <"$TMP/fork.perf"); $(grep "JIT code" "$TMP/fork.err" | head -3)"
	fi
	rm -f "/tmp/perf-$(head -1 "$TMP/forkjit.out" | sed 's/[^0-9]//g').map"
else
	bad "forkjit: $(cat "$TMP/forkjit.cc" "$TMP/forkjit.out" 2>/dev/null | tail -2)"
fi

# The same server already running when perf begins (perf record -a): its FORKs are
# perf's, made from /proc (misc bit 13), which cannot say whether a child exec'd since.
# The workers, named as their parent, run the parent's code: named by its map (perf
# names none of them: it gives such a child no copy of its parent's maps); the child
# that runs another program ("exe", its own code at the parent's address) is not.
if [ "$(id -u)" != 0 ]; then
	skip "forkjit running before perf record -a: needs root"
elif [ -x "$TMP/forkjit" ]; then
	# (for up to 120 s, ended once recorded: on a loaded machine perf may take seconds
	# to start, and the processes must run throughout)
	(cd "$TMP" && exec ./forkjit 2 120 >"$TMP/pre.out" 2>&1) &
	fj=$!
	# the exec'd child has its own code mapped at the parent's address before perf begins
	other_ready() {
		local o a
		o=$(awk '$1 == "other" { print $2 }' "$TMP/pre.out" 2>/dev/null)
		a=$(awk '{ print $1; exit }' "/tmp/perf-$(awk '$1 == "parent" { print $2 }' "$TMP/pre.out").map" 2>/dev/null)
		[ -n "$o" ] && [ -n "$a" ] && grep -q '^forkjit-other' "/proc/$o/cmdline" 2>/dev/null &&
			grep -q "^0*$a-" "/proc/$o/maps" 2>/dev/null
	}
	wait_for 60 other_ready || bad "forkjit's exec'd child never mapped its code: $(cat "$TMP/pre.out")"
	perf record -q -g -a -o "$TMP/pre.data" -- sleep 1 >/dev/null 2>&1
	kill $(awk '$1 == "worker" || $1 == "other" { print $2 }' "$TMP/pre.out") 2>/dev/null
	wait $fj
	"$PERFCONV" -i "$TMP/pre.data" -f samples -o "$TMP/pre.samples" 2>"$TMP/pre.err"
	awk -F'\t' '{ split($2, t, "/"); n = split($7, f, ";"); print t[1], f[n] }' "$TMP/pre.samples" |
		sort | uniq -c >"$TMP/pre.leaves"
	pre_named() { awk -v p="$1" '$2 == p && $3 == "jit_spin_compiled_by_parent" { print $1 }' "$TMP/pre.leaves"; }
	pre_all() { awk -v p="$1" '$2 == p { s += $1 } END { print s + 0 }' "$TMP/pre.leaves"; }
	perf_named=$(perf script -i "$TMP/pre.data" -F pid,sym 2>/dev/null | grep -c jit_spin_compiled_by_parent)
	good=0 why=
	for w in $(awk '$1 == "worker" { print $2 }' "$TMP/pre.out"); do
		n=$(pre_named "$w") all=$(pre_all "$w")
		# the worker spins in that code but for its clock reads and the kernel's ticks
		if [ -n "$n" ] && [ $((n * 100)) -ge $((all * 85)) ]; then
			good=$((good + 1)) why="$why worker $w: $n of $all named;"
		else
			why="$why worker $w: ${n:-0} of $all named;"
		fi
	done
	other=$(awk '$1 == "other" { print $2 }' "$TMP/pre.out")
	if [ "$good" -eq 2 ] && [ -z "$(pre_named "$other")" ] && [ "$(pre_all "$other")" -gt 100 ] &&
		grep -q "JIT code of pid $other: not its parent's.*running before the recording under another name" "$TMP/pre.err" &&
		! grep -q "warning: perf map of pid $(awk '$1 == "parent" { print $2 }' "$TMP/pre.out") " "$TMP/pre.err"; then
		ok "forked workers running before perf record -a:$why the exec'd child ($other, $(pre_all "$other") samples) not, said; perf script names $perf_named"
	else
		bad "forked workers running before perf record -a:$why the other ($other): $(pre_named "$other") named of $(pre_all "$other"); $(grep -E 'JIT code|perf map' "$TMP/pre.err" | head -5)"
	fi
	rm -f "/tmp/perf-$(awk '$1 == "parent" { print $2 }' "$TMP/pre.out").map"
fi

finish e2e-jit
