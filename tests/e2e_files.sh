#!/bin/bash
# e2e_files: the files perfconv makes. Its cache entries are checked before they are
# used: one truncated, altered, replaced or turned into a FIFO is said, not used and
# made again, with the output as it was (issue 21 B3). Its output never destroys the
# recording (-o naming the input, through a hard or a symbolic link), leaves nothing
# behind when the process is killed while writing, and keeps an -o symlink a
# symlink (B4). Every damaged entry and link is made here, from the committed
# recordings.
source "$(dirname "$0")/e2e_lib.sh"
LIMIT=5
LIBC_BID=93ac61ec5a8eb1396f9fbd350e3169a558528a40 # the libc testdata/dwarf/dw.data ran

# run NAME CACHE ARGS...: perfconv with cache CACHE, within LIMIT seconds; its stderr
# in $TMP/NAME.err, its exit status in $rc
run() {
	local name=$1 cache=$2
	shift 2
	PERFCONV_CACHE_DIR=$cache bounded $LIMIT "$PERFCONV" -q "$@" 2>"$TMP/$name.err" </dev/null
	rc=$?
}

# damaged NAME CACHE ENTRY WHY REF ARGS...: with ENTRY damaged, perfconv ends in time,
# exits 0, warns that ENTRY is damaged (WHY, grep -E), and writes what REF holds; the
# next run has nothing to say: the entry was made again.
damaged() {
	local name=$1 cache=$2 entry=$3 why=$4 ref=$5
	shift 5
	run "$name" "$cache" "$@" -o "$TMP/$name.out"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$name: still running after $LIMIT s"
	elif [ $rc -ne 0 ]; then
		bad "$name: exit $rc: $(head -2 "$TMP/$name.err")"
	elif ! grep -qE -- "$entry: warning: damaged cache entry \($why" "$TMP/$name.err"; then
		bad "$name: no warning about $entry: $(head -2 "$TMP/$name.err")"
	elif ! cmp -s "$ref" "$TMP/$name.out"; then
		bad "$name: output differs from the intact cache's"
		diff "$ref" "$TMP/$name.out" | head -4
	else
		ok "$name: $(grep -m1 -o 'damaged cache entry.*' "$TMP/$name.err"), the output as it was"
	fi
	run "$name.again" "$cache" "$@" -o "$TMP/$name.again.out"
	if grep -q 'damaged cache entry' "$TMP/$name.again.err" || [ ! -f "$entry" ]; then
		bad "$name: not made again: $(head -1 "$TMP/$name.again.err")"
	fi
}

flip_byte() { # FILE OFFSET: change one byte in place
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $(((b ^ 0x20) & 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# 1. The decompressed copy of libc's debug file (libc6-dbg): lines and inlined frames
#    of libc's qsort in the dwarf recording.
C1=$TMP/c1
D="$C1/debug/$LIBC_BID.debug"
run ref-dw "$C1" -i $TD/dwarf/dw.data --annotate --srcline -o "$TMP/dw.ref"
lines=$(grep -o '(msort.c:[0-9]*)' "$TMP/dw.ref" | wc -l)
inl=$(grep -o 'msort_with_tmp (msort.c:[0-9]*)_\[i\]' "$TMP/dw.ref" | wc -l)
if [ ! -f "$D" ]; then
	skip "debug copy: no $D (libc6-dbg of libc $LIBC_BID is not installed: scripts/install-deps.sh installs it)"
elif [ "$lines" -lt 100 ] || [ "$inl" -lt 100 ]; then
	bad "debug copy: the reference has $lines msort.c lines and $inl inlined frames"
else
	# what the lines and frames need inflated, the variables' location lists left out
	secs=$(readelf -SW "$D" 2>/dev/null)
	if ! grep -Eq '\.debug_info +PROGBITS' <<<"$secs" || ! grep -Eq '\.debug_line +PROGBITS' <<<"$secs" ||
	   grep -E '\.debug_(info|line|abbrev|str) ' <<<"$secs" | grep -Eq ' [A-Z]*C[A-Z]* +[0-9]+ +[0-9]+ +[0-9]+$'; then
		bad "debug copy: .debug_info or .debug_line not inflated: $(grep -E '\.debug_(info|line) ' <<<"$secs")"
	elif readelf -SW "/usr/lib/debug/.build-id/${LIBC_BID:0:2}/${LIBC_BID:2}.debug" 2>/dev/null |
	     grep -q '\.debug_loclists' && ! grep -Eq '\.debug_loclists +NOBITS' <<<"$secs"; then
		bad "debug copy: .debug_loclists kept: $(grep -E '\.debug_loclists' <<<"$secs")"
	else
		ok "debug copy: .debug_info and .debug_line inflated, .debug_loclists left out"
	fi
	DW=(-i $TD/dwarf/dw.data --annotate --srcline)
	# the DWARF is read only for addresses no run asked for before (1c): the frames
	# entries removed, so that each run reads it, and its copy
	rm -rf "$C1/frames"
	truncate -s $(($(stat -c %s "$D") / 2)) "$D"
	damaged debug-truncated "$C1" "$D" "truncated" "$TMP/dw.ref" "${DW[@]}"
	rm -rf "$C1/frames"
	flip_byte "$D" $(($(stat -c %s "$D") / 3))
	damaged debug-bit-flipped "$C1" "$D" "checksum differs" "$TMP/dw.ref" "${DW[@]}"
	cp "$C1/debug/"*.debug "$TMP/other.debug" 2>/dev/null
	rm -rf "$C1/frames"
	cp /bin/true "$D"
	damaged debug-replaced "$C1" "$D" "truncated, or not a decompressed" "$TMP/dw.ref" "${DW[@]}"
	rm -rf "$C1/frames"
	rm -f "$D" && mkfifo "$D"
	damaged debug-fifo "$C1" "$D" "not a regular file" "$TMP/dw.ref" "${DW[@]}"
	ok "debug copy: the reference has $lines msort.c lines, $inl inlined frames of libc"

	# 1c. What the DWARF said of each address asked (DIR/frames/KEY): a later run
	#    answers from it without opening the DWARF, so the debug copy, removed, is not
	#    made again, and the lines and inlined frames are the same.
	F=$(grep -l -a 'msort.c' "$C1"/frames/* 2>/dev/null | grep -v '\.ok$' | head -1)
	rm -f "$D" "$D.ok"
	run frames-warm "$C1" "${DW[@]}" -o "$TMP/frames-warm.out"
	if [ -z "$F" ]; then
		bad "frames: no entry of $C1/frames holds msort.c"
	elif [ -e "$D" ]; then
		bad "frames: the warm run opened libc's DWARF (its copy was made again)"
	elif ! cmp -s "$TMP/dw.ref" "$TMP/frames-warm.out"; then
		bad "frames: the warm run's output differs: $(diff "$TMP/dw.ref" "$TMP/frames-warm.out" | head -2 | tr '\n' ' ')"
	else
		ok "frames: a warm run gives the $lines msort.c lines and $inl inlined frames without opening libc's DWARF"
	fi
	off=$(grep -a -b -o 'msort.c' "$F" | head -1 | cut -d: -f1)
	flip_byte "$F" "$off"
	damaged frames-bit-flipped "$C1" "$F" "checksum differs" "$TMP/dw.ref" "${DW[@]}"
	truncate -s 100 "$F"
	damaged frames-truncated "$C1" "$F" "truncated" "$TMP/dw.ref" "${DW[@]}"
	rm -f "$F" && mkfifo "$F"
	damaged frames-fifo "$C1" "$F" "not a regular file" "$TMP/dw.ref" "${DW[@]}"
	# an intact entry of another object in its place: made for other files, so not
	# used and made again, without a word
	O=$(ls "$C1"/frames/* | grep -v '\.ok$' | grep -v "$F" | head -1)
	cp "$O" "$F"
	run frames-other "$C1" "${DW[@]}" -o "$TMP/frames-other.out"
	if grep -q 'cache entry' "$TMP/frames-other.err" || ! cmp -s "$TMP/dw.ref" "$TMP/frames-other.out" ||
	   cmp -s "$O" "$F"; then
		bad "frames: another object's entry: $(head -1 "$TMP/frames-other.err"); output $(cmp -s "$TMP/dw.ref" "$TMP/frames-other.out" && echo same || echo differs); $(cmp -s "$O" "$F" && echo 'not made again')"
	else
		ok "frames: another object's entry in its place is not used, said nothing of, and made again"
	fi
fi

# 1b. The output does not depend on what an earlier run left in the cache: a copy of
#    libc's debug file made by a run that found it (/usr/lib/debug, libc6-dbg) is not
#    used by a --symfs run, whose search finds no debug file for that libc under the
#    --symfs tree (the helper's note: it gave libc lines only with that cache state).
MG=(-i $TD/mt-g.data "${KS[@]}" --srcline)
run symfs-fresh "$TMP/c1b-fresh" "${MG[@]}" --symfs $TD -o "$TMP/symfs-fresh.folded"
run host-first "$TMP/c1b" "${MG[@]}" -o "$TMP/host-first.folded"
run symfs-after "$TMP/c1b" "${MG[@]}" --symfs $TD -o "$TMP/symfs-after.folded"
host_lines=$(grep -c 'libc_start_call_main.h:' "$TMP/host-first.folded")
if [ "$host_lines" -eq 0 ]; then
	skip "cache state: no libc lines without --symfs (libc6-dbg of testdata/libc.so.6 not installed: scripts/install-deps.sh installs it)"
elif cmp -s "$TMP/symfs-fresh.folded" "$TMP/symfs-after.folded"; then
	ok "cache state: a --symfs run gives the same output after a run that cached the host's debug file of libc ($host_lines stacks with its lines there)"
else
	bad "cache state: a --symfs run differs after a run that cached the host's debug file: $(diff "$TMP/symfs-fresh.folded" "$TMP/symfs-after.folded" | head -2 | tr '\n' ' ')"
fi

# 2. A parsed symbol table: one byte of a name changed in place gives the right name
#    (and was the changed one before).
C2=$TMP/c2
SH=(-i $TD/shapes.data "${KS[@]}" -f samples)
run ref-shapes "$C2" "${SH[@]}" -o "$TMP/shapes.ref"
S=$(grep -l -a 'hot_mix' "$C2"/symbols/* 2>/dev/null | grep -v '\.ok$' | head -1)
if [ -z "$S" ] || ! grep -q 'hot_mix' "$TMP/shapes.ref"; then
	bad "symbol table: no cache entry holding hot_mix"
else
	off=$(grep -a -b -o 'hot_mix' "$S" | head -1 | cut -d: -f1)
	flip_byte "$S" "$off"
	grep -q -a 'Hot_mix' "$S" || bad "symbol table: the name was not changed"
	damaged symbols-bit-flipped "$C2" "$S" "checksum differs" "$TMP/shapes.ref" "${SH[@]}"
	! grep -q 'Hot_mix' "$TMP/symbols-bit-flipped.out" && ok "symbol table: no frame named Hot_mix" ||
		bad "symbol table: the changed name was shown"
	truncate -s 100 "$S"
	damaged symbols-truncated "$C2" "$S" "truncated" "$TMP/shapes.ref" "${SH[@]}"
	rm -f "$S" && mkfifo "$S"
	damaged symbols-fifo "$C2" "$S" "not a regular file" "$TMP/shapes.ref" "${SH[@]}"
fi

# 3. A parsed kallsyms: a kernel function's name edited inside.
C3=$TMP/c3
KH=(-i $TD/kheavy.data "${KS[@]}")
run ref-kheavy "$C3" "${KH[@]}" -o "$TMP/kheavy.ref"
K=$C3/kallsyms/$(cat $TD/kernel.buildid)
if [ ! -f "$K" ] || ! grep -q ';do_syscall_64;' "$TMP/kheavy.ref"; then
	bad "kallsyms: no cache entry $K, or no do_syscall_64 in the reference"
else
	off=$(grep -a -b -o 'do_syscall_64' "$K" | head -1 | cut -d: -f1)
	printf X | dd of="$K" bs=1 seek=$((off + 12)) conv=notrunc status=none
	damaged kallsyms-edited "$C3" "$K" "checksum differs" "$TMP/kheavy.ref" "${KH[@]}"
	! grep -q 'do_syscall_6X' "$TMP/kallsyms-edited.out" && ok "kallsyms: no frame named do_syscall_6X" ||
		bad "kallsyms: the edited name was shown"
	rm -f "$K" && mkfifo "$K"
	damaged kallsyms-fifo "$C3" "$K" "not a regular file" "$TMP/kheavy.ref" "${KH[@]}"
fi

# 4. --cache-dir "": no cache, said; nothing written at the filesystem's root or here.
mkdir -p "$TMP/cwd"
made=""
at_root() { for d in /debug /symbols /kallsyms; do [ -e $d ] && echo $d; done; }
root_before=$(at_root)
(cd "$TMP/cwd" && "$PERFCONV" -i "$OLDPWD/$TD/shapes.data" --kallsyms "$OLDPWD/$TD/kallsyms.gz" \
	--cache-dir "" -o out.folded 2>err)
for d in $(at_root); do [[ " $root_before " == *" $d "* ]] || made="$made $d"; done
if grep -q 'cache-dir "" names no directory: no cache used' "$TMP/cwd/err" && [ -z "$made" ] &&
	[ "$(ls "$TMP/cwd")" = "$(printf 'err\nout.folded')" ]; then
	ok "--cache-dir \"\": said, no cache written at / or in the working directory"
else
	bad "--cache-dir \"\": $(head -1 "$TMP/cwd/err"); made$made; here: $(ls "$TMP/cwd" | tr '\n' ' ')"
	for d in $made; do rm -rf "$d"; done # this test made them: gone again
fi

# 5. -o naming the input: refused before anything is read, the recording intact.
mkdir -p "$TMP/o"
cp $TD/shapes.data "$TMP/o/rec.data"
sum=$(sha256sum <"$TMP/o/rec.data")
ln "$TMP/o/rec.data" "$TMP/o/hard.folded"
ln -s rec.data "$TMP/o/link.folded"
cp -r $TD/mt-threads.data "$TMP/o/thr.data"
tsum=$(cat "$TMP/o/thr.data"/* | sha256sum)
for o in rec.data hard.folded link.folded; do
	"$PERFCONV" -i "$TMP/o/rec.data" -o "$TMP/o/$o" 2>"$TMP/o.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$o: -o names the input" "$TMP/o.err" &&
		[ "$(sha256sum <"$TMP/o/rec.data")" = "$sum" ]; then
		ok "-o $o (the input): exit 1, the recording unchanged: $(cat "$TMP/o.err")"
	else
		bad "-o $o (the input): exit $rc, $(head -1 "$TMP/o.err")"
	fi
done
"$PERFCONV" -i "$TMP/o/thr.data" -o "$TMP/o/thr.data/data.1" 2>"$TMP/o.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'names a file of the input' "$TMP/o.err" &&
	[ "$(cat "$TMP/o/thr.data"/* | sha256sum)" = "$tsum" ] &&
	ok "-o a file of the --threads input directory: exit 1, its files unchanged" ||
	bad "-o thr.data/data.1: exit $rc, $(head -1 "$TMP/o.err")"

# 6. Killed while writing (SIGXFSZ from ulimit -f, as abrupt as SIGKILL: no clean-up
#    runs): no temporary file left beside the output, and the old output intact.
mkdir -p "$TMP/k"
echo old >"$TMP/k/old.samples"
for out in new.samples old.samples; do
	# the shell that sees perfconv die says so on its stderr: not this one's
	rc=$(bash -c 'ulimit -f 64; "$@" 2>/dev/null; echo $?' _ "$PERFCONV" -q --no-cache \
		-i $TD/mt-g.data "${KS[@]}" -o "$TMP/k/$out" 2>/dev/null)
	left=$(ls "$TMP/k" | grep -v '^old.samples$' | tr '\n' ' ')
	if [ $rc -ne 153 ]; then # 128 + SIGXFSZ
		bad "killed while writing $out: not killed (exit $rc): the output is smaller than 64 KB?"
	elif [ -n "$left" ] || [ "$(cat "$TMP/k/old.samples")" != old ]; then
		bad "killed while writing $out: left $left, old.samples: $(head -c 20 "$TMP/k/old.samples")"
	else
		ok "killed while writing $out: nothing left behind, the old output intact"
	fi
done

# 7. -o a symbolic link: the link stays, its target gets the output; a dangling one
#    makes its target.
mkdir -p "$TMP/l/real"
ln -s real/t.folded "$TMP/l/link.folded"
for target in dangling existing; do
	"$PERFCONV" -q -i $TD/shapes.data "${KS[@]}" -o "$TMP/l/link.folded" 2>"$TMP/l.err"
	if [ -L "$TMP/l/link.folded" ] && [ "$(readlink "$TMP/l/link.folded")" = real/t.folded ] &&
		grep -q 'shapes;' "$TMP/l/real/t.folded"; then
		ok "-o a symlink ($target target): still a link, its target written"
	else
		bad "-o a symlink ($target target): $(ls -l "$TMP/l" | tail -2 | tr '\n' ' ') $(head -1 "$TMP/l.err")"
	fi
done

# 8. The output is as readable as the umask says (written unnamed, then linked).
(umask 027 && "$PERFCONV" -q -i $TD/shapes.data "${KS[@]}" -o "$TMP/l/mode.folded")
[ "$(stat -c %a "$TMP/l/mode.folded")" = 640 ] && ok "output mode 640 under umask 027" ||
	bad "output mode $(stat -c %a "$TMP/l/mode.folded") under umask 027"

finish e2e_files
