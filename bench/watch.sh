#!/bin/bash
# bench/watch.sh: what `perfconv upload --watch` costs a minute of a busy service.
#
#   bench/watch.sh [BACKEND]    (pyroscope by default; datadog or parca)
#
# Records once (bench/work/long.data, shared with bench/run.sh) 60 s of testdata/mt
# at perf's -F 4000 on every CPU: about 470,000 samples, a busy service's minute.
# Starts the backend's receiver (tests/receivers/, on loopback) and a watcher on an
# empty folder, warms perfconv's caches with one chunk, then drops the minute in as
# perf renames a finished chunk and reads the watcher's CPU time (user + system,
# /proc/PID/stat) from before the chunk appeared until it is in sent/. Prints that
# time as a share of the 60 s the chunk covers; the target (issue 18) is well under
# 1% of a core. Then a folder of junk (issue 45.3): 2,000 chunks beyond converting (a
# header perf could write, a conversion that fails), older than one good chunk, and a
# new watcher: the time until the good one is in sent/, within 2 s. Exits 1 when a
# target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
BACKEND=${1:-pyroscope}
W=$PWD/bench/work
T=$(mktemp -d)
RPID= WPID=
trap '[ -n "$WPID" ] && kill $WPID 2>/dev/null; [ -n "$RPID" ] && kill $RPID 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$W"
if [ ! -e "$W/long.data" ]; then
	cp testdata/mt "$W/mt"
	(cd "$W" && perf record -q -F 4000 -g -o long.data ./mt 60000 >/dev/null 2>&1)
fi
[ -d tests/browser/node_modules/pprof-format ] || (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
samples=$("$PERFCONV" info -i "$W/long.data" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["samples"], j["time"]["span_ns"])')
span_s=$(echo "$samples" | awk '{printf "%.1f", $2 / 1e9}')

node tests/receivers/receiver.mjs --backend "$BACKEND" --log "$T/log" --port-file "$T/port" &
RPID=$!
for i in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
mkdir -p "$T/dir"
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # clock ticks, user + system
"$PERFCONV" upload -q --to "$BACKEND" --url "http://127.0.0.1:$(cat "$T/port")" --watch "$T/dir" \
	--service bench 2>"$T/watch.err" &
WPID=$!
drop() { # NAME: the minute, renamed into the folder as perf renames a chunk
	cp "$W/long.data" "$T/.part" && mv "$T/.part" "$T/dir/$1"
	for i in $(seq 600); do [ -e "$T/dir/sent/$1" ] && return 0; sleep 0.1; done
	echo "watch.sh: $1 was not sent: $(cat "$T/watch.err")" >&2
	exit 1
}
sleep 1
drop perf.data.2026010100000001 # warms the page cache and perfconv's caches
idle0=$(cpu $WPID)
sleep 10
idle1=$(cpu $WPID)
c0=$(cpu $WPID)
t0=$(date +%s%N)
drop perf.data.2026010100000002
t1=$(date +%s%N)
c1=$(cpu $WPID)
hz=$(getconf CLK_TCK)
if python3 - "$c0" "$c1" "$hz" "$t0" "$t1" "$idle0" "$idle1" "$samples" "$span_s" "$BACKEND" <<'EOF'
import sys
c0, c1, hz, t0, t1, i0, i1 = (float(x) for x in sys.argv[1:8])
samples, span_s, backend = sys.argv[8].split()[0], float(sys.argv[9]), sys.argv[10]
cpu = (c1 - c0) / hz
idle = (i1 - i0) / hz / 10
print(f"# watch: a {span_s:.0f} s chunk of {samples} samples (bench/work/long.data) to {backend} (receiver on loopback)")
print(f"cpu_s_for_the_chunk   {cpu:.3f}   (from it appearing to sent/: {(t1 - t0) / 1e9:.2f} s of wall time)")
print(f"idle_cpu_s_per_s      {idle:.4f}")
share = (cpu + idle * span_s) / span_s * 100
print(f"share_of_a_core       {share:.3f}% over the {span_s:.0f} s the chunk covers")
ok = share < 1.0
print(f"target (issue 18: well under 1% of a core): {'target met' if ok else 'target MISSED'}")
sys.exit(0 if ok else 1)
EOF
then rc=0; else rc=1; fi
kill $WPID 2>/dev/null && wait $WPID 2>/dev/null || true
J=$T/junk
mkdir -p "$J"
for i in $(seq 1 2000); do cp tests/bad/attr-size.data "$J/perf.data.20260102$(printf %08d "$i")"; done
cp testdata/mt-g.data "$T/.part" && mv "$T/.part" "$J/perf.data.2026010300000000"
t0=$(date +%s%N)
"$PERFCONV" upload -q --to "$BACKEND" --url "http://127.0.0.1:$(cat "$T/port")" --watch "$J" \
	--service bench 2>"$T/junk.err" &
WPID=$!
for i in $(seq 6000); do [ -e "$J/sent/perf.data.2026010300000000" ] && break; sleep 0.01; done
t1=$(date +%s%N)
c1=$(cpu $WPID)
if [ ! -e "$J/sent/perf.data.2026010300000000" ]; then
	echo "watch.sh: the good chunk after 2,000 junk ones was not sent in 60 s: $(tail -2 "$T/junk.err")" >&2
	exit 1
fi
python3 - "$t0" "$t1" "$c1" "$hz" <<'EOF' || rc=1
import sys
t0, t1, c, hz = (float(x) for x in sys.argv[1:5])
s = (t1 - t0) / 1e9
print(f"junk_2000_to_good_s   {s:.2f}   (watcher cpu {c / hz:.2f} s; 2,000 chunks beyond converting before one good one)")
ok = s <= 2.0
print(f"target (issue 45.3: the good chunk within 2 s): {'target met' if ok else 'target MISSED'}")
sys.exit(0 if ok else 1)
EOF
exit $rc
