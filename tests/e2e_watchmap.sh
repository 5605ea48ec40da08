#!/bin/bash
# e2e_watchmap: a service's perf map, growing for as long as it runs (node
# --perf-basic-prof), watched chunk after chunk (perf record --switch-output): each
# chunk's JIT frames named by the map as it was then (the watcher reads it on from
# where the last chunk stopped, not whole each time), and by the map written again
# once it is (perf-map-agent writes its map again). tests/fixtures/mapgrow.c is the service: a new
# function every 200 ms, its line appended before it runs (and the first function
# run a while each time); the whole map written again with every name changed once the
# chunks that arrived at the receiver name two grown functions (a file the test makes
# then: not at a time, which a loaded machine's watcher may not have reached, nor after
# the first chunk, which may hold the first function alone), and the service run on for at
# least 5 s of CPU time in all (as many samples on a loaded machine as on an idle one)
# and 2.5 s after the rewrite (the last chunk wholly after it).
source "$(dirname "$0")/e2e_lib.sh"
at_exit() { kill_pids; rm -f "/tmp/perf-$(sed -n 2p "$TMP/mapgrow.out" 2>/dev/null).map"; }
if ! receivers_ready; then
	finish e2e-watchmap
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	skip "perf record of a service: needs root here"
	finish e2e-watchmap
	exit 0
fi
gcc -O1 -o "$TMP/mapgrow" tests/fixtures/mapgrow.c || bad "mapgrow did not build"
# leaves I: profile I's leaves, in the order received ("FUNCTION COUNT" per line) in
# $TMP/leaves.I, made once (1 while the receiver is still writing the profile)
leaves() {
	[ -e "$TMP/leaves.$1" ] && return 0
	go tool pprof -raw "$SAVE/$1.pb.gz" >"$TMP/raw.$1" 2>/dev/null || return 1
	python3 -c '
import re, sys
# -raw: "Samples:" then rows "  COUNT: LOCID LOCID ..."; "Locations" then "  ID: 0xADDR M=N FUNC FILE:LINE s=0"
text = open(sys.argv[1]).read()
samples, locs = text.split("Locations", 1)
names = {}
for l in locs.splitlines():
	m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", l)
	if m: names[m.group(1)] = m.group(2)
	m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+\s*$", l)
	if m: names[m.group(1)] = "?"
count = {}
for l in samples.splitlines():
	m = re.match(r"\s+(\d+)\s+\d+:\s+(\d+)", l)
	if m:
		leaf = names.get(m.group(2), "?")
		count[leaf] = count.get(leaf, 0) + int(m.group(1))
for k, v in sorted(count.items()): print(k, v)
' "$TMP/raw.$1" >"$TMP/leaves.$1.part" && mv "$TMP/leaves.$1.part" "$TMP/leaves.$1"
}
# grown_names: the profiles received so far name two grown functions or more (the map
# read on as it grows, before it is written again)
grown_names() {
	local i=1
	while [ -e "$SAVE/$i.pb.gz" ] && leaves $i; do
		# (at once: chunks may come faster than a loaded machine reads them)
		[ "$(cat "$TMP"/leaves.[0-9]* | awk '$1 ~ /^grown_fn_/ { print $1 }' | sort -u | wc -l)" -ge 2 ] && return 0
		i=$((i + 1))
	done
	return 1
}
# a chunk each second at the test's signal (pace_chunks), not at perf's alarm, which a
# loaded machine's perf loses when its setup takes longer than a second
R=$TMP/rec
SAVE=$TMP/saved
mkdir -p "$R" "$SAVE"
start_receiver py pyroscope --reject-older-than 0 --save "$SAVE"
watch "$R" --to pyroscope --url "$URL_py" --service mapgrow
perf record -q -e cpu-clock -F 499 -g --switch-output=signal -o "$R/perf.data" -- \
	"$TMP/mapgrow" 5 200 "$TMP/rewrite" 2.5 >"$TMP/mapgrow.out" 2>"$TMP/perf.err" &
RPID=$!
PIDS+=("$RPID")
pace_chunks "$RPID" &
PIDS+=("$!")
wait_for 120 test -e "$SAVE/1.pb.gz" || bad "no chunk arrived in 120 s: $(tail -2 "$R.err")"
# the map written again once the chunks received name two grown functions (the first
# chunk alone may not: it may be a short slice of a slow start, in which the service
# ran its first function alone)
wait_for 180 grown_names
touch "$TMP/rewrite"
wait "$RPID"
wait_for 120 holds "$R" 0
stop_watch
pid=$(sed -n 2p "$TMP/mapgrow.out")
n=$(ls "$SAVE" | grep -c '\.pb\.gz$')
err=$R.err
for i in $(seq 1 "$n"); do leaves $i || : >"$TMP/leaves.$i"; done

jit=0 unnamed=0
for i in $(seq 1 "$n"); do
	jit=$((jit + $(awk '$1 ~ /_fn_[0-9]+$/ { s += $2 } END { print s + 0 }' "$TMP/leaves.$i")))
	unnamed=$((unnamed + $(awk '$1 ~ /anon|\?|unknown/ { s += $2 } END { print s + 0 }' "$TMP/leaves.$i")))
done
if [ "$n" -ge 3 ] && [ "$jit" -gt 500 ] && [ $((unnamed * 100)) -le "$jit" ]; then
	ok "$n chunks received: $jit samples in JIT code named by the growing map, $unnamed leaves unnamed (<= 1%)"
else
	bad "$n chunks: $jit JIT samples named, $unnamed unnamed; $(head -3 "$TMP/leaves.1" 2>/dev/null)"
fi
first=$(awk '{ print $1 }' "$TMP/leaves.1" | grep -c '^rewritten_fn_')
firstg=$(awk '{ print $1 }' "$TMP/leaves.1" | grep -c '^grown_fn_')
# the chunks after the one in which the rewritten names first appear (that one may hold
# samples from before the rewrite too): no old name, and the rewritten names reach past
# the functions named before the rewrite. Taken over all of them, not the last alone: on
# a loaded machine the last chunk may be a tail of a few samples in the first function.
k=0
for i in $(seq 1 "$n"); do
	grep -q '^rewritten_fn_' "$TMP/leaves.$i" && { k=$i; break; }
done
last=0 lastr= had0=0 before=0
if [ "$k" -gt 1 ]; then
	before=$(for i in $(seq 1 $((k - 1))); do cat "$TMP/leaves.$i"; done | awk '$1 ~ /^grown_fn_/ { print $1 }' | sort -u | wc -l)
fi
if [ "$k" -gt 0 ]; then
	for i in $(seq "$k" "$n"); do
		[ "$i" -gt "$k" ] && last=$((last + $(awk '{ print $1 }' "$TMP/leaves.$i" | grep -c '^grown_fn_')))
		grep -q '^rewritten_fn_000 ' "$TMP/leaves.$i" && had0=1
	done
	lastr=$(for i in $(seq "$k" "$n"); do cat "$TMP/leaves.$i"; done |
		awk '$1 ~ /^rewritten_fn_/ { sub(/rewritten_fn_/, "", $1); print $1 + 0 }' | sort -n | tail -1)
fi
if [ "$firstg" -ge 1 ] && [ "$first" = 0 ] && [ "$before" -ge 2 ] && [ "$k" -gt 1 ] && [ "$last" = 0 ] &&
	[ "${lastr:-0}" -ge 18 ] && [ "$had0" = 1 ]; then
	ok "the first chunk named by the map as it was (grown_fn_*; $before grown functions named in chunks 1-$((k - 1))), chunks $k-$n by the map written again (rewritten_fn_*: the first function, named before, and those up to $lastr, added after)"
else
	bad "names: first chunk $firstg grown, $first rewritten; $before grown functions named before the rewrite; rewritten names from chunk $k of $n, after it $last grown, rewritten up to ${lastr:-none} (the first function: $had0)"
fi
finish e2e-watchmap
