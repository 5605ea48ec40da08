#!/bin/bash
# e2e_jitlive: a JIT service's jitdump as a watcher meets it, on a recording made now with
# this machine's node (the one scripts/install-deps.sh installs): a service that keeps
# making new functions (its dump grows by megabytes a second), recorded with perf record
# -k 1 --switch-output=1s into a folder that `perfconv upload --watch` sends to a
# loopback receiver while the service runs.
#   1. What arrives for each chunk is what a one-off conversion of that chunk gives
#      (byte for byte but the profile's time and duration, the chunk's window): the
#      watcher reads the dump on from chunk to chunk and keeps a pruned table, which
#      must answer as the whole dump does.
#   2. A stale dump of the same pid beside the chunks (an earlier process's, as a
#      container's pid 1 leaves) does not win over the dump the process mapped; where
#      the mapped one is gone, the stale one is refused for its times and said so.
#   3. A live dump is not damaged: the dump of a process still running at a chunk's end
#      has its last record half written; that is no warning, where the same cut in the
#      chunk in which the process exited is one.
. "$(dirname "$0")/e2e_lib.sh"
export HOME=$TMP/home
mkdir -p "$HOME"
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT

if ! command -v node >/dev/null; then
	bad "node: no node here (scripts/install-deps.sh installs Debian's nodejs)"
	finish e2e-jitlive
	exit 1
fi
npm_ready || bad "npm packages: tests/browser/node_modules (npm ci there) could not be made"

at_exit() { kill_pids; }

A=$TMP/app   # the service's working directory: its dump is written here
W=$TMP/watch # the folder perf writes its chunks into, and the watcher watches
mkdir -p "$A" "$W" "$TMP/got"
cat >"$A/svc.js" <<'EOF'
// a service whose jitdump grows: new functions made, run until compiled, dropped; for
// SECONDS of its own CPU time (as many chunks' worth of work on a loaded machine)
let n = 0, sink = 0
function work (k) { let s = 0; for (let i = 0; i < k; i++) s += (i * 7) % 13; return s }
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6 }
const end = (+process.argv[2] || 5)
while (cpu() < end) {
  for (let j = 0; j < 10; j++) {
    const f = new Function('x', `let t = ${n++}; for (let i = 0; i < x; i++) t = (t * 31 + i) % 1000003; return t`)
    for (let r = 0; r < 2000; r++) sink += f(50)
  }
  sink += work(20000)
}
console.log(sink)
EOF

# perf switched at least once: two chunks. One (first_chunk) is not enough here: node may
# end within the wait (6 s of its CPU time, a few of the wall clock), and the chunk perf
# names as it exits would hide a lost first alarm, leaving a single chunk.
switched() { [ "$(ls "$1" "$1/sent" 2>/dev/null | grep -c '^perf\.data\.[0-9]\{16\}$')" -ge 2 ]; }
for try in 1 2 3; do
	start_receiver rcv pyroscope --save "$TMP/got"
	URL=$URL_rcv
	"$PERFCONV" upload --to pyroscope --url "$URL" --watch "$W" "${KS[@]}" 2>"$TMP/watch.err" &
	WPID=$!
	PIDS+=($WPID)
	(cd "$A" && exec perf record -q -k 1 -g -F 499 --switch-output=1s -o "$W/perf.data" \
		node --perf-prof svc.js 6) >"$TMP/rec.log" 2>&1 &
	RPID=$!
	wait_for 60 switched "$W" && break
	[ $try = 3 ] && break
	lost_alarm $try
	kill -INT $RPID
	wait $RPID
	kill $WPID
	wait $WPID
	stop_receiver rcv
	rm -rf "$A"/jit-*.dump "$A"/jit-*.dump.* "$W" "$TMP/got"
	mkdir -p "$W" "$TMP/got"
done
# the stale dump: once node runs, a dump of its pid from an earlier process (the committed
# node dump, its pid and its records' times set to long before this one began) beside
# the chunks
npid=
node_dump() { npid=$(ls "$A" 2>/dev/null | sed -n 's/^jit-\([0-9]*\)\.dump$/\1/p'); [ -n "$npid" ]; }
wait_for 120 node_dump
python3 - "$TD/jit/jit-30720.dump" "$W/jit-$npid.dump" "$npid" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<I', b, 20, int(sys.argv[3]))    # the header's pid
off = struct.unpack_from('<I', b, 8)[0]
while off + 16 <= len(b):                           # every record at 1 s of uptime
    size = struct.unpack_from('<I', b, off + 4)[0]
    struct.pack_into('<Q', b, off + 8, 1000000000)
    off += size
open(sys.argv[2], 'wb').write(b)
EOF
wait $RPID
chunks=$(ls "$W" "$W/sent" 2>/dev/null | grep -c '^perf\.data\.[0-9]*$')
all_sent() { [ "$(ls "$W/sent" 2>/dev/null | grep -c .)" -ge "$chunks" ]; }
wait_for 300 all_sent
kill $WPID
wait $WPID
dump=$A/jit-$npid.dump
if [ -z "$npid" ] || [ "$chunks" -lt 4 ] || [ ! -s "$dump" ]; then
	bad "recording: node pid '$npid', $chunks chunks: $(tail -3 "$TMP/rec.log")"
	finish e2e-jitlive
	exit 1
fi
sent=$(ls "$W/sent" | grep -c .)
mb=$(( $(stat -c %s "$dump") / 1048576 ))
[ "$sent" = "$chunks" ] && ok "watch: $chunks chunks of a node service recorded, each sent once while its dump grew to $mb MB" ||
	bad "watch: $chunks chunks, $sent sent: $(cat "$TMP/watch.err")"

# 1 and 2: each chunk as it arrived against a one-off conversion made now, with the stale
# dump beside the chunk (the watcher had it too) and without it (the truth)
same=0 diff=0 named=0 total=0 lag=
n=0
for f in $(ls "$W/sent" | sort); do
	n=$((n + 1))
	# (the stale dump beside it, as it was beside the chunk in the watched folder)
	cp "$W/jit-$npid.dump" "$W/sent/jit-$npid.dump"
	"$PERFCONV" upload --to pyroscope --url "$URL" --dry-run -o "$TMP/one" -i "$W/sent/$f" "${KS[@]}" \
		>/dev/null 2>"$TMP/one.err"
	rm "$W/sent/jit-$npid.dump"
	python3 tests/pprof_strip.py "$TMP/got/$n.pb.gz" "$TMP/a" &&
		python3 tests/pprof_strip.py "$TMP/one.pprof" "$TMP/b"
	# or without it: a chunk the watcher took before the stale dump was put beside it,
	# which on a loaded machine may be one naming no dump, before node mapped its own
	if ! cmp -s "$TMP/a" "$TMP/b"; then
		"$PERFCONV" upload --to pyroscope --url "$URL" --dry-run -o "$TMP/one" -i "$W/sent/$f" "${KS[@]}" \
			>/dev/null 2>"$TMP/one.err"
		python3 tests/pprof_strip.py "$TMP/one.pprof" "$TMP/b"
	fi
	if cmp -s "$TMP/a" "$TMP/b"; then
		same=$((same + 1))
	# or node had not yet written the loads of the chunk's last milliseconds when the
	# watcher converted it (V8 writes its dump through stdio's buffer): those samples
	# [anon] then, named now, and nothing else different (tests/live_lag.py)
	elif python3 tests/live_lag.py "$TMP/got/$n.pb.gz" "$TMP/one.pprof" >"$TMP/lag.out" 2>&1; then
		same=$((same + 1))
		lag="$lag chunk $n: $(cat "$TMP/lag.out");"
	else
		diff=$((diff + 1))
		lag="$lag chunk $n: $(cat "$TMP/lag.out");"
	fi
done
[ "$diff" = 0 ] && [ "$same" -gt 0 ] && ok "watch: what arrived for each of the $same chunks is the one-off conversion's, byte for byte (but the time window)${lag:+, but for the lag of the runtime dump:$lag}" ||
	bad "watch: $diff of $((same + diff)) chunks arrived other than a one-off conversion gives them:$lag"

# the same chunks converted with the stale dump moved away: the JIT frames are the same.
# (A chunk whose records do not name the dump, node's last, where it had unmapped it by
# then, or on a loaded machine its first, before node mapped it, names no dump to
# prefer: the stale one beside it is taken, said. Those are the chunks before and after
# the run of those in which node had it mapped; the stale one may change their frames,
# node's start and exit running JIT code of their own on a loaded machine.)
mv "$W/jit-$npid.dump" "$TMP/stale.dump"
same=0 js=0 first= mapped= took= order=
: >"$TMP/stale.err"
for f in $(ls "$W/sent" | sort); do
	"$PERFCONV" -q -i "$W/sent/$f" "${KS[@]}" --annotate -o "$TMP/truth.folded" 2>/dev/null
	cp "$TMP/stale.dump" "$W/sent/jit-$npid.dump"
	"$PERFCONV" -i "$W/sent/$f" "${KS[@]}" --annotate -o "$TMP/stale.folded" 2>"$TMP/stale1.err"
	cat "$TMP/stale1.err" >>"$TMP/stale.err"
	rm "$W/sent/jit-$npid.dump"
	if grep -q "JIT code of pid $npid: $W/sent/jit-$npid.dump" "$TMP/stale1.err"; then
		# the stale one taken: a chunk whose records name no dump (node had unmapped it;
		# on a loaded machine its exit may still run JIT code there)
		took="$took $f"
		order=${order}T
	else
		order=${order}N
		cmp -s "$TMP/truth.folded" "$TMP/stale.folded" && same=$((same + 1))
	fi
	# stacks through JIT code (node 18 names its functions LazyCompile:, 20 JS:)
	j=$(grep -c '_\[j\]' "$TMP/truth.folded")
	js=$((js + j))
	# node's mappings of its dump in this chunk: the one it made (its MMAP record, with
	# its time) in the chunk it made it in, and in each later one a copy perf made from
	# /proc when it began that chunk (--switch-output), timed 0.000000
	mm=$(perf script -i "$W/sent/$f" --show-mmap-events 2>/dev/null | grep -a 'PERF_RECORD_MMAP' |
		grep -a "jit-$npid\.dump")
	# the chunk in which node mapped its dump: the only one whose records tell when it
	# did, which the stale dump alone is judged by (in a later one node was running
	# when the chunk began, since a time no record tells: a dump with older code may be
	# its own). On a loaded machine it may hold no stacks through JIT code yet.
	if [ -z "$mapped" ] && echo "$mm" | grep -av ' 0\.000000: ' | grep -q .; then
		mapped=$f
	fi
	# the first chunk with the dump mapped and stacks through JIT code: the one the
	# checks of copies and of a live dump need, which is not the first chunk where node
	# took more than a chunk's time to start (a loaded machine)
	if [ -z "$first" ] && [ "$j" -gt 0 ] && [ -n "$mm" ]; then
		first=$f
	fi
done
ntook=$(echo $took | wc -w)
if [ "$same" = $((sent - ntook)) ] && [ "$js" -gt 0 ] && [[ $order =~ ^T*N+T*$ ]] &&
	grep -q "not .*/jit-$npid.dump: .*is the file pid $npid mapped" "$TMP/stale.err"; then
	ok "stale dump beside the chunks: not used, the one pid $npid mapped is ($same chunks as without it, $js stacks through JIT code$([ -n "$took" ] && echo "; taken in the $ntook before node mapped its dump or after it unmapped it, which name none: $order")); '$(grep -m1 "is the file" "$TMP/stale.err" | cut -c1-150)')"
else
	bad "stale dump beside the chunks: $same of $((sent - ntook)) chunks as without it, the stale one taken in:${took:- none} ($order: T taken, N not), $js stacks through JIT code; $(head -5 "$TMP/stale.err")"
fi
# where the mapped dump is gone (converted elsewhere), the stale one alone: refused for
# its times in the chunk where node mapped its dump (a real MMAP record, with its time)
if [ -z "$first" ]; then
	bad "no chunk holds both node's MMAP of jit-$npid.dump and stacks through JIT code: $(ls "$W/sent" | tr '\n' ' ')"
	first=$(ls "$W/sent" | sort | head -1)
fi
if [ -z "$mapped" ]; then
	bad "no chunk holds node's own (timed) MMAP of jit-$npid.dump: $(ls "$W/sent" | tr '\n' ' ')"
	mapped=$first
fi
mv "$dump" "$TMP/real.dump"
cp "$TMP/stale.dump" "$W/sent/jit-$npid.dump"
"$PERFCONV" -i "$W/sent/$mapped" "${KS[@]}" --annotate -o "$TMP/alone.folded" 2>"$TMP/alone.err"
rm "$W/sent/jit-$npid.dump"
if grep -q "its code was loaded .* before pid $npid mapped its dump: an earlier process's with the same pid: not used for pid $npid" "$TMP/alone.err" &&
	! grep -q '_\[j\]' "$TMP/alone.folded"; then
	ok "stale dump alone: refused in the chunk where node mapped its dump: '$(grep "earlier process" "$TMP/alone.err" | cut -c1-160)'"
else
	bad "stale dump alone: $(head -5 "$TMP/alone.err")"
fi
# two copies of the right dump (neither the file node mapped, which is gone): the one
# --jit-dir names is used, by the order of places, and the other is not said to be
# passed over for a mapping it does not have
mkdir -p "$TMP/jd"
cp "$TMP/real.dump" "$TMP/jd/jit-$npid.dump"
cp "$TMP/real.dump" "$W/sent/jit-$npid.dump"
"$PERFCONV" -i "$W/sent/$first" "${KS[@]}" --jit-dir "$TMP/jd" --annotate -o "$TMP/copies.folded" \
	2>"$TMP/copies.err"
rm -r "$TMP/jd" "$W/sent/jit-$npid.dump"
if grep -q "JIT code of pid $npid: $TMP/jd/jit-$npid.dump" "$TMP/copies.err" &&
	! grep -q "is the file pid" "$TMP/copies.err" && grep -q '_\[j\]' "$TMP/copies.folded"; then
	ok "copies of the dump, the mapped file gone: --jit-dir's used, the other not called passed over"
else
	bad "copies of the dump: $(grep -i "jit code\|not " "$TMP/copies.err" | head -3)"
fi
mv "$TMP/real.dump" "$dump"

# 3: a record half written at the end of the dump (the first 40 bytes of its last code
# load again): in a chunk node lived through, the part not written yet; in the last,
# where node exited, damage. --jit-dir names the dump for a chunk whose records do not
# (node 18 has unmapped it by its last chunk).
last=$(ls "$W/sent" | sort | tail -1)
python3 - "$dump" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
off = struct.unpack_from('<I', b, 8)[0]
last = None
while off + 16 <= len(b):
    rid, size = struct.unpack_from('<II', b, off)
    if rid == 0:
        last = off
    off += size
open(sys.argv[1], 'ab').write(b[last:last + 40])
EOF
"$PERFCONV" -i "$W/sent/$first" "${KS[@]}" --jit-dir "$A" -o /dev/null 2>"$TMP/live.err"
"$PERFCONV" -i "$W/sent/$last" "${KS[@]}" --jit-dir "$A" -o /dev/null 2>"$TMP/dead.err"
if ! grep -q "ends inside\|cut short" "$TMP/live.err" && grep -q "the dump ends inside it" "$TMP/dead.err" &&
	! grep -q "ends inside\|cut short" "$TMP/watch.err"; then
	ok "live dump: a half-written last record is no warning while node ran (nor in the watcher's $sent chunks), and one in the chunk where it exited"
else
	bad "live dump: while running: $(grep warning "$TMP/live.err" | head -2); at exit: $(grep -c 'ends inside' "$TMP/dead.err"); watcher: $(grep -c 'ends inside\|cut short' "$TMP/watch.err")"
fi

finish e2e-jitlive
