#!/bin/bash
# e2e_watchmapmem: the watcher's memory follows a perf map's live code, not its history
# (issue 42, finding 10). A service's map restates the same few thousand ranges over
# and over (node --perf-basic-prof appends a line each time it compiles a function
# again: 2 million lines for 2,453 ranges), and the watcher keeps the map's table from
# chunk to chunk: a line written over is dropped, so the watcher's resident memory
# stays where it was once the map's ranges are known, whatever the map's length (it
# grew by about 140 bytes a line, never given back). tests/fixtures/maprestate.c is
# the service: 2,453 functions, each round of lines restating them all under the
# round's names (some lines over two ranges, restated alone after: a partial
# overlap); each chunk is cut (perf record --switch-output, SIGUSR2) once its round is
# written, and the watcher's VmRSS and its peak while converting the chunk (VmHWM,
# set back after each) read once the chunk is sent.
source "$(dirname "$0")/e2e_lib.sh"
RANGES=2453
CHUNKS=5
LINES=400000   # a chunk's: 2 million over the run
LIMIT_KB=8192  # growth allowed from the 2nd chunk to the last: VmRSS, and the peak
# a command to the service (its FIFO's open waits for no one while it runs)
say() { timeout 10 sh -c "echo $1 >'$TMP/cmd'"; }
at_exit() {
	[ -p "$TMP/cmd" ] && say q
	kill_pids
	rm -f "/tmp/perf-$(sed -n 2p "$TMP/mr.out" 2>/dev/null).map"
}
if ! receivers_ready; then
	finish e2e-watchmapmem
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	skip "perf record of a service: needs root here"
	finish e2e-watchmapmem
	exit 0
fi
gcc -O1 -o "$TMP/maprestate" tests/fixtures/maprestate.c || bad "maprestate did not build"
R=$TMP/rec
SAVE=$TMP/saved
mkdir -p "$R" "$SAVE"
mkfifo "$TMP/cmd"
start_receiver py pyroscope --reject-older-than 0 --save "$SAVE"
# the sanitizers' allocator holds freed blocks back a while (256 MB by default): a
# little here, so that what is freed is seen given back
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4 \
	watch "$R" --to pyroscope --url "$URL_py" --service maprestate
perf record -q -e cpu-clock -F 999 -g -m 16 --switch-output -o "$R/perf.data" -- \
	"$TMP/maprestate" "$RANGES" "$TMP/cmd" >"$TMP/mr.out" 2>"$TMP/perf.err" &
PERF_PID=$!
PIDS+=("$PERF_PID")
sent() { [ "$(ls "$SAVE" | grep -c '\.pb\.gz$')" -ge "$1" ]; }
acked() { [ "$(sed -n "$(($1 + 2))p" "$TMP/mr.out")" = "$1" ]; }
# samples of the chunk under way written (-g: a few hundred bytes each)
sampled() { [ "$(stat -c %s "$R/perf.data" 2>/dev/null || echo 0)" -ge 32768 ]; }
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$WPID/status"; }
declare -a RSS HWM
for c in $(seq 1 "$CHUNKS"); do
	say "$LINES"
	wait_for 60 acked "$c" || { bad "round $c of the map not written: $(cat "$TMP/perf.err")"; break; }
	wait_for 60 sampled || { bad "chunk $c: no samples written: $(cat "$TMP/perf.err")"; break; }
	kill -USR2 "$PERF_PID"
	wait_for 120 sent "$c" || { bad "chunk $c not sent: $(tail -3 "$R.err")"; break; }
	RSS[c]=$(kb VmRSS)
	HWM[c]=$(kb VmHWM)
	# the peak from here on: the next chunk's own (5: VmHWM set to VmRSS)
	echo 5 >"/proc/$WPID/clear_refs"
	echo "     chunk $c sent: $((c * LINES)) lines of map, watcher VmRSS ${RSS[c]} kB, its peak while converting it (VmHWM) ${HWM[c]} kB"
done
say q
wait "$PERF_PID"
stop_watch

if [ -n "${RSS[CHUNKS]:-}" ]; then
	grow=$((RSS[CHUNKS] - RSS[2])) peak=$((HWM[CHUNKS] - HWM[2]))
	if [ "$grow" -le "$LIMIT_KB" ] && [ "$peak" -le "$LIMIT_KB" ]; then
		ok "$(((CHUNKS - 2) * LINES)) more lines restating $RANGES ranges from chunk 2 to $CHUNKS: the watcher's VmRSS grew $grow kB, its peak while converting a chunk $peak kB (<= $LIMIT_KB)"
	else
		bad "$(((CHUNKS - 2) * LINES)) more lines restating $RANGES ranges from chunk 2 to $CHUNKS: the watcher's VmRSS grew $grow kB, its peak while converting a chunk $peak kB (> $LIMIT_KB)"
	fi
	# the last chunk's leaves in the JIT code: every one by the last round's names
	go tool pprof -raw "$SAVE/$CHUNKS.pb.gz" 2>/dev/null | python3 -c '
import re, sys
text = sys.stdin.read()
samples, locs = text.split("Locations", 1)
names = {}
for l in locs.splitlines():
	m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", l)
	if m: names[m.group(1)] = m.group(2)
count = {}
for l in samples.splitlines():
	m = re.match(r"\s+(\d+)\s+\d+:\s+(\d+)", l)
	if m:
		leaf = names.get(m.group(2), "?")
		count[leaf] = count.get(leaf, 0) + int(m.group(1))
for k, v in sorted(count.items()): print(k, v)
' >"$TMP/leaves"
	latest=$(awk -v r="_r$CHUNKS" '$1 ~ /fn_[0-9]+_r[0-9]+$/ && substr($1, length($1) - length(r) + 1) == r { s += $2 } END { print s + 0 }' "$TMP/leaves")
	older=$(awk -v r="_r$CHUNKS" '$1 ~ /fn_[0-9]+_r[0-9]+$/ && substr($1, length($1) - length(r) + 1) != r { s += $2 } END { print s + 0 }' "$TMP/leaves")
	jit=$(awk '$1 ~ /^(LazyCompile|\?|.*anon)/ { s += $2 } END { print s + 0 }' "$TMP/leaves")
	if [ "$latest" -ge 100 ] && [ "$older" = 0 ] && [ $((jit - latest)) -le $((latest / 100)) ]; then
		ok "the last chunk's JIT leaves named by the last round's names: $latest samples (fn_*_r$CHUNKS), none by an older round's, $((jit - latest)) unnamed"
	else
		bad "the last chunk's JIT leaves: $latest by the last round's names, $older by older ones, $((jit - latest)) others; $(grep -v "_r$CHUNKS " "$TMP/leaves" | head -3)"
	fi
else
	bad "the watcher sent ${#RSS[@]} chunks of $CHUNKS"
fi
finish e2e-watchmapmem
