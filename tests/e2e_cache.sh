#!/bin/bash
# e2e_cache: perfconv's cache as root keeps it for months in a folder another user may
# reach (issue 42: 4, 5, 8, 9). Its folders are 0700 and its files 0600 whatever the
# umask; a folder another user owns is refused and said (a stamp planted there does
# not vouch for a forged entry), and a kind's folder that is a link gets nothing
# written through it; --cache-size keeps it under a cap, the entries used longest ago
# going first; a cache on a full filesystem is said, not SIGBUS; eight conversions at
# once on the same entries agree. Everything is made here, from the committed
# recordings; as root (chown, unshare -m for a small tmpfs).
source "$(dirname "$0")/e2e_lib.sh"
REF=(-q --no-inline --srcline -f samples)

if [ "$(id -u)" != 0 ]; then
	skip "the cache against another user's folders and a full filesystem: needs root (chown, unshare -m)"
	finish e2e_cache
	exit $?
fi
chmod 755 "$TMP" # the other user reaches the folders below it

# the recording with its binary beside it, in a folder of its own
mkdir "$TMP/w"
cp $TD/shapes.data $TD/shapes "$TMP/w/"
"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --no-cache -o "$TMP/ref"
grep -q 'hot_mix' "$TMP/ref" || bad "the reference names no hot_mix: $(head -c 300 "$TMP/ref")"

# 1. Modes: 0700 folders, 0600 files, under umask 022 and 000; a kind's folder an
#    older perfconv made 0755 is closed.
for um in 022 000; do
	C=$TMP/modes-$um
	(umask $um && "$PERFCONV" "${REF[@]}" "${KS[@]}" -i "$TMP/w/shapes.data" --cache-dir "$C/cache" -o "$TMP/m.out")
	loose=$(find "$C" \( -type d ! -perm 0700 -printf '%m %p\n' \) -o \( -type f ! -perm 0600 -printf '%m %p\n' \))
	nf=$(find "$C/cache" -type f | wc -l)
	if [ -z "$loose" ] && [ "$nf" -ge 4 ]; then
		ok "umask $um: the cache's folders (and the one above it, made) 0700, its $nf files 0600"
	else
		bad "umask $um: not private: $(head -5 <<<"$loose" | tr '\n' ' ') ($nf files)"
	fi
done
C=$TMP/modes-old
mkdir -p -m 755 "$C" "$C/symbols"
"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --cache-dir "$C" -o "$TMP/m.out"
[ "$(stat -c %a "$C/symbols")" = 700 ] && ok "a kind's folder an older perfconv made 0755 is closed (0700)" ||
	bad "a kind's folder made 0755 stays $(stat -c %a "$C/symbols")"

# 2. A cache folder another user owns (nobody): refused, said in one line, and an entry
#    forged there with a stamp that vouches for it is not read.
N=$TMP/nobody
"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --cache-dir "$N" -o "$TMP/n.out"
entry=$(grep -l 'hot_mix' "$N"/symbols/* 2>/dev/null | grep -v '\.ok$' | head -1)
if [ -z "$entry" ]; then
	bad "no symbols entry names hot_mix in $N: $(ls "$N"/symbols 2>&1 | tr '\n' ' ')"
else
	chown -R 65534:65534 "$N"
	# the other user's edit, and the stamp that says its checksum held (locate.c: "PCSTAMP1",
	# then the entry's device, inode, size, mtime and ctime in ns)
	python3 - "$entry" <<-'EOF'
	import os, struct, sys
	e = sys.argv[1]
	b = open(e, "rb").read()
	open(e, "r+b").write(b.replace(b"hot_mix\0", b"Hot_mix\0"))
	st = os.stat(e)
	open(e + ".ok", "wb").write(b"PCSTAMP1" + struct.pack("<5Q", st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
	EOF
	chown 65534:65534 "$entry.ok"
	"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --cache-dir "$N" -o "$TMP/n2.out" 2>"$TMP/n2.err"
	said=$(grep -c "$N: warning: cache folder not used: owned by user 65534" "$TMP/n2.err")
	if [ "$said" = 1 ] && ! grep -q Hot_mix "$TMP/n2.out" && cmp -s "$TMP/ref" "$TMP/n2.out"; then
		ok "another user's cache folder: refused, said once ($(grep -o 'cache folder not used.*' "$TMP/n2.err")); its forged, stamped entry not read"
	else
		bad "another user's cache folder: said $said times ($(head -2 "$TMP/n2.err" | tr '\n' ' ')); forged name in the output: $(grep -c Hot_mix "$TMP/n2.out")"
	fi
fi

# 3. A kind's folder that is a link (a folder root made writable to all, the link
#    planted by the other user) into a folder only root may write: nothing written
#    there, said; a link given as the cache itself likewise.
R=$TMP/shared
mkdir -m 0777 "$R"
mkdir -m 0700 "$TMP/rootonly"
setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$TMP/rootonly" "$R/symbols"
"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --cache-dir "$R" -o "$TMP/r.out" 2>"$TMP/r.err"
if [ -z "$(ls -A "$TMP/rootonly")" ] && grep -q "$R/symbols: warning: cache folder not used: a symbolic link" "$TMP/r.err" &&
   cmp -s "$TMP/ref" "$TMP/r.out"; then
	ok "a kind's folder that is a link: nothing written where it leads, said ($(grep -o 'cache folder not used.*' "$TMP/r.err"))"
else
	bad "a kind's folder that is a link: written there: $(ls -A "$TMP/rootonly" | tr '\n' ' '); said: $(head -2 "$TMP/r.err" | tr '\n' ' ')"
fi
mkdir -m 0700 "$TMP/rootonly2"
ln -s "$TMP/rootonly2" "$TMP/linkcache"
"$PERFCONV" "${REF[@]}" -i "$TMP/w/shapes.data" --cache-dir "$TMP/linkcache" -o "$TMP/l.out" 2>"$TMP/l.err"
[ -z "$(ls -A "$TMP/rootonly2")" ] && grep -q "linkcache: warning: cache folder not used: a symbolic link" "$TMP/l.err" &&
	ok "a link as the cache: not followed, said" ||
	bad "a link as the cache: written: $(ls -A "$TMP/rootonly2" | tr '\n' ' '); said: $(head -1 "$TMP/l.err")"

# 4. --cache-size: past the cap the entries used longest ago go first. Six copies of
#    the binaries (--symfs S1..S6: each its own entries, ~0.5 MB: libc's table), each
#    converted in turn; S1 converted again after S5 (its entries used); S6 converted
#    with a cap of 5.5 copies' worth: S2's entries (the oldest unused) go, S1's and
#    S6's stay, and the cache ends under the cap.
L=$TMP/lru
files() { find "$L/symbols" "$L/frames" -type f ! -name '*.ok' 2>/dev/null | sort; }
for i in 1 2 3 4 5 6; do
	mkdir "$TMP/s$i"
	cp $TD/shapes $TD/libc.so.6 $TD/ld-linux-x86-64.so.2 "$TMP/s$i/"
done
run_lru() { "$PERFCONV" -q -i $TD/shapes.data --symfs "$TMP/s$1" --cache-dir "$L" -o "$TMP/lru$1.folded" "${@:2}"; }
: >"$TMP/seen"
for i in 1 2 3 4 5; do
	run_lru $i
	files | comm -23 - "$TMP/seen" >"$TMP/own$i"
	files >"$TMP/seen"
done
# the bytes one copy's entries take
own=$(cat "$TMP/own1" | xargs stat -c '%b %B' | awk '{ s += $1 * $2 } END { print s }')
run_lru 1 # S1's entries used again
cap=$((own * 11 / 2))
run_lru 6 --cache-size $cap 2>"$TMP/lru6.err"
rc=$?
files | comm -23 - "$TMP/seen" >"$TMP/own6"
left() { comm -12 "$TMP/own$1" <(files) | wc -l; }
total=$(find "$L" -type f -print0 | xargs -0 stat -c '%b %B' | awk '{ s += $1 * $2 } END { print s }')
if [ $rc -eq 0 ] && [ "$(wc -l <"$TMP/own1")" -ge 3 ] && [ "$(left 2)" = 0 ] &&
   [ "$(left 1)" = "$(wc -l <"$TMP/own1")" ] && [ "$(left 6)" = "$(wc -l <"$TMP/own6")" ] &&
   [ "$total" -le "$cap" ]; then
	ok "--cache-size $cap (5.5 copies of $own bytes): the oldest unused copy's $(wc -l <"$TMP/own2") entries removed, the one used again and the newest kept whole; $total bytes left (S3, S4, S5 keep $(left 3), $(left 4), $(left 5))"
else
	bad "--cache-size $cap: exit $rc ($(head -1 "$TMP/lru6.err")); entries left of S1 $(left 1)/$(wc -l <"$TMP/own1"), S2 $(left 2), S6 $(left 6)/$(wc -l <"$TMP/own6"); $total bytes"
fi
"$PERFCONV" -q -i $TD/shapes.data --cache-size 12X -o /dev/null 2>"$TMP/size.err"
rc=$?
[ $rc = 2 ] && grep -q -- '--cache-size takes a size' "$TMP/size.err" && ok "--cache-size 12X: a usage error (exit 2)" ||
	bad "--cache-size 12X: exit $rc: $(head -1 "$TMP/size.err")"

# 5. A full filesystem: the cache on a tmpfs of 8 KiB, a debug file whose sections are
#    compressed (its inflated copy is 16 KiB): the output as without a cache, the cache
#    said to be full, no SIGBUS.
mkdir "$TMP/f" "$TMP/full"
cp $TD/shapes.data "$TMP/f/"
objcopy --only-keep-debug --compress-debug-sections=zlib $TD/shapes "$TMP/f/shapes.debug"
(cd "$TMP/f" && objcopy --strip-all --add-gnu-debuglink=shapes.debug "$OLDPWD/$TD/shapes" shapes)
"$PERFCONV" "${REF[@]}" -i "$TMP/f/shapes.data" --no-cache -o "$TMP/f.ref"
unshare -m sh -c 'mount -t tmpfs -o size=8k,mode=0700 none "$1" && shift && exec "$@"' sh "$TMP/full" \
	"$PERFCONV" "${REF[@]}" -i "$TMP/f/shapes.data" --cache-dir "$TMP/full" -o "$TMP/f.out" 2>"$TMP/f.err"
rc=$?
if [ $rc -eq 0 ] && cmp -s "$TMP/f.ref" "$TMP/f.out" && grep -q 'shapes.cpp' "$TMP/f.out" &&
   [ "$(grep -c "$TMP/full: warning: cache full (No space left on device)" "$TMP/f.err")" = 1 ]; then
	ok "a cache on a full filesystem: the output as without a cache, said once ($(grep -o 'cache full.*' "$TMP/f.err"))"
else
	bad "a cache on a full filesystem: exit $rc$([ $rc = 135 ] && echo ' (SIGBUS)'); same output: $(cmp -s "$TMP/f.ref" "$TMP/f.out" && echo yes || echo no); said: $(head -2 "$TMP/f.err" | tr '\n' ' ')"
fi

# 6. Eight conversions at once writing the same entries: each the reference, no entry
#    said to be damaged then or after, nothing temporary left.
P=$TMP/par
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$PERFCONV" "${REF[@]}" -i "$TMP/f/shapes.data" --cache-dir "$P" -o "$TMP/p$i.out" 2>"$TMP/p$i.err" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
"$PERFCONV" "${REF[@]}" -i "$TMP/f/shapes.data" --cache-dir "$P" -o "$TMP/p9.out" 2>"$TMP/p9.err"
diffs=$(for i in 1 2 3 4 5 6 7 8 9; do cmp -s "$TMP/f.ref" "$TMP/p$i.out" || echo $i; done)
said=$(cat "$TMP"/p?.err | grep -c 'warning')
tmps=$(find "$P" -name '*.tmp.*' | wc -l)
[ $fails = 0 ] && [ -z "$diffs" ] && [ "$said" = 0 ] && [ "$tmps" = 0 ] && [ -s "$P/perfconv-size" ] &&
	ok "8 conversions at once on the same entries, then a 9th: each the reference, nothing said, nothing temporary left" ||
	bad "8 at once: $fails failed, outputs differing: ${diffs:-none}, $said warnings ($(cat "$TMP"/p?.err | head -2 | tr '\n' ' ')), $tmps temporary files"

finish e2e_cache
