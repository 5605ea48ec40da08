#!/bin/bash
# e2e_mapcache: perf maps kept in the cache (issue 45, part 4). The
# Erlang recording's 0.8 MB map is read whole by the first conversion only: a second one
# takes its lines from the cache and reads a few KB of the map (strace counts them); a
# map that grew is read on from there, one written again is read whole, and every output
# is that of a conversion without a cache; the same for the code table of node's map
# (a recording whose JIT code only a perf map names). The watcher keeps that table in
# the cache too: a watcher started again reads a few KB of the map for its first chunk,
# not the whole map (strace counts what it reads). Everything is made here, from the
# committed recordings.
source "$(dirname "$0")/e2e_lib.sh"
at_exit() { kill_pids; }
OPTS=(-q "${KS[@]}" -f folded)

if ! command -v strace >/dev/null; then
	skip "the bytes of the map each conversion reads: needs strace"
	finish e2e_mapcache
	exit $?
fi
W=$TMP/w
C=$TMP/cache
mkdir "$W"
cp $TD/jit/erlang.data $TD/jit/perf-30756.map "$W/"
zcat $TD/jit/jit-30756.dump.gz >"$W/jit-30756.dump"
MAP=$W/perf-30756.map
REC=erlang.data
MAPNAME=perf-30756.map

# BYTES OUT: a conversion with the cache, its output in OUT; prints the bytes it read of
# the map
bytes() {
	# a file per thread (-ff): no call split across lines by another thread's
	rm -rf "$TMP/st"
	mkdir "$TMP/st"
	# (LeakSanitizer cannot run under ptrace; the conversions without strace below
	# run with it)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -y -e trace=read,pread64,readv,preadv,preadv2 -o "$TMP/st/t" \
		"$PERFCONV" "${OPTS[@]}" -i "$W/$REC" --cache-dir "$C" -o "$1" >&2 ||
		echo "the conversion failed" >"$TMP/failed"
	cat "$TMP"/st/t.* | awk -v m="/$MAPNAME>" 'index($0, m) && $NF ~ /^[0-9]+$/ { n += $NF } END { print n + 0 }'
}
# SAME WHAT OUT: OUT equals the output of a conversion without the cache
same() {
	"$PERFCONV" "${OPTS[@]}" -i "$W/$REC" --no-cache -o "$TMP/ref"
	if cmp -s "$TMP/ref" "$2"; then
		ok "$1: the output is that of a conversion without the cache"
	else
		bad "$1: the output differs from the one without the cache: $(diff "$TMP/ref" "$2" | head -4 | tr '\n' ' ')"
	fi
}
size=$(stat -c %s "$MAP")
# the conversions are in $(...): a failure is said here
failed() {
	[ ! -e "$TMP/failed" ] || bad "$1: $(cat "$TMP/failed")"
	rm -f "$TMP/failed"
}

b1=$(bytes "$TMP/o1")
failed "conversion 1"
same "first conversion" "$TMP/o1"
[ "$b1" -ge "$size" ] || bad "the first conversion read $b1 bytes of the $size-byte map"
grep -q 'code_server' "$TMP/o1" || bad "no name from the map in the output: $(head -c 300 "$TMP/o1")"

# 1. the same map again: from the cache
b2=$(bytes "$TMP/o2")
failed "conversion 2"
same "second conversion" "$TMP/o2"
if [ "$b2" -lt 65536 ] && [ "$b2" -lt "$b1" ]; then
	ok "second conversion: $b2 bytes of the $size-byte map read (the first read $b1)"
else
	bad "second conversion: $b2 bytes of the $size-byte map read, the first $b1: not from the cache"
fi

# 2. grown: the map restated with new names appended (later lines win): read on, from
#    the end of the part read before, and the new names shown
sed 's/$/_grown/' "$MAP" >"$TMP/more"
cat "$TMP/more" >>"$MAP"
b3=$(bytes "$TMP/o3")
failed "conversion 3"
same "grown map" "$TMP/o3"
grep -q '_grown' "$TMP/o3" || bad "grown map: none of the appended names in the output"
more=$(stat -c %s "$TMP/more")
if [ "$b3" -lt $((more + 65536)) ]; then
	ok "grown map: read on ($b3 bytes read, $more appended to $size)"
else
	bad "grown map: $b3 bytes read, the whole map again"
fi

# 3. written again in place (O_TRUNC, the same inode), other names, longer than before:
#    read whole
sed 's/$/_again/' "$W/perf-30756.map" >"$TMP/again"
cat "$TMP/again" >"$MAP"
b4=$(bytes "$TMP/o4")
failed "conversion 4"
same "map written again" "$TMP/o4"
grep -q '_again' "$TMP/o4" && ! grep -q '_grown$' "$TMP/o4" ||
	bad "map written again: its names not shown"
now=$(stat -c %s "$MAP")
if [ "$b4" -ge "$now" ]; then
	ok "map written again: read whole ($b4 bytes of $now)"
else
	bad "map written again: $b4 bytes of $now read"
fi
b5=$(bytes "$TMP/o5")
failed "conversion 5"
same "map written again, second conversion" "$TMP/o5"
[ "$b5" -lt 65536 ] || bad "map written again, second conversion: $b5 bytes read"
# once more without strace (under the sanitizers, with the leak check)
"$PERFCONV" "${OPTS[@]}" -i "$W/erlang.data" --cache-dir "$C" -o "$TMP/o6" ||
	bad "the conversion without strace failed"
same "from the cache, without strace" "$TMP/o6"
ls "$C"/jit/map-* >/dev/null 2>&1 || bad "no map entry in the cache's jit folder"

# 4. a recording whose JIT code only a perf map names (node --perf-basic-prof): the
#    map's code table kept in the cache like a jitdump's, read on, read whole again
cp $TD/jit/node-map.data $TD/jit/perf-30787.map "$W/"
REC=node-map.data
MAPNAME=perf-30787.map
MAP=$W/$MAPNAME
size=$(stat -c %s "$MAP")
n1=$(bytes "$TMP/n1")
failed "node: conversion 1"
same "node: first conversion" "$TMP/n1"
n2=$(bytes "$TMP/n2")
failed "node: conversion 2"
same "node: second conversion" "$TMP/n2"
if [ "$n1" -ge "$size" ] && [ "$n2" -lt 16384 ]; then
	ok "node: the second conversion read $n2 bytes of the $size-byte map (the first $n1)"
else
	bad "node: the second conversion read $n2 bytes of the $size-byte map, the first $n1"
fi
sed 's/$/_grown/' "$MAP" >"$TMP/more"
cat "$TMP/more" >>"$MAP"
more=$(stat -c %s "$TMP/more")
n3=$(bytes "$TMP/n3")
failed "node: conversion 3"
same "node: grown map" "$TMP/n3"
grep -q '_grown' "$TMP/n3" || bad "node: grown map: none of the appended names in the output"
[ "$n3" -lt $((more + 16384)) ] || bad "node: grown map: $n3 bytes read, $more appended to $size"
sed 's/$/_again/' "$TMP/more" >"$MAP"
n4=$(bytes "$TMP/n4")
failed "node: conversion 4"
same "node: map written again" "$TMP/n4"
grep -q '_grown_again' "$TMP/n4" || bad "node: map written again: its names not shown"
"$PERFCONV" "${OPTS[@]}" -i "$W/$REC" --cache-dir "$C" -o "$TMP/n5" ||
	bad "node: the conversion without strace failed"
same "node: from the cache, without strace" "$TMP/n5"

# 5. the watcher (upload --watch): node's recording as a chunk, its map beside it. A
#    first watcher reads the map whole; one started after it (a reboot, an upgrade)
#    reads on from the cache's entry the first kept, a few KB of the map
if ! receivers_ready; then
	finish e2e_mapcache
	exit $?
fi
R=$TMP/watched
mkdir "$R"
cp $TD/jit/perf-30787.map "$R/"
size=$(stat -c %s "$R/perf-30787.map")
mkdir "$TMP/saved"
start_receiver py pyroscope --reject-older-than 0 --save "$TMP/saved"
# WATCHED N: a watcher under strace (with the cache $TMP/wcache) until chunk N, node's
# recording, is sent; prints the bytes of the map it read
watched() {
	local spid wpid
	rm -rf "$TMP/ws"
	mkdir "$TMP/ws"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -y -e trace=read,pread64,readv,preadv,preadv2 -o "$TMP/ws/t" \
		"$PERFCONV" upload --watch "$R" "${KS[@]}" --cache-dir "$TMP/wcache" --to pyroscope \
		--url "$URL_py" --service node 2>"$R.err$1" &
	spid=$!
	PIDS+=("$spid")
	chunk $TD/jit/node-map.data "$R" "perf.data.202612071900000$1"
	wait_for 120 test -e "$R/sent/perf.data.202612071900000$1" ||
		echo "chunk $1 not sent in 120 s: $(tail -3 "$R.err$1")" >"$TMP/failed"
	wpid=$(cat "/proc/$spid/task/$spid/children" 2>/dev/null)
	[ -z "$wpid" ] || kill -TERM $wpid
	wait "$spid" || echo "the watcher of chunk $1 ended with status $?" >"$TMP/failed"
	cat "$TMP"/ws/t.* | awk -v m="/perf-30787.map>" 'index($0, m) && $NF ~ /^[0-9]+$/ { n += $NF } END { print n + 0 }'
}
w1=$(watched 1)
failed "watcher 1"
w2=$(watched 2)
failed "watcher 2"
if [ "$w1" -ge "$size" ] && [ "$w2" -lt 16384 ]; then
	ok "watcher started again: read $w2 bytes of the $size-byte map (the first watcher $w1)"
else
	bad "watcher started again: read $w2 bytes of the $size-byte map, the first watcher $w1: not from the cache"
fi
ls "$TMP/wcache"/jit/* >/dev/null 2>&1 || bad "the watcher left no entry in the cache's jit folder"
# the same chunk twice: the same names (the profiles' string tables), those of the map
# among them
names() { zcat "$TMP/saved/$1.pb.gz" | strings -n 6 | sort -u; }
if [ -s "$TMP/saved/2.pb.gz" ] && cmp -s <(names 1) <(names 2) &&
	names 2 | grep -q "JS:\*fibonacci"; then
	ok "watcher started again: the chunk's names those the first watcher gave, the map's among them"
else
	bad "watcher started again: other names than the first watcher's: $(diff <(names 1) <(names 2) | head -5 | tr '\n' ' ')"
fi
# grown while no watcher ran: the next reads on from the cache's entry, the appended
# lines only, and shows their names
sed 's/$/_grown/' "$R/perf-30787.map" >"$TMP/more"
cat "$TMP/more" >>"$R/perf-30787.map"
more=$(stat -c %s "$TMP/more")
w3=$(watched 3)
failed "watcher 3"
if [ "$w3" -lt $((more + 16384)) ] && names 3 | grep -q "fibonacci.*_grown"; then
	ok "watcher started again, the map grown: read on ($w3 bytes read, $more appended to $size), the new names shown"
else
	bad "watcher started again, the map grown: $w3 bytes read ($more appended to $size), names: $(names 3 | grep -c _grown) grown"
fi
finish e2e_mapcache
